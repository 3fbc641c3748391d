"""add models.mtp_layers

Revision ID: 7c1e2f0a9b34
Revises: 5b85d21466fc
Create Date: 2026-12-01 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7c1e2f0a9b34"
down_revision: str | None = "5b85d21466fc"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("models") as batch:
        batch.add_column(sa.Column("mtp_layers", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("models") as batch:
        batch.drop_column("mtp_layers")
