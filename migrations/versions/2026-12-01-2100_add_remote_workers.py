"""add remote workers: the worker token role, job labels and lease tokens

A worker token may claim jobs, renew their leases and post results, nothing else. A job
pinned to a label is claimed only by a worker started with that label. Each claim gets a
fresh lease token, which the worker names when it renews or posts, so a post from an
earlier attempt is refused and a repeated post of the same attempt is recognised.

Revision ID: b7e2c4d81f06
Revises: 3e5f7a9c1b24
Create Date: 2026-12-01 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b7e2c4d81f06"
down_revision: str | None = "3e5f7a9c1b24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_ROLES = "role IN ('submitter', 'maintainer')"
NEW_ROLES = "role IN ('submitter', 'maintainer', 'worker')"


def upgrade() -> None:
    with op.batch_alter_table("api_tokens", recreate="always") as batch:
        batch.drop_constraint(op.f("ck_api_tokens_role_known"), type_="check")
        batch.create_check_constraint("role_known", NEW_ROLES)
    with op.batch_alter_table("bench_jobs") as batch:
        batch.add_column(sa.Column("worker_label", sa.String(length=100), nullable=True))
        batch.add_column(sa.Column("lease_token", sa.String(length=64), nullable=True))
        batch.create_index(batch.f("ix_bench_jobs_worker_label"), ["worker_label"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("bench_jobs") as batch:
        batch.drop_index(batch.f("ix_bench_jobs_worker_label"))
        batch.drop_column("lease_token")
        batch.drop_column("worker_label")
    # Worker tokens cannot outlive their role: they are revoked by removal.
    op.execute("DELETE FROM api_tokens WHERE role = 'worker'")
    with op.batch_alter_table("api_tokens", recreate="always") as batch:
        batch.drop_constraint(op.f("ck_api_tokens_role_known"), type_="check")
        batch.create_check_constraint("role_known", OLD_ROLES)
