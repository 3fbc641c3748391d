"""Table `hardware`: a hardware configuration."""

from typing import TYPE_CHECKING, Any

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.calibration import CalibrationProfile


class Hardware(TimestampMixin, Base):
    """A hardware configuration: a device times a count, with the link between the cards."""

    __tablename__ = "hardware"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    group: Mapped[str] = mapped_column(String(20))  # local | server
    vendor: Mapped[str] = mapped_column(String(50))
    platform: Mapped[str] = mapped_column(String(20))  # cuda | rocm | metal | ...
    unified_memory: Mapped[bool]
    device: Mapped[str] = mapped_column(String(100))
    gpu_count: Mapped[int]
    memory_gb_per_gpu: Mapped[float]
    usable_memory_gb: Mapped[float]  # over all cards, as the catalog states it
    bandwidth_gb_s_per_gpu: Mapped[float | None]
    bf16_tflops_per_gpu: Mapped[float | None]
    interconnect: Mapped[str] = mapped_column(String(20))
    source_row: Mapped[bool] = mapped_column(default=False)
    sort: Mapped[int] = mapped_column(default=100)
    notes: Mapped[str] = mapped_column(Text, default="")
    basis: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sources: Mapped[list[Any]] = mapped_column(default=list)
    # {field: {"ko": text, "ja": text}} beside the English column; a list field (profiles'
    # steps) keeps a whole list per language. Missing languages fall back to English.
    translations: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    # Coefficients fitted here by `servebook calibrate`, oldest first (the newest of each
    # runtime stands): loaded with the row, since every estimate on it reads them.
    calibrations: Mapped[list["CalibrationProfile"]] = relationship(
        primaryjoin="and_(Hardware.id == CalibrationProfile.hardware_id, "
        "CalibrationProfile.status == 'ok')",
        order_by="CalibrationProfile.id",
        lazy="selectin",
        viewonly=True,
    )

    @property
    def usable_gb_per_gpu(self) -> float:
        return self.usable_memory_gb / self.gpu_count

    @property
    def memory_gb(self) -> float:
        return self.memory_gb_per_gpu * self.gpu_count
