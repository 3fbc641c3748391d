"""add catalog_state.records_revision: the number every record and review moves

Revision ID: 4a1c9e3b7d52
Revises: 3f8a2d6c1b90
Create Date: 2026-12-02 17:00:00

A pending or rejected record changes no figure, so it no longer moves the catalog revision
(and with it every resolved recipe and cached page); it moves this one, which only the
pages that list records (their pending counts, /records) are kept under.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "4a1c9e3b7d52"
down_revision: str | None = "3f8a2d6c1b90"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("catalog_state") as batch:
        batch.add_column(
            sa.Column("records_revision", sa.BigInteger(), nullable=False, server_default="1")
        )


def downgrade() -> None:
    with op.batch_alter_table("catalog_state") as batch:
        batch.drop_column("records_revision")
