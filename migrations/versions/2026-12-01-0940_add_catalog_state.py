"""add catalog_state: the revision that caches of resolved recipes compare

Revision ID: 9a4d6b3c2e71
Revises: 7c1e2f0a9b34
Create Date: 2026-12-01 09:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9a4d6b3c2e71"
down_revision: str | None = "7c1e2f0a9b34"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "catalog_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_state")),
    )
    op.bulk_insert(table, [{"id": 1, "revision": 1}])


def downgrade() -> None:
    op.drop_table("catalog_state")
