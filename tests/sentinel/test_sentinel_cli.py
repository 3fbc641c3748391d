"""`servebook sentinel`: a known-good record's plan run again against a server, compared
within its noise bands, stored as a pending record with the verdict; exits 0, 1 or 3."""

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cli import main
from app.models import Record
from app.sentinel.cli import EXIT_REGRESSED, EXIT_UNREACHABLE
from tests.jobs.test_bench_jobs import closed_port
from tests.sentinel.servers import BASELINE_TIMING, SLOW_DECODE_TIMING, timed_server

VLLM_TARGET = [
    "--catalog-model",
    "llama-3.1-8b-instruct",
    "--artifact",
    "llama-3.1-8b-instruct-bf16",
    "--runtime",
    "vllm",
    "--hardware",
    "rtx-4090-24gb",
    "--profile",
    "balanced",
    "--command-line",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct",
]


pytestmark = pytest.mark.usefixtures("cli_database")


def invoke(args: list[str]) -> Result:
    # On a thread of its own, as in a terminal (see tests/jobs/test_bench_cli.py).
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, main, args).result()


def baseline_record(base_url: str, version: str, *pins: str) -> int:
    args = ["bench", "--base-url", base_url, "--model", "fake", "--lengths", "512"]
    args += ["--concurrency", "1,2", "--repeat", "4", "--max-tokens", "16", "--timeout", "5"]
    args += ["--record", *VLLM_TARGET, "--runtime-version", version, *pins]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    return int(result.output.rsplit("#", 1)[1].split()[0])


def sentinel(record_id: int, base_url: str, json_path: Path) -> Result:
    args = ["sentinel", "--record", str(record_id), "--base-url", base_url]
    return invoke([*args, "--json", str(json_path)])


def stored(session: Session, record_id: int) -> Record:
    return session.scalars(select(Record).where(Record.id == record_id)).one()


def test_slower_decode_is_a_regression_beyond_its_band(
    session: Session, client: TestClient, tmp_path: Path
) -> None:
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as fast:
        baseline = baseline_record(fast.base_url, "0.24.0")
    with timed_server(SLOW_DECODE_TIMING, {"version": "0.25.0"}) as slow:
        result = sentinel(baseline, slow.base_url, tmp_path / "s.json")
    assert result.exit_code == EXIT_REGRESSED, result.output
    body = json.loads((tmp_path / "s.json").read_text())
    verdict = body["sentinel"]
    assert verdict["baseline_record"] == baseline
    assert verdict["verdict"] == "regressed"
    assert verdict["summary"].startswith("regressed: ")
    assert "decode -" in verdict["summary"]
    decode = [
        c
        for c in verdict["changes"]
        if c["metric"] == "decode_tokens_per_s" and "ramp" not in c["point"]
    ]
    assert decode, verdict["changes"]
    change = decode[0]
    assert set(change) >= {"metric", "baseline", "now", "change", "band", "significant"}
    assert change["significant"] is True and change["direction"] == "worse"
    assert change["now"] < change["baseline"] / 2
    assert change["band"]["baseline"]["high"] < change["band"]["now"]["low"] or (
        change["band"]["now"]["high"] < change["band"]["baseline"]["low"]
    )
    record = stored(session, body["record_id"])
    assert record.review_state == "pending"
    assert record.sentinel_verdict == "regressed"
    assert record.runtime_version == "0.25.0"  # as the server reported it
    assert record.pinned["server_reported"] == {
        "runtime": "vllm",
        "version": "0.25.0",
        "source": "/version",
    }
    assert record.provenance_detail["sentinel"]["baseline_record"] == baseline
    # The version is the server's own: nothing disagrees.
    assert "server_reported_mismatch" not in {flag["code"] for flag in record.flags}
    # The record's page says the verdict and each change, in the reader's language.
    for lang, verdict, where, worse in (
        ("en", "regressed", "512 tokens x 1", "beyond noise (worse)"),
        ("ko", "회귀함", "512 토큰 × 동시 1", "노이즈를 넘어섬(악화)"),
        ("ja", "劣化", "512 トークン × 同時 1", "ノイズを超える（悪化）"),
    ):
        page = client.get(f"/records/{body['record_id']}?lang={lang}").text
        section = page.split('<section id="sentinel"', 1)[1].split("</section>", 1)[0]
        assert 'data-verdict="regressed"' in section and f"<strong>{verdict}</strong>" in section
        assert f'href="http://testserver/records/{baseline}"' in section
        row = section.split('<tr data-metric="decode_tokens_per_s" data-significant="true">')[1]
        row = row.split("</tr>", 1)[0]
        assert where in row and worse in row, (lang, row)
        provenance = page.split('id="provenance"', 1)[1].split("</section>", 1)[0]
        assert "baseline_record" not in provenance  # not printed raw


def test_identical_server_reports_no_regression(session: Session, tmp_path: Path) -> None:
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as first:
        baseline = baseline_record(first.base_url, "0.24.0")
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as twin:
        result = sentinel(baseline, twin.base_url, tmp_path / "s.json")
    assert result.exit_code == 0, result.output
    body = json.loads((tmp_path / "s.json").read_text())
    assert body["sentinel"]["verdict"] == "no_regression", body["sentinel"]["summary"]
    assert body["sentinel"]["summary"] == "no regression"
    assert not [c for c in body["sentinel"]["changes"] if c["significant"]]
    assert {c["metric"] for c in body["sentinel"]["changes"]} >= {
        "ttft_ms",
        "decode_tokens_per_s",
        "throughput_tokens_per_s",
    }
    assert stored(session, body["record_id"]).sentinel_verdict == "no_regression"


def test_nothing_answering_exits_3_and_stores_nothing(session: Session, tmp_path: Path) -> None:
    with timed_server(BASELINE_TIMING) as first:
        baseline = baseline_record(first.base_url, "0.24.0")
    before = len(session.scalars(select(Record.id)).all())
    result = sentinel(baseline, f"http://127.0.0.1:{closed_port()}/v1", tmp_path / "s.json")
    assert result.exit_code == EXIT_UNREACHABLE, result.output
    assert "could not connect" in result.output
    assert not (tmp_path / "s.json").exists()
    assert len(session.scalars(select(Record.id)).all()) == before


def test_unknown_record_is_a_usage_error(tmp_path: Path) -> None:
    result = sentinel(999_999, "http://127.0.0.1:9/v1", tmp_path / "s.json")
    assert result.exit_code == 2, result.output
    assert "No record 999999" in result.output


def test_record_whose_server_reports_another_version_is_flagged(session: Session) -> None:
    pins = ["--image-digest", "sha256:" + "ab" * 32, "--model-revision", "0e9e39f2"]
    pins += ["--out-of-scope", "tool calls", "--out-of-scope", "contexts past 8K"]
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as server:
        record_id = baseline_record(server.base_url, "0.5.9", *pins)  # declared vLLM 0.5.9
    record = stored(session, record_id)
    assert record.pinned["image_digest"] == "sha256:" + "ab" * 32
    assert record.pinned["model_revision"] == "0e9e39f2"
    assert record.pinned["out_of_scope"] == ["tool calls", "contexts past 8K"]
    codes = {flag["code"]: flag for flag in record.flags}
    mismatch = codes["server_reported_mismatch"]
    assert mismatch["message"] == "the record says vLLM 0.5.9, the server reported vLLM 0.24.0"
    assert record.pinned["server_reported"]["version"] == "0.24.0"


def test_record_whose_server_reports_another_runtime_is_flagged(session: Session) -> None:
    sglang = {"/get_server_info": {"version": "0.5.9", "model_path": "x", "tp_size": 1}}
    with timed_server(BASELINE_TIMING, answers=sglang) as server:
        record_id = baseline_record(server.base_url, "0.24.0")  # declared vLLM 0.24.0
    record = stored(session, record_id)
    mismatch = {flag["code"]: flag for flag in record.flags}["server_reported_mismatch"]
    assert mismatch["field"] == "runtime"
    assert mismatch["message"] == "the record says vLLM 0.24.0, the server reported SGLang 0.5.9"


def test_a_rebaseline_keeps_its_runs_and_later_judgements_band_by_them(
    session: Session, client: TestClient, tmp_path: Path
) -> None:
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as server:
        first = baseline_record(server.base_url, "0.24.0")
        args = ["sentinel", "--record", str(first), "--base-url", server.base_url]
        made = invoke([*args, "--rebaseline", "--baseline-runs", "2"])
        assert made.exit_code == 0, made.output
        assert "its bands holding 2 runs against this server" in made.output
        baseline = int(made.output.rsplit("pass --record ", 1)[1].split()[0])
        (kept,) = stored(session, baseline).provenance_detail["baseline_runs"]
        assert {(p["kind"], p["concurrency"]) for p in kept} == {
            ("single", 1),
            ("ramp", 1),
            ("ramp", 2),
        }
        judged = sentinel(baseline, server.base_url, tmp_path / "s.json")
        # The first record is one run: its judgement says what its bands leave out.
        once = sentinel(first, server.base_url, tmp_path / "once.json")
    assert judged.exit_code == 0, judged.output
    verdict = json.loads((tmp_path / "s.json").read_text())["sentinel"]
    assert verdict["baseline_runs"] == 2
    decode = next(c for c in verdict["changes"] if c["metric"] == "decode_tokens_per_s")
    assert "over 2 runs against the same server" in decode["band"]["baseline"]["basis"]
    assert "the baseline is one run" not in judged.output
    assert json.loads((tmp_path / "once.json").read_text())["sentinel"]["baseline_runs"] == 1
    assert "the baseline is one run: its bands hold that run's repeats" in once.output
    # The record's page counts the kept runs, in the reader's language, and does not print
    # their points.
    for lang, said in (
        ("en", "2 runs against the same server"),
        ("ko", "같은 서버에 대한 2회 실행"),
        ("ja", "同じサーバーに対する 2 回の実行"),
    ):
        page = client.get(f"/records/{baseline}?lang={lang}")
        assert page.status_code == 200
        assert said in page.text, lang
        assert "samples" not in page.text.split('id="provenance"')[1].split("</section>")[0]


def test_baseline_runs_without_a_rebaseline_is_a_usage_error(tmp_path: Path) -> None:
    args = ["sentinel", "--record", "1", "--base-url", "http://127.0.0.1:9/v1"]
    result = invoke([*args, "--baseline-runs", "3"])
    assert result.exit_code == 2 and "give --rebaseline" in result.output
    result = invoke([*args, "--rebaseline", "--baseline-runs", "1"])
    assert result.exit_code == 2 and "--baseline-runs" in result.output
