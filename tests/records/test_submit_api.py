"""POST /api/records: one validation path, every error at once, flags, retries, limits."""

from typing import Any

import pytest
from fastapi import Request
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models import Measurement, Record, RecordEvent
from app.records.export import record_url
from app.records.storage import service
from app.records.storage.store import RecordStore
from tests.conftest import sqlite_settings
from tests.records.conftest import GLM, GLM_GGUF, GLM_MLX, MAC_512, post_record


def count(session: Session, table: type) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(table)) or 0


def errors_by_field(response: Any, status: int = 422) -> dict[str, str]:
    assert response.status_code == status, response.text
    return {e["field"]: e["message"] for e in response.json()["errors"]}


class TestAccepted:
    def test_created_with_its_measurements_and_a_submitted_event(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        response = post_record(client, valid)
        assert response.status_code == 201, response.text
        body = response.json()
        assert set(body) == {"id", "url", "review_state", "flags"}
        assert body["review_state"] == "pending" and body["flags"] == []
        assert body["url"] == f"http://testserver/records/{body['id']}"
        record = client.get(f"/api/records/{body['id']}").json()
        assert record["provenance"] == "api" and record["submitted_by"] == "local"
        assert [m["context_length"] for m in record["measurements"]] == [4096, 16384]
        assert record["environment"] == valid["environment"]
        assert [e["action"] for e in record["events"]] == ["submitted"]
        assert count(session, Measurement) == 2

    def test_the_url_is_the_record_page_as_url_for_names_it(self, client: TestClient) -> None:
        """The URL is built without url_for's search through every route, and must say the
        same for any record, host, scheme and root path."""
        app = client.app
        for scheme, host, root_path in (
            ("http", b"testserver", ""),
            ("https", b"servebook.example:8443", "/servebook"),
        ):
            scope = {
                "type": "http",
                "app": app,
                "router": app.router,
                "scheme": scheme,
                "server": ("127.0.0.1", 8000),
                "path": "/api/records",
                "root_path": root_path,
                "headers": [(b"host", host)],
                "query_string": b"",
            }
            request = Request(scope)
            for record_id in (1, 7, 10, 123456):
                assert record_url(request, record_id) == str(
                    request.url_for("records:detail", record_id=record_id)
                )

    def test_gpu_count_defaults_to_the_hardware(self, client: TestClient, valid: dict) -> None:
        del valid["gpu_count"]
        record_id = post_record(client, valid).json()["id"]
        assert client.get(f"/api/records/{record_id}").json()["gpu_count"] == 8

    def test_failures_need_no_measurements(self, client: TestClient, valid: dict) -> None:
        valid.update(outcome="load_failure", measurements=[], notes="CUDA OOM while loading")
        assert post_record(client, valid).status_code == 201

    def test_the_record_schema_is_in_openapi(self, client: TestClient) -> None:
        operation = client.get("/openapi.json").json()["paths"]["/api/records"]["post"]
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        assert {
            "model",
            "artifact",
            "runtime",
            "runtime_version",
            "hardware",
            "outcome",
            "measurements",
        } <= set(schema["properties"])
        point = schema["properties"]["measurements"]["items"]["properties"]
        assert {"ttft_ms", "decode_tokens_per_s", "needle_accuracy"} <= set(point)
        assert {"201", "200", "409", "413", "422"} <= set(operation["responses"])


class TestRejected:
    def test_every_error_is_listed_at_once(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        valid.update(
            model="nope", hardware="nowhere", runtime="warp", outcome="great", runtime_version=""
        )
        valid["measurements"][0].update(ttft_ms=-1, needle_accuracy=1.5)
        valid["measurements"][1].update(context_length=0, decode_tokens_per_s=-3)
        errors = errors_by_field(post_record(client, valid))
        assert {
            "model",
            "hardware",
            "runtime",
            "outcome",
            "runtime_version",
            "measurements.0.ttft_ms",
            "measurements.0.needle_accuracy",
            "measurements.1.context_length",
            "measurements.1.decode_tokens_per_s",
        } <= set(errors)
        assert count(session, Record) == 0

    def test_unknown_slugs_name_the_valid_choices(self, client: TestClient, valid: dict) -> None:
        valid.update(model="glm-9", hardware="8x-h900", runtime="tgi", profile="turbo")
        errors = errors_by_field(post_record(client, valid))
        assert GLM in errors["model"] and "choose one of" in errors["model"]
        assert MAC_512 in errors["hardware"]
        assert "sglang" in errors["runtime"] and "vllm" in errors["runtime"]
        assert all(p in errors["profile"] for p in ("balanced", "speed", "long-context"))

    def test_artifact_must_belong_to_the_model(self, client: TestClient, valid: dict) -> None:
        valid["artifact"] = "deepseek-v3-fp8"
        message = errors_by_field(post_record(client, valid))["artifact"]
        assert "deepseek-v3" in message and GLM in message and "glm-5.3-flash-fp8" in message

    def test_runtime_must_load_the_artifact_format(self, client: TestClient, valid: dict) -> None:
        valid["artifact"] = GLM_GGUF  # gguf with SGLang
        message = errors_by_field(post_record(client, valid))["runtime"]
        assert "gguf" in message and "llama-cpp" in message

    @pytest.mark.parametrize(("gpus", "status"), [(0, 422), (9, 409)])
    def test_gpu_count_within_the_hardware(
        self, client: TestClient, valid: dict, gpus: int, status: int
    ) -> None:
        # Below the schema's minimum; more than the hardware has, which the schema cannot
        # state in standard words (a conflict between the fields: 409).
        valid["gpu_count"] = gpus
        assert "gpu_count" in errors_by_field(post_record(client, valid), status)

    def test_a_conflict_beside_a_field_the_schema_refuses_is_one_422_naming_both(
        self, client: TestClient, valid: dict
    ) -> None:
        valid["gpu_count"] = 9
        valid["measurements"][0]["ttft_ms"] = -1
        errors = errors_by_field(post_record(client, valid))
        assert "gpu_count" in errors and "measurements.0.ttft_ms" in errors

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("ttft_ms", -0.1),
            ("itl_ms", -1),
            ("e2e_latency_ms", -5),
            ("throughput_tokens_per_s", -1),
            ("peak_memory_gb_per_gpu", -2),
            ("needle_accuracy", -0.01),
            ("needle_accuracy", 1.01),
            ("kv_cache_usage_peak", 2),
            ("concurrency", 0),
            ("repetitions", 0),
            ("decode_tokens_per_s", "fast"),
            ("ttft_ms", "NaN"),
        ],
    )
    def test_units_and_ranges(
        self, client: TestClient, valid: dict, field: str, value: Any
    ) -> None:
        valid["measurements"][0][field] = value
        assert f"measurements.0.{field}" in errors_by_field(post_record(client, valid))

    def test_a_point_needs_a_measured_value(self, client: TestClient, valid: dict) -> None:
        valid["measurements"] = [{"context_length": 4096, "concurrency": 1}]
        assert "measurements.0" in errors_by_field(post_record(client, valid))

    def test_unknown_fields_are_refused(self, client: TestClient, valid: dict) -> None:
        valid["tokens_per_second"] = 90
        valid["measurements"][0]["tps"] = 90
        errors = errors_by_field(post_record(client, valid))
        assert {"tokens_per_second", "measurements.0.tps"} <= set(errors)

    def test_body_must_be_a_json_object(self, client: TestClient) -> None:
        assert errors_by_field(post_record(client, [1, 2])) == {"body": "send one JSON object"}
        bad = client.post(
            "/api/records", content=b"{nope", headers={"Content-Type": "application/json"}
        )
        assert "body" in errors_by_field(bad)
        form = client.post("/api/records", data={"model": GLM})
        assert form.status_code == 415


class TestFlags:
    def test_decode_above_the_bandwidth_roofline_is_flagged_not_dropped(
        self, client: TestClient, valid: dict
    ) -> None:
        valid["measurements"][0].update(decode_tokens_per_s=2500, itl_ms=None)  # roofline ~2079
        response = post_record(client, valid)
        assert response.status_code == 201
        flags = response.json()["flags"]
        assert [f["code"] for f in flags] == ["decode_above_roofline"]
        assert flags[0]["field"] == "measurements.0.decode_tokens_per_s"
        record = client.get(response.json()["url"].replace("/records/", "/api/records/")).json()
        assert record["measurements"][0]["decode_tokens_per_s"] == 2500

    def test_roofline_uses_the_applied_tensor_parallel(
        self, client: TestClient, valid: dict
    ) -> None:
        valid["applied_values"]["tensor_parallel"] = 1  # 4.8 TB/s / 18.5 GB ~ 260 tok/s
        valid["measurements"][0].update(decode_tokens_per_s=400, itl_ms=2.5)
        assert [f["code"] for f in post_record(client, valid).json()["flags"]] == [
            "decode_above_roofline"
        ]

    def test_memory_above_the_card_and_inconsistent_points(
        self, client: TestClient, valid: dict
    ) -> None:
        valid["measurements"][0].update(peak_memory_gb_per_gpu=150, e2e_latency_ms=100, itl_ms=50)
        codes = {f["code"] for f in post_record(client, valid).json()["flags"]}
        assert codes == {"memory_above_card", "e2e_below_ttft", "itl_decode_mismatch"}

    def test_setup_flags(self, client: TestClient, valid: dict) -> None:
        valid.update(runtime_version="0.4.0")
        valid["measurements"][0]["needle_accuracy"] = 0.2
        codes = {f["code"] for f in post_record(client, valid).json()["flags"]}
        assert codes == {"runtime_below_min_version", "needle_missed_but_ok"}

    def test_a_plausible_mac_record_carries_no_flag(self, client: TestClient, valid: dict) -> None:
        valid.update(
            hardware=MAC_512,
            artifact=GLM_MLX,
            runtime="mlx-lm",
            runtime_version="0.31.2",
            gpu_count=1,
            applied_values={},
        )
        for point in valid["measurements"]:
            point.update(decode_tokens_per_s=60, itl_ms=16.5, peak_memory_gb_per_gpu=260)
        assert post_record(client, valid).json()["flags"] == []


class TestIdempotency:
    def test_a_retry_returns_the_first_record_and_stores_nothing(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        first = post_record(client, valid, key="run-42")
        again = post_record(client, valid, key="run-42")
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.json() == first.json()
        assert count(session, Record) == 1 and count(session, Measurement) == 2
        assert count(session, RecordEvent) == 1

    def test_the_same_key_with_another_body_is_a_conflict(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        first = post_record(client, valid, key="run-43").json()
        valid["measurements"][0]["ttft_ms"] = 251
        conflict = post_record(client, valid, key="run-43")
        assert conflict.status_code == 409
        assert conflict.json()["record_id"] == first["id"]
        assert count(session, Record) == 1

    def test_without_a_key_each_post_is_a_new_record(self, client: TestClient, valid: dict) -> None:
        ids = {post_record(client, valid).json()["id"] for _ in range(2)}
        assert len(ids) == 2


def break_second_measurement(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The database refuses the second measurement (a CHECK constraint) in the write that
    inserts the record row too: after that row is in (SQLite, one statement per table), or
    in the same statement (PostgreSQL)."""
    real = RecordStore.write
    written: list[int] = []

    def failing(self: RecordStore, row: dict, points: list[dict], *rest: Any) -> int:
        written.append(len(points))
        return real(self, row, [points[0], {**points[1], "context_length": 0}], *rest)

    monkeypatch.setattr(RecordStore, "write", failing)
    return written


class TestAllOrNothing:
    def test_a_failure_after_the_record_row_leaves_nothing(
        self, settings: Any, valid: dict, session: Session, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        written = break_second_measurement(monkeypatch)
        from app.main import create_app

        with TestClient(create_app(settings), raise_server_exceptions=False) as client:
            assert post_record(client, valid, key="half").status_code == 500
        assert written and count(session, Record) == 0
        assert count(session, Measurement) == 0 and count(session, RecordEvent) == 0

    def test_inside_a_larger_unit_of_work_only_the_record_is_undone(
        self, session: Session, valid: dict, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        break_second_measurement(monkeypatch)
        with pytest.raises(IntegrityError):
            service.submit_record(session, valid, provenance="api", submitted_by="t")
        assert session.scalar(select(func.count()).select_from(Record)) == 0
        monkeypatch.undo()
        created = service.submit_record(session, valid, provenance="api", submitted_by="t")
        session.commit()
        assert created.created and count(session, Measurement) == 2


class TestLimits:
    def test_an_oversize_body_is_refused_before_parsing(self, db_path: Any, valid: dict) -> None:
        from app.main import create_app

        app = create_app(sqlite_settings(db_path, max_upload_bytes=2_000))
        with TestClient(app) as client:
            valid["notes"] = "x" * 5_000
            response = post_record(client, valid)
            assert response.status_code == 413
            assert "2,000-byte limit" in response.json()["detail"]

            def chunks():  # no Content-Length: counted while streaming
                yield b'{"notes": "'
                for _ in range(10):
                    yield b"y" * 500
                yield b'"}'

            streamed = client.post(
                "/api/records", content=chunks(), headers={"Content-Type": "application/json"}
            )
            assert streamed.status_code == 413
            assert "limit" in streamed.json()["detail"]

    def test_records_are_write_once(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        record_id = post_record(client, valid).json()["id"]
        record = session.get(Record, record_id)
        assert record is not None
        record.notes = "edited later"
        with pytest.raises(ValueError, match="write-once"):
            session.flush()
