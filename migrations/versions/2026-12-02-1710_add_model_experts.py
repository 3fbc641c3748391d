"""add models.experts, active_experts and moe_layers: the MoE layout the step model reads

Revision ID: 9d4e6a1c2b77
Revises: 4a1c9e3b7d52
Create Date: 2026-12-02 17:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9d4e6a1c2b77"
down_revision: str | None = "4a1c9e3b7d52"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("experts", "active_experts", "moe_layers")


def upgrade() -> None:
    with op.batch_alter_table("models") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("models") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
