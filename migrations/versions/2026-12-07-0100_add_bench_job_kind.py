"""add bench_jobs.kind

Revision ID: 5c2e8a7f1d94
Revises: 3f7a1c9e5b20
Create Date: 2026-12-07 01:00:00

A job names its kind (benchmark, calibration or sentinel), which the queue looks up to run
and finish it, where the worker and the leases read it from the plan's and the target's
keys. Jobs queued before keep their kind: a plan with a `calibrate` part is a calibration,
a target naming a `sentinel_baseline` record is a sentinel re-check.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5c2e8a7f1d94"
down_revision: str | None = "3f7a1c9e5b20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JOBS = sa.table(
    "bench_jobs",
    sa.column("id", sa.Integer()),
    sa.column("kind", sa.String(20)),
    sa.column("plan", sa.JSON()),
    sa.column("target", sa.JSON()),
)


def kind_of(plan: dict | None, target: dict | None) -> str:
    if "calibrate" in (plan or {}):
        return "calibration"
    if "sentinel_baseline" in (target or {}):
        return "sentinel"
    return "benchmark"


def upgrade() -> None:
    op.add_column(
        "bench_jobs",
        sa.Column("kind", sa.String(length=20), nullable=False, server_default="benchmark"),
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(JOBS.c.id, JOBS.c.plan, JOBS.c.target)).all()
    for job_id, plan, target in rows:
        kind = kind_of(plan, target)
        if kind != "benchmark":
            connection.execute(JOBS.update().where(JOBS.c.id == job_id).values(kind=kind))


def downgrade() -> None:
    op.drop_column("bench_jobs", "kind")
