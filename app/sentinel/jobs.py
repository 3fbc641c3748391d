"""The "re-check on a new version" job: the known-good record's plan queued against a server
(often the same one, upgraded). A worker runs it as a benchmark; the sentinel kind judges
the result against the record when it is posted, like `servebook sentinel` does in a
terminal, and a regression runs a second time before anything is stored."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.orm import Session

from app.bench.result import BenchResult
from app.bench.transport.hosts import HostNotAllowedError, check_url_for_worker
from app.bench.transport.url_schema import bench_url_field
from app.config import Settings
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.jobs.benchmark import BenchmarkKind, store_result
from app.jobs.kinds import register as register_kind
from app.jobs.leases import Finished, LeaseLost
from app.jobs.repository import JobRepository
from app.jobs.schemas import WorkerLabel
from app.jobs.service import JobInvalid
from app.models import BenchJob
from app.records.schemas import FieldError
from app.records.storage.validation import schema_errors
from app.sentinel.compare import confirmed_by, findings
from app.sentinel.plan import NoPlan, PlanNotRepeatable, sentinel_plan
from app.sentinel.run import TOOL, SentinelOutcome, judge, load_baseline

SENTINEL = "sentinel"
SENTINEL_BASELINE = "sentinel_baseline"  # the job target's key naming the baseline record
SENTINEL_FIRST = "sentinel_first"  # what the first run found, kept while the second runs
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

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__(errors)
        self.status_code = 409


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
        kind=SENTINEL,
        plan=plan.model_dump(mode="json"),
        target={**baseline.target, SENTINEL_BASELINE: baseline.id},
        needs_api_key=False,
        worker_label=data.worker_label,
        submitted_by=submitted_by,
        progress={"step": "queued", "done": 0, "total": 1},
    )
    return JobRepository(session).add(job)


class SentinelKind(BenchmarkKind):
    """Runs and finishes as a benchmark; stores its result judged against its baseline
    record."""

    name = SENTINEL

    def store(
        self, session: Session, job: BenchJob, lease_token: str, outcome: BenchResult
    ) -> Finished:
        judged = judge(load_baseline(session, int(job.target[SENTINEL_BASELINE])), outcome)
        first = job.target.get(SENTINEL_FIRST)
        if first is not None:  # the second run: a change counts only if the first saw it
            judged = SentinelOutcome(judged.raw, confirmed_by(first, judged.report))
        elif judged.report.verdict == "regressed":
            # One run's outlier is not a regression: the job runs again before anything
            # is stored, as `servebook sentinel` runs a second time.
            return queue_to_confirm(
                JobRepository(session), job, lease_token, findings(judged.report)
            )
        detail = {"tool": TOOL, "sentinel": judged.detail}
        return store_result(session, job, lease_token, outcome, judged.raw, detail)


def queue_to_confirm(
    repo: JobRepository, job: BenchJob, lease_token: str, first: dict[str, Any]
) -> Finished:
    """Queue a re-check that found a regression for a second run, for a worker of the same
    label, keeping what the first run found; nothing is stored until the second run ends."""
    done = repo.compare_and_set(
        job.id,
        repo.held_under(lease_token),
        status="queued",
        target={**job.target, SENTINEL_FIRST: first},
        attempts=0,  # a new run, with its own tries
        worker_id=None,
        lease_token=None,
        lease_expires_at=None,
        progress={"step": "confirming", "done": 0, "total": 1},
    )
    if not done:
        raise LeaseLost(job.id)
    return Finished(None, created=False)


register_kind(SentinelKind())
