"""add records.pinned, records.sentinel_verdict and sentinel_checks

Revision ID: 3f7a1c9e5b20
Revises: 3e7a91c5d2b8
Create Date: 2026-12-03 09:00:00

A record keeps exactly what ran (the version the server reported, image digest, model
revision, file digests, driver and CUDA/ROCm, what it does not cover), and a sentinel run's
verdict against its known-good baseline. `sentinel_checks` remembers which known-good record
was re-checked on which runtime version, so the unattended sentinel runs each pair once.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3f7a1c9e5b20"
down_revision: str | None = "3e7a91c5d2b8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN, never a batch copy of `records`: on SQLite a copy drops the old
    # table, and its measurements and events would go with it (ON DELETE CASCADE).
    op.add_column("records", sa.Column("pinned", sa.JSON(), nullable=False, server_default="{}"))
    op.add_column("records", sa.Column("sentinel_verdict", sa.String(length=20), nullable=True))
    op.create_index(
        op.f("ix_records_sentinel_verdict"), "records", ["sentinel_verdict"], unique=False
    )
    op.create_table(
        "sentinel_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("runtime_version", sa.String(length=100), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name=op.f("fk_sentinel_checks_record_id_records"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["bench_jobs.id"],
            name=op.f("fk_sentinel_checks_job_id_bench_jobs"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sentinel_checks")),
        sa.UniqueConstraint(
            "record_id",
            "runtime_version",
            name=op.f("uq_sentinel_checks_record_id"),
        ),
    )


def downgrade() -> None:
    op.drop_table("sentinel_checks")
    op.drop_index(op.f("ix_records_sentinel_verdict"), table_name="records")
    op.drop_column("records", "sentinel_verdict")
    op.drop_column("records", "pinned")
