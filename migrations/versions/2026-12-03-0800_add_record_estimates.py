"""add record_estimates: the estimate each accepted record was compared with

Revision ID: 3e7a9c1d5b20
Revises: 8c4d2f6a9e13
Create Date: 2026-12-03 08:00:00

One row per measured point with a decode speed, written when the record is accepted: the
decode range and point estimate at the point's context and concurrency, the first-token
range, the range class, the figure's basis, the estimator version and the catalog revision.
Records accepted before this revision have no row: they keep counting as evidence on the
pages and stay out of the accuracy figures, which need the estimate they were compared with.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3e7a9c1d5b20"
down_revision: str | None = "8c4d2f6a9e13"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "record_estimates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("measurement_id", sa.Integer(), nullable=False),
        sa.Column("estimator_version", sa.String(length=40), nullable=False),
        sa.Column("catalog_revision", sa.BigInteger(), nullable=False),
        sa.Column("class_key", sa.String(length=100), nullable=False),
        sa.Column("context_length", sa.Integer(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("gpus", sa.Integer(), nullable=False),
        sa.Column("decode_low", sa.Double(), nullable=False),
        sa.Column("decode_high", sa.Double(), nullable=False),
        sa.Column("decode_point", sa.Double(), nullable=False),
        sa.Column("ttft_ms_low", sa.Double(), nullable=False),
        sa.Column("ttft_ms_high", sa.Double(), nullable=False),
        sa.Column("basis", sa.String(length=20), nullable=False),
        sa.Column("range_records", sa.Integer(), nullable=False),
        sa.Column("measured_decode", sa.Double(), nullable=False),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["measurement_id"],
            ["measurements.id"],
            name=op.f("fk_record_estimates_measurement_id_measurements"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name=op.f("fk_record_estimates_record_id_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_record_estimates")),
    )
    op.create_index(
        op.f("ix_record_estimates_record_id"), "record_estimates", ["record_id"], unique=False
    )
    op.create_index(
        op.f("ix_record_estimates_measurement_id"),
        "record_estimates",
        ["measurement_id"],
        unique=False,
    )
    op.create_index(
        "ix_record_estimates_version_class",
        "record_estimates",
        ["estimator_version", "class_key"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_record_estimates_version_class", table_name="record_estimates")
    op.drop_index(op.f("ix_record_estimates_measurement_id"), table_name="record_estimates")
    op.drop_index(op.f("ix_record_estimates_record_id"), table_name="record_estimates")
    op.drop_table("record_estimates")
