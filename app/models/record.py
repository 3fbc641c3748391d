"""Tables `records` (reproduction attempts) and `record_events` (each record's
append-only history: submitted, accepted, rejected, retracted)."""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.artifact import Artifact
    from app.models.hardware import Hardware
    from app.models.llm_model import LlmModel
    from app.models.measurement import Measurement
    from app.models.profile import Profile
    from app.models.runtime import Runtime


class Record(TimestampMixin, Base):
    """One reproduction attempt. Write-once: only the review state moves, via events."""

    __tablename__ = "records"
    __table_args__ = (
        CheckConstraint("gpu_count >= 1", name="gpu_count_positive"),
        CheckConstraint(
            "outcome IN ('ok', 'load_failure', 'long_context_failure', 'wrong_answer')",
            name="outcome_known",
        ),
        CheckConstraint(
            "review_state IN ('pending', 'accepted', 'rejected', 'retracted')",
            name="review_state_known",
        ),
        # The known-good lookup: one configuration's accepted working records.
        Index(
            "ix_records_configuration",
            "model_id",
            "hardware_id",
            "profile_id",
            "review_state",
            "outcome",
        ),
        # Lists page newest first; a detail page reads one configuration's records by state.
        Index("ix_records_created_at_id", "created_at", "id"),
        Index(
            "ix_records_model_hardware_state_created",
            "model_id",
            "hardware_id",
            "review_state",
            "created_at",
            "id",
        ),
        # The review queue (every pending record, newest first) pages through this one.
        Index("ix_records_state_created", "review_state", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id"), index=True)
    artifact_id: Mapped[int] = mapped_column(ForeignKey("artifacts.id"), index=True)
    runtime_id: Mapped[int] = mapped_column(ForeignKey("runtimes.id"))
    runtime_version: Mapped[str] = mapped_column(String(100))
    hardware_id: Mapped[int] = mapped_column(ForeignKey("hardware.id"), index=True)
    gpu_count: Mapped[int]
    profile_id: Mapped[int | None] = mapped_column(ForeignKey("profiles.id"))
    command: Mapped[str] = mapped_column(Text, default="")
    applied_values: Mapped[dict[str, Any]] = mapped_column(default=dict)
    environment: Mapped[dict[str, Any]] = mapped_column(default=dict)
    outcome: Mapped[str] = mapped_column(String(30))
    notes: Mapped[str] = mapped_column(Text, default="")
    provenance: Mapped[str] = mapped_column(String(20))  # form | api | import | bench
    provenance_detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), unique=True)
    submitted_by: Mapped[str] = mapped_column(String(100), default="local")
    flags: Mapped[list[Any]] = mapped_column(default=list)
    # Exactly what ran: the version the server reported, image digest, model revision...
    pinned: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    # A sentinel run's verdict against its known-good baseline (detail in provenance_detail).
    sentinel_verdict: Mapped[str | None] = mapped_column(String(20), index=True)
    review_state: Mapped[str] = mapped_column(String(20), default="pending", index=True)

    model: Mapped["LlmModel"] = relationship(lazy="raise")
    artifact: Mapped["Artifact"] = relationship(lazy="raise")
    runtime: Mapped["Runtime"] = relationship(lazy="raise")
    hardware: Mapped["Hardware"] = relationship(lazy="raise")
    profile: Mapped["Profile | None"] = relationship(lazy="raise")
    measurements: Mapped[list["Measurement"]] = relationship(
        back_populates="record", lazy="raise", order_by="Measurement.id"
    )
    events: Mapped[list["RecordEvent"]] = relationship(
        back_populates="record", lazy="raise", order_by="RecordEvent.id"
    )


class RecordEvent(Base):
    """Append-only history of a record: submitted, accepted, rejected, retracted."""

    __tablename__ = "record_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String(20))
    reason: Mapped[str] = mapped_column(Text, default="")
    actor: Mapped[str] = mapped_column(String(100), default="local")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    record: Mapped["Record"] = relationship(back_populates="events", lazy="raise")
