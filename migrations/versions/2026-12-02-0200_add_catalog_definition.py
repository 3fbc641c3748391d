"""add catalog_state.definition: the number that moves only when the catalog's rows change

Revision ID: 3f8a2d6c1b90
Revises: 3f8b1d7e5a20
Create Date: 2026-12-02 02:00:00

The revision moves with every record and review; the reference data a submission is checked
against (models, files, runtimes, hardware, profiles) is cached per process under this one,
which only a seed or a catalog edit moves.
"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3f8a2d6c1b90"
down_revision: str | None = "3f8b1d7e5a20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("catalog_state") as batch:
        batch.add_column(
            sa.Column("definition", sa.BigInteger(), nullable=False, server_default="0")
        )
    # A number of this database's own (app.catalog.revision.new_definition explains why).
    state = sa.table("catalog_state", sa.column("definition", sa.BigInteger()))
    op.execute(state.update().values(definition=secrets.randbits(62) + 1))


def downgrade() -> None:
    with op.batch_alter_table("catalog_state") as batch:
        batch.drop_column("definition")
