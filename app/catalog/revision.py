"""The catalog revision: one integer that every change to a recipe page's inputs bumps.

Writers bump it inside their own transaction (services never commit), so a cache sees the
new revision exactly when the change it stands for is committed.
"""

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.models import CatalogState

REVISION = select(CatalogState.revision).where(CatalogState.id == 1)
# Built once, on the table: every record and review runs it inside its write transaction,
# and no session holds a CatalogState object that the ORM would have to update.
STATE = CatalogState.__table__
BUMP = update(STATE).where(STATE.c.id == 1).values(revision=STATE.c.revision + 1)


def current_revision(session: Session) -> int:
    return session.scalar(REVISION) or 0


def current_revision_on(connection: Connection) -> int:
    """The same read on a bare connection, for checks that need no session."""
    return connection.scalar(REVISION) or 0


def bump_revision(session: Session) -> None:
    """One atomic increment; concurrent writers on PostgreSQL each get their own step."""
    session.execute(BUMP)
