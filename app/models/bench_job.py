"""Table `bench_jobs`: a queued run of the benchmark client."""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.record import Record


class BenchJob(TimestampMixin, Base):
    """A queued run of the benchmark client; a worker claims it under a lease.

    The target server's API key is never stored here.
    """

    __tablename__ = "bench_jobs"
    __table_args__ = (
        CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed')", name="status_known"
        ),
        Index("ix_bench_jobs_created_at_id", "created_at", "id"),  # the jobs list, newest first
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(String(20), default="queued", index=True)
    # What the job is: benchmark, calibration or sentinel (app/jobs/kinds.py runs each).
    kind: Mapped[str] = mapped_column(String(20), default="benchmark", server_default="benchmark")
    plan: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # What the resulting record is about (catalog slugs, runtime version, command).
    target: Mapped[dict[str, Any]] = mapped_column(default=dict)
    needs_api_key: Mapped[bool] = mapped_column(default=False)
    progress: Mapped[dict[str, Any]] = mapped_column(default=dict)
    attempts: Mapped[int] = mapped_column(default=0)
    max_attempts: Mapped[int] = mapped_column(default=2)
    worker_id: Mapped[str | None] = mapped_column(String(100))
    # Only a worker started with this label claims the job; None: any worker may.
    worker_label: Mapped[str | None] = mapped_column(String(100), index=True)
    # Fresh for each claim: renewals and the result name it, so a stale attempt is refused.
    lease_token: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    error: Mapped[str] = mapped_column(Text, default="")
    submitted_by: Mapped[str] = mapped_column(String(100), default="local")
    record_id: Mapped[int | None] = mapped_column(ForeignKey("records.id"))
    result: Mapped[dict[str, Any] | None] = mapped_column(default=None)

    record: Mapped["Record | None"] = relationship(lazy="raise")

    @property
    def done(self) -> bool:
        return self.status in ("succeeded", "failed")
