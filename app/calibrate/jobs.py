"""A calibration as a queued job: the detail page's "Calibrate this hardware" queues one,
and a benchmark worker (beside the app or on another machine) claims it under the same
lease, runs the probe with its own host allow-list, and hands the points back; the
dashboard fits and stores the profile with the job's success in one transaction."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from sqlalchemy.orm import Session

from app.bench.transport.hosts import HostNotAllowedError, check_url_for_worker
from app.calibrate.probe import (
    BATCHES,
    BUDGET_S,
    OUTPUT_TOKENS,
    ProbeError,
    ProbePlan,
    ProbeResult,
    run_probe_sync,
)
from app.calibrate.service import CalibrationRefused, find_target, store_calibration
from app.config import Settings
from app.db import utcnow
from app.errors import NotFound, ServebookError
from app.jobs.kinds import Progress, Runner
from app.jobs.kinds import register as register_kind
from app.jobs.leases import Claim, LeaseLost
from app.jobs.repository import JobRepository
from app.jobs.schemas import WorkerLabel
from app.jobs.service import JobInvalid
from app.models import BenchJob, CalibrationProfile
from app.records.schemas import FieldError
from app.records.storage.validation import schema_errors

CALIBRATE = "calibrate"  # the plan's key holding what the probe asks
CALIBRATION = "calibration"


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
        kind=CALIBRATION,
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


def calibrate_on_own_thread(plan: ProbePlan, progress: Progress) -> ProbeResult:
    """Run the probe's event loop on a fresh thread, as a benchmark's, whatever loop the
    worker runs."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="servebook-calibrate") as pool:
        return pool.submit(run_probe_sync, plan, progress).result()


class CalibrationKind:
    name = CALIBRATION
    outcome_path = "calibration"
    page = "calibrate:job"  # the job's page gives the calibration's account

    def run(self, runner: Runner, claim: Claim, progress: Progress) -> ProbeResult:
        plan = probe_plan(claim.plan, runner.api_key_for(claim), runner.allowed_hosts)
        try:
            return calibrate_on_own_thread(plan, progress)
        except ProbeError as error:  # the job fails with the probe's reason, as people read it
            raise ServebookError(str(error)) from error

    def outcome_body(self, outcome: ProbeResult) -> dict[str, Any]:
        return {"probe": outcome.to_json()}

    def finish(
        self, session: Session, job: BenchJob, lease_token: str, outcome: ProbeResult
    ) -> CalibrationProfile:
        """Fit and store the probe's profile and mark the job succeeded together, or
        neither."""
        if not (job.status == "running" and job.lease_token == lease_token):
            raise LeaseLost(job.id)
        target = find_target(
            session, job.target["model"], job.target["hardware"], job.target["runtime"]
        )
        assert target is not None
        profile, _fit = store_calibration(session, target, outcome, job.submitted_by)
        repo = JobRepository(session)
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
            raise LeaseLost(job.id)
        return profile


register_kind(CalibrationKind())
