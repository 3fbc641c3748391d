"""A fake OpenAI-compatible server in its own process, and the CLI on the test's database."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import get_settings

FAKE_SERVER = Path(__file__).resolve().parents[1] / "bench" / "fake_openai_server.py"


@pytest.fixture(scope="module")
def fake_server() -> Iterator[str]:
    """Base URL (.../v1) of a streaming server on 127.0.0.1 whose timing the model name sets."""
    process = subprocess.Popen(
        [sys.executable, str(FAKE_SERVER), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("PORT "), line
    yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(autouse=True)
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
