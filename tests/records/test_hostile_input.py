"""Hostile input to every body and id the app reads: refused with a 422 (or 404) that names
the field, nothing stored, and nothing left behind that breaks the export afterwards."""

import csv
import io
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.web import MAX_ROW_ID
from tests.records.conftest import post_record
from tests.records.test_form import form_fields, records, submit

BEYOND_64_BITS = 2**63


def raw_post(client: TestClient, url: str, text: str) -> Any:
    return client.post(url, content=text, headers={"Content-Type": "application/json"})


def fields_in(response: Any) -> set[str]:
    return {error["field"] for error in response.json()["errors"]}


def export_still_works(client: TestClient) -> None:
    listing = client.get("/api/records")
    assert listing.status_code == 200
    json.loads(listing.text)  # strict JSON: no NaN slipped into it
    assert client.get("/api/records", params={"format": "csv"}).status_code == 200


# ---------------------------------------------------------------- numbers JSON cannot carry


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize("where", ["applied_values", "environment", "details", "samples"])
def test_non_finite_numbers_are_refused_everywhere_in_the_body(
    client: TestClient, valid: dict, session: Session, token: str, where: str
) -> None:
    before = records(session)
    body = json.dumps(valid)
    placeholder = '"__HOSTILE__"'
    if where == "applied_values":
        valid["applied_values"]["x"] = "__HOSTILE__"
    elif where == "environment":
        valid["environment"]["extra"] = "__HOSTILE__"
    elif where == "details":
        valid["measurements"][0]["details"] = {"p99": "__HOSTILE__"}
    else:
        valid["measurements"][0]["samples"] = {"ttft_ms": [1.0, "__HOSTILE__"]}
    body = json.dumps(valid).replace(placeholder, token)
    response = raw_post(client, "/api/records", body)
    assert response.status_code == 422, response.text
    assert fields_in(response) == {"body"}
    assert token.lstrip("-") in response.text or "too large" in response.text
    assert records(session) == before
    export_still_works(client)


@pytest.mark.parametrize("where", ["applied_values", "details", "samples", "environment"])
def test_non_finite_numbers_from_python_callers_are_refused_by_the_schema(where: str) -> None:
    """Importers and the benchmark client hand over Python objects, not JSON text."""
    from pydantic import ValidationError

    from app.records.schemas import RecordIn
    from tests.records.conftest import VALID

    body = json.loads(json.dumps(VALID))
    point = body["measurements"][0]
    if where == "applied_values":
        body["applied_values"]["x"] = float("nan")
    elif where == "details":
        point["details"] = {"p99": float("inf")}
    elif where == "samples":
        point["samples"] = {"ttft_ms": [float("nan")]}
    else:
        body["environment"]["extra"] = {"x": float("-inf")}
    with pytest.raises(ValidationError):
        RecordIn.model_validate(body)


@pytest.mark.parametrize(
    "line", ["x = NaN", "x = Infinity", "x: -Infinity", "x = 1e400", f"x = {'9' * 5000}"]
)
def test_form_applied_values_refuse_what_cannot_be_stored(
    client: TestClient, h200: str, session: Session, line: str
) -> None:
    before = records(session)
    response = submit(client, form_fields(h200, applied_values=line))
    assert response.status_code == 422
    assert "applied_values" in response.text and records(session) == before
    export_still_works(client)


def test_a_5000_digit_integer_is_a_422_not_a_crash(client: TestClient, valid: dict) -> None:
    text = json.dumps(valid).replace('"context_length": 4096', f'"context_length": {"9" * 5000}')
    response = raw_post(client, "/api/records", text)
    assert response.status_code == 422 and fields_in(response) == {"body"}
    assert "5000 digits" in response.text


def test_integers_past_64_bits_are_refused(client: TestClient, valid: dict) -> None:
    valid["applied_values"]["x"] = BEYOND_64_BITS
    response = post_record(client, valid)
    assert response.status_code == 422 and "2^63" in response.text


# ---------------------------------------------------------------- nesting


@pytest.mark.parametrize(
    "url", ["/api/records", "/api/benchmarks", "/api/estimate", "/api/records/1/review"]
)
def test_a_body_nested_100k_levels_is_refused_before_parsing(client: TestClient, url: str) -> None:
    body = "[" * 100_000 + "]" * 100_000
    response = raw_post(client, url, '{"applied_values": ' + body + "}")
    assert response.status_code == 422, response.text[:300]
    assert "nested 100,001 levels deep" in response.text


@pytest.mark.parametrize(
    ("where", "depth"),
    [("applied_values", 900), ("details", 2000), ("environment", 50), ("applied_values", 9)],
)
def test_free_form_objects_have_a_depth_limit(
    client: TestClient, valid: dict, session: Session, where: str, depth: int
) -> None:
    before = records(session)
    if where == "applied_values":
        valid["applied_values"]["deep"] = "__DEEP__"
    elif where == "details":
        valid["measurements"][0]["details"] = {"deep": "__DEEP__"}
    else:
        valid["environment"]["deep"] = "__DEEP__"
    deep = "[" * depth + "1" + "]" * depth  # as text: json.dumps itself would recurse
    response = raw_post(client, "/api/records", json.dumps(valid).replace('"__DEEP__"', deep))
    assert response.status_code == 422
    field = fields_in(response)
    assert field <= {"body", where, "measurements.0.details"}
    assert records(session) == before


def test_free_form_objects_keep_what_is_within_the_limits(client: TestClient, valid: dict) -> None:
    valid["applied_values"]["speculative"] = {"method": "eagle", "steps": [1, 2, {"k": None}]}
    valid["measurements"][0]["details"] = {"percentiles": {"p50": 1.5, "p99": 3.25}}
    response = post_record(client, valid)
    assert response.status_code == 201, response.text
    stored = client.get(f"/api/records/{response.json()['id']}").json()
    assert stored["applied_values"]["speculative"]["steps"][2] == {"k": None}
    assert stored["measurements"][0]["details"]["percentiles"]["p99"] == 3.25


def test_form_applied_values_nested_1000_levels_is_an_inline_error(
    client: TestClient, h200: str, session: Session
) -> None:
    before = records(session)
    text = "x = " + "[" * 1000 + "]" * 1000
    response = submit(client, form_fields(h200, applied_values=text))
    assert response.status_code == 422 and "nested 1,000 levels deep" in response.text
    as_json = '{"x": ' + "[" * 1000 + "]" * 1000 + "}"
    response = submit(client, form_fields(h200, applied_values=as_json))
    assert response.status_code == 422 and records(session) == before


# ---------------------------------------------------------------- loose types


@pytest.mark.parametrize(
    ("field", "value"), [("context_length", True), ("repetitions", True), ("ttft_ms", True)]
)
def test_booleans_are_not_numbers(client: TestClient, valid: dict, field: str, value: bool) -> None:
    valid["measurements"][0][field] = value
    response = post_record(client, valid)
    assert response.status_code == 422
    assert fields_in(response) == {f"measurements.0.{field}"}


def test_gpu_count_true_is_refused(client: TestClient, valid: dict) -> None:
    valid["gpu_count"] = True
    assert fields_in(post_record(client, valid)) == {"gpu_count"}


def test_benchmark_job_numbers_are_strict(client: TestClient) -> None:
    body = {
        "base_url": "http://127.0.0.1:9/v1",
        "served_model": "m",
        "repeat": True,
        "needle": "yes",
        "ttft_limit_ms": 5,
        "model": "x",
        "artifact": "y",
        "runtime": "z",
        "runtime_version": "1",
        "hardware": "h",
    }
    response = client.post("/api/benchmarks", json=body)
    assert response.status_code == 422
    assert {"repeat", "needle"} <= fields_in(response)


# ---------------------------------------------------------------- ids beyond the database


@pytest.mark.parametrize(
    "url",
    [
        "/records/{id}",
        "/api/records/{id}",
        "/api/records/{id}/acceptance",
        "/benchmarks/{id}",
        "/api/benchmarks/{id}",
        "/records/compare?a={id}&b=1",
        "/records/compare?a=1&b={id}",
    ],
)
@pytest.mark.parametrize("record_id", [BEYOND_64_BITS, 10**30, 0, -1])
def test_ids_outside_the_database_range_are_422(
    client: TestClient, url: str, record_id: int
) -> None:
    response = client.get(url.format(id=record_id), headers={"Accept": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] in {"record_id", "job_id", "a", "b"}


@pytest.mark.parametrize("url", ["/records/{id}/review", "/api/records/{id}/review"])
def test_review_urls_refuse_ids_beyond_64_bits(client: TestClient, url: str) -> None:
    response = client.post(
        url.format(id=BEYOND_64_BITS),
        json={"action": "accept"},
        headers={"Accept": "application/json"},
    )
    assert response.status_code in (403, 422)  # the form's CSRF check may answer first
    api = client.post(f"/api/records/{BEYOND_64_BITS}/review", json={"action": "accept"})
    assert api.status_code == 422 and fields_in(api) == {"record_id"}


def test_the_largest_id_is_simply_not_found(client: TestClient) -> None:
    assert client.get(f"/api/records/{MAX_ROW_ID}").status_code == 404


# ---------------------------------------------------------------- idempotency keys


def test_keys_over_the_limit_are_refused_not_cut(
    client: TestClient, valid: dict, session: Session
) -> None:
    first = post_record(client, valid, key="k" * 200)
    assert first.status_code == 201
    long_a, long_b = "a" * 250 + "1", "a" * 250 + "2"
    for key in (long_a, long_b):
        response = post_record(client, valid, key=key)
        assert response.status_code == 422 and fields_in(response) == {"idempotency_key"}
    # Two keys equal for their first 200 characters are two keys.
    same_prefix = post_record(client, {**valid, "notes": "other"}, key="k" * 199 + "x")
    assert same_prefix.status_code == 201


def test_a_form_key_over_the_limit_is_an_inline_error(
    client: TestClient, h200: str, session: Session
) -> None:
    before = records(session)
    response = submit(client, {**form_fields(h200), "idempotency_key": "z" * 300})
    assert response.status_code == 422 and "at most 200 characters" in response.text
    assert records(session) == before


# ---------------------------------------------------------------- CSV


def test_csv_quotes_cr_and_neutralises_formulas_after_spaces(
    client: TestClient, valid: dict
) -> None:
    commands = ["run\r=cmd|' /C calc'!A0", '  =HYPERLINK("http://x")', "\t+1", " -2", "@SUM(A1)"]
    for number, command in enumerate(commands):
        response = post_record(client, {**valid, "command": command, "notes": str(number)})
        assert response.status_code == 201, response.text
    text = client.get("/api/records", params={"format": "csv"}).text
    # The CR stays inside a quoted cell, for readers that take CR alone as a line break too.
    assert '"run\r=cmd|' in text
    exported = {row["command"] for row in csv.DictReader(io.StringIO(text, newline=""))}
    assert exported == {
        "run\r=cmd|' /C calc'!A0",
        '\'  =HYPERLINK("http://x")',
        "'\t+1",
        "' -2",
        "'@SUM(A1)",
    }
