"""NUL characters are refused at the edge with a 422, the same on SQLite and PostgreSQL
(PostgreSQL text cannot hold them), and nothing is stored."""

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Record, Task
from app.security.json_input import JsonRefused, loads_strict
from app.security.no_nul import has_nul
from tests.records.conftest import VALID, post_record, seeded_slug

pytestmark = pytest.mark.postgresql


def count(session: Session, table: type) -> int:
    session.rollback()
    return session.scalar(select(func.count()).select_from(table)) or 0


def test_json_escapes_and_url_encoding_are_told_apart() -> None:
    assert has_nul(b'{"a": "x\\u0000"}', json=True)
    assert has_nul(b'{"a": "x\\\\\\u0000"}', json=True)  # \\ then \u0000
    assert not has_nul(b'{"a": "x\\\\u0000"}', json=True)  # the text \u0000
    assert not has_nul(b'{"a": "100%00 sure"}', json=True)
    assert has_nul(b"notes=a%00b")


def test_a_record_with_nul_in_its_notes_is_refused(client: TestClient, session: Session) -> None:
    body = {**VALID, "hardware": seeded_slug(session, "8x-h200"), "notes": "before\x00after"}
    before = count(session, Record)
    response = post_record(client, body)
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"field": "body", "message": "text may not contain the NUL character (U+0000)"}
    ]
    assert count(session, Record) == before
    body["notes"] = "100%00 sure, and the text \\u0000"
    assert post_record(client, body).status_code == 201


def test_a_task_with_nul_in_a_prompt_is_refused(client: TestClient, session: Session) -> None:
    task = {"name": "nul-check", "prompts": [{"prompt": "a\x00b", "check": {"contains": "b"}}]}
    before = count(session, Task)
    assert client.post("/api/tasks", json=task).status_code == 422
    assert count(session, Task) == before


def test_nul_in_a_query_or_a_form_is_refused(client: TestClient) -> None:
    assert client.get("/api/records?model=a%00b").status_code == 422
    page = client.get("/records?model=a%00b")
    assert page.status_code == 422 and "NUL" in page.text
    form = client.post("/records/new", data={"notes": "a\x00b"})
    assert form.status_code == 422


def test_uploaded_json_with_a_nul_escape_is_refused_by_the_strict_parser() -> None:
    with pytest.raises(JsonRefused, match="NUL"):
        loads_strict('{"notes": "a\\u0000b"}')
    assert loads_strict('{"notes": "a\\\\u0000b"}') == {"notes": "a\\u0000b"}
