"""A fake OpenAI-compatible server in its own process, and the CLI on the test's database."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import get_settings
from tests.fake_server_process import fake_server_process


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    """Base URL (.../v1) of a streaming server on 127.0.0.1 whose timing the model name sets."""
    with fake_server_process() as url:
        yield url


@pytest.fixture(autouse=True)
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
