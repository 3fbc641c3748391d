"""Tasks through the API: created, listed, read back; bad input refused naming the field."""

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.i18n.messages import in_locale
from app.i18n.sentences import Sentence, render
from app.models import Task

TASK = {
    "name": "capitals",
    "description": "two questions",
    "source": "written for the tests",
    "prompts": [
        {"prompt": "Capital of France?", "check": {"contains": "Paris"}},
        {"prompt": "2 + 2?", "check": {"number": 4, "tolerance": 0.5}, "max_tokens": 8},
    ],
}


def task_rows(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Task))


def test_created_task_reads_back_with_its_prompts_and_checks(client: TestClient) -> None:
    response = client.post("/api/tasks", json=TASK)
    assert response.status_code == 201, response.text
    created = response.json()
    assert (created["name"], created["version"]) == ("capitals", 1)
    assert created["prompts"] == TASK["prompts"]
    detail = client.get(created["url"])
    assert detail.status_code == 200 and detail.json() == created
    listed = client.get("/api/tasks").json()
    assert [(t["id"], t["prompt_count"], t["checks"]) for t in listed] == [
        (created["id"], 2, ["contains", "number"])
    ]


def test_same_prompts_are_not_stored_twice_and_a_change_is_a_new_version(
    client: TestClient, session: Session
) -> None:
    first = client.post("/api/tasks", json=TASK).json()
    again = client.post("/api/tasks", json=TASK)
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    changed = {**TASK, "prompts": TASK["prompts"][:1]}
    second = client.post("/api/tasks", json=changed)
    assert second.status_code == 201 and second.json()["version"] == 2
    assert task_rows(session) == 2


def test_a_stored_version_with_other_prompts_is_a_conflict(
    client: TestClient, session: Session
) -> None:
    client.post("/api/tasks", json={**TASK, "version": 3})
    response = client.post(
        "/api/tasks", json={**TASK, "version": 3, "prompts": TASK["prompts"][:1]}
    )
    assert response.status_code == 409
    assert "version 3 is stored with other prompts" in response.json()["detail"]
    assert task_rows(session) == 1


def test_bad_tasks_get_422_naming_every_field_and_store_nothing(
    client: TestClient, session: Session
) -> None:
    bad = {
        "name": "has spaces",
        "prompts": [
            {"prompt": "", "check": {"contains": "x"}},
            {"prompt": "q", "check": {"regex": "(", "contains": "x"}},
            {"prompt": "q", "check": {"json_schema": {"type": 5}}},
            {"prompt": "q", "check": {"json_schema": {"$ref": "#/nowhere"}}},
        ],
        "colour": "red",
    }
    response = client.post("/api/tasks", json=bad)
    assert response.status_code == 422
    fields = {error["field"] for error in response.json()["errors"]}
    assert {"name", "prompts.0.prompt", "prompts.1.check.regex", "colour"} <= fields
    assert {"prompts.2.check.json_schema", "prompts.3.check.json_schema"} <= fields
    empty = client.post("/api/tasks", json={"name": "empty", "prompts": []})
    assert empty.status_code == 422
    assert [e["field"] for e in empty.json()["errors"]] == ["prompts"]
    # JSON `true` is not the count 1.
    counts = {**TASK, "max_tokens": True, "version": True}
    counts["prompts"] = [{**TASK["prompts"][0], "max_tokens": True}]
    bools = client.post("/api/tasks", json=counts)
    assert bools.status_code == 422
    assert {e["field"] for e in bools.json()["errors"]} == {
        "max_tokens",
        "version",
        "prompts.0.max_tokens",
    }
    not_object = client.post("/api/tasks", json=[TASK])
    assert not_object.status_code == 422
    assert not_object.json()["errors"][0]["field"] == "body"
    assert task_rows(session) == 0


def test_a_refused_answer_schema_is_coded_for_the_readers_language(
    client: TestClient, session: Session
) -> None:
    """JSON says it in English with its code and params; a page words the code in the
    reader's language, from the same catalogs."""
    bad = {**TASK, "prompts": [{"prompt": "q", "check": {"json_schema": {"oneOf": []}}}]}
    response = client.post("/api/tasks", json=bad)
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error["field"] == "prompts.0.check.json_schema"
    assert error["message"] == "oneOf: not a keyword a check supports"
    assert error["code"] == "answer_schema.not_a_keyword"
    assert error["params"] == {"at": "oneOf"}
    worded = {}
    for language in ("en", "ko", "ja"):
        with in_locale(language):
            worded[language] = render(Sentence(error["code"], error["params"]))
    assert worded["en"] == error["message"]
    assert all(text.startswith("oneOf: ") for text in worded.values())
    assert len(set(worded.values())) == 3
    assert task_rows(session) == 0


def test_unknown_task_is_404(client: TestClient) -> None:
    assert client.get("/api/tasks/999").status_code == 404
    assert client.get("/api/tasks/0").status_code == 422


def test_true_or_false_is_not_a_number_in_a_check(client: TestClient, session: Session) -> None:
    for field, value in (("number", False), ("tolerance", True)):
        check = {"number": 4, field: value}
        body = {**TASK, "prompts": [{"prompt": "2 + 2?", "check": check}]}
        response = client.post("/api/tasks", json=body)
        assert response.status_code == 422, response.text
        assert {e["field"] for e in response.json()["errors"]} == {f"prompts.0.check.{field}"}
    assert task_rows(session) == 0
