"""The record builders of the record tests, for the sentinel's page test; and the database
the sentinel's CLI and workers read, for the tests that mark themselves with it."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import get_settings
from tests.records.conftest import h200, valid  # noqa: F401


@pytest.fixture
def cli_database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The test's database as DATABASE_URL, which the CLI and the workers' settings read."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
