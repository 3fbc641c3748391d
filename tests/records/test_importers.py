"""Importers read real-shaped result files of vLLM, GuideLLM and llama-bench."""

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy.orm import Session

from app.cli import main
from app.config import get_settings
from app.records.importers import ImportFormatError, read_result
from app.records.importers.result_file import AlreadyImported, import_record
from app.records.storage.service import get_record
from app.records.storage.validation import RecordInvalid
from tests.records.conftest import GLM, GLM_FP8, GLM_GGUF, MAC_512

DATA = Path(__file__).parent / "data"


def data(name: str) -> bytes:
    return (DATA / name).read_bytes()


class TestVllm:
    def test_save_result_with_detailed_samples(self) -> None:
        run = read_result(data("vllm_bench_serve.json"))
        assert (run.format, run.tool) == ("vllm", "vllm bench serve")
        [point] = run.measurements
        source = json.loads(data("vllm_bench_serve.json"))
        assert point["context_length"] == 4096  # total_input_tokens / completed
        assert point["concurrency"] == 1 and point["repetitions"] == 8
        assert point["ttft_ms"] == pytest.approx(source["median_ttft_ms"], abs=1e-3)
        assert point["decode_tokens_per_s"] == pytest.approx(
            1000 / source["median_tpot_ms"], abs=1e-3
        )
        assert point["itl_ms"] == pytest.approx(source["median_itl_ms"], abs=1e-3)
        assert point["e2e_latency_ms"] == pytest.approx(source["median_e2el_ms"], abs=1e-3)
        assert point["throughput_tokens_per_s"] == pytest.approx(
            source["output_throughput"], abs=1e-3
        )
        assert len(point["samples"]["ttft_ms"]) == 8  # seconds in the file, ms here
        assert point["samples"]["ttft_ms"][0] == pytest.approx(source["ttfts"][0] * 1000)
        assert point["details"]["percentiles"]["p99_ttft_ms"] == source["p99_ttft_ms"]

    def test_append_result_json_lines_give_one_point_per_run(self) -> None:
        run = read_result(data("vllm_bench_serve_append.jsonl"))
        assert [(p["context_length"], p["concurrency"]) for p in run.measurements] == [
            (2048, 1),
            (2048, 8),
        ]
        assert run.measurements[1]["throughput_tokens_per_s"] == 478.3

    def test_no_completed_request_is_refused(self) -> None:
        source = json.loads(data("vllm_bench_serve.json"))
        source.update(completed=0, failed=8)
        with pytest.raises(ImportFormatError, match="no request completed"):
            read_result(json.dumps(source).encode())

    def test_unbounded_rate_without_a_cap_means_every_prompt_at_once(self) -> None:
        source = json.loads(data("vllm_bench_serve.json"))
        source.update(max_concurrency=None, max_concurrent_requests=None)
        assert read_result(json.dumps(source).encode()).measurements[0]["concurrency"] == 8


class TestGuidellm:
    def test_one_point_per_benchmark_from_successful_requests(self) -> None:
        run = read_result(data("guidellm_report.json"))
        source = json.loads(data("guidellm_report.json"))
        assert (run.format, run.tool_version) == ("guidellm", "0.5.1")
        sync, concurrent = run.measurements
        metrics = source["benchmarks"][0]["metrics"]
        assert sync["concurrency"] == 1 and concurrent["concurrency"] == 4
        assert sync["context_length"] == 4096 and sync["repetitions"] == 20
        ttft = metrics["time_to_first_token_ms"]["successful"]["median"]
        itl = metrics["inter_token_latency_ms"]["successful"]["median"]
        latency_s = metrics["request_latency"]["successful"]["median"]
        assert sync["ttft_ms"] == pytest.approx(ttft, abs=1e-3)
        assert sync["decode_tokens_per_s"] == pytest.approx(1000 / itl, abs=1e-3)
        assert sync["e2e_latency_ms"] == pytest.approx(latency_s * 1000, abs=1e-2)
        assert sync["details"]["ttft_ms"]["percentiles"]["p99"] > 0
        assert run.environment["platform"].startswith("Linux")


class TestLlamaBench:
    def test_prompt_and_generation_rows(self) -> None:
        run = read_result(data("llama_bench.json"))
        source = json.loads(data("llama_bench.json"))
        assert (run.format, run.runtime_version) == ("llama-bench", "b6850")
        assert run.environment["runtime_build"] == "a1b2c3d4"
        prompt, generation = run.measurements
        assert prompt["context_length"] == 512 and generation["context_length"] == 128
        assert prompt["ttft_ms"] == pytest.approx(512 / source[0]["avg_ts"] * 1000, abs=1e-3)
        assert prompt["details"]["prefill_tokens_per_s"] == source[0]["avg_ts"]
        assert generation["decode_tokens_per_s"] == pytest.approx(source[1]["avg_ts"], abs=1e-3)
        assert generation["samples"]["tokens_per_s"] == source[1]["samples_ts"]
        assert generation["repetitions"] == 5
        assert generation["details"]["model_type"].startswith("glm4moe")
        assert generation["details"]["test"] == "tg128"


class TestDetection:
    @pytest.mark.parametrize(
        ("content", "message"),
        [
            (b"", "empty"),
            (b"\xff\xfe", "UTF-8"),
            (b"{nope", "not JSON"),
            (b'{"hello": 1}', "unrecognised"),
            (b"[]", "unrecognised"),
        ],
    )
    def test_bad_files_say_what_is_wrong(self, content: bytes, message: str) -> None:
        with pytest.raises(ImportFormatError, match=message):
            read_result(content)

    def test_a_named_format_must_match(self) -> None:
        with pytest.raises(ImportFormatError, match="GuideLLM"):
            read_result(data("vllm_bench_serve.json"), "guidellm")


def meta(hardware: str, **overrides: Any) -> dict[str, Any]:
    values = {
        "model": GLM,
        "artifact": GLM_FP8,
        "runtime": "vllm",
        "hardware": hardware,
        "runtime_version": "0.30.1",
        "profile": "balanced",
    }
    return {**values, **overrides}


class TestImportRecord:
    def test_provenance_keeps_the_file_hash_and_tool(self, session: Session, h200: str) -> None:
        content = data("guidellm_report.json")
        submission = import_record(
            session,
            content,
            meta(h200),
            submitted_by="ci",
            filename="/tmp/reports/guidellm_report.json",
        )
        session.commit()
        record = get_record(session, submission.record.id)
        detail = record.provenance_detail
        assert record.provenance == "import" and record.review_state == "pending"
        assert detail["sha256"] == hashlib.sha256(content).hexdigest()
        assert (detail["tool"], detail["tool_version"]) == ("guidellm", "0.5.1")
        assert detail["filename"] == "guidellm_report.json"
        assert len(record.measurements) == 2 and record.flags == []

    def test_an_impossible_tpot_is_flagged_not_stored_as_a_speed(
        self, session: Session, h200: str
    ) -> None:
        # A median TPOT of 0.004 ms: 250,000 tok/s for one request, read from answers that
        # arrived in one piece. Above the card's roofline it is contradicted, as a reported
        # figure is; above any card's reach it is not measurable whatever the card.
        source = json.loads(data("vllm_bench_serve.json"))
        source["median_tpot_ms"] = 0.004
        submission = import_record(
            session, json.dumps(source).encode(), meta(h200), submitted_by="ci"
        )
        session.commit()
        record = get_record(session, submission.record.id)
        codes = {flag["code"] for flag in record.flags}
        assert {"decode_contradicted", "decode_not_measurable"} <= codes, record.flags
        assert "decode_above_roofline" not in codes
        said = next(f["message"] for f in record.flags if f["code"] == "decode_contradicted")
        assert said.startswith("contradicted:") and "250,000 tok/s imported" in said

    def test_file_and_metadata_errors_come_back_together(self, session: Session) -> None:
        with pytest.raises(RecordInvalid) as caught:
            import_record(session, b'{"x": 1}', meta("nowhere"), submitted_by="ci")
        assert {e.field for e in caught.value.errors} >= {"file", "hardware"}

    def test_runtime_version_from_the_file(self, session: Session) -> None:
        submission = import_record(
            session,
            data("llama_bench.json"),
            meta(MAC_512, artifact=GLM_GGUF, runtime="llama-cpp", runtime_version=None),
            submitted_by="ci",
        )
        assert submission.record.runtime_version == "b6850"
        assert submission.record.environment["runtime_build"] == "a1b2c3d4"


@pytest.mark.postgresql  # the file's hash is read from a JSON column on both databases
class TestSameFileTwice:
    def test_a_second_import_is_refused_naming_the_first(self, session: Session, h200: str) -> None:
        content = data("guidellm_report.json")
        first = import_record(session, content, meta(h200), submitted_by="ci")
        session.commit()
        with pytest.raises(AlreadyImported) as caught:
            import_record(session, content, meta(h200, notes="again"), submitted_by="someone")
        assert caught.value.record_id == first.record.id
        assert f"record {first.record.id}" in caught.value.message
        assert hashlib.sha256(content).hexdigest()[:12] in caught.value.message
        assert caught.value.status_code == 409

    def test_a_retry_under_the_same_key_gets_the_first_record(
        self, session: Session, h200: str
    ) -> None:
        content = data("guidellm_report.json")
        first = import_record(session, content, meta(h200), submitted_by="ci", idempotency_key="k1")
        session.commit()
        again = import_record(session, content, meta(h200), submitted_by="ci", idempotency_key="k1")
        assert again.record.id == first.record.id and again.created is False

    def test_another_file_is_imported(self, session: Session, h200: str) -> None:
        import_record(session, data("guidellm_report.json"), meta(h200), submitted_by="ci")
        session.commit()
        other = import_record(session, data("vllm_bench_serve.json"), meta(h200), submitted_by="ci")
        assert other.created is True


class TestCli:
    @pytest.fixture(autouse=True)
    def database(self, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
        monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
        get_settings.cache_clear()
        yield
        get_settings.cache_clear()

    def test_import_command(self, session: Session, h200: str) -> None:
        path = DATA / "vllm_bench_serve.json"
        args = [
            "import",
            str(path),
            "--model",
            GLM,
            "--hardware",
            h200,
            "--artifact",
            GLM_FP8,
            "--runtime",
            "vllm",
            "--runtime-version",
            "0.30.1",
            "--profile",
            "balanced",
        ]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert hashlib.sha256(path.read_bytes()).hexdigest() in result.output
        record = get_record(session, 1)
        assert record.provenance_detail["source"] == "cli"
        assert record.measurements[0].context_length == 4096
        again = CliRunner().invoke(main, args)
        assert again.exit_code == 1
        assert "already imported as record 1" in again.output

    def test_import_command_lists_every_error(self, h200: str) -> None:
        args = [
            "import",
            str(DATA / "llama_bench.json"),
            "--model",
            GLM,
            "--hardware",
            h200,
            "--artifact",
            GLM_FP8,
            "--runtime",
            "vllm",
            "--format",
            "guidellm",
        ]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1
        assert "FILE:" in result.output and "--runtime-version:" in result.output
        assert "runtime_version:" not in result.output
