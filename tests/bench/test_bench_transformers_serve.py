"""The benchmark client against a real OpenAI-compatible server: ``transformers serve``.

The served model is a tiny random-weight Llama built for the test (``tiny_llama.py``), so
this checks plumbing (streaming, role chunk before content, usage on the finish chunk, no
``[DONE]``, real tokenizer counts, concurrent requests), not answer quality: the needle is
scored here only for its bookkeeping; scoring itself is tested against the fake server.

Needs ``pip install torch==2.13.0 'transformers[serving]'``; skipped when that is missing.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.bench import BenchPlan, BenchResult, run_benchmark
from app.bench.quality.task_spec import TaskSpec
from app.bench.stream.request import stream_chat
from app.bench.transport.endpoint import ChatEndpoint, chat_completions_url, make_http_client

# One worker runs both tests under pytest-xdist, so the server starts once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("transformers_serve")]

HERE = Path(__file__).resolve().parent
READY_TIMEOUT_S = 120
TINY_TASK = TaskSpec.model_validate(
    {
        "name": "tiny-check",
        "prompts": [
            {"prompt": "Say the word blue.", "check": {"contains": "blue", "ignore_case": True}},
            {"prompt": "What is 2 + 2? Answer with a number.", "check": {"number": 4}},
        ],
    }
)
REQUIRED = ("torch", "transformers", "tokenizers", "fastapi", "uvicorn")


@dataclass(frozen=True)
class RealServer:
    base_url: str
    model: str


def missing_packages() -> list[str]:
    return [name for name in REQUIRED if importlib.util.find_spec(name) is None]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        TOKENIZERS_PARALLELISM="false",
        # One thread for the server leaves the other core to the client being measured.
        OMP_NUM_THREADS="1",
    )
    return env


def wait_until_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"transformers serve exited with {process.returncode}:\n{log.read_text()[-3000:]}"
            )
        try:
            if httpx.get(url, timeout=1, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    pytest.fail(
        f"transformers serve not ready after {READY_TIMEOUT_S} s:\n{log.read_text()[-3000:]}"
    )


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    missing = missing_packages()
    if missing:
        pytest.skip(
            f"needs {', '.join(missing)}: pip install torch==2.13.0 'transformers[serving]'"
        )
    folder = tmp_path_factory.mktemp("tiny-llama")
    model_dir = folder / "model"
    subprocess.run(
        [sys.executable, str(HERE / "tiny_llama.py"), str(model_dir)],
        check=True,
        env=server_env(),
        timeout=180,
        capture_output=True,
    )
    port = free_port()
    log = folder / "server.log"
    command = [
        sys.executable, "-m", "transformers.cli.transformers", "serve", str(model_dir),
        "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=server_env()
        )
    try:
        wait_until_ready(process, f"http://127.0.0.1:{port}/health", log)
        yield RealServer(base_url=f"http://127.0.0.1:{port}/v1", model=str(model_dir))
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_single_stream_against_transformers_serve(real_server: RealServer) -> None:
    async def body() -> None:
        async with make_http_client(
            api_key=None, connect_timeout_s=5, request_timeout_s=60, max_connections=2
        ) as http:
            endpoint = ChatEndpoint(
                http=http,
                url=chat_completions_url(real_server.base_url),
                model=real_server.model,
                request_timeout_s=60,
            )
            messages = [{"role": "user", "content": "Tell me a story about the sea."}]
            samples = [await stream_chat(endpoint, messages, 12) for _ in range(2)]
        for sample in samples:
            assert sample.ok, sample.error
            assert sample.token_count_source == "usage"
            assert sample.output_tokens is not None and 1 <= sample.output_tokens <= 12
            assert sample.prompt_tokens is not None and sample.prompt_tokens > 5
            # The role-only chunk comes first and is not taken for the first token.
            assert sample.first_chunk_ms is not None and sample.ttft_ms is not None
            assert sample.first_chunk_ms <= sample.ttft_ms
            assert sample.token_chunks >= 1

    asyncio.run(body())


def test_full_procedure_against_transformers_serve(real_server: RealServer) -> None:
    plan = BenchPlan(
        base_url=real_server.base_url,
        model=real_server.model,
        lengths=[512, 1536],
        repeat=3,
        max_tokens=16,
        concurrency_levels=[1, 2],
        requests_per_stream=1,
        needle=True,
        request_timeout_s=120,
        task=TINY_TASK,
    )
    progress: list[tuple[str, int, int]] = []
    result = asyncio.run(run_benchmark(plan, on_progress=lambda *event: progress.append(event)))

    assert result.smoke is not None and result.smoke.ok, result.outcome_error
    assert result.smoke.streamed
    assert result.token_count_source == "usage"
    for length in result.lengths:
        assert length.status == "ok", length.error
        assert length.truncated is False
        assert length.prompt_tokens_reported is not None
        # Sized through the real tokenizer's reported counts, not an assumed ratio, and
        # aimed 2 % short of the target.
        target = length.prompt_tokens_target
        assert 0.93 * target <= length.prompt_tokens_reported <= 1.03 * target
        assert length.ttft_ms is not None and length.ttft_ms > 0
        assert length.memory is not None and not length.memory.measured
    assert result.concurrency is not None
    assert [level.concurrency for level in result.concurrency.levels] == [1, 2]
    assert all(level.errors == 0 and level.output_tps for level in result.concurrency.levels)
    for needle in result.needle:
        assert [cell.depth for cell in needle.cells[:3]] == [0.1, 0.5, 0.9]
        assert len(needle.cells) == 9
        assert all(cell.sample.ok and cell.truncated is False for cell in needle.cells)
        assert needle.accuracy is not None
    # Random weights cannot find a passkey; the verdict follows from the scored cells.
    assert result.outcome in ("ok", "wrong_answer")
    assert (result.outcome == "ok") == all(cell.found for n in result.needle for cell in n.cells)
    assert ("needle:1536", 9, 9) in progress
    # The tiny model's pass rate is whatever it earns; every prompt x repeat is counted.
    task = result.task
    assert task is not None and task.total == 2 * 3 and task.errors == 0
    assert task.pass_rate == task.passed / task.total
    assert len(task.failures) == task.total - task.passed
    assert all(prompt.ttft_ms and prompt.prompt_tokens for prompt in task.prompts)
    assert ("task:tiny-check", 6, 6) in progress
    assert BenchResult.model_validate_json(result.model_dump_json()) == result
