"""Tables `api_tokens` (access tokens, kept as the sha256 of their secret) and
`sign_in_sessions` (browsers signed in with a token)."""

from datetime import datetime

from sqlalchemy import CheckConstraint, DateTime, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base, TimestampMixin


class ApiToken(TimestampMixin, Base):
    """An access token; only the sha256 of the secret is kept, never the secret itself."""

    __tablename__ = "api_tokens"
    __table_args__ = (
        CheckConstraint("role IN ('submitter', 'maintainer', 'worker')", name="role_known"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    role: Mapped[str] = mapped_column(String(20))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # None: valid until revoked.
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SignInSession(TimestampMixin, Base):
    """A browser signed in with a token: the cookie carries a random id whose sha256 is kept
    here, never the token. It ends with its token (revoked or expired) or at sign-out."""

    __tablename__ = "sign_in_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    session_hash: Mapped[str] = mapped_column(String(64), unique=True)
    token_id: Mapped[int] = mapped_column(
        ForeignKey("api_tokens.id", ondelete="CASCADE"), index=True
    )
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
