"""The catalog revision: one integer that every change to a recipe's inputs bumps (a seed,
a catalog edit, accepting or retracting a record); the records revision: one that every
record and review bumps too, so a pending or rejected record, which changes no figure,
moves it alone; and the catalog definition: one that moves only when the catalog itself
changes (a seed, an edit of its rows), not with records and reviews.

Writers bump them inside their own transaction (services never commit), so a cache sees
the new number exactly when the change it stands for is committed. Each revision bump also
writes what it touched (`CatalogChange`), so a cache a few revisions behind rebuilds only that.
"""

import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any

from sqlalchemy import CTE, Update, and_, bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.models import CatalogChange, CatalogState

REVISION = select(CatalogState.revision).where(CatalogState.id == 1)
RECORDS_REVISION = select(CatalogState.records_revision).where(CatalogState.id == 1)
# Both, in one read: what every cached page is compared with per request.
REVISIONS = select(CatalogState.revision, CatalogState.records_revision).where(CatalogState.id == 1)
# Built once, on the table: every record and review runs it inside its write transaction,
# and no session holds a CatalogState object that the ORM would have to update.
STATE = CatalogState.__table__
CHANGES = CatalogChange.__table__
SCOPE = (CHANGES.c.model_id, CHANGES.c.hardware_id, CHANGES.c.profile_id, CHANGES.c.evidence)
AT_DEFINITION = STATE.c.definition == bindparam("checked_definition")
BUMP = (
    update(STATE)
    .where(STATE.c.id == 1)
    .values(revision=STATE.c.revision + 1, records_revision=STATE.c.records_revision + 1)
    .returning(STATE.c.revision)
)
# A bump only while the catalog definition is the one a writer checked its rows against (a
# record validated against a process's snapshot of the catalog): no row when the catalog
# has moved since. The update holds the state row, so no catalog edit commits in between.
BUMP_AT_DEFINITION = BUMP.where(AT_DEFINITION)
# A write that changes no figure (a pending record, a rejection): the records revision
# alone, so resolved recipes and the pages built from them stay.
BUMP_RECORDS = (
    update(STATE)
    .where(STATE.c.id == 1)
    .values(records_revision=STATE.c.records_revision + 1)
    .returning(STATE.c.records_revision)
)
BUMP_RECORDS_AT_DEFINITION = BUMP_RECORDS.where(AT_DEFINITION)
# What each bump touched, as bound parameters: the statement is built (and cached) once.
RECORD_CHANGE = insert(CHANGES)


def bump_and_record_change(bump: Update, name: str) -> CTE:
    """On PostgreSQL the bump and its change row are one statement (a data-modifying
    WITH), one round trip; SQLite has no UPDATE inside WITH, and its statements cost no
    round trip. The change row's `revision` is the new one; none without a bump."""
    bumped = bump.cte(name)
    return (
        insert(CHANGES)
        .from_select(
            ["revision", "model_id", "hardware_id", "profile_id", "evidence"],
            select(
                bumped.c.revision,
                *(bindparam(column.name, type_=column.type) for column in SCOPE),
            ),
        )
        .returning(CHANGES.c.revision)
        .cte(f"{name}_change")
    )


_BUMPED_CHANGE = bump_and_record_change(BUMP, "bumped")
BUMP_AND_RECORD_CHANGE = select(_BUMPED_CHANGE.c.revision)
# A cache further behind than this many revisions starts again rather than read them all.
MOST_CHANGES_READ = 64
# So no change row older than that is read again: every so many bumps (one short delete,
# not one per write), the rows a reader can no longer ask for go.
PRUNE_EVERY = 256
PRUNE = delete(CHANGES).where(CHANGES.c.revision <= bindparam("oldest_read"))


@dataclass(frozen=True)
class Touched:
    """What a write changes: a model's records on one hardware configuration and profile;
    `evidence` when it changes the accepted ones, which the figures are made of."""

    model_id: int
    hardware_id: int
    profile_id: int | None
    evidence: bool


# Every request of a cached page runs it: built once, with the cache's revision bound per
# call, so it is neither built nor compiled again.
_SINCE = bindparam("since")
CHANGES_SINCE = (
    select(STATE.c.revision.label("current"), CHANGES.c.revision.label("changed"), *SCOPE)
    .select_from(STATE)
    .outerjoin(
        CHANGES,
        and_(
            CHANGES.c.revision > _SINCE,
            CHANGES.c.revision <= STATE.c.revision,
            STATE.c.revision - _SINCE <= MOST_CHANGES_READ,
        ),
    )
    .where(STATE.c.id == 1)
    .order_by(CHANGES.c.revision)
)
DEFINITION = select(STATE.c.definition).where(STATE.c.id == 1)
NEW_DEFINITION = update(STATE).where(STATE.c.id == 1)


def current_revision(session: Session) -> int:
    return session.scalar(REVISION) or 0


def current_revision_on(connection: Connection) -> int:
    """The same read on a bare connection, for checks that need no session."""
    return connection.scalar(REVISION) or 0


@dataclass(frozen=True, slots=True)
class Revisions:
    """The catalog revision and the records revision, read together."""

    catalog: int
    records: int


def current_revisions_on(connection: Connection) -> Revisions:
    row = connection.execute(REVISIONS).first()
    return Revisions(0, 0) if row is None else Revisions(row[0] or 0, row[1] or 0)


def current_revisions(session: Session) -> Revisions:
    """Both, in one read, before what a page lists is read (as below)."""
    return current_revisions_on(session.connection())


def current_records_revision(session: Session) -> int:
    """Read before what a page lists is read: a record committed after this read moves it,
    so a page built from older rows is never kept under a newer number."""
    return session.scalar(RECORDS_REVISION) or 0


def bump_revision(
    session: Session, touched: Touched | None = None, definition: int | None = None
) -> bool:
    """One atomic increment; concurrent writers on PostgreSQL each get their own step (the
    update holds the row until commit), and the change row takes the revision it made.
    Without `touched`, anything in the catalog may have changed; `touched` without
    evidence moves the records revision alone, with no change row. With `definition`, only
    while the catalog is at that definition: False (nothing written) when it has moved."""
    if touched is not None and not touched.evidence:
        return bump_records_revision(session, definition)
    scope = (
        touched_scope(touched)
        if touched
        else {"model_id": None, "hardware_id": None, "profile_id": None, "evidence": True}
    )
    connection = session.connection()
    if definition is not None:
        revision = connection.execute(
            BUMP_AT_DEFINITION, {"checked_definition": definition}
        ).scalar()
        if revision is None:
            return False
        connection.execute(RECORD_CHANGE, {"revision": revision, **scope})
    elif connection.dialect.name == "postgresql":
        # No state row: raises.
        revision = connection.execute(BUMP_AND_RECORD_CHANGE, scope).scalar_one()
    else:
        revision = connection.execute(BUMP).scalar_one()
        connection.execute(RECORD_CHANGE, {"revision": revision, **scope})
    prune_if_due(connection, revision)
    return True


def bump_records_revision(session: Session, definition: int | None = None) -> bool:
    """A change of the records alone; with `definition`, only while the catalog is at it."""
    connection = session.connection()
    if definition is None:
        connection.execute(BUMP_RECORDS)
        return True
    bumped = connection.execute(BUMP_RECORDS_AT_DEFINITION, {"checked_definition": definition})
    return bumped.scalar() is not None


def touched_scope(touched: Touched) -> dict[str, Any]:
    """The bound values of BUMPED_CHANGE for what a write touched."""
    return {
        "model_id": touched.model_id,
        "hardware_id": touched.hardware_id,
        "profile_id": touched.profile_id,
        "evidence": touched.evidence,
    }


def prune_if_due(connection: Connection, revision: int) -> None:
    """After a bump to `revision`: every PRUNE_EVERY bumps, the change rows no reader
    asks for any more go."""
    if revision % PRUNE_EVERY == 0:
        connection.execute(PRUNE, {"oldest_read": revision - MOST_CHANGES_READ})


def changes_since(session: Session, revision: int) -> tuple[int, list[Touched] | None]:
    """The current revision and what every revision after `revision` touched, in one query;
    None when that cannot be told (a change of the whole catalog, a revision with no row,
    or too many to read): then everything may have changed."""
    if revision < 0:
        return current_revision(session), None
    rows = session.execute(CHANGES_SINCE, {"since": revision}).all()
    current = (rows[0].current if rows else 0) or 0
    found = [row for row in rows if row.changed is not None]
    if current == revision:
        return current, []
    if len(found) != current - revision or any(row.model_id is None for row in found):
        return current, None
    return current, [
        Touched(row.model_id, row.hardware_id, row.profile_id, row.evidence) for row in found
    ]


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


class SqliteRevisionGlance:
    """Both revisions read on the event loop, for the cached pages of a SQLite file: a
    read of one row through SQLite's own driver takes microseconds under WAL, where a
    reader never waits for a writer, while a trip to a worker thread and a pooled
    connection took more than the rest of a cached answer (a kept page ran at 0.45x the
    static file). It never waits: when SQLite is busy (a writer recovering the log, say)
    it answers None and the caller reads in a worker thread as before."""

    STATEMENT = "SELECT revision, records_revision FROM catalog_state WHERE id = 1"

    def __init__(self, path: str) -> None:
        self.path = path
        self.connection: sqlite3.Connection | None = None
        self.reads = 0  # answered here, not in a worker thread

    def __call__(self) -> Revisions | None:
        try:
            if self.connection is None:
                # Autocommit: each read sees the newest commit, and holds no snapshot open.
                self.connection = sqlite3.connect(
                    self.path, timeout=0, isolation_level=None, check_same_thread=False
                )
            row = self.connection.execute(self.STATEMENT).fetchone()
        except sqlite3.Error:
            self.close()
            return None
        self.reads += 1
        return Revisions(0, 0) if row is None else Revisions(row[0] or 0, row[1] or 0)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
