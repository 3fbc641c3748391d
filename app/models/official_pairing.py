"""Table `official_pairings`: an (artifact, runtime, version range) an official source says loads
and answers."""

from typing import TYPE_CHECKING

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.artifact import Artifact
    from app.models.runtime import Runtime


class OfficialPairing(TimestampMixin, Base):
    """An (artifact, runtime, version range) an official source says loads and answers.

    Pairs verified by accepted reproduction records are computed from the records,
    not stored here.
    """

    __tablename__ = "official_pairings"
    __table_args__ = (UniqueConstraint("artifact_id", "runtime_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    artifact_id: Mapped[int] = mapped_column(ForeignKey("artifacts.id", ondelete="CASCADE"))
    runtime_id: Mapped[int] = mapped_column(ForeignKey("runtimes.id", ondelete="CASCADE"))
    min_version: Mapped[str | None] = mapped_column(String(50))
    max_version: Mapped[str | None] = mapped_column(String(50))
    source_url: Mapped[str] = mapped_column(String(300))
    note: Mapped[str] = mapped_column(Text, default="")

    artifact: Mapped["Artifact"] = relationship(lazy="raise")
    runtime: Mapped["Runtime"] = relationship(lazy="raise")
