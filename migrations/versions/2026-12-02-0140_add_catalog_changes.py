"""add catalog_changes: what each catalog revision touched, so caches rebuild only that

Revision ID: 3f8b1d7e5a20
Revises: 3d5f8a1c7e24
Create Date: 2026-12-02 01:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3f8b1d7e5a20"
down_revision: str | None = "3d5f8a1c7e24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "catalog_changes",
        sa.Column("revision", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=True),
        sa.Column("hardware_id", sa.Integer(), nullable=True),
        sa.Column("profile_id", sa.Integer(), nullable=True),
        sa.Column("evidence", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("revision", name=op.f("pk_catalog_changes")),
    )


def downgrade() -> None:
    op.drop_table("catalog_changes")
