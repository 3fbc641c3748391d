"""Text that is not valid Unicode: a JSON escape such as "\\udc80" decodes to a lone UTF-16
surrogate that no page or JSON answer can encode. It is refused at every entry point with a
422 naming the field, nothing is stored, and every list, page and export keeps answering."""

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from app.models import BenchJob, Record, Task
from app.records.storage.service import get_record
from tests.jobs.test_bench_jobs import job_body
from tests.records.conftest import GLM, post_record
from tests.records.test_form import form_fields, submit
from tests.tasks.test_tasks_api import TASK

BAD = "__LONE_SURROGATE__"
BAD_KEY = "__LONE_SURROGATE_KEY__"
DATA = Path(__file__).parent / "data"


def hostile(body: Any) -> str:
    """The body as JSON text with each placeholder turned into a lone-surrogate escape."""
    return (
        json.dumps(body).replace(f'"{BAD}"', '"caf\\udc80"').replace(f'"{BAD_KEY}"', '"k\\ud800ey"')
    )


def raw_post(client: TestClient, url: str, body: Any) -> Any:
    return client.post(url, content=hostile(body), headers={"Content-Type": "application/json"})


def fields_in(response: Any) -> set[str]:
    errors = response.json()["errors"]
    return set(errors) if isinstance(errors, dict) else {e["field"] for e in errors}


def count(session: Session, table: type) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(table)) or 0


def record_with(valid: dict, where: str) -> dict:
    point = valid["measurements"][0]
    if where == "applied_values.x":
        valid["applied_values"]["x"] = BAD
    elif where == "applied_values.nested":
        valid["applied_values"]["nested"] = {"a": {BAD_KEY: 1}}
    elif where == "environment.extra":
        valid["environment"]["extra"] = [1, BAD]
    elif where == "measurements.0.details.p99":
        point["details"] = {"p99": BAD}
    elif where == "measurements.0.samples":
        point["samples"] = {BAD_KEY: [1.0, 2.0]}
    else:
        valid[where] = BAD
    return valid


RECORD_FIELDS = [
    ("applied_values.x", "applied_values.x"),
    ("applied_values.nested", "applied_values.nested.a"),
    ("environment.extra", "environment.extra.1"),
    ("measurements.0.details.p99", "measurements.0.details.p99"),
    ("measurements.0.samples", "measurements.0.samples"),
    ("notes", "notes"),
    ("runtime_version", "runtime_version"),
]


def every_read_answers(client: TestClient, record_id: int, h200: str) -> None:
    """Every list, page and export that shows records, tasks or jobs."""
    urls = [
        "/api/records",
        "/api/records?format=csv",
        "/api/records/export",
        "/api/records/export?format=csv",
        f"/api/records/{record_id}",
        f"/api/records/compare?a={record_id}&b={record_id}",
        "/records",
        f"/records/{record_id}",
        f"/records/compare?a={record_id}&b={record_id}",
        "/records/new",
        "/api/tasks",
        "/api/benchmarks",
        "/benchmarks",
        f"/models/{GLM}",
        f"/models/{GLM}/hardware/{h200}/profiles/balanced",
        f"/models/{GLM}/hardware/{h200}/profiles/speed",
        f"/models/{GLM}/hardware/{h200}/profiles/long-context",
    ]
    for url in urls:
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize(("where", "field"), RECORD_FIELDS)
def test_record_api_refuses_a_lone_surrogate_naming_the_field(
    client: TestClient, session: Session, valid: dict, h200: str, where: str, field: str
) -> None:
    first = post_record(client, valid).json()["id"]
    before = count(session, Record)
    response = raw_post(client, "/api/records", record_with(valid, where))
    assert response.status_code == 422, response.text
    assert fields_in(response) == {field}
    assert "not valid Unicode" in response.text
    assert count(session, Record) == before
    every_read_answers(client, first, h200)


def test_every_other_entry_point_refuses_one(
    client: TestClient, session: Session, valid: dict, h200: str
) -> None:
    """One of each other kind: a task, a benchmark job, an estimate, an imported file's
    strings, a form field; then every read still answers 200."""
    first = post_record(client, valid).json()["id"]

    task = json.loads(json.dumps(TASK))
    task["prompts"][1]["check"] = {"contains": BAD}
    response = raw_post(client, "/api/tasks", task)
    assert response.status_code == 422, response.text
    assert fields_in(response) == {"prompts.1.check.contains"}
    assert count(session, Task) == 0

    response = raw_post(client, "/api/benchmarks", job_body("http://127.0.0.1:9/v1", model=BAD))
    assert response.status_code == 422, response.text
    assert fields_in(response) == {"served_model"}
    assert count(session, BenchJob) == 0

    response = raw_post(
        client, "/api/estimate", {"model": {"params_b": 8, "quant": BAD}, "hardware": h200}
    )
    assert response.status_code == 422, response.text
    assert fields_in(response) == {"model.quant"}

    result = json.loads((DATA / "vllm_bench_serve.json").read_text())
    result["backend"], result["vllm_version"] = BAD, BAD
    before = count(session, Record)
    fields = form_fields(h200, runtime="vllm", artifact="glm-5.3-flash-fp8")
    files = {"result_file": ("bench.json", hostile(result).encode(), "application/json")}
    page = submit(client, {k: v for k, v in fields.items() if k != "measurements"}, files=files)
    assert page.status_code == 422, page.text[:2000]
    assert "not valid Unicode" in page.text
    assert count(session, Record) == before

    page = submit(client, form_fields(h200, applied_values='context = "caf\\udc80"'))
    assert page.status_code == 422
    assert count(session, Record) == before

    every_read_answers(client, first, h200)


def test_python_callers_are_refused_by_the_schema(valid: dict) -> None:
    """Importers and the benchmark client hand over objects, not JSON text."""
    from pydantic import ValidationError

    from app.records.schemas import RecordIn
    from app.records.storage.validation import schema_errors

    valid["environment"]["vllm_version"] = "0.1\udc80"
    with pytest.raises(ValidationError) as refused:
        RecordIn.model_validate(valid)
    assert [e.field for e in schema_errors(refused.value)] == ["environment.vllm_version"]


def store_legacy_surrogate(session: Session, record_id: int) -> None:
    """A record stored before the edge refused lone surrogates (SQLite kept the escape)."""
    session.execute(
        text("UPDATE records SET applied_values = :value WHERE id = :id"),
        {"value": '{"context": "caf\\udc80"}', "id": record_id},
    )
    session.commit()


@pytest.mark.parametrize("database_backend", ["sqlite"], indirect=True)
def test_review_writes_nothing_when_its_answer_cannot_be_rendered(
    settings: Any, session: Session, valid: dict
) -> None:
    from app.main import create_app

    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        record_id = post_record(client, valid).json()["id"]
        store_legacy_surrogate(session, record_id)
        response = client.post(
            f"/api/records/{record_id}/review", json={"action": "accept", "reason": "ok"}
        )
        assert response.status_code == 500
    session.expire_all()
    record = get_record(session, record_id)
    assert record.review_state == "pending"
    assert [event.action for event in record.events if event.action == "accepted"] == []
