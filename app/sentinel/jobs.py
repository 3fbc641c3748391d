"""The "re-check on a new version" job: the known-good record's plan queued as a benchmark
job against a server (often the same one, upgraded), judged against the record when a
worker finishes it (app/jobs/leases.py), like `servebook sentinel` does in a terminal."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.orm import Session

from app.bench.transport.hosts import HostNotAllowedError, check_url_for_worker
from app.bench.transport.url_schema import bench_url_field
from app.config import Settings
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.jobs.repository import JobRepository
from app.jobs.schemas import WorkerLabel
from app.jobs.service import JobInvalid
from app.models import BenchJob
from app.records.schemas import FieldError
from app.records.storage.validation import schema_errors
from app.sentinel.plan import NoPlan, PlanNotRepeatable, sentinel_plan
from app.sentinel.run import load_baseline

SENTINEL_BASELINE = "sentinel_baseline"  # the job target's key naming the baseline record
NO_PLAN = register(
    "sentinel.no_plan", _l("record %(record)s measured nothing that a run can repeat")
)
NO_MODEL = register(
    "sentinel.no_model",
    _l("record %(record)s does not keep the served model's name: give the served model"),
)


class RecordCannotRecheck(JobInvalid):
    """The record keeps too little to repeat (no plan, or no served model's name and none
    given): the body is well formed, the record's state is what stands in the way, so it
    is a conflict (409) naming the field that would resolve it, not a refusal of the
    input."""

    status_code = 409


class RecheckIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(
        min_length=1,
        max_length=2000,
        description="the upgraded server",
        json_schema_extra=bench_url_field(),
    )
    served_model: str | None = Field(default=None, max_length=200)
    worker_label: WorkerLabel | None = Field(
        default=None,
        description="only the worker started with this --label runs the re-check; the URL "
        "must be one the label's allow-list holds (SERVEBOOK_BENCH_WORKER_HOSTS)",
    )


def enqueue_recheck(
    session: Session,
    record_id: int,
    raw: dict[str, Any],
    settings: Settings,
    submitted_by: str,
    worker_hosts: list[str] | None = None,
) -> BenchJob:
    """Queue the record's plan against ``base_url`` (the caller commits). The URL's host
    must be one the worker that will run it allows: the dashboard's list, or the named
    label's (``worker_hosts`` when the caller is that worker, the sentinel)."""
    try:
        data = RecheckIn.model_validate(raw)
    except ValidationError as error:
        raise JobInvalid(schema_errors(error)) from error
    try:
        baseline = load_baseline(session, record_id)
    except NoPlan as error:
        said = NO_PLAN(record=str(record_id))
        raise RecordCannotRecheck([FieldError.of("record", said)]) from error
    hosts = worker_hosts if worker_hosts is not None else settings.worker_hosts(data.worker_label)
    try:
        check_url_for_worker(data.base_url, hosts, data.worker_label)
    except HostNotAllowedError as error:
        raise JobInvalid([FieldError.of("base_url", error.said)]) from error
    model = data.served_model or baseline.plan.get("model")
    if not model:
        said = NO_MODEL(record=str(record_id))
        raise RecordCannotRecheck([FieldError.of("served_model", said)])
    try:
        plan = sentinel_plan(
            baseline, base_url=data.base_url, model=model, api_key=None, allowed_hosts=hosts
        )
    except PlanNotRepeatable as error:  # the record's state, not the body: a conflict
        raise RecordCannotRecheck(error.errors) from error
    job = BenchJob(
        plan=plan.model_dump(mode="json"),
        target={**baseline.target, SENTINEL_BASELINE: baseline.id},
        needs_api_key=False,
        worker_label=data.worker_label,
        submitted_by=submitted_by,
        progress={"step": "queued", "done": 0, "total": 1},
    )
    return JobRepository(session).add(job)
