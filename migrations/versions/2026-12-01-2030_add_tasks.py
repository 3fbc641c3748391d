"""add tasks: named, versioned prompts with a check each, run by the benchmark

Revision ID: 3e5f7a9c1b24
Revises: 9a4d6b3c2e71
Create Date: 2026-12-01 20:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3e5f7a9c1b24"
down_revision: str | None = "9a4d6b3c2e71"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=True),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tasks")),
        sa.UniqueConstraint("name", "version", name="uq_tasks_name_version"),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tasks_name"), ["name"], unique=False)
    op.create_table(
        "task_prompts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("check", sa.JSON(), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["task_id"],
            ["tasks.id"],
            name=op.f("fk_task_prompts_task_id_tasks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_prompts")),
        sa.UniqueConstraint("task_id", "position", name="uq_task_prompts_position"),
    )
    with op.batch_alter_table("task_prompts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_prompts_task_id"), ["task_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("task_prompts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_task_prompts_task_id"))
    op.drop_table("task_prompts")
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tasks_name"))
    op.drop_table("tasks")
