"""The catalog revision: one integer that every change to a recipe page's inputs bumps; and
the catalog definition: one that moves only when the catalog itself changes (a seed, an
edit of its rows), not with records and reviews.

Writers bump them inside their own transaction (services never commit), so a cache sees
the new number exactly when the change it stands for is committed.
"""

import secrets

from sqlalchemy import select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.models import CatalogState

REVISION = select(CatalogState.revision).where(CatalogState.id == 1)
# Built once, on the table: every record and review runs it inside its write transaction,
# and no session holds a CatalogState object that the ORM would have to update.
STATE = CatalogState.__table__
BUMP = update(STATE).where(STATE.c.id == 1).values(revision=STATE.c.revision + 1)
DEFINITION = select(STATE.c.definition).where(STATE.c.id == 1)
NEW_DEFINITION = update(STATE).where(STATE.c.id == 1)


def current_revision(session: Session) -> int:
    return session.scalar(REVISION) or 0


def current_revision_on(connection: Connection) -> int:
    """The same read on a bare connection, for checks that need no session."""
    return connection.scalar(REVISION) or 0


def bump_revision(session: Session) -> None:
    """One atomic increment; concurrent writers on PostgreSQL each get their own step."""
    session.execute(BUMP)


def current_definition(session: Session) -> int:
    """One scalar read on the session's connection, in its transaction."""
    return session.connection().scalar(DEFINITION) or 0


def new_definition() -> int:
    # A fresh random number, not a count: two databases (a copy, a fresh file) that reach
    # the same count by different edits never share one, so a cache of the catalog keyed
    # on it alone cannot serve one database's rows for another's.
    return secrets.randbits(62) + 1


def bump_definition(session: Session) -> None:
    """Mark the catalog's rows as changed (and the recipe pages with them)."""
    session.execute(NEW_DEFINITION.values(definition=new_definition()))
    bump_revision(session)
