"""Table `record_estimates`: the estimate an accepted record was compared with, one row per
measured point with a decode speed."""

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


class RecordEstimate(Base):
    """The estimate an accepted record was compared with, one row per measured point with a
    decode speed: written in the transaction that accepts the record and never changed, so a
    later estimator scores itself without rewriting what an earlier one said."""

    __tablename__ = "record_estimates"
    __table_args__ = (
        # The accuracy figures and the range update read one estimator version's rows by class.
        Index("ix_record_estimates_version_class", "estimator_version", "class_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    measurement_id: Mapped[int] = mapped_column(
        ForeignKey("measurements.id", ondelete="CASCADE"), index=True
    )
    estimator_version: Mapped[str] = mapped_column(String(40))
    catalog_revision: Mapped[int] = mapped_column(BigInteger)
    # The range class the figure belongs to: "<family>/<platform>/<single|multi>/<c1|cN>".
    class_key: Mapped[str] = mapped_column(String(100))
    context_length: Mapped[int]
    concurrency: Mapped[int]
    gpus: Mapped[int]
    # Decode tokens/s per request: the range shown, and the point estimate inside it.
    decode_low: Mapped[float]
    decode_high: Mapped[float]
    decode_point: Mapped[float]
    ttft_ms_low: Mapped[float]
    ttft_ms_high: Mapped[float]
    # What the figure rested on: "estimated" (the shipped coefficients and ranges); a figure
    # from coefficients fitted on the hardware itself would say so here.
    basis: Mapped[str] = mapped_column(String(20), default="estimated")
    # How many accepted records had moved the class's range when this figure was made.
    range_records: Mapped[int] = mapped_column(default=0)
    measured_decode: Mapped[float]
    # The record carried plausibility flags (accepted with them confirmed): kept for the
    # history, never counted in the accuracy figures or the range update.
    flagged: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
