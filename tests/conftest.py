"""Shared fixtures: a real SQLite file migrated by Alembic and seeded once per run,
copied for every test that needs a database."""

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

# Browser fixtures live in one place: a session-scoped browser imported into several test
# modules would be started once per module, and Playwright allows one at a time.
from tests.live_server import browser, live_server, page  # noqa: E402, F401


def sqlite_settings(path: Path, **overrides: object) -> Settings:
    return Settings(database_url=f"sqlite:///{path}", run_worker=False, **overrides)


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Migrations and seed run once; tests get copies of the result."""
    path = tmp_path_factory.mktemp("template") / "servebook.db"
    settings = sqlite_settings(path)
    upgrade_database(settings)
    with session_scope(settings) as session:
        seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
    return path


@pytest.fixture
def db_path(seeded_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "servebook.db"
    shutil.copyfile(seeded_template, path)
    return path


@pytest.fixture
def settings(db_path: Path) -> Settings:
    return sqlite_settings(db_path)


@pytest.fixture
def session(settings: Settings) -> Iterator[Session]:
    engine = make_engine(settings)
    with make_sessionmaker(engine)() as session:
        yield session
    engine.dispose()


@pytest.fixture
def cli_database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Console commands run in this test read the test's database."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield db_path
    get_settings.cache_clear()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client
