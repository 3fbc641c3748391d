"""Table `runtimes`: a serving runtime."""

from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, TimestampMixin


class Runtime(TimestampMixin, Base):
    """A serving runtime: where it runs, what it loads, how it budgets memory."""

    __tablename__ = "runtimes"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(50), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    platforms: Mapped[list[Any]] = mapped_column(default=list)
    formats: Mapped[list[Any]] = mapped_column(default=list)
    tensor_parallel: Mapped[bool]
    split: Mapped[str] = mapped_column(String(20))  # tensor | layer | none
    budget: Mapped[dict[str, Any]] = mapped_column(default=dict)
    kv_dtypes: Mapped[list[Any]] = mapped_column(default=list)
    caps_sliding_window: Mapped[bool] = mapped_column(default=True)
    cuda_graphs: Mapped[bool] = mapped_column(default=False)
    default_prefill_tokens: Mapped[int]
    priority: Mapped[int] = mapped_column(default=100)
    homepage: Mapped[str] = mapped_column(String(300), default="")
    min_version: Mapped[str | None] = mapped_column(String(50))
    notes: Mapped[str] = mapped_column(Text, default="")
    sources: Mapped[list[Any]] = mapped_column(default=list)
    # {field: {"ko": text, "ja": text}} beside the English column; a list field (profiles'
    # steps) keeps a whole list per language. Missing languages fall back to English.
    translations: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
