"""Table `measurements`: one point of a record."""

from typing import TYPE_CHECKING, Any

from sqlalchemy import CheckConstraint, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base

if TYPE_CHECKING:
    from app.models.record import Record


class Measurement(Base):
    """One point of a record. Units are fixed by the column name; raw samples are kept."""

    __tablename__ = "measurements"
    __table_args__ = (
        CheckConstraint("context_length >= 1", name="context_positive"),
        CheckConstraint("concurrency >= 1", name="concurrency_positive"),
        CheckConstraint("ttft_ms IS NULL OR ttft_ms >= 0", name="ttft_not_negative"),
        CheckConstraint(
            "decode_tokens_per_s IS NULL OR decode_tokens_per_s >= 0", name="decode_not_negative"
        ),
        CheckConstraint(
            "needle_accuracy IS NULL OR (needle_accuracy >= 0 AND needle_accuracy <= 1)",
            name="needle_accuracy_fraction",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    context_length: Mapped[int]
    concurrency: Mapped[int] = mapped_column(default=1)
    repetitions: Mapped[int] = mapped_column(default=1)
    ttft_ms: Mapped[float | None]
    decode_tokens_per_s: Mapped[float | None]
    itl_ms: Mapped[float | None]
    e2e_latency_ms: Mapped[float | None]
    throughput_tokens_per_s: Mapped[float | None]
    peak_memory_gb_per_gpu: Mapped[float | None]
    kv_cache_usage_peak: Mapped[float | None]
    needle_accuracy: Mapped[float | None]
    token_count_source: Mapped[str | None] = mapped_column(String(20))
    memory_source: Mapped[str | None] = mapped_column(String(30))
    # per-GPU peaks, percentiles, needle depths and the raw per-request samples
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)

    record: Mapped["Record"] = relationship(back_populates="measurements", lazy="raise")
