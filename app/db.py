"""Engine, declarative base, the per-request and per-command units of work, migrations."""

import os
import select
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from alembic import command
from alembic.config import Config
from fastapi import Depends, Request
from sqlalchemy import JSON, DateTime, MetaData, create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from app.config import Settings
from app.resources import MIGRATIONS_DIR

try:  # POSIX; elsewhere SQLite's busy handler alone orders the writers of other processes
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

# Named constraints are what let SQLite batch migrations alter them later.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the web process and benchmark workers read while one writes.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    # Under WAL, NORMAL syncs the log at checkpoints rather than at every commit: a commit
    # survives the process crashing (not a power cut since the last checkpoint), and the
    # one write lock is no longer held through an fsync per record.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


# A server that does not answer fails a request in seconds rather than hanging it.
SERVER_CONNECT_TIMEOUT_S = 10


def make_engine(settings: Settings, connections: int | None = None) -> Engine:
    """Create the engine; SQLite gets its folder, WAL and foreign keys. A database server
    (PostgreSQL) gets a connect timeout, and a pooled connection the server has closed is
    replaced when it is checked out, so a server restart costs one reconnect, not one
    failed request per pooled connection. `connections`: a pool of exactly that many,
    kept open, for callers that never ask for more at once (a capacity limiter's size)."""
    sizing: dict[str, Any] = (
        {} if connections is None else {"pool_size": connections, "max_overflow": 0}
    )
    if not settings.is_sqlite:
        engine = create_engine(
            settings.database_url,
            connect_args={"connect_timeout": SERVER_CONNECT_TIMEOUT_S},
            **sizing,
        )
        event.listen(engine, "checkout", _replace_if_closed_by_server)
        event.listen(engine, "connect", CONNECTIONS_OPENED)
        return engine
    if settings.sqlite_path is not None:
        settings.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        settings.database_url, connect_args={"check_same_thread": False}, **sizing
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "connect", CONNECTIONS_OPENED)
    return engine


def _replace_if_closed_by_server(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """What pool_pre_ping is for, without its round trip per checkout: an idle pooled
    connection has nothing to read unless the server has written to it, and a server that
    shuts down or ends the session writes its farewell and closes the socket. Readable
    or closed, the connection is dropped; the pool then checks out (or opens) another."""
    if dbapi_connection.closed or dbapi_connection.broken:
        raise DisconnectionError("the connection is closed")
    # poll, not select: a busy server's descriptors pass select's limit of 1024.
    waiting = select.poll()
    waiting.register(dbapi_connection.fileno(), select.POLLIN | select.POLLPRI)
    if waiting.poll(0):  # readable, hung up or in error
        raise DisconnectionError("the server closed the connection or sent it a notice")


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def request_unit_of_work(request: Request, writes: bool = False) -> Iterator[Session]:
    """One session per request: commit when the block ends, roll back if it raises.
    `writes`: on the submissions' own pool (app.main), not the pages'."""
    factory: sessionmaker[Session] = (
        request.state.write_sessions if writes else request.state.sessionmaker
    )
    with factory() as session:
        try:
            yield session
            if session.in_transaction():  # a write_transaction inside may have committed
                session.commit()
        except Exception:
            session.rollback()
            raise


def get_session(request: Request) -> Iterator[Session]:
    """The request's unit of work as a dependency (its handler runs in between)."""
    with request_unit_of_work(request) as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session, scope="function")]


# ---------------------------------------------------------------- SQLite write transactions

# One writer per SQLite database at a time. Writers queue on locks instead of in SQLite's
# busy handler, which polls in sleeps of up to 100 ms and lets a late writer overtake an
# early one: in a process on a thread lock, and between the app processes that serve one
# file (uvicorn --workers, or several `servebook serve`) on a lock file beside it, so each
# process parses and checks its next record while another writes. Other writers (commands,
# pages that save a form) still wait in the busy handler, which keeps it all correct.
_SQLITE_WRITERS: dict[str, "SqliteWriterQueue"] = {}


@dataclass(frozen=True)
class Holds:
    count: int
    total_s: float
    largest_s: float
    # The holding threads' CPU time in all: what the hold takes beyond it, it spent waiting
    # for the interpreter while other threads ran.
    cpu_s: float

    def since(self, earlier: "Holds") -> "Holds":
        """The holds after `earlier` (the largest of all, as a largest cannot be taken apart)."""
        return Holds(
            self.count - earlier.count,
            self.total_s - earlier.total_s,
            self.largest_s,
            self.cpu_s - earlier.cpu_s,
        )


class HoldStats:
    """How long this process's writers hold the write lock (app.observability.runtime)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count, self.total_s, self.largest_s, self.cpu_s = 0, 0.0, 0.0, 0.0

    def add(self, seconds: float, cpu_seconds: float) -> None:
        with self.lock:
            self.count += 1
            self.total_s += seconds
            self.largest_s = max(self.largest_s, seconds)
            self.cpu_s += cpu_seconds

    def merge(self, holds: Holds) -> None:
        """Another process's holds, counted as this one's (the submission process,
        app.records.endpoints.submission_process)."""
        with self.lock:
            self.count += holds.count
            self.total_s += holds.total_s
            self.largest_s = max(self.largest_s, holds.largest_s)
            self.cpu_s += holds.cpu_s

    def read(self) -> Holds:
        with self.lock:
            return Holds(self.count, self.total_s, self.largest_s, self.cpu_s)


WRITE_LOCK_HOLDS = HoldStats()


class OpenedConnections:
    """Database connections this process opened: a pool that keeps up opens none under
    load; one that overflows opens and closes one per request past its size."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, _dbapi_connection: Any, _record: Any) -> None:
        self.count += 1  # one bytecode add under the GIL; a lost count is harmless


CONNECTIONS_OPENED = OpenedConnections()
_SQLITE_WRITERS_GUARD = threading.Lock()


class SqliteWriterQueue:
    """The turn to write to one SQLite file: this process's thread lock, then the file lock
    every process takes (held by one thread of a process at a time, as flock is per open
    file). An in-memory database has no file and no other process."""

    def __init__(self, database: str | None) -> None:
        self.threads = threading.Lock()
        self.path = (
            f"{database}-writer"
            if database
            and database != ":memory:"
            and not database.startswith("file:")
            and fcntl is not None
            else None
        )
        self.descriptor: int | None = None
        self.opened_by = 0  # a forked child opens its own: a shared descriptor shares the lock
        # Clear while a thread of this process holds the write lock (the file lock taken,
        # not only waited for): reads on the event loop give way to it (app.write_priority).
        self.free = threading.Event()
        self.free.set()

    def acquire(self) -> None:
        self.threads.acquire()
        try:
            if self.path is not None:
                if self.descriptor is None or self.opened_by != os.getpid():
                    self.descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                    self.opened_by = os.getpid()
                fcntl.flock(self.descriptor, fcntl.LOCK_EX)  # the GIL is free while it waits
        except BaseException:
            self.threads.release()
            raise
        self.free.clear()

    def release(self) -> None:
        self.free.set()
        try:
            if self.descriptor is not None:
                fcntl.flock(self.descriptor, fcntl.LOCK_UN)
        finally:
            self.threads.release()


def _sqlite_writer_queue(engine: Engine) -> SqliteWriterQueue:
    with _SQLITE_WRITERS_GUARD:
        key = str(engine.url)
        if key not in _SQLITE_WRITERS:
            _SQLITE_WRITERS[key] = SqliteWriterQueue(engine.url.database)
        return _SQLITE_WRITERS[key]


def sqlite_write_lock_free(engine: Engine) -> threading.Event:
    """Set unless a thread of this process holds the write lock of the engine's SQLite file."""
    return _sqlite_writer_queue(engine).free


def _queue_sqlite_writer(connection: Connection) -> SqliteWriterQueue | None:
    """Wait for this writer's turn, then take the write lock up front with BEGIN IMMEDIATE:
    under WAL a transaction that read first and writes later fails at once
    (SQLITE_BUSY_SNAPSHOT) when another writer committed in between, instead of waiting.
    A connection that already wrote in this transaction holds the write lock: it goes on,
    for queueing behind a writer that waits for that lock would never end."""
    dbapi_connection = connection.connection.dbapi_connection
    if dbapi_connection is None or dbapi_connection.in_transaction:
        return None
    queue = _sqlite_writer_queue(connection.engine)
    queue.acquire()
    try:
        dbapi_connection.execute("BEGIN IMMEDIATE")  # pysqlite leaves explicit BEGINs to us
    except BaseException:
        queue.release()
        raise
    return queue


@contextmanager
def write_transaction(session: Session) -> Iterator[None]:
    """A unit of work's short write: the block runs in one transaction that commits when it
    ends and rolls back if it raises. Read and check before entering it; on SQLite the
    block holds the database's only write lock."""
    connection = session.connection()  # checked out before queueing, never while holding
    queue = _queue_sqlite_writer(connection) if connection.dialect.name == "sqlite" else None
    held_from, cpu_from = time.perf_counter(), time.thread_time()
    try:
        yield
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        if queue is not None:
            queue.release()
            WRITE_LOCK_HOLDS.add(time.perf_counter() - held_from, time.thread_time() - cpu_from)


# ---------------------------------------------------------------- commands and migrations


def migrations_config() -> Config:
    """Alembic's configuration for the migrations the code ships, from wherever it runs: the
    checkout's migrations/ or the installed package's copy. (pyproject.toml's [tool.alembic]
    serves the `alembic` command in a checkout, for writing new revisions.)"""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def alembic_config(settings: Settings) -> Config:
    config = migrations_config()
    config.set_main_option("sqlalchemy.url", settings.database_url)
    return config


def upgrade_database(settings: Settings, revision: str = "head") -> None:
    """Apply migrations up to `revision` on the configured database."""
    engine = make_engine(settings)
    with engine.begin() as connection:
        config = alembic_config(settings)
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
    engine.dispose()


@contextmanager
def session_scope(settings: Settings) -> Iterator[Session]:
    """A unit of work for one command: commit at the end, roll back on error."""
    engine = make_engine(settings)
    try:
        with make_sessionmaker(engine)() as session, session.begin():
            yield session
    finally:
        engine.dispose()
