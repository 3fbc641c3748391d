"""Access tokens: stored as their sha256 only, shown once when created."""

import hashlib
import logging
import secrets
from datetime import UTC, timedelta
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db import utcnow
from app.models import ApiToken

log = logging.getLogger("servebook.security")

# A worker token runs benchmark jobs (claims them, renews their leases, posts results) and
# nothing else: it neither submits nor reviews records.
Role = Literal["submitter", "maintainer", "worker"]
ROLES: tuple[Role, ...] = ("submitter", "maintainer", "worker")
TOKEN_PREFIX = "sb_"
LAST_USED_RESOLUTION = timedelta(hours=1)
# The column's length: PostgreSQL refuses a longer name, SQLite would keep it; both refuse here.
MAX_NAME_LENGTH: int = ApiToken.__table__.c.name.type.length


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TokenRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def count_active(self) -> int:
        statement = select(func.count()).select_from(ApiToken).where(ApiToken.revoked_at.is_(None))
        return self.session.scalar(statement) or 0

    def by_hash(self, token_hash: str) -> ApiToken | None:
        statement = select(ApiToken).where(
            ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None)
        )
        return self.session.scalars(statement).one_or_none()

    def add(self, name: str, role: Role, token_hash: str) -> ApiToken:
        token = ApiToken(name=name, role=role, token_hash=token_hash)
        self.session.add(token)
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


def create_token(session: Session, name: str, role: Role) -> str:
    """Store a new token's hash and return the token itself, which is never stored."""
    _check_holder(name, role)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    TokenRepository(session).add(name, role, hash_token(token))
    log.info("access token created for %r with role %s", name, role)
    return token


def authenticate(session: Session, token: str) -> ApiToken | None:
    """The active token record for `token`, its last use noted; None when unknown or revoked."""
    record = TokenRepository(session).by_hash(hash_token(token))
    if record is None:
        log.warning("rejected an unknown or revoked access token")
        return None
    now = utcnow()
    last = record.last_used_at
    # Writing on every request would serialise readers behind SQLite's one writer.
    if last is None or now - last.replace(tzinfo=UTC) > LAST_USED_RESOLUTION:
        record.last_used_at = now
    return record
