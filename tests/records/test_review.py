"""Review moves only the state, only along allowed edges, always with an event."""

import re

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from tests.records.conftest import post_record


def review(client: TestClient, record_id: int, action: str, reason: str = ""):
    return client.post(
        f"/api/records/{record_id}/review", json={"action": action, "reason": reason}
    )


@pytest.fixture
def record_id(client: TestClient, valid: dict) -> int:
    return post_record(client, valid).json()["id"]


def test_accept_then_retract_with_history(client: TestClient, record_id: int) -> None:
    accepted = review(client, record_id, "accept")
    assert accepted.status_code == 200 and accepted.json()["review_state"] == "accepted"
    retracted = review(client, record_id, "retract", "driver bug found later")
    assert retracted.json()["review_state"] == "retracted"
    events = retracted.json()["events"]
    assert [e["action"] for e in events] == ["submitted", "accepted", "retracted"]
    assert events[-1]["reason"] == "driver bug found later" and events[-1]["actor"] == "local"


def test_reject_needs_a_reason(client: TestClient, record_id: int) -> None:
    missing = review(client, record_id, "reject", "   ")
    assert missing.status_code == 422
    assert missing.json()["errors"][0]["field"] == "reason"
    assert (
        review(client, record_id, "reject", "numbers from a different GPU").json()["review_state"]
        == "rejected"
    )


@pytest.mark.parametrize("blank", ["\x1c", "\u3000", "\ufeff \t"])
def test_a_reason_of_spaces_only_is_refused_as_the_schema_says(
    client: TestClient, record_id: int, blank: str
) -> None:
    """Python's strip() and ECMAScript's \\S disagree on some spaces (U+001C, U+FEFF): the
    schema spells every space out, and the review refuses exactly what it refuses."""
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/api/records/{record_id}/review"]["post"]["requestBody"]
    rule = body["content"]["application/json"]["schema"]["then"]["properties"]["reason"]
    assert not re.search(rule["pattern"], blank)
    refused = review(client, record_id, "reject", blank)
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "reason"
    assert review(client, record_id, "reject", f"{blank}why").status_code == 200


def test_retract_needs_a_reason(client: TestClient, record_id: int) -> None:
    review(client, record_id, "accept")
    assert review(client, record_id, "retract").status_code == 422


@pytest.mark.parametrize(
    ("steps", "forbidden"),
    [
        ([], "retract"),
        ([("accept", "")], "accept"),
        ([("accept", "")], "reject"),
        ([("reject", "bad")], "accept"),
        ([("reject", "bad")], "retract"),
        ([("accept", ""), ("retract", "bad")], "accept"),
    ],
)
def test_forbidden_transitions_are_conflicts(
    client: TestClient, record_id: int, steps: list, forbidden: str
) -> None:
    for action, reason in steps:
        assert review(client, record_id, action, reason).status_code == 200
    before = client.get(f"/api/records/{record_id}").json()
    response = review(client, record_id, forbidden, "because")
    assert response.status_code == 409
    after = client.get(f"/api/records/{record_id}").json()
    assert after["review_state"] == before["review_state"]
    assert len(after["events"]) == len(before["events"])


def test_unknown_action_and_record(client: TestClient, record_id: int) -> None:
    assert review(client, record_id, "approve").status_code == 422
    assert review(client, 999, "accept").status_code == 404


def test_review_from_the_record_page(client: TestClient, record_id: int) -> None:
    page = BeautifulSoup(client.get(f"/records/{record_id}").text, "html.parser")
    forms = {f.select_one("input[name=action]")["value"]: f for f in page.select("#review form")}
    assert set(forms) == {"accept", "reject"}
    token = forms["reject"].select_one("input[name=csrf_token]")["value"]
    url = client.app.url_path_for("records:review", record_id=record_id)
    empty = client.post(
        url,
        data={"action": "reject", "reason": "", "csrf_token": token},
        headers={"HX-Request": "true"},
    )
    assert empty.status_code == 200 and "say why" in empty.text
    fragment = BeautifulSoup(empty.text, "html.parser")
    assert fragment.select_one("section#review") and not fragment.select_one("h1")
    done = client.post(
        url, data={"action": "accept", "reason": "", "csrf_token": token}, follow_redirects=False
    )
    assert done.status_code == 303
    page = BeautifulSoup(client.get(f"/records/{record_id}").text, "html.parser")
    assert [f.select_one("input[name=action]")["value"] for f in page.select("#review form")] == [
        "retract"
    ]
    assert "accepted" in page.select_one("#history").text
    no_csrf = client.post(url, data={"action": "retract", "reason": "x"})
    assert no_csrf.status_code == 403
