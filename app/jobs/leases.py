"""Leases on benchmark jobs: claim, renew, finish and fail, for every kind of worker.

The in-process worker calls these inside its own unit of work; remote workers reach them
through /api/worker/... inside the request's. Each claim hands out a fresh lease token,
and every later write is guarded by it, so a worker whose lease ran out and whose job was
claimed again can no longer write anything, and a record and the job's "succeeded" are
stored together or not at all. A second finish of the same claim answers with the record
the first one stored.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from app.bench.result import BenchResult
from app.db import utcnow
from app.errors import Conflict, NotFound, ServebookError
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.jobs.repository import JobRepository, claimable
from app.jobs.service import NO_JOB
from app.jobs.to_record import kept_plan, record_from_result
from app.models import BenchJob
from app.records.storage.service import submit_record


class LeaseLost(Conflict):
    """The claim is no longer the job's: its lease ran out and another worker took it over,
    or the job was finished under another claim."""

    def __init__(self, job_id: int) -> None:
        super().__init__(
            f"Job {job_id} is no longer held under this lease: it expired and the job was "
            "claimed again, or the job is already finished."
        )
        self.job_id = job_id


RESULT_MISMATCH = register(
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


@dataclass(frozen=True)
class Claim:
    """What a worker needs to run one job, and the token that proves it holds the job."""

    job_id: int
    lease_token: str
    attempt: int
    lease_expires_at: datetime
    plan: dict[str, Any]
    target: dict[str, Any]
    needs_api_key: bool


@dataclass(frozen=True)
class Finished:
    record_id: int | None  # None: queued again to confirm a regression, nothing stored yet
    created: bool  # False when this claim's result had already been stored


def claim_job(
    session: Session, worker_id: str, label: str | None, lease: timedelta
) -> Claim | None:
    """Claim the oldest job this worker may take; None when there is none."""
    repo = JobRepository(session)
    while True:
        now = utcnow()
        job = repo.next_claimable(now, label)
        if job is None:
            return None
        if job.status == "running" and job.attempts >= job.max_attempts:
            give_up(repo, job, now)
            continue
        token = secrets.token_hex(16)
        won = repo.compare_and_set(
            job.id,
            claimable(now),
            status="running",
            worker_id=worker_id[:100],
            lease_token=token,
            attempts=job.attempts + 1,
            lease_expires_at=now + lease,
            started_at=now,
            error="",
        )
        if won:
            return Claim(
                job_id=job.id,
                lease_token=token,
                attempt=job.attempts + 1,
                lease_expires_at=now + lease,
                plan=dict(job.plan),
                target=dict(job.target),
                needs_api_key=job.needs_api_key,
            )


def give_up(repo: JobRepository, job: BenchJob, now: datetime) -> None:
    """A job whose workers kept dying fails cleanly instead of staying 'running'."""
    repo.compare_and_set(
        job.id,
        claimable(now),
        status="failed",
        finished_at=now,
        lease_expires_at=None,
        error=f"the worker running it stopped responding {job.attempts} times; no record "
        "was stored",
    )


def renew_lease(
    session: Session,
    job_id: int,
    lease_token: str,
    lease: timedelta,
    progress: dict[str, Any] | None = None,
) -> datetime | None:
    """Extend the lease (and note progress): its new end, or None when the claim is no
    longer the job's."""
    expires = utcnow() + lease
    values: dict[str, Any] = {"lease_expires_at": expires}
    if progress is not None:
        values["progress"] = progress
    repo = JobRepository(session)
    return expires if repo.compare_and_set(job_id, repo.held_under(lease_token), **values) else None


def lost(session: Session, job_id: int) -> ServebookError:
    """Why a guarded write did nothing: no such job, or the claim is no longer its."""
    if JobRepository(session).get(job_id) is None:
        return NotFound(NO_JOB(job=str(job_id)))
    return LeaseLost(job_id)


def finish_job(session: Session, job_id: int, lease_token: str, result: BenchResult) -> Finished:
    """Store the record and mark the job succeeded together, or neither."""
    repo = JobRepository(session)
    job = repo.get(job_id)
    if job is None:
        raise NotFound(NO_JOB(job=str(job_id)))
    if job.status == "succeeded" and job.lease_token == lease_token and job.record_id:
        return Finished(job.record_id, created=False)
    if not (job.status == "running" and job.lease_token == lease_token):
        raise LeaseLost(job_id)
    check_result_matches(job, result)
    raw, detail = record_from_result(result, job.target), {"tool": "servebook bench"}
    baseline = job.target.get("sentinel_baseline")
    if baseline is not None:  # a re-check of a known-good record: judged against it
        from app.sentinel.compare import confirmed_by, findings
        from app.sentinel.run import TOOL, SentinelOutcome, judge, load_baseline

        outcome = judge(load_baseline(session, int(baseline)), result)
        first = job.target.get("sentinel_first")
        if first is not None:  # the second run: a change counts only if the first saw it
            outcome = SentinelOutcome(outcome.raw, confirmed_by(first, outcome.report))
        elif outcome.report.verdict == "regressed":
            # One run's outlier is not a regression: the job runs again before anything
            # is stored, as `servebook sentinel` runs a second time.
            return queue_to_confirm(repo, job, lease_token, findings(outcome.report))
        raw, detail = outcome.raw, {"tool": TOOL, "sentinel": outcome.detail}
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
        raise LeaseLost(job_id)
    return Finished(submission.record.id, created=True)


def queue_to_confirm(
    repo: JobRepository, job: BenchJob, lease_token: str, first: dict[str, Any]
) -> Finished:
    """Queue a re-check that found a regression for a second run, for a worker of the same
    label, keeping what the first run found; nothing is stored until the second run ends."""
    done = repo.compare_and_set(
        job.id,
        repo.held_under(lease_token),
        status="queued",
        target={**job.target, "sentinel_first": first},
        attempts=0,  # a new run, with its own tries
        worker_id=None,
        lease_token=None,
        lease_expires_at=None,
        progress={"step": "confirming", "done": 0, "total": 1},
    )
    if not done:
        raise LeaseLost(job.id)
    return Finished(None, created=False)


def check_result_matches(job: BenchJob, result: BenchResult) -> None:
    """A result must measure what the job asked for: same server, same served model."""
    for field, asked, measured in (
        ("result.plan.base_url", job.plan.get("base_url"), result.plan.base_url),
        ("result.plan.model", job.plan.get("model"), result.plan.model),
    ):
        if asked != measured:
            raise ResultMismatch(field, measured, asked, job.id)


def fail_job(session: Session, job_id: int, lease_token: str, message: str) -> bool:
    """Mark the job failed with the reason; False when the claim is no longer the job's."""
    repo = JobRepository(session)
    return repo.compare_and_set(
        job_id,
        repo.held_under(lease_token),
        status="failed",
        error=message[:5000],
        finished_at=utcnow(),
        lease_expires_at=None,
    )
