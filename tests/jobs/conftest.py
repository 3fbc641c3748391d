"""A fake OpenAI-compatible server in its own process, for the worker and crash tests."""

from collections.abc import Iterator

import pytest

from tests.fake_server_process import fake_server_process


@pytest.fixture(scope="session")
def fake_server() -> Iterator[str]:
    """Base URL (.../v1) of a deterministic streaming server on 127.0.0.1."""
    with fake_server_process() as url:
        yield url
