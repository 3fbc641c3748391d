"""GET /api/records: JSON by default, CSV on request, stable field names, filters."""

import csv
import io

import pytest
from fastapi.testclient import TestClient

from app.records.export import CSV_FIELDS
from tests.records.conftest import GLM, MAC_512, accept, post_record

STABLE_CSV = [
    "record_id",
    "review_state",
    "outcome",
    "model",
    "artifact",
    "artifact_format",
    "runtime",
    "runtime_version",
    "hardware",
    "gpu_count",
    "profile",
    "provenance",
    "submitted_by",
    "submitted_at",
    "flags",
    "command",
    "context_length",
    "concurrency",
    "repetitions",
    "ttft_ms",
    "decode_tokens_per_s",
    "itl_ms",
    "e2e_latency_ms",
    "throughput_tokens_per_s",
    "peak_memory_gb_per_gpu",
    "kv_cache_usage_peak",
    "needle_accuracy",
    "token_count_source",
    "memory_source",
]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def seed_records(client: TestClient, valid: dict) -> tuple[int, int]:
    accepted = post_record(client, valid).json()["id"]
    accept(client, accepted)
    valid.update(outcome="load_failure", measurements=[], command='=HYPERLINK("x")')
    failed = post_record(client, valid).json()["id"]
    return accepted, failed


def test_json_export_with_filters(client: TestClient, valid: dict, h200: str) -> None:
    accepted, failed = seed_records(client, valid)
    everything = client.get("/api/records").json()
    assert everything["count"] == 2
    assert [r["record_id"] for r in everything["records"]] == [failed, accepted]
    only = client.get(
        "/api/records", params={"state": "accepted", "model": GLM, "hardware": h200}
    ).json()
    assert [r["record_id"] for r in only["records"]] == [accepted]
    assert only["records"][0]["measurements"][0]["decode_tokens_per_s"] == 95.0
    assert client.get("/api/records", params={"hardware": MAC_512}).json()["count"] == 0
    assert client.get("/api/records", params={"state": "lost"}).status_code == 422


def test_csv_one_row_per_measurement_with_stable_columns(client: TestClient, valid: dict) -> None:
    accepted, failed = seed_records(client, valid)
    for response in (
        client.get("/api/records", params={"format": "csv"}),
        client.get("/api/records", headers={"Accept": "text/csv"}),
    ):
        assert response.headers["content-type"].startswith("text/csv")
        assert response.text.splitlines()[0].split(",") == STABLE_CSV == list(CSV_FIELDS)
        table = rows(response.text)
        assert [int(r["record_id"]) for r in table] == [failed, accepted, accepted]
        assert table[0]["context_length"] == "" and table[0]["outcome"] == "load_failure"
        assert [r["context_length"] for r in table[1:]] == ["4096", "16384"]
        assert table[0]["command"].startswith("'=")  # never a live spreadsheet formula


def test_the_export_format_is_documented(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/records"]["get"]
    assert "decode_tokens_per_s" in operation["description"]
    assert "text/csv" in operation["responses"]["200"]["content"]


def test_the_records_page_lists_and_filters(client: TestClient, valid: dict) -> None:
    accepted, failed = seed_records(client, valid)
    page = client.get("/records", params={"state": "accepted"})
    assert f'data-record="{accepted}"' in page.text and f'data-record="{failed}"' not in page.text
    fragment = client.get("/records", params={"state": "pending"}, headers={"HX-Request": "true"})
    assert fragment.text.lstrip().startswith('<section id="records-table">')


@pytest.mark.parametrize(
    "lead",
    ["\n", "\u00a0", "\u3000", "\uff1d", "\u200b", "\ufeff", "|", "\v", "\f", "\x85", " \t", "="],
)
def test_cells_a_spreadsheet_could_run_are_neutralised(lead: str) -> None:
    from app.records.export import safe_cell

    assert safe_cell(f"{lead}cmd|' /C calc'!A0") == f"'{lead}cmd|' /C calc'!A0"


@pytest.mark.parametrize("text", ["sglang --tp 8", " plain words", "", "0.5.10"])
def test_ordinary_text_is_kept_as_written(text: str) -> None:
    from app.records.export import safe_cell

    assert safe_cell(text) == text
