"""Queue a re-check of a record on a new version through the API: the record's own plan,
pinned to its baseline; bad input is a 422 naming the field, a record that keeps too little
to repeat a 409 naming the field that would make up for it."""

import json

from fastapi.testclient import TestClient

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.records.storage.service import submit_record
from tests.records.conftest import post_record


def test_recheck_queues_the_records_plan(client: TestClient, valid: dict) -> None:
    created = post_record(client, valid)
    assert created.status_code == 201, created.text
    record_id = created.json()["id"]
    body = {"base_url": "http://127.0.0.1:8000/v1", "served_model": "glm"}
    response = client.post(f"/api/records/{record_id}/recheck", json=body)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["status"] == "queued"
    assert job["kind"] == "sentinel"
    assert job["target"]["sentinel_baseline"] == record_id
    assert job["target"]["runtime_version"] == valid["runtime_version"]
    # Read back from the record's points: its lengths, one request at a time.
    assert job["plan"]["lengths"] == [4096, 16384]
    assert job["plan"]["concurrency_levels"] == [1]
    assert job["plan"]["model"] == "glm"


def test_recheck_refuses_bad_input(client: TestClient, valid: dict) -> None:
    record_id = post_record(client, valid).json()["id"]
    far = client.post(
        f"/api/records/{record_id}/recheck", json={"base_url": "http://example.com/v1"}
    )
    assert far.status_code == 422, far.text
    assert [error["field"] for error in far.json()["errors"]] == ["base_url"]
    no_model = client.post(
        f"/api/records/{record_id}/recheck", json={"base_url": "http://127.0.0.1:8000/v1"}
    )
    assert no_model.status_code == 409, no_model.text
    assert [error["field"] for error in no_model.json()["errors"]] == ["served_model"]
    extra = client.post(f"/api/records/{record_id}/recheck", json={"base_url": 1, "x": 2})
    assert extra.status_code == 422
    missing = client.post("/api/records/999999/recheck", json={"base_url": "http://127.0.0.1/v1"})
    assert missing.status_code == 404


def test_metrics_count_sentinel_runs_by_verdict(
    client: TestClient, valid: dict, settings: Settings
) -> None:
    sentinel = {"baseline_record": 1, "verdict": "regressed", "changes": []}
    with make_sessionmaker(make_engine(settings)).begin() as session:
        for detail in ({"sentinel": sentinel}, {"tool": "servebook bench"}):
            submit_record(
                session, valid, provenance="bench", submitted_by="local", provenance_detail=detail
            )
        # Only the benchmark client's own runs carry a verdict.
        submit_record(
            session,
            valid,
            provenance="api",
            submitted_by="x",
            provenance_detail={"sentinel": sentinel},
        )
    text = client.get("/metrics").text
    assert 'servebook_sentinel_runs{verdict="regressed"} 1.0' in text
    assert 'servebook_sentinel_runs{verdict="no_regression"} 0.0' in text


def test_the_schema_states_which_servers_a_recheck_may_name(
    settings: Settings, valid: dict
) -> None:
    """A URL the served document admits is one the host check admits, and the other way
    round: loopback, and with a worker label the hosts that label's list holds, in
    standard keywords."""
    import jsonschema

    labelled = settings.model_copy(update={"bench_worker_hosts": {"gpu-box": ["gpu-box.lan"]}})
    with TestClient(create_app(labelled)) as client:
        record_id = post_record(client, valid).json()["id"]
        document = client.get("/openapi.json").json()
        path = document["paths"]["/api/records/{record_id}/recheck"]["post"]
        schema = path["requestBody"]["content"]["application/json"]["schema"]
        assert "x-pattern-unless" not in json.dumps(schema)
        validator = jsonschema.Draft202012Validator(schema)
        cases = [
            ({"base_url": "http://127.0.0.1:8000/v1"}, True),
            ({"base_url": "https://localhost/v1"}, True),
            ({"base_url": "http://[::1]:80"}, True),
            ({"base_url": "http://gpu-box.lan:8000/v1"}, False),
            ({"base_url": "http://gpu-box.lan:8000/v1", "worker_label": "gpu-box"}, True),
            ({"base_url": "http://gpu-box.lan:8000/v1", "worker_label": "gpu-other"}, False),
            ({"base_url": "http://127.0.0.1:8000/v1", "worker_label": "gpu-other"}, True),
            ({"base_url": "http://elsewhere.lan:8000/v1", "worker_label": "gpu-box"}, False),
            ({"base_url": "ftp://127.0.0.1/v1"}, False),
        ]
        for body, admitted in cases:
            stated = validator.is_valid({**body, "served_model": "glm"})
            assert stated is admitted, body
            answer = client.post(
                f"/api/records/{record_id}/recheck", json={**body, "served_model": "glm"}
            )
            assert (answer.status_code == 202) is admitted, (body, answer.text)


def test_a_record_whose_measurement_cannot_be_run_again_is_a_conflict_naming_the_field(
    client: TestClient, valid: dict
) -> None:
    """A one-token prompt leaves no room for any output: the plan read back from the record
    does not make a run. A 409 names the field, in words, never the library's own text."""
    valid["measurements"] = [{**valid["measurements"][0], "context_length": 1}]
    record_id = post_record(client, valid).json()["id"]
    body = {"base_url": "http://127.0.0.1:8000/v1", "served_model": "glm"}
    response = client.post(f"/api/records/{record_id}/recheck", json=body)
    assert response.status_code == 409, response.text
    errors = response.json()["errors"]
    assert [error["field"] for error in errors] == ["max_tokens"]
    assert errors[0]["code"] == "sentinel.not_repeatable"
    assert f"record {record_id} cannot be run again as measured" in errors[0]["message"]
    for text in ("validation error", "pydantic", "BenchPlan", "input_value"):
        assert text not in response.text
