"""On a SQLite file the revisions of a cached page are read on the event loop, through
SQLite's own driver: every read sees the newest commit, and a busy database is never waited
for (the read goes to a worker thread instead, and the page is still answered)."""

import sqlite3
from pathlib import Path

from fastapi.testclient import TestClient

from app.catalog.revision import Revisions, SqliteRevisionGlance
from tests.recipes.test_serving import DETAIL, post_record


def revisions_in(path: Path) -> Revisions:
    with sqlite3.connect(path) as connection:
        row = connection.execute(SqliteRevisionGlance.STATEMENT).fetchone()
    return Revisions(row[0], row[1])


def test_each_read_sees_the_newest_commit(db_path: Path) -> None:
    glance = SqliteRevisionGlance(str(db_path))
    try:
        assert glance() == revisions_in(db_path)
        with sqlite3.connect(db_path) as other:  # another process's write, say
            other.execute("UPDATE catalog_state SET records_revision = records_revision + 7")
        moved = glance()
        assert moved == revisions_in(db_path) and moved is not None and moved.records >= 7
        assert glance.reads == 2
    finally:
        glance.close()


def test_a_busy_database_is_not_waited_for(db_path: Path) -> None:
    glance = SqliteRevisionGlance(str(db_path))
    holder = sqlite3.connect(db_path, isolation_level=None)
    try:
        assert glance() is not None
        glance.close()  # a fresh connection, as after a restart, meets the lock
        # An exclusive hold (a checkpoint that truncates, a writer that left WAL) shuts
        # readers out until it ends.
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        assert glance() is None
        holder.close()  # the hold ends
        assert glance() == revisions_in(db_path)
    finally:
        holder.close()
        glance.close()


def test_a_busy_database_still_answers_the_kept_page(client: TestClient, db_path: Path) -> None:
    rendered = client.get(DETAIL)
    post_record(client)
    changed = client.get(DETAIL)
    assert changed.headers["etag"] != rendered.headers["etag"]
    glance = client.app.state.revision_glance  # type: ignore[attr-defined]
    glance.close()
    glance.path = str(db_path.parent / "missing" / "servebook.db")  # it cannot open: an error
    reads = glance.reads
    again = client.get(DETAIL)  # read in a worker thread: the same kept body
    assert again.status_code == 200 and again.content == changed.content
    assert glance.reads == reads
