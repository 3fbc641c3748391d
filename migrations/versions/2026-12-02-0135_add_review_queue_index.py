"""add an index on (review_state, created_at, id): the review queue pages through it

Without it a page of every pending record sorted all of them first; with it each page
reads its own rows only, however long the queue.

Revision ID: 3d5f8a1c7e24
Revises: 9e4b1c7d2a55
Create Date: 2026-12-02 01:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "3d5f8a1c7e24"
down_revision: str | None = "9e4b1c7d2a55"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_records_state_created", "records", ["review_state", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_records_state_created", table_name="records")
