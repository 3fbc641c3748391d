"""Table `models`: a model as published."""

from typing import TYPE_CHECKING, Any

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin

if TYPE_CHECKING:
    from app.models.artifact import Artifact
    from app.models.reported_figure import ReportedFigure


class LlmModel(TimestampMixin, Base):
    """A model as published: sizes and the architecture facts that drive the KV cache."""

    __tablename__ = "models"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    hf_repo: Mapped[str] = mapped_column(String(200))
    publisher: Mapped[str] = mapped_column(String(100))
    family: Mapped[str] = mapped_column(String(100))
    architecture: Mapped[str | None] = mapped_column(String(200))
    is_moe: Mapped[bool]
    params_total_b: Mapped[float]
    params_active_b: Mapped[float]
    native_context: Mapped[int]
    num_layers: Mapped[int | None]
    num_attention_heads: Mapped[int | None]
    num_kv_heads: Mapped[int | None]
    head_dim: Mapped[int | None]
    hidden_size: Mapped[int | None]
    intermediate_size: Mapped[int | None]
    vocab_size: Mapped[int | None]
    attention: Mapped[str] = mapped_column(String(20))
    kv_lora_rank: Mapped[int | None]
    qk_rope_head_dim: Mapped[int | None]
    sliding_window: Mapped[int | None]
    sliding_window_layers: Mapped[int] = mapped_column(default=0)
    full_attention_layers: Mapped[int | None]
    linear_state_bytes_per_seq: Mapped[int | None]
    # Multi-token-prediction layers in the weights: speculative decoding needs no draft model.
    mtp_layers: Mapped[int] = mapped_column(default=0, server_default="0")
    # An MoE's layout: routed experts, experts per token, MoE layers (the rest dense).
    experts: Mapped[int | None]
    active_experts: Mapped[int | None]
    moe_layers: Mapped[int | None]
    start_context: Mapped[int | None]
    description: Mapped[str] = mapped_column(Text, default="")
    notes: Mapped[str] = mapped_column(Text, default="")
    # {field: {"basis": "published"|"derived"|"assumed", "note": str}} for every number above
    basis: Mapped[dict[str, Any]] = mapped_column(default=dict)
    sources: Mapped[list[Any]] = mapped_column(default=list)
    # {field: {"ko": text, "ja": text}} beside the English column; a list field (profiles'
    # steps) keeps a whole list per language. Missing languages fall back to English.
    translations: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")

    artifacts: Mapped[list["Artifact"]] = relationship(
        back_populates="model", lazy="raise", order_by="Artifact.id"
    )
    reported_figures: Mapped[list["ReportedFigure"]] = relationship(
        back_populates="model", lazy="raise"
    )
