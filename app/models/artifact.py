"""Table `artifacts`: one set of weights of a model."""

from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.llm_model import LlmModel


class Artifact(TimestampMixin, Base):
    """One set of weights of a model: the "model file" a runtime loads."""

    __tablename__ = "artifacts"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(120), unique=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))  # official | community
    format: Mapped[str] = mapped_column(String(20))  # safetensors | gguf | mlx
    quant: Mapped[str] = mapped_column(String(30))
    bits_per_weight: Mapped[float]
    size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    repo: Mapped[str] = mapped_column(String(200))
    revision: Mapped[str] = mapped_column(String(100), default="main")
    file: Mapped[str | None] = mapped_column(String(300))
    publisher: Mapped[str] = mapped_column(String(100), default="")
    basis: Mapped[dict[str, Any]] = mapped_column(default=dict)

    model: Mapped["LlmModel"] = relationship(back_populates="artifacts", lazy="raise")

    @property
    def is_official(self) -> bool:
        return self.kind == "official"
