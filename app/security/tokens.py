"""Access tokens: stored as their sha256 only, shown once when created; they may expire,
can be listed and revoked, and a revoked or expired one fails at once, together with every
browser session signed in with it (a session is a random id the cookie carries, kept as its
sha256, never the token)."""

import hashlib
import logging
import secrets
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from app.db import utcnow
from app.models import ApiToken, SignInSession

log = logging.getLogger("servebook.security")

# A worker token runs benchmark jobs (claims them, renews their leases, posts results) and
# nothing else: it neither submits nor reviews records.
Role = Literal["submitter", "maintainer", "worker"]
ROLES: tuple[Role, ...] = ("submitter", "maintainer", "worker")
TOKEN_PREFIX = "sb_"
LAST_USED_RESOLUTION = timedelta(hours=1)
# The column's length: PostgreSQL refuses a longer name, SQLite would keep it; both refuse here.
MAX_NAME_LENGTH: int = ApiToken.__table__.c.name.type.length


SESSION_LIFETIME = timedelta(days=30)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _active(now: datetime) -> object:
    return (ApiToken.revoked_at.is_(None)) & or_(
        ApiToken.expires_at.is_(None), ApiToken.expires_at > now
    )


class TokenRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def count_active(self) -> int:
        statement = select(func.count()).select_from(ApiToken).where(_active(utcnow()))
        return self.session.scalar(statement) or 0

    def by_hash(self, token_hash: str) -> ApiToken | None:
        statement = select(ApiToken).where(ApiToken.token_hash == token_hash, _active(utcnow()))
        return self.session.scalars(statement).one_or_none()

    def by_session(self, session_hash: str) -> ApiToken | None:
        """The active token a live browser session was signed in with."""
        now = utcnow()
        statement = (
            select(ApiToken)
            .join(SignInSession, SignInSession.token_id == ApiToken.id)
            .where(SignInSession.session_hash == session_hash, SignInSession.expires_at > now)
            .where(_active(now))
        )
        return self.session.scalars(statement).one_or_none()

    def add(
        self, name: str, role: Role, token_hash: str, expires_at: datetime | None = None
    ) -> ApiToken:
        token = ApiToken(name=name, role=role, token_hash=token_hash, expires_at=expires_at)
        self.session.add(token)
        self.session.flush()
        return token

    def all(self) -> list[ApiToken]:
        return list(self.session.scalars(select(ApiToken).order_by(ApiToken.id)))

    def revoke(self, token_id: int) -> ApiToken | None:
        token = self.session.get(ApiToken, token_id)
        if token is None:
            return None
        if token.revoked_at is None:
            token.revoked_at = utcnow()
        self.session.execute(delete(SignInSession).where(SignInSession.token_id == token_id))
        self.session.flush()
        return token


# A token made elsewhere (a deployment's shared secret) is as long as one made here.
MIN_REGISTERED_LENGTH = len(TOKEN_PREFIX) + 32


def _check_holder(name: str, role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"role must be one of: {', '.join(ROLES)}")
    if not name.strip() or len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"name must be 1 to {MAX_NAME_LENGTH} characters (got {len(name)})")


def register_token(session: Session, name: str, role: Role, token: str) -> bool:
    """Store the hash of a token made outside servebook, e.g. a worker token a deployment
    hands to its dashboard and its workers alike. False when that token is already stored
    (a restart registers it again), so the call may run at every start."""
    _check_holder(name, role)
    if not token.startswith(TOKEN_PREFIX) or len(token) < MIN_REGISTERED_LENGTH:
        raise ValueError(
            f"a token starts with {TOKEN_PREFIX} and is at least {MIN_REGISTERED_LENGTH} "
            f"characters long, e.g. {TOKEN_PREFIX} and 32 bytes of secrets.token_urlsafe"
        )
    repository = TokenRepository(session)
    if repository.by_hash(hash_token(token)) is not None:
        return False
    repository.add(name, role, hash_token(token))
    log.info("access token registered for %r with role %s", name, role)
    return True


def create_token(
    session: Session, name: str, role: Role, expires_in: timedelta | None = None
) -> str:
    """Store a new token's hash and return the token itself, which is never stored; with
    `expires_in`, it stops working that long from now."""
    _check_holder(name, role)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    if expires_in is not None and expires_in <= timedelta(0):
        raise ValueError("expires-in must be a positive duration")
    expires_at = utcnow() + expires_in if expires_in is not None else None
    TokenRepository(session).add(name, role, hash_token(token), expires_at)
    log.info("access token created for %r with role %s", name, role)
    return token


def start_session(session: Session, token: ApiToken) -> str:
    """A new browser session for an authenticated token; the id returned goes in the cookie
    and only its sha256 is kept. It ends with the token, or after SESSION_LIFETIME."""
    session_id = secrets.token_urlsafe(32)
    lifetime_end = utcnow() + SESSION_LIFETIME
    if token.expires_at is not None:
        lifetime_end = min(lifetime_end, token.expires_at.replace(tzinfo=UTC))
    session.add(
        SignInSession(
            session_hash=hash_token(session_id), token_id=token.id, expires_at=lifetime_end
        )
    )
    session.flush()
    return session_id


def end_session(session: Session, session_id: str) -> None:
    statement = delete(SignInSession).where(SignInSession.session_hash == hash_token(session_id))
    session.execute(statement)


def authenticate_session(session: Session, session_id: str) -> ApiToken | None:
    """The active token behind a browser session; None when it ended, or its token did."""
    return _note_use(TokenRepository(session).by_session(hash_token(session_id)))


def authenticate(session: Session, token: str) -> ApiToken | None:
    """The active token record for `token`, its last use noted; None when unknown, revoked
    or expired."""
    return _note_use(TokenRepository(session).by_hash(hash_token(token)))


def _note_use(record: ApiToken | None) -> ApiToken | None:
    if record is None:
        log.warning("rejected an unknown, revoked or expired access token or session")
        return None
    now = utcnow()
    last = record.last_used_at
    # Writing on every request would serialise readers behind SQLite's one writer.
    if last is None or now - last.replace(tzinfo=UTC) > LAST_USED_RESOLUTION:
        record.last_used_at = now
    return record
