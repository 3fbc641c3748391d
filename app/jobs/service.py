"""Queue benchmark jobs and describe them; the worker does the running."""

from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.bench.plan import LENGTH_BELOW_OUTPUT, BenchPlan
from app.bench.transport.hosts import HostNotAllowedError, check_url_for_worker
from app.config import Settings
from app.errors import NotFound, ServebookError, refusal_status
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.jobs.repository import JobRepository
from app.jobs.schemas import JobIn
from app.models import BenchJob, Task
from app.pagination import Page
from app.records.schemas import FieldError
from app.records.storage.validation import RecordInvalid, schema_errors, validate_record
from app.tasks.service import task_spec

PLAN_FIELDS = {
    "base_url": "base_url",
    "model": "served_model",
    "lengths": "lengths",
    "concurrency_levels": "concurrency",
    "max_tokens": "max_tokens",
    "metrics_url": "metrics_url",
    "context_length": "context_length",
    "needle_grid": "needle_grid",
    "tool_calls": "tool_calls",
}


NO_TASK = register("job.no_task", _l("no task %(task)s"))
NO_JOB = register("job.not_found", _l("No benchmark job %(job)s."))


class JobInvalid(ServebookError):
    """Every field at fault: 422 where the schema refuses the job. A valid job whose fields
    contradict each other or the catalog is 409; one that names a stored row no longer
    there (a task) is 404, as for any row not found, with the field named: the schema cannot
    list stored ids, which change as people add and delete tasks (app.errors)."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors
        self.status_code = refusal_status(e.code for e in errors)


def parse_job(raw: dict[str, Any]) -> JobIn:
    try:
        return JobIn.model_validate(raw)
    except ValidationError as error:
        raise JobInvalid(schema_errors(error)) from error


def check_plan(data: JobIn, settings: Settings) -> tuple[dict[str, Any], list[FieldError]]:
    hosts = settings.worker_hosts(data.worker_label)  # what the worker that runs it allows
    plan = data.plan(hosts)
    errors: list[FieldError] = []
    for field, url in (("base_url", data.base_url), ("metrics_url", data.metrics_url)):
        if url:
            try:
                check_url_for_worker(url, hosts, data.worker_label)
            except HostNotAllowedError as error:
                errors.append(FieldError.of(field, error.said))
    if min(data.lengths) <= data.max_tokens:
        errors.append(FieldError.of("lengths", LENGTH_BELOW_OUTPUT(max_tokens=data.max_tokens)))
        return plan, errors
    try:
        BenchPlan.model_validate(plan)
    except ValidationError as error:
        for item in schema_errors(error):
            field = PLAN_FIELDS.get(item.field.split(".")[0], "plan")
            errors.append(item.model_copy(update={"field": field}))
    return plan, errors


def check_target(session: Session, data: JobIn) -> list[FieldError]:
    """The record the job will produce must name real catalog rows."""
    probe = {**data.target(), "outcome": "ok", "measurements": []}
    try:
        validate_record(session, probe)
    except RecordInvalid as error:
        return error.errors
    return []


def enqueue(session: Session, data: JobIn, settings: Settings, submitted_by: str) -> BenchJob:
    """Validate everything a worker will need, then queue the job (the caller commits)."""
    plan, errors = check_plan(data, settings)
    errors += check_target(session, data)
    if data.task_id is not None:
        task = session.get(Task, data.task_id)
        if task is None:
            missing = FieldError.of("task_id", NO_TASK(task=str(data.task_id)))
            raise JobInvalid([*errors, missing])
        # the prompts as they are now: the job runs what was asked for
        plan["task"] = task_spec(task).model_dump(mode="json")
    if errors:
        raise JobInvalid(errors)
    job = BenchJob(
        plan=plan,
        target=data.target(),
        needs_api_key=data.api_key is not None,
        worker_label=data.worker_label,
        submitted_by=submitted_by,
        progress={"step": "queued", "done": 0, "total": 1},
    )
    return JobRepository(session).add(job)


def get_job(session: Session, job_id: int) -> BenchJob:
    job = JobRepository(session).get(job_id)
    if job is None:
        raise NotFound(NO_JOB(job=str(job_id)))
    return job


def jobs_page(session: Session, cursor: str | None, limit: int) -> Page[BenchJob]:
    return JobRepository(session).page(cursor, limit)


def job_out(job: BenchJob, url: str, record_url: str | None) -> dict[str, Any]:
    return {
        "id": job.id,
        "kind": job.kind,
        "status": job.status,
        "url": url,
        "progress": job.progress,
        "attempts": job.attempts,
        "worker_label": job.worker_label,
        "error": job.error or None,
        **outcome_of(job),
        "record_id": job.record_id,
        "record_url": record_url,
        "plan": job.plan,
        "target": job.target,
    }


def outcome_of(job: BenchJob) -> dict[str, Any]:
    """What the run found, once it measured something; a failed job has only its error."""
    result = job.result or {}
    return {"outcome": result.get("outcome"), "outcome_error": result.get("outcome_error")}
