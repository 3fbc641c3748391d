"""A fake OpenAI-compatible server in its own process, for the worker and crash tests."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKE_SERVER = Path(__file__).resolve().parents[1] / "bench" / "fake_openai_server.py"


@pytest.fixture(scope="session")
def fake_server() -> Iterator[str]:
    """Base URL (.../v1) of a deterministic streaming server on 127.0.0.1."""
    process = subprocess.Popen(
        [sys.executable, str(FAKE_SERVER), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("PORT "), line
    yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    process.terminate()
    process.wait(timeout=10)
