"""add an index on a record's configuration: the known-good lookup reads one row through it

Revision ID: 7c2e4a91d5b3
Revises: b7e2c4d81f06
Create Date: 2026-12-01 22:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "7c2e4a91d5b3"
down_revision: str | None = "b7e2c4d81f06"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.create_index(
            "ix_records_configuration",
            ["model_id", "hardware_id", "profile_id", "review_state", "outcome"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.drop_index("ix_records_configuration")
