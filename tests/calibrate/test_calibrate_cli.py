"""`servebook calibrate` against servers of known timing: a fixed gap between tokens and a
fixed first-token time fit, and the estimate on that hardware and runtime then follows the
server, calibrated, for the model probed and for others; timing that is noise is stored as
failed and changes nothing."""

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.calibrate.cli import EXIT_FAILED, EXIT_UNREACHABLE
from app.cli import main
from app.main import create_app
from app.models import CalibrationProfile
from tests.conftest import sqlite_settings

MODEL, HARDWARE, RUNTIME = "llama-3.1-8b-instruct", "h100-80gb", "vllm"
ITL_MS, TTFT_MS = 20.0, 40.0
STEADY = f"fake?itl_ms={ITL_MS:g}&ttft_ms={TTFT_MS:g}&tokens=24"
NOISY = "fake?itl_ms=20&ttft_ms=40&tokens=24&noise=6"
FAST_PROBE = ["--batches", "1,2,4", "--budget-s", "120"]


def calibrate(base_url: str, served: str, *extra: str) -> Result:
    args = ["calibrate", "--base-url", base_url, "--model", MODEL, "--hardware", HARDWARE]
    args += ["--runtime", RUNTIME, "--served-model", served, "--by", "tester", *FAST_PROBE]
    # On a thread of its own, as in a terminal (the probe runs its own event loop).
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, main, [*args, *extra]).result()


def profiles(db_path: Path) -> list[CalibrationProfile]:
    from app.db import make_engine, make_sessionmaker

    engine = make_engine(sqlite_settings(db_path))
    with make_sessionmaker(engine)() as session:
        found = list(session.scalars(select(CalibrationProfile)))
        session.expunge_all()
    engine.dispose()
    return found


def estimate_decode(
    db_path: Path, model: str = MODEL, hardware: str = HARDWARE, **asked: int
) -> dict:
    body = {"model": model, "hardware": hardware, "runtime": RUNTIME, "evidence": "ignore"}
    body |= asked
    with TestClient(create_app(sqlite_settings(db_path))) as client:
        response = client.post("/api/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_steady_server_is_calibrated_and_the_estimate_follows_it(
    fake_server: str, db_path: Path
) -> None:
    before = estimate_decode(db_path)["decode_tokens_per_s"]
    assert before["basis"] == "estimated"
    result = calibrate(fake_server, STEADY)
    assert result.exit_code == 0, result.output
    assert "effective bandwidth" in result.output and " of 3.35 TB/s" in result.output
    assert "fit error" in result.output and "first token: " in result.output
    [profile] = profiles(db_path)
    assert profile.status == "ok" and profile.reason == ""
    assert profile.run_by == "tester" and profile.runtime == RUNTIME
    assert profile.fit_error is not None and profile.fit_error < 0.1
    assert len(profile.points["decode"]) == 9  # three batches at three depths
    decode = estimate_decode(db_path)["decode_tokens_per_s"]
    assert decode["basis"] == "calibrated"
    server = 1000 / ITL_MS
    middle = (decode["low"] + decode["high"]) / 2
    assert abs(middle / server - 1) < 0.15, (decode, server)
    assert decode["low"] < server < decode["high"]
    # One request's first token follows the server's too: its prefill, a step and the time
    # per request the probe left, within the fit's spread, at a prompt length it probed.
    ttft = estimate_decode(db_path, prompt_tokens=1024, output_tokens=64)["ttft_ms"]
    assert ttft["low"] < TTFT_MS < ttft["high"]
    assert abs((ttft["low"] + ttft["high"]) / 2 / TTFT_MS - 1) < 0.2, ttft
    # Every model on that hardware and runtime is calibrated, not only the one probed.
    other = estimate_decode(db_path, "qwen3-32b")["decode_tokens_per_s"]
    assert other["basis"] == "calibrated"
    # The pages show it too: the fit table and the detail page, with its words.
    with TestClient(create_app(sqlite_settings(db_path))) as client:
        assert client.get(f"/models/{MODEL}").status_code == 200
        detail = client.get(f"/models/{MODEL}/hardware/{HARDWARE}/profiles/balanced")
        assert detail.status_code == 200
        assert "calibrated on this hardware" in detail.text
        assert "fitted on this hardware by a calibration probe" in detail.text
    # Other hardware keeps the shipped coefficients.
    assert estimate_decode(db_path, hardware="h200-141gb")["decode_tokens_per_s"]["basis"] == (
        "estimated"
    )


@pytest.mark.parametrize(
    "served",
    [
        pytest.param(f"{STEADY}&burst=8", id="floods-of-eight-chunks"),
        pytest.param(f"{STEADY}&burst=24", id="whole-answers-at-once"),
        # Two tokens a chunk, a chunk every 40 ms: 20 ms a token, as above.
        pytest.param(
            f"fake?itl_ms={2 * ITL_MS:g}&ttft_ms={TTFT_MS:g}&tokens=24&per_chunk=2&burst=4",
            id="two-tokens-a-chunk-in-floods",
        ),
    ],
)
def test_a_server_that_delivers_tokens_in_bursts_is_calibrated_at_its_mean_rate(
    fake_server: str, db_path: Path, served: str
) -> None:
    """Tokens made every 20 ms but written several at a time after a stall, or a whole
    answer at once: gaps between chunks say nothing of the rate, the answers' ends do."""
    result = calibrate(fake_server, served)
    assert result.exit_code == 0, result.output
    [profile] = profiles(db_path)
    assert profile.status == "ok", profile.reason
    decode = estimate_decode(db_path)["decode_tokens_per_s"]
    assert decode["basis"] == "calibrated"
    server = 1000 / ITL_MS
    assert abs((decode["low"] + decode["high"]) / 2 / server - 1) < 0.15, (decode, server)


def test_a_server_whose_timing_is_noise_is_stored_as_failed(
    fake_server: str, db_path: Path
) -> None:
    result = calibrate(fake_server, NOISY)
    assert result.exit_code == EXIT_FAILED, result.output
    assert "calibration failed" in result.output
    [profile] = profiles(db_path)
    assert profile.status == "failed"
    assert profile.refusal["kind"] in ("noisy", "poor_fit", "contradictory"), profile.refusal
    assert profile.reason
    assert estimate_decode(db_path)["decode_tokens_per_s"]["basis"] == "estimated"


def test_nothing_answering_exits_with_its_own_code_and_stores_nothing(db_path: Path) -> None:
    result = calibrate("http://127.0.0.1:9/v1", STEADY)
    assert result.exit_code == EXIT_UNREACHABLE, result.output
    assert profiles(db_path) == []


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--model", "no-such-model", "no-such-model is neither a catalog slug"),
        ("--hardware", "no-such-card", "no hardware 'no-such-card'"),
        ("--runtime", "no-such-runtime", "does not say which runtime"),
    ],
)
def test_unknown_names_are_refused_before_any_probe(
    fake_server: str, db_path: Path, flag: str, value: str, words: str
) -> None:
    result = calibrate(fake_server, STEADY, flag, value)
    assert result.exit_code == 1, result.output
    assert words in result.output
    assert profiles(db_path) == []


def test_hardware_not_in_the_catalog_is_added_by_its_figures_and_calibrated(
    fake_server: str, db_path: Path
) -> None:
    served = "fake?itl_ms=25&ttft_ms=40&tokens=24"
    new = ["--hardware", "arc-b580-12gb", "--platform", "vulkan", "--runtime", "llama-cpp"]
    new += ["--memory-gb", "12", "--bandwidth-gb-s", "456"]
    result = calibrate(fake_server, served, *new)
    assert result.exit_code == 0, result.output
    assert " of 0.456 TB/s" in result.output
    body = {"model": MODEL, "hardware": "arc-b580-12gb", "runtime": "llama-cpp"}
    with TestClient(create_app(sqlite_settings(db_path))) as client:
        answer = client.post("/api/estimate", json={**body, "evidence": "ignore"}).json()
        assert answer["hardware"] == "arc-b580-12gb"
        decode = answer["decode_tokens_per_s"]
        assert decode["basis"] == "calibrated"
        assert abs((decode["low"] + decode["high"]) / 2 / (1000 / 25) - 1) < 0.15
        assert client.get("/calibrate", params={"hardware": "arc-b580-12gb"}).status_code == 200


LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


@pytest.mark.parametrize("given", ["hub_id", "config_json"])
def test_the_model_is_taken_as_a_hub_id_or_a_config_json(
    db_path: Path, tmp_path: Path, given: str
) -> None:
    """Accepted before the probe: nothing answers here, so the run ends unreachable (3),
    not refused (1)."""
    if given == "hub_id":
        model = "meta-llama/Llama-3.1-8B-Instruct"  # the catalog's own entry for it
    else:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(LLAMA_8B_CONFIG))
        model = str(path)
    result = calibrate("http://127.0.0.1:9/v1", STEADY, "--model", model)
    assert result.exit_code == EXIT_UNREACHABLE, result.output
    assert profiles(db_path) == []


def test_a_config_json_that_is_not_one_is_refused_in_words(db_path: Path, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("[1, 2]")
    result = calibrate("http://127.0.0.1:9/v1", STEADY, "--model", str(path))
    assert result.exit_code == 1, result.output
    assert "is not a model's config.json" in result.output
    assert "Traceback" not in result.output


def test_a_platform_the_runtime_cannot_run_on_is_refused_before_probing(
    fake_server: str, db_path: Path
) -> None:
    new = ["--hardware", "my-cpu-box", "--platform", "cpu", "--runtime", "vllm"]
    new += ["--memory-gb", "64", "--bandwidth-gb-s", "80"]
    result = calibrate(fake_server, STEADY, *new)
    assert result.exit_code == 1, result.output
    assert "vllm does not run on cpu hardware like my-cpu-box" in result.output
    assert "nothing was probed" in result.output and "Traceback" not in result.output
    assert "decode" not in result.output  # no probe step was reported
    assert profiles(db_path) == []


def test_a_served_model_the_server_does_not_serve_is_refused_at_once(
    fake_server: str, db_path: Path
) -> None:
    result = calibrate(fake_server, "fake?http_status=404")
    assert result.exit_code == 1, result.output
    assert "the server does not serve 'fake?http_status=404'" in result.output
    assert "it serves fake" in result.output
    assert "decode" not in result.output  # stopped before the first step
    assert result.output.count("HTTP 404") == 1
    assert profiles(db_path) == []
