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

from app.db import utcnow
from app.errors import Conflict, NotFound, ServebookError
from app.jobs.kinds import kind_of
from app.jobs.repository import JobRepository, claimable
from app.jobs.service import NO_JOB
from app.models import BenchJob


class LeaseLost(Conflict):
    """The claim is no longer the job's: its lease ran out and another worker took it over,
    or the job was finished under another claim."""

    def __init__(self, job_id: int) -> None:
        super().__init__(
            f"Job {job_id} is no longer held under this lease: it expired and the job was "
            "claimed again, or the job is already finished."
        )
        self.job_id = job_id


@dataclass(frozen=True)
class Claim:
    """What a worker needs to run one job, and the token that proves it holds the job."""

    job_id: int
    kind: str  # the job's kind's name (app/jobs/kinds.py)
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
                kind=job.kind,
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


def finish_job(
    session: Session,
    job_id: int,
    lease_token: str,
    outcome: Any,
    outcome_path: str | None = None,
) -> Any:
    """Store a claimed job's outcome as its kind stores one, with the job's success, or
    neither; `outcome_path`: where a remote worker posted it, refused unless that is where
    the job's kind sends its outcomes."""
    job = JobRepository(session).get(job_id)
    if job is None:
        raise NotFound(NO_JOB(job=str(job_id)))
    return kind_of(job, outcome_path).finish(session, job, lease_token, outcome)


def held_or_lost(job: BenchJob, lease_token: str) -> Finished | None:
    """None while the claim still holds the running job. A second finish of a claim that
    already stored its record answers with that record; any other claim lost the job."""
    if job.status == "succeeded" and job.lease_token == lease_token and job.record_id:
        return Finished(job.record_id, created=False)
    if not (job.status == "running" and job.lease_token == lease_token):
        raise LeaseLost(job.id)
    return None


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
