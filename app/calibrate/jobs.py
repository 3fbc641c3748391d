"""A calibration as a queued job: the detail page's "Calibrate this hardware" queues one,
and a benchmark worker (beside the app or on another machine) claims it under the same
lease, runs the probe with its own host allow-list, and hands the points back; the
dashboard fits and stores the profile with the job's success in one transaction."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from sqlalchemy.orm import Session

from app.bench.transport.hosts import HostNotAllowedError, check_url_for_worker
from app.calibrate.probe import BATCHES, BUDGET_S, OUTPUT_TOKENS, ProbePlan, ProbeResult
from app.calibrate.service import CalibrationRefused, find_target, store_calibration
from app.config import Settings
from app.db import utcnow
from app.errors import NotFound, ServebookError
from app.jobs.leases import LeaseLost, lost
from app.jobs.repository import JobRepository
from app.jobs.schemas import WorkerLabel
from app.jobs.service import JobInvalid
from app.models import BenchJob, CalibrationProfile
from app.records.schemas import FieldError
from app.records.storage.validation import schema_errors

CALIBRATE = "calibrate"


class CalibrationJobIn(BaseModel):
    """The "Calibrate this hardware" form and its API body."""

    model_config = ConfigDict(extra="forbid")
    base_url: str = Field(min_length=1, max_length=500)
    served_model: str | None = Field(default=None, max_length=200)
    model: str = Field(min_length=1, max_length=120)
    hardware: str = Field(min_length=1, max_length=100)
    runtime: str = Field(min_length=1, max_length=50)
    budget_s: float = Field(default=BUDGET_S, ge=30, le=3600)
    worker_label: WorkerLabel | None = None
    api_key: SecretStr | None = Field(default=None, max_length=500)


def is_calibration(plan: dict[str, Any]) -> bool:
    return CALIBRATE in plan


def probe_plan(plan: dict[str, Any], api_key: str | None, hosts: list[str] | None) -> ProbePlan:
    """The probe a job asks for; the worker's own allow-list replaces the job's."""
    asked = plan[CALIBRATE]
    return ProbePlan(
        base_url=asked["base_url"],
        served_model=asked.get("served_model"),
        api_key=api_key,
        allowed_hosts=list(hosts if hosts is not None else asked.get("allowed_hosts", [])),
        batches=tuple(asked.get("batches", BATCHES)),
        output_tokens=int(asked.get("output_tokens", OUTPUT_TOKENS)),
        budget_s=float(asked.get("budget_s", BUDGET_S)),
    )


def parse_calibration_job(raw: dict[str, Any]) -> CalibrationJobIn:
    try:
        return CalibrationJobIn.model_validate(raw)
    except ValidationError as error:
        raise JobInvalid(schema_errors(error)) from error


def enqueue_calibration(
    session: Session, data: CalibrationJobIn, settings: Settings, submitted_by: str
) -> BenchJob:
    """Check the server's host and the catalog names, then queue the job (caller commits)."""
    errors: list[FieldError] = []
    hosts = settings.worker_hosts(data.worker_label)  # what the worker that runs it allows
    try:
        check_url_for_worker(data.base_url, hosts, data.worker_label)
    except HostNotAllowedError as error:
        errors.append(FieldError.of("base_url", error.said))
    try:
        find_target(session, data.model, data.hardware, data.runtime, add=False)
    except CalibrationRefused as error:
        errors.append(FieldError.of("hardware", error.said))
    except NotFound as error:
        errors.append(FieldError(field="model", message=error.message))
    if errors:
        raise JobInvalid(errors)
    asked = {
        "base_url": data.base_url,
        "served_model": data.served_model,
        "budget_s": data.budget_s,
        "batches": list(BATCHES),
        "output_tokens": OUTPUT_TOKENS,
        "allowed_hosts": hosts,  # as checked; a worker measures what its own list allows
    }
    job = BenchJob(
        plan={CALIBRATE: asked, "base_url": data.base_url, "model": data.served_model or ""},
        target={
            "kind": CALIBRATE,
            "model": data.model,
            "hardware": data.hardware,
            "runtime": data.runtime,
        },
        needs_api_key=data.api_key is not None,
        worker_label=data.worker_label,
        submitted_by=submitted_by,
        progress={"step": "queued", "done": 0, "total": 1},
    )
    return JobRepository(session).add(job)


def finish_calibration_job(
    session: Session, job_id: int, lease_token: str, probe: ProbeResult
) -> CalibrationProfile:
    """Fit and store the probe's profile and mark the job succeeded together, or neither."""
    repo = JobRepository(session)
    job = repo.get(job_id)
    if job is None or not (job.status == "running" and job.lease_token == lease_token):
        raise lost(session, job_id)
    if not is_calibration(job.plan):
        raise ServebookError(f"job {job_id} is not a calibration")
    target = find_target(
        session, job.target["model"], job.target["hardware"], job.target["runtime"]
    )
    assert target is not None
    profile, _fit = store_calibration(session, target, probe, job.submitted_by)
    done = repo.compare_and_set(
        job.id,
        repo.held_under(lease_token),
        status="succeeded",
        finished_at=utcnow(),
        lease_expires_at=None,
        result={
            "calibration_id": profile.id,
            "calibration_status": profile.status,
            "reason": profile.reason or None,
        },
        progress={"step": "done", "done": 1, "total": 1},
    )
    if not done:  # the caller's transaction rolls the profile back with this error
        raise LeaseLost(job_id)
    return profile
