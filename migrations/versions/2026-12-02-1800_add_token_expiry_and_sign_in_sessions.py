"""add api_tokens.expires_at and sign_in_sessions: tokens may expire, cookies carry a session

Revision ID: 8c4d2f6a9e13
Revises: 5b1e9c3d7a42
Create Date: 2026-12-02 18:00:00

The sign-in cookie carried the bearer token itself (signed, not encrypted). It now carries
a random session id; the session's sha256 is kept here with the token it belongs to, so a
revoked or expired token ends its browser sessions at once. Cookies issued before this
revision no longer sign anyone in: their holders sign in again.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "8c4d2f6a9e13"
down_revision: str | None = "5b1e9c3d7a42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "sign_in_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_hash", sa.String(length=64), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["api_tokens.id"],
            name=op.f("fk_sign_in_sessions_token_id_api_tokens"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_in_sessions")),
        sa.UniqueConstraint("session_hash", name=op.f("uq_sign_in_sessions_session_hash")),
    )
    op.create_index(
        op.f("ix_sign_in_sessions_token_id"), "sign_in_sessions", ["token_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_sign_in_sessions_token_id"), table_name="sign_in_sessions")
    op.drop_table("sign_in_sessions")
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("expires_at")
