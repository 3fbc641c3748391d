"""Shared fixtures: a real database migrated by Alembic and seeded once per run, copied
for every test that needs one.

The database is a fixture parameter. Every database test runs on a SQLite file; tests
marked `postgresql`, and the modules listed in ON_POSTGRESQL (the ones that exercise the
database: services, API write paths, job claims), run on a real PostgreSQL server too, which the
suite starts and stops itself (tests/pg_server.py). `--postgresql=all` runs every database
test on both, `--postgresql=off` none on PostgreSQL.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.seed import seed_catalog
from app.catalog.seed_schema import load_catalog
from app.config import PROJECT_ROOT, Settings, get_settings
from app.db import make_engine, make_sessionmaker, session_scope, upgrade_database
from app.main import create_app

# Servers the suite starts in processes of their own skip the background warm-up too (as
# `database_settings` does in this one): it would only compete with the tests for the CPU.
os.environ.setdefault("SERVEBOOK_WARM_UP", "false")

# Browser fixtures live in one place: a session-scoped browser imported into several test
# modules would be started once per module, and Playwright allows one at a time.
from tests.live_server import (  # noqa: E402, F401
    browser,
    live_server,
    outside_browser_loop,
    page,
)
from tests.pg_server import PostgresServer


@pytest.fixture(autouse=True)
def no_browser_loop_outside_browser_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests that do not drive the browser run outside its event loop (see
    `outside_browser_loop`); module fixtures that run a coroutine use it themselves."""
    if "browser" in request.fixturenames:
        yield
        return
    with outside_browser_loop():
        yield


# Beside a SQLite file the app keeps its own signing key; a server database has no folder.
TEST_SECRET_KEY = "test-secret-key-not-for-serving"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--postgresql",
        choices=("marked", "all", "off"),
        default="marked",
        help="which database tests also run on PostgreSQL (default: those marked postgresql)",
    )


# Modules whose database tests all run on PostgreSQL too: the write paths (record API and
# review, hostile input at the storage limits, benchmark jobs, tasks). Elsewhere a test
# opts in with @pytest.mark.postgresql. Pages and read-only views stay on SQLite: the
# queries behind them are the ones these tests already run.
ON_POSTGRESQL = {
    "tests/records/test_submit_api.py",
    "tests/records/test_review.py",
    "tests/records/test_consequences.py",
    "tests/records/test_hostile_input.py",
    "tests/jobs/test_bench_jobs.py",
    "tests/tasks/test_tasks_api.py",
    "tests/tasks/test_task_cli.py",
    "tests/records/test_ingest.py",
    "tests/records/test_export_stream.py",
    "tests/records/test_known_good.py",
    "tests/jobs/test_remote_worker_api.py",
}


def runs_on_postgresql(metafunc: pytest.Metafunc) -> bool:
    module = Path(metafunc.definition.path).relative_to(PROJECT_ROOT).as_posix()
    return module in ON_POSTGRESQL or metafunc.definition.get_closest_marker("postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a database test on both backends when it is marked, or when asked for all.
    A test that asks for `db_path` reads the SQLite file itself and stays on SQLite."""
    if "database_backend" not in metafunc.fixturenames or "db_path" in metafunc.fixturenames:
        return
    chosen = metafunc.definition.iter_markers("parametrize")
    if any("database_backend" in str(marker.args[0]) for marker in chosen):
        return  # the test names its backend itself
    mode = metafunc.config.getoption("--postgresql")
    if mode == "all" or (mode == "marked" and runs_on_postgresql(metafunc)):
        metafunc.parametrize("database_backend", ["sqlite", "postgresql"], indirect=True)


def database_settings(url: str, **overrides: object) -> Settings:
    if not url.startswith("sqlite"):
        overrides.setdefault("secret_key", TEST_SECRET_KEY)
    overrides.setdefault("warm_up", False)  # no thread of its own querying behind a test
    # Nor a process of its own per app (a second each): tests/records/test_submission_process.py
    # starts it, and every server the tests start as a user would has it.
    overrides.setdefault("submission_process", False)
    # Nor a write limit: tests write as fast as they can (tests/security/test_write_rate.py
    # sets one).
    overrides.setdefault("write_rate_per_minute", 0)
    return Settings(database_url=url, run_worker=False, **overrides)


def sqlite_settings(path: Path, **overrides: object) -> Settings:
    return database_settings(f"sqlite:///{path}", **overrides)


def migrate_and_seed(settings: Settings) -> None:
    upgrade_database(settings)
    with session_scope(settings) as session:
        seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Migrations and seed run once; tests get copies of the result."""
    path = tmp_path_factory.mktemp("template") / "servebook.db"
    migrate_and_seed(sqlite_settings(path))
    return path


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster per test process, started only when a test needs it."""
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> str:
    """A migrated and seeded database that every PostgreSQL test is copied from."""
    name = postgres_server.create_database(name="servebook_template")
    migrate_and_seed(database_settings(postgres_server.url(name)))
    return name


@pytest.fixture
def db_path(seeded_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "servebook.db"
    shutil.copyfile(seeded_template, path)
    return path


@pytest.fixture
def database_backend(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture
def database_url(database_backend: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh migrated and seeded database of the test's backend, as a SQLAlchemy URL."""
    if database_backend == "sqlite":
        yield f"sqlite:///{request.getfixturevalue('db_path')}"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database(template=request.getfixturevalue("postgres_template"))
    yield server.url(name)
    server.drop_database(name)


@pytest.fixture
def settings(database_url: str) -> Settings:
    return database_settings(database_url)


@pytest.fixture
def session(settings: Settings) -> Iterator[Session]:
    engine = make_engine(settings)
    with make_sessionmaker(engine)() as session:
        yield session
    engine.dispose()


@pytest.fixture
def cli_database(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Console commands run in this test read the test's database."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    if not database_url.startswith("sqlite"):
        monkeypatch.setenv("SERVEBOOK_SECRET_KEY", TEST_SECRET_KEY)
    get_settings.cache_clear()
    yield database_url
    get_settings.cache_clear()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client
