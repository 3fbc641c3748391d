"""Who may do what: the loopback maintainer, tokens beyond loopback, the sign-in cookie, and
logs that never carry a token."""

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from bs4 import BeautifulSoup
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.cli import main
from app.config import Settings, get_settings
from app.db import session_scope
from app.main import create_app
from app.models import ApiToken
from app.security import AUTH_COOKIE, ExposedWithoutTokens, create_token
from tests.conftest import sqlite_settings
from tests.records.conftest import post_record


@pytest.fixture
def exposed(db_path: Path) -> Settings:
    return sqlite_settings(db_path, host="0.0.0.0")


def make_token(settings: Settings, role: str, name: str) -> str:
    with session_scope(settings) as session:
        return create_token(session, name, role)  # type: ignore[arg-type]


@pytest.fixture
def tokens(exposed: Settings) -> dict[str, str]:
    return {
        role: make_token(exposed, role, f"{role}-alice") for role in ("submitter", "maintainer")
    }


@pytest.fixture
def shared(exposed: Settings, tokens: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(create_app(exposed)) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_refuses_to_start_exposed_without_a_token(exposed: Settings) -> None:
    with pytest.raises(ExposedWithoutTokens, match="servebook token create"):
        with TestClient(create_app(exposed)):
            pass


def test_tokens_are_stored_as_sha256_only(
    exposed: Settings, db_path: Path, tokens: dict[str, str]
) -> None:
    with session_scope(exposed) as session:
        stored = session.scalars(select(ApiToken).order_by(ApiToken.id)).all()
        assert [(t.role, t.name) for t in stored] == [
            ("submitter", "submitter-alice"),
            ("maintainer", "maintainer-alice"),
        ]
        assert stored[0].token_hash == hashlib.sha256(tokens["submitter"].encode()).hexdigest()
    raw = (
        db_path.read_bytes() + Path(f"{db_path}-wal").read_bytes()
        if Path(f"{db_path}-wal").exists()
        else db_path.read_bytes()
    )
    assert all(token.encode() not in raw for token in tokens.values())


class TestApiBeyondLoopback:
    def test_submitting_needs_a_token(self, shared: TestClient, valid: dict) -> None:
        missing = post_record(shared, valid)
        assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
        wrong = post_record(shared, valid, Authorization="Bearer sb_not-a-token")
        assert wrong.status_code == 401

    def test_the_caller_is_checked_before_the_body(
        self, shared: TestClient, tokens: dict[str, str]
    ) -> None:
        """A stranger learns nothing of how the body would have been read."""
        for content_type in ("application/json", "text/plain"):
            response = shared.post(
                "/api/records", content=b"{not json", headers={"Content-Type": content_type}
            )
            assert response.status_code == 401, response.text
        token = make_token(shared.app.state.settings, "worker", "worker-bob")
        worker = shared.post(
            "/api/records",
            content=b"{not json",
            headers={"Content-Type": "application/json", **bearer(token)},
        )
        assert worker.status_code == 403 and "worker token" in worker.json()["detail"]
        # Known to be allowed, the same body is refused for what it is.
        submitter = shared.post(
            "/api/records",
            content=b"{not json",
            headers={"Content-Type": "application/json", **bearer(tokens["submitter"])},
        )
        assert submitter.status_code == 422
        assert submitter.json()["errors"][0]["field"] == "body"

    def test_roles(self, shared: TestClient, valid: dict, tokens: dict[str, str]) -> None:
        created = post_record(shared, valid, **bearer(tokens["submitter"]))
        assert created.status_code == 201
        record_id = created.json()["id"]
        url = f"/api/records/{record_id}/review"
        body = {"action": "accept", "reason": ""}
        assert shared.post(url, json=body).status_code == 401
        assert shared.post(url, json=body, headers=bearer(tokens["submitter"])).status_code == 403
        review = shared.post(url, json=body, headers=bearer(tokens["maintainer"]))
        assert review.status_code == 200
        record = review.json()
        assert record["submitted_by"] == "submitter-alice"
        assert record["events"][-1]["actor"] == "maintainer-alice"
        assert shared.get(f"/api/records/{record_id}").status_code == 200  # reading is open


class TestPagesBeyondLoopback:
    def test_sign_in_then_submit_and_review(
        self, shared: TestClient, tokens: dict[str, str], valid: dict
    ) -> None:
        record_id = post_record(shared, valid, **bearer(tokens["submitter"])).json()["id"]
        page = BeautifulSoup(shared.get(f"/records/{record_id}").text, "html.parser")
        assert not page.select("#review form") and "Sign in" in page.select_one("#review").text

        form = BeautifulSoup(
            shared.get("/signin", params={"next": f"/records/{record_id}"}).text, "html.parser"
        ).select_one("form")
        fields = {i["name"]: i.get("value", "") for i in form.select("input[type=hidden]")}
        bad = shared.post("/signin", data={**fields, "token": "sb_wrong"})
        assert bad.status_code == 401 and "unknown" in bad.text
        signed = shared.post(
            "/signin", data={**fields, "token": tokens["maintainer"]}, follow_redirects=False
        )
        assert signed.status_code == 303 and signed.headers["location"] == f"/records/{record_id}"
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith(f"{AUTH_COOKIE}=") and "HttpOnly" in cookie
        assert "samesite=lax" in cookie.lower() and tokens["maintainer"] not in cookie

        page = BeautifulSoup(shared.get(f"/records/{record_id}").text, "html.parser")
        accept_form = next(
            f
            for f in page.select("#review form")
            if f.select_one("input[name=action]")["value"] == "accept"
        )
        data = {i["name"]: i.get("value", "") for i in accept_form.select("input")}
        done = shared.post(f"/records/{record_id}/review", data=data, follow_redirects=False)
        assert done.status_code == 303
        assert shared.get(f"/api/records/{record_id}").json()["review_state"] == "accepted"

    def test_the_api_ignores_the_sign_in_cookie(
        self, shared: TestClient, valid: dict, tokens: dict[str, str]
    ) -> None:
        form = BeautifulSoup(shared.get("/signin").text, "html.parser")
        csrf = form.select_one("input[name=csrf_token]")["value"]
        shared.post("/signin", data={"csrf_token": csrf, "token": tokens["maintainer"]})
        assert shared.cookies.get(AUTH_COOKIE)
        assert post_record(shared, valid).status_code == 401  # JSON needs the Bearer header
        page = BeautifulSoup(shared.get("/records/new").text, "html.parser")
        assert page.select_one("#sign-in-needed") is None

    def test_a_signed_out_form_post_goes_to_sign_in(self, shared: TestClient) -> None:
        page = BeautifulSoup(shared.get("/records/new").text, "html.parser")
        link = page.select_one("#sign-in-needed a")["href"]
        assert link.endswith("/signin?next=%2Frecords%2Fnew")
        token = page.select_one("input[name=csrf_token]")["value"]
        response = shared.post(
            "/records",
            data={"csrf_token": token, "model": "x"},
            headers={"Referer": "http://testserver/records/new?model=x"},
            follow_redirects=False,
        )
        assert response.status_code == 303
        assert (
            response.headers["location"]
            == "http://testserver/signin?next=%2Frecords%2Fnew%3Fmodel%3Dx"
        )
        htmx = shared.post("/records", data={"csrf_token": token}, headers={"HX-Request": "true"})
        assert htmx.status_code == 200 and htmx.headers["HX-Redirect"].startswith(
            "http://testserver/signin"
        )

    def test_a_forged_cookie_is_ignored(
        self, shared: TestClient, tokens: dict[str, str], valid: dict
    ) -> None:
        shared.cookies.set(AUTH_COOKIE, tokens["maintainer"])  # unsigned
        assert post_record(shared, valid).status_code == 401

    def test_sign_in_only_returns_to_this_site(self, shared: TestClient) -> None:
        page = BeautifulSoup(
            shared.get("/signin", params={"next": "//evil.example/x"}).text, "html.parser"
        )
        assert page.select_one("input[name=next]")["value"] == "/"


def test_on_loopback_the_local_user_is_the_maintainer(client: TestClient, valid: dict) -> None:
    record_id = post_record(client, valid).json()["id"]
    accepted = client.post(f"/api/records/{record_id}/review", json={"action": "accept"})
    assert accepted.json()["events"][-1]["actor"] == "local"
    assert post_record(client, valid, Authorization="Bearer sb_unknown").status_code == 401


def test_logs_never_carry_tokens(
    exposed: Settings, valid: dict, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = make_token(exposed, "maintainer", "ops")
    with TestClient(create_app(exposed)) as client:
        post_record(client, valid, **bearer(token))
        post_record(client, valid, Authorization="Bearer sb_guessed-token-value")
        form = BeautifulSoup(client.get("/signin").text, "html.parser")
        csrf = form.select_one("input[name=csrf_token]")["value"]
        client.post("/signin", data={"csrf_token": csrf, "token": token})
        client.post("/signin", data={"csrf_token": csrf, "token": "sb_another-guess"})
    assert "access token created" in caplog.text and "rejected an unknown" in caplog.text
    for secret in (token, "sb_guessed-token-value", "sb_another-guess"):
        assert secret not in caplog.text


class TestCli:
    @pytest.fixture(autouse=True)
    def database(self, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
        monkeypatch.setenv("SERVEBOOK_HOST", "127.0.0.1")  # restored after `serve` changes it
        get_settings.cache_clear()
        yield
        get_settings.cache_clear()

    def test_token_create_prints_it_once(self, exposed: Settings) -> None:
        result = CliRunner().invoke(
            main, ["token", "create", "--role", "submitter", "--name", "ci"]
        )
        assert result.exit_code == 0, result.output
        token = result.stdout.strip()
        assert token.startswith("sb_") and "shown only now" in result.stderr
        with session_scope(exposed) as session:
            stored = session.scalars(select(ApiToken)).one()
            assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
        bad = CliRunner().invoke(main, ["token", "create", "--role", "admin", "--name", "x"])
        assert bad.exit_code == 2

    def test_serve_beyond_loopback_needs_a_token(
        self, exposed: Settings, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        started: list[dict[str, Any]] = []
        monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
        refused = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0"])
        assert refused.exit_code == 1 and "no access token" in refused.output and not started
        make_token(exposed, "maintainer", "ops")
        served = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "8123"])
        assert served.exit_code == 0, served.output
        assert started[0]["host"] == "0.0.0.0"
        assert get_settings().host == "0.0.0.0"  # so the app's own check sees the exposure


def test_loopback_app_refuses_other_host_headers(client) -> None:  # noqa: ANN001
    """A page that rebinds its own domain to 127.0.0.1 must not act as the local maintainer."""
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    assert client.get("/", headers={"host": "127.0.0.1:8000"}).status_code == 200
    assert client.get("/", headers={"host": "localhost:8000"}).status_code == 200
