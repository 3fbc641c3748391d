"""The benchmark kind: a worker runs the client's plan against a server, and the dashboard
stores the result as a pending record with the job's success, in one transaction.

A sentinel re-check is a benchmark judged against a known-good record
(app/sentinel/jobs.py): it runs the same way and stores through `store_result`.
"""

from typing import Any

from sqlalchemy.orm import Session

from app.bench.plan import BenchPlan
from app.bench.result import BenchResult
from app.db import utcnow
from app.errors import Conflict
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register as register_sentence
from app.jobs.kinds import Progress, Runner, register
from app.jobs.leases import Claim, Finished, LeaseLost, held_or_lost
from app.jobs.repository import JobRepository
from app.jobs.to_record import kept_plan, record_from_result
from app.models import BenchJob
from app.records.storage.service import submit_record

BENCHMARK = "benchmark"
RESULT_MISMATCH = register_sentence(
    "job.result_mismatch",
    _l("the result measured %(measured)s as %(field)s, but job %(job)s asked for %(asked)s"),
)


class ResultMismatch(Conflict):
    """A well-formed result of another server or model than the job asked for: the job's
    stored state is what it contradicts, so a conflict (409) naming the field."""

    def __init__(self, field: str, measured: object, asked: object, job_id: int) -> None:
        super().__init__(
            RESULT_MISMATCH(field=field, measured=repr(measured), asked=repr(asked), job=job_id)
        )
        self.field = field


def bench_plan(runner: Runner, claim: Claim) -> BenchPlan:
    """The job's plan, measured with the worker's own key and allow-list."""
    key, hosts = runner.api_key_for(claim), runner.allowed_hosts
    plan = {**claim.plan, "api_key": key, "allowed_hosts": hosts}
    return BenchPlan.model_validate(plan)


def check_result_matches(job: BenchJob, result: BenchResult) -> None:
    """A result must measure what the job asked for: same server, same served model."""
    for field, asked, measured in (
        ("result.plan.base_url", job.plan.get("base_url"), result.plan.base_url),
        ("result.plan.model", job.plan.get("model"), result.plan.model),
    ):
        if asked != measured:
            raise ResultMismatch(field, measured, asked, job.id)


def store_result(
    session: Session,
    job: BenchJob,
    lease_token: str,
    result: BenchResult,
    raw: dict[str, Any],
    detail: dict[str, Any],
) -> Finished:
    """Store `raw` as the job's record and mark the job succeeded together, or neither."""
    submission = submit_record(
        session,
        raw,
        provenance="bench",
        submitted_by=job.submitted_by,
        idempotency_key=f"bench-job-{job.id}",
        provenance_detail={
            **detail,
            "job_id": job.id,
            "base_url": result.plan.base_url,
            "plan": kept_plan(result),
        },
    )
    repo = JobRepository(session)
    done = repo.compare_and_set(
        job.id,
        repo.held_under(lease_token),
        status="succeeded",
        record_id=submission.record.id,
        finished_at=utcnow(),
        lease_expires_at=None,
        result=result.model_dump(mode="json"),
        progress={"step": "done", "done": 1, "total": 1},
    )
    if not done:  # the caller's transaction rolls the record back with this error
        raise LeaseLost(job.id)
    return Finished(submission.record.id, created=True)


class BenchmarkKind:
    name = BENCHMARK
    outcome_path = "result"
    page = None

    def run(self, runner: Runner, claim: Claim, progress: Progress) -> BenchResult:
        return runner.run(bench_plan(runner, claim), on_progress=progress)

    def outcome_body(self, outcome: BenchResult) -> dict[str, Any]:
        return {"result": outcome.model_dump(mode="json")}

    def finish(
        self, session: Session, job: BenchJob, lease_token: str, outcome: BenchResult
    ) -> Finished:
        again = held_or_lost(job, lease_token)
        if again is not None:
            return again
        check_result_matches(job, outcome)
        return self.store(session, job, lease_token, outcome)

    def store(
        self, session: Session, job: BenchJob, lease_token: str, outcome: BenchResult
    ) -> Finished:
        """Store the checked result of a job the claim still holds."""
        raw = record_from_result(outcome, job.target)
        return store_result(session, job, lease_token, outcome, raw, {"tool": "servebook bench"})


register(BenchmarkKind())
