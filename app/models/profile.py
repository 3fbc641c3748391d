"""Table `profiles`: a serving profile (balanced, speed, long-context)."""

from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, TimestampMixin


class Profile(TimestampMixin, Base):
    """A serving profile (balanced, speed, long-context): knobs resolved per hardware."""

    __tablename__ = "profiles"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(50), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    summary: Mapped[str] = mapped_column(Text, default="")
    sort: Mapped[int] = mapped_column(default=100)
    # The knobs as the seed names them; resolved per hardware by app.recipes.
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    stop_conditions: Mapped[list[Any]] = mapped_column(default=list)
    measurement_order: Mapped[list[Any]] = mapped_column(default=list)
    # {field: {"ko": text, "ja": text}} beside the English column; a list field (profiles'
    # steps) keeps a whole list per language. Missing languages fall back to English.
    translations: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
