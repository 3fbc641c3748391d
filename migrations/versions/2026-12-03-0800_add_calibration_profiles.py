"""add calibration_profiles: coefficients fitted on a user's own server, per hardware and runtime

Revision ID: 3e7a91c5d2b8
Revises: 3e7a9c1d5b20
Create Date: 2026-12-03 08:00:00

`servebook calibrate` probes a running server and fits the step model's coefficients for
its hardware and runtime; the newest profile with status "ok" stands for the shipped
coefficients in every estimate there. A failed probe is kept with its reason.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3e7a91c5d2b8"
down_revision: str | None = "3e7a9c1d5b20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "calibration_profiles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hardware_id", sa.Integer(), nullable=False),
        sa.Column("runtime", sa.String(length=50), nullable=False),
        sa.Column("runtime_version", sa.String(length=100), nullable=True),
        sa.Column("model", sa.String(length=120), nullable=False),
        sa.Column("served_model", sa.String(length=200), nullable=False),
        sa.Column("run_by", sa.String(length=100), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("refusal", sa.JSON(), nullable=True),
        sa.Column("coefficients", sa.JSON(), nullable=False),
        sa.Column("fit_error", sa.Float(), nullable=True),
        sa.Column("prefill_error", sa.Float(), nullable=True),
        sa.Column("figures", sa.JSON(), nullable=False),
        sa.Column("points", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('ok', 'failed')", name=op.f("ck_calibration_profiles_status_known")
        ),
        sa.ForeignKeyConstraint(
            ["hardware_id"],
            ["hardware.id"],
            name=op.f("fk_calibration_profiles_hardware_id_hardware"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calibration_profiles")),
    )
    op.create_index(
        "ix_calibration_profiles_hardware_runtime",
        "calibration_profiles",
        ["hardware_id", "runtime"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_calibration_profiles_hardware_runtime", table_name="calibration_profiles")
    op.drop_table("calibration_profiles")
