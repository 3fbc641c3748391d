"""Table `sentinel_checks`: a known-good record re-checked on one runtime version."""

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, TimestampMixin


class SentinelCheck(TimestampMixin, Base):
    """A known-good record re-checked on one runtime version: the unattended sentinel runs
    each (record, version) at most once, however often the server is polled."""

    __tablename__ = "sentinel_checks"
    __table_args__ = (UniqueConstraint("record_id", "runtime_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    runtime_version: Mapped[str] = mapped_column(String(100))
    # The re-check job queued for it; its record carries the verdict.
    job_id: Mapped[int | None] = mapped_column(ForeignKey("bench_jobs.id", ondelete="SET NULL"))
