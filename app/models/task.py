"""Tables `tasks` (named, versioned sets of prompts with checks) and `task_prompts`
(one prompt of a task and the check its answer must pass)."""

from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, TimestampMixin


class Task(TimestampMixin, Base):
    """A named, versioned set of prompts with checks; a new version is a new row, so a
    benchmark result that names (name, version) always means the same prompts."""

    __tablename__ = "tasks"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_tasks_name_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120), index=True)
    version: Mapped[int] = mapped_column(default=1)
    description: Mapped[str] = mapped_column(Text, default="")
    # Where the prompts and answers come from (public domain text, written for the project).
    source: Mapped[str] = mapped_column(Text, default="")
    max_tokens: Mapped[int | None] = mapped_column(default=None)
    created_by: Mapped[str] = mapped_column(String(100), default="local")

    prompts: Mapped[list["TaskPrompt"]] = relationship(
        back_populates="task",
        order_by="TaskPrompt.position",
        cascade="all, delete-orphan",
        lazy="selectin",
    )


class TaskPrompt(Base):
    """One prompt of a task and the check its answer must pass (see app.bench.quality.task_spec)."""

    __tablename__ = "task_prompts"
    __table_args__ = (UniqueConstraint("task_id", "position", name="uq_task_prompts_position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    position: Mapped[int]
    prompt: Mapped[str] = mapped_column(Text)
    check: Mapped[dict[str, Any]] = mapped_column(default=dict)
    max_tokens: Mapped[int | None] = mapped_column(default=None)

    task: Mapped[Task] = relationship(back_populates="prompts")
