"""Table `calibration_profiles`: the step model's coefficients fitted on one hardware
configuration and runtime by a probe of a running server (`servebook calibrate`), or why the
probe could not fit them."""

from typing import Any

from sqlalchemy import CheckConstraint, Float, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, TimestampMixin


class CalibrationProfile(TimestampMixin, Base):
    """The step model's coefficients fitted on one hardware configuration and runtime by a
    probe of a running server (`servebook calibrate`), or why the probe could not fit them.

    The newest profile with status "ok" of a hardware and runtime stands for the shipped
    coefficients in every estimate there; a failed one changes nothing.
    """

    __tablename__ = "calibration_profiles"
    __table_args__ = (
        CheckConstraint("status IN ('ok', 'failed')", name="status_known"),
        Index("ix_calibration_profiles_hardware_runtime", "hardware_id", "runtime"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    hardware_id: Mapped[int] = mapped_column(ForeignKey("hardware.id", ondelete="CASCADE"))
    runtime: Mapped[str] = mapped_column(String(50))  # the runtime's catalog slug
    runtime_version: Mapped[str | None] = mapped_column(String(100))  # as the server reports it
    model: Mapped[str] = mapped_column(String(120))  # the catalog model probed
    served_model: Mapped[str] = mapped_column(String(200))
    run_by: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(10))
    # Why a probe failed: its kind and figures (worded per language) and the English text.
    reason: Mapped[str] = mapped_column(Text, default="")
    refusal: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    coefficients: Mapped[dict[str, Any]] = mapped_column(default=dict)
    fit_error: Mapped[float | None] = mapped_column(Float)  # mean relative error, decode points
    prefill_error: Mapped[float | None] = mapped_column(Float)
    # Fitted figures beside the datasheet's (bandwidth, per-layer time, communication, MFU).
    figures: Mapped[dict[str, Any]] = mapped_column(default=dict)
    points: Mapped[dict[str, Any]] = mapped_column(default=dict)  # the probe's own points
