"""add records.pinned, records.sentinel_verdict and sentinel_checks

Revision ID: 3f7a1c9e5b20
Revises: 8c4d2f6a9e13
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
down_revision: str | None = "8c4d2f6a9e13"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("pinned", sa.JSON(), nullable=False, server_default="{}"))
        batch.add_column(sa.Column("sentinel_verdict", sa.String(length=20), nullable=True))
        batch.create_check_constraint(
            "sentinel_verdict_known",
            "sentinel_verdict IN ('no_regression', 'improved', 'regressed')",
        )
        batch.create_index(op.f("ix_records_sentinel_verdict"), ["sentinel_verdict"], unique=False)
    with op.batch_alter_table("records") as batch:
        batch.alter_column("pinned", server_default=None)
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
    with op.batch_alter_table("records") as batch:
        batch.drop_index(op.f("ix_records_sentinel_verdict"))
        batch.drop_constraint("sentinel_verdict_known", type_="check")
        batch.drop_column("sentinel_verdict")
        batch.drop_column("pinned")
