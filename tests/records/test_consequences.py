"""Before accepting, the reviewer sees what the acceptance changes; flagged records need a
confirmation and a reason. The preview must match what the pages show once accepted."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.db import session_scope
from app.main import create_app
from app.security import create_token
from tests.conftest import sqlite_settings
from tests.records.conftest import GLM, GLM_MLX, MAC_512, post_record

MAC_256 = "mac-studio-m5-ultra-256gb"


def review(client: TestClient, record_id: int, **body: Any):
    return client.post(f"/api/records/{record_id}/review", json={"action": "accept", **body})


def preview(client: TestClient, record_id: int) -> dict:
    response = client.get(f"/api/records/{record_id}/acceptance")
    assert response.status_code == 200, response.text
    return response.json()


def fit_rows(client: TestClient) -> dict[str, dict]:
    return {row["hardware"]: row for row in client.get(f"/api/models/{GLM}/fit").json()["rows"]}


def recipe(client: TestClient, hardware: str, profile: str) -> dict:
    return client.get(f"/api/models/{GLM}/hardware/{hardware}/profiles/{profile}").json()


def speed_text(speed: dict | None) -> str:
    if speed is None:
        return "none"
    values = (
        f"{speed['low']:,.1f}"
        if speed["low"] == speed["high"]
        else f"{speed['low']:,.1f} ~ {speed['high']:,.1f}"
    )
    return f"{values} tok/s, {speed['basis']}"


def published(shown: dict, what: str) -> str:
    """A fact as the recipe JSON publishes it, written the way the preview writes it."""
    memory = shown["memory"]
    return {
        "verdict": shown["verdict_label"],
        "commands shown": ", ".join(c["runtime"] for c in shown["commands"]) or "none",
        "token generation": speed_text(shown["token_generation"]),
        "memory per GPU": f"{memory['required_gb_per_gpu']:,.1f} GB, {memory['basis']}"
        if memory
        else "none",
        "status": shown["status"].replace("_", " "),
        "starting context": f"{shown['start_context']:,} tokens",
        # The JSON names the route by slugs; the preview by names, ending with the pair's state.
        "route": "(verified pair)" if shown["verified_pair"] else "(unverified pair)",
    }[what]


def agrees(change: dict, shown: dict) -> bool:
    fact = published(shown, change["what"])
    return change["after"].endswith(fact) if change["what"] == "route" else change["after"] == fact


@pytest.fixture
def mlx_on_the_256gb_mac(valid: dict) -> dict:
    """MLX 4-bit with MLX-LM: a pair nothing has verified yet, below the bandwidth roofline."""
    valid.update(
        hardware=MAC_256,
        artifact=GLM_MLX,
        runtime="mlx-lm",
        runtime_version="0.31.2",
        gpu_count=1,
        applied_values={"context": 4096},
        command="mlx_lm.server",
        measurements=[
            {"context_length": 4096, "decode_tokens_per_s": 60.0, "peak_memory_gb_per_gpu": 190.0}
        ],
    )
    return valid


@pytest.fixture
def flagged(client: TestClient, valid: dict) -> dict:
    """An SGLang older than the catalog knows to serve the family: flagged on submission."""
    valid["runtime_version"] = "0.5.8"
    created = post_record(client, valid).json()
    assert [f["code"] for f in created["flags"]] == ["runtime_below_min_version"]
    return created


class TestPreview:
    def test_verifying_a_pair_changes_other_hardware_and_the_preview_holds(
        self, client: TestClient, mlx_on_the_256gb_mac: dict
    ) -> None:
        created = post_record(client, mlx_on_the_256gb_mac).json()
        assert created["flags"] == []
        data = preview(client, created["id"])
        assert data["needs_confirmation"] is False and data["review_state"] == "pending"
        changes = data["changes"]
        facts = {(c["hardware"], c["profile"], c["what"]): c for c in changes}
        assert MAC_256 in {c["hardware"] for c in changes}
        verdict = facts[(MAC_512, "balanced", "verdict")]
        assert (verdict["before"], verdict["after"]) == ("experimental", "fits")
        command = facts[(MAC_512, "balanced", "commands shown")]
        assert (command["before"], command["after"]) == ("none", "mlx-lm")
        assert command["url"].endswith(f"/models/{GLM}/hardware/{MAC_512}/profiles/balanced")
        assert fit_rows(client)[MAC_512]["verdict_label"] == "experimental"  # nothing written

        assert review(client, created["id"]).status_code == 200
        rows = fit_rows(client)
        for change in changes:
            shown = recipe(client, change["hardware"], change["profile"])
            assert agrees(change, shown), (change, published(shown, change["what"]))
            if change["profile"] != "balanced":
                continue
            row = rows[change["hardware"]]
            if change["what"] == "verdict":
                assert row["verdict_label"] == change["after"]
            elif change["what"] == "token generation":
                assert change["after"].endswith(row["token_generation"]["basis"])
            elif change["what"] == "memory per GPU":
                assert change["after"].endswith(row["memory"]["basis"])

    def test_a_verified_pair_changes_only_its_own_hardware_and_profile(
        self, client: TestClient, valid: dict, h200: str
    ) -> None:
        record_id = post_record(client, valid).json()["id"]
        changes = preview(client, record_id)["changes"]
        assert {(c["hardware"], c["profile"]) for c in changes} == {(h200, "balanced")}
        by_fact = {c["what"]: (c["before"], c["after"]) for c in changes}
        before, after = by_fact["token generation"]
        assert before.endswith("tok/s, estimated") and after == "88.0 ~ 95.0 tok/s, measured"
        assert by_fact["memory per GPU"][1] == "124.0 GB, measured"
        assert by_fact["status"] == ("verification pending", "verified")
        assert "verdict" not in by_fact and "commands shown" not in by_fact

    def test_a_load_failure_changes_nothing(
        self, client: TestClient, mlx_on_the_256gb_mac: dict
    ) -> None:
        body = dict(mlx_on_the_256gb_mac, outcome="load_failure", measurements=[])
        record_id = post_record(client, body).json()["id"]
        assert preview(client, record_id)["changes"] == []
        page = BeautifulSoup(client.get(f"/records/{record_id}").text, "html.parser")
        assert page.select_one("#acceptance-changes") is None
        none = page.select_one("#acceptance-none").text
        assert none.startswith("Accepting changes no figure") and "failed to load" in none

    def test_nothing_left_to_accept_once_reviewed(self, client: TestClient, valid: dict) -> None:
        record_id = post_record(client, valid).json()["id"]
        assert review(client, record_id).status_code == 200
        data = preview(client, record_id)
        assert data["review_state"] == "accepted" and data["changes"] == []
        assert data["needs_confirmation"] is False
        assert client.get("/api/records/999/acceptance").status_code == 404


class TestFlaggedRecords:
    def test_accepting_needs_the_flags_confirmed_and_a_reason(
        self, client: TestClient, flagged: dict, h200: str
    ) -> None:
        record_id = flagged["id"]
        assert preview(client, record_id)["needs_confirmation"] is True
        before = client.get(f"/api/records/{record_id}").json()

        unconfirmed = review(client, record_id, reason="checked the release notes")
        assert unconfirmed.status_code == 422
        assert [e["field"] for e in unconfirmed.json()["errors"]] == ["confirm_flags"]
        assert "runtime_below_min_version" in unconfirmed.json()["errors"][0]["message"]
        no_reason = review(client, record_id, confirm_flags=True, reason="  ")
        assert no_reason.status_code == 422
        assert [e["field"] for e in no_reason.json()["errors"]] == ["reason"]
        neither = review(client, record_id)
        assert {e["field"] for e in neither.json()["errors"]} == {"confirm_flags", "reason"}
        unchanged = client.get(f"/api/records/{record_id}").json()
        assert unchanged["review_state"] == "pending"
        assert len(unchanged["events"]) == len(before["events"])
        assert fit_rows(client)[h200]["token_generation"]["basis"] == "estimated"

        accepted = review(
            client,
            record_id,
            confirm_flags=True,
            reason="0.5.8 carries the backport; same numbers on 0.5.9",
        )
        assert accepted.status_code == 200 and accepted.json()["review_state"] == "accepted"
        event = accepted.json()["events"][-1]
        assert event["action"] == "accepted" and event["reason"].startswith("0.5.8 carries")
        assert fit_rows(client)[h200]["token_generation"]["basis"] == "measured"

    def test_unflagged_records_accept_without_a_reason(
        self, client: TestClient, valid: dict
    ) -> None:
        record_id = post_record(client, valid).json()["id"]
        assert review(client, record_id, confirm_flags=False).status_code == 200

    def test_the_record_page_shows_the_changes_and_asks_for_confirmation(
        self, client: TestClient, flagged: dict, h200: str
    ) -> None:
        record_id = flagged["id"]
        changes = preview(client, record_id)["changes"]
        page = BeautifulSoup(client.get(f"/records/{record_id}").text, "html.parser")
        rows = page.select("#acceptance-changes tbody tr")
        assert [(r["data-hardware"], r["data-profile"], r["data-what"]) for r in rows] == [
            (c["hardware"], c["profile"], c["what"]) for c in changes
        ]
        status = next(r for r in rows if r["data-what"] == "status")
        assert status.select_one(".before").text == "verification pending"
        assert status.select_one(".after").text == "verified"
        assert status.select_one("a")["href"].endswith(
            f"/models/{GLM}/hardware/{h200}/profiles/balanced"
        )
        form = page.select_one("#review-accept").find_parent("form")
        checkbox = form.select_one("input[name=confirm_flags]")
        assert checkbox.has_attr("required") and not checkbox.has_attr("checked")
        assert "checked the 1 flag above" in checkbox.find_parent("label").text
        assert form.select_one("input[name=reason]").has_attr("required")
        assert "(required)" in form.select_one("input[name=reason]").find_parent("label").text

        token = form.select_one("input[name=csrf_token]")["value"]
        url = client.app.url_path_for("records:review", record_id=record_id)
        refused = client.post(
            url,
            data={"action": "accept", "reason": "looked at it", "csrf_token": token},
            headers={"HX-Request": "true"},
        )
        fragment = BeautifulSoup(refused.text, "html.parser")
        assert refused.status_code == 200 and fragment.select_one("section#review")
        assert fragment.select_one(".field-error[data-field=confirm_flags]")
        assert fragment.select_one("#acceptance-changes")  # still shown beside the error
        kept = fragment.select_one("#review-accept").find_parent("form")
        assert kept.select_one("input[name=reason]")["value"] == "looked at it"
        assert kept.select_one("input[name=confirm_flags]")["aria-invalid"] == "true"

        done = client.post(
            url,
            data={
                "action": "accept",
                "reason": "backport checked",
                "confirm_flags": "true",
                "csrf_token": token,
            },
            follow_redirects=False,
        )
        assert done.status_code == 303
        page = BeautifulSoup(client.get(f"/records/{record_id}").text, "html.parser")
        assert "backport checked" in page.select_one("#history").text
        assert page.select_one("#acceptance") is None


@pytest.fixture
def beyond_loopback(db_path: Path) -> Iterator[TestClient]:
    settings = sqlite_settings(db_path, host="0.0.0.0")
    with session_scope(settings) as session:
        create_token(session, "maintainer-alice", "maintainer")
    with TestClient(create_app(settings)) as client:
        yield client


def test_anyone_reads_the_preview_only_maintainers_see_it_on_the_page(
    client: TestClient, flagged: dict, beyond_loopback: TestClient
) -> None:
    record_id = flagged["id"]
    assert preview(beyond_loopback, record_id)["changes"]
    page = BeautifulSoup(beyond_loopback.get(f"/records/{record_id}").text, "html.parser")
    assert page.select_one("#acceptance") is None and page.select_one("#flags")
