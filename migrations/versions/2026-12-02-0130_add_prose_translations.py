"""add translations of the catalog's prose (models, hardware, runtimes, profiles)

Revision ID: 9e4b1c7d2a55
Revises: 7c2e4a6b8d10
Create Date: 2026-12-02 01:30:00

The English text stays in its own column; the Korean and Japanese texts sit beside it in
one JSON column per table, so a page reads them with the row it already loads.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9e4b1c7d2a55"
down_revision: str | None = "7c2e4a6b8d10"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("models", "hardware", "runtimes", "profiles")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("translations", sa.JSON(), nullable=False, server_default="{}")
            )


def downgrade() -> None:
    # The English columns are untouched; only the translations go (a later `servebook seed`
    # after upgrading again writes them back from the seed files).
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("translations")
