"""Table `reported_figures`: a figure someone else published (unverified here), kept with its
source."""

from typing import TYPE_CHECKING

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.hardware import Hardware
    from app.models.llm_model import LlmModel


class ReportedFigure(TimestampMixin, Base):
    """A figure someone else published (unverified here), kept with its source."""

    __tablename__ = "reported_figures"

    id: Mapped[int] = mapped_column(primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    hardware_id: Mapped[int] = mapped_column(ForeignKey("hardware.id", ondelete="CASCADE"))
    metric: Mapped[str] = mapped_column(String(50))
    low: Mapped[float]
    high: Mapped[float]
    source: Mapped[str] = mapped_column(Text)
    note: Mapped[str] = mapped_column(Text, default="")

    model: Mapped["LlmModel"] = relationship(back_populates="reported_figures", lazy="raise")
    hardware: Mapped["Hardware"] = relationship(lazy="raise")
