"""Queries for benchmark jobs. Claims are compare-and-set updates, so two workers never
run the same job at once, on SQLite and PostgreSQL alike. On PostgreSQL the candidate row
is also locked with FOR UPDATE SKIP LOCKED, so concurrent claimers each take a different
job instead of queueing on the same one (SQLite has one writer at a time and ignores it)."""

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, selectinload

from app.models import BenchJob
from app.pagination import Page, keyset_page


def claimable(now: datetime):  # noqa: ANN201 - a SQL expression
    """Queued jobs, and running ones whose worker stopped renewing its lease."""
    return or_(
        BenchJob.status == "queued",
        (BenchJob.status == "running") & (BenchJob.lease_expires_at < now),
    )


def for_label(label: str | None):  # noqa: ANN201 - a SQL expression
    """Jobs a worker with this label may take: unpinned ones, and those pinned to it."""
    if label is None:
        return BenchJob.worker_label.is_(None)
    return BenchJob.worker_label.is_(None) | (BenchJob.worker_label == label)


class JobRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, job: BenchJob) -> BenchJob:
        self.session.add(job)
        self.session.flush()
        return job

    def get(self, job_id: int) -> BenchJob | None:
        statement = (
            select(BenchJob).where(BenchJob.id == job_id).options(selectinload(BenchJob.record))
        )
        return self.session.scalars(statement).one_or_none()

    def page(self, cursor: str | None, limit: int) -> Page[BenchJob]:
        """Jobs newest first by when they were queued, one page after `cursor`."""
        return keyset_page(
            self.session, select(BenchJob), BenchJob.created_at, BenchJob.id, cursor, limit
        )

    def next_claimable(self, now: datetime, label: str | None = None) -> BenchJob | None:
        statement = (
            select(BenchJob)
            .where(claimable(now), for_label(label))
            .order_by(BenchJob.id)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        return self.session.scalars(statement).one_or_none()

    def compare_and_set(self, job_id: int, guard: Any, **values: Any) -> bool:
        """Update one job only while `guard` still holds; True when this call won."""
        statement = update(BenchJob).where(BenchJob.id == job_id, guard).values(**values)
        result = self.session.execute(statement.execution_options(synchronize_session=False))
        return result.rowcount == 1

    def held_under(self, lease_token: str):  # noqa: ANN201 - a SQL expression
        """The job is still running under the claim that handed out `lease_token`."""
        return (BenchJob.status == "running") & (BenchJob.lease_token == lease_token)
