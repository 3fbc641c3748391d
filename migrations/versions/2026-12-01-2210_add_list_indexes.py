"""add list indexes: records and jobs page newest first; a configuration's records by state

Revision ID: 7c2e4a6b8d10
Revises: 7c2e4a91d5b3
Create Date: 2026-12-01 22:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "7c2e4a6b8d10"
down_revision: str | None = "7c2e4a91d5b3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_records_created_at_id", "records", ["created_at", "id"])
    op.create_index(
        "ix_records_model_hardware_state_created",
        "records",
        ["model_id", "hardware_id", "review_state", "created_at", "id"],
    )
    op.create_index("ix_bench_jobs_created_at_id", "bench_jobs", ["created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_bench_jobs_created_at_id", table_name="bench_jobs")
    op.drop_index("ix_records_model_hardware_state_created", table_name="records")
    op.drop_index("ix_records_created_at_id", table_name="records")
