"""The runtime version each engine reports, read at its own path by the benchmark client."""

from typing import Any

import pytest

from app.bench.result import ServerVersion
from app.bench.server_version import read_server_version_sync
from app.bench.transport.hosts import HostNotAllowedError
from tests.jobs.test_bench_jobs import closed_port
from tests.sentinel.servers import BASELINE_TIMING, timed_server


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        (
            {"/version": {"version": "0.12.0"}},
            ServerVersion(runtime="vllm", version="0.12.0", source="/version"),
        ),
        (
            {"/get_server_info": {"version": "0.5.9", "model_path": "x", "tp_size": 1}},
            ServerVersion(runtime="sglang", version="0.5.9", source="/get_server_info"),
        ),
        (
            {"/props": {"build_info": "b6100-1a2b3c4d", "total_slots": 1}},
            ServerVersion(runtime="llama-cpp", version="b6100", source="/props"),
        ),
        (
            {"/api/version": {"version": "0.11.11"}},
            ServerVersion(runtime="ollama", version="0.11.11", source="/api/version"),
        ),
        ({}, None),  # says nothing: unknown, never guessed
        ({"/version": {"version": True}}, None),
    ],
)
def test_each_engine_is_read_at_its_own_path(
    answers: dict[str, Any], expected: ServerVersion | None
) -> None:
    with timed_server(BASELINE_TIMING, answers=answers) as server:
        assert read_server_version_sync(server.base_url) == expected
        assert read_server_version_sync(server.root_url) == expected


def test_nothing_answering_gives_no_version() -> None:
    assert read_server_version_sync(f"http://127.0.0.1:{closed_port()}/v1") is None


def test_a_host_outside_the_allow_list_is_refused_before_any_request() -> None:
    with pytest.raises(HostNotAllowedError):
        read_server_version_sync("http://example.com/v1")
    assert (
        read_server_version_sync("http://example.com:1/v1", allowed_hosts=["example.com"]) is None
    )
