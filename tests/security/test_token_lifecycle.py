"""Tokens may expire, can be listed and revoked; a revoked or expired one fails at once,
on the API and in every browser signed in with it; the cookie carries a session id, never
the token."""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from fastapi.testclient import TestClient
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import text

from app.cli import main
from app.config import Settings, get_settings
from app.db import session_scope
from app.main import create_app
from app.security import AUTH_COOKIE, create_token
from app.security.signing import load_secret_key
from tests.conftest import sqlite_settings

REVIEW = "/api/records/1/review"


@pytest.fixture
def exposed(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield sqlite_settings(db_path, host="0.0.0.0")
    get_settings.cache_clear()


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def signed_in(client: TestClient, token: str) -> None:
    form = BeautifulSoup(client.get("/signin").text, "html.parser")
    csrf = form.find("input", {"name": "csrf_token"})["value"]
    client.post("/signin", data={"csrf_token": csrf, "token": token}, follow_redirects=False)


def can_open_the_form(client: TestClient) -> bool:
    """Signed in: the form does not ask for a token."""
    page = client.get("/records/new", follow_redirects=False)
    return page.status_code == 200 and 'id="sign-in-needed"' not in page.text


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def api_status(api: TestClient, token: str) -> int:
    """A call that needs a token (reading is open): 404 for a good maintainer token (no
    record 1 exists), 403 for a good submitter token, 401 for a token that fails."""
    body = {"action": "accept", "reason": "x"}
    return api.post(REVIEW, json=body, headers=auth(token)).status_code


def test_revoked_token_fails_at_once_on_the_api_and_in_the_browser(exposed: Settings) -> None:
    token = cli("token", "create", "--role", "maintainer", "--name", "alice").strip()
    cli("token", "create", "--role", "submitter", "--name", "bob")
    with TestClient(create_app(exposed)) as api, TestClient(create_app(exposed)) as browser:
        signed_in(browser, token)
        assert can_open_the_form(browser)
        assert api_status(api, token) == 404
        listed = cli("token", "list")
        assert "alice" in listed and "bob" in listed and "active" in listed
        assert token not in listed
        token_id = next(line.split()[0] for line in listed.splitlines() if "alice" in line)
        assert "revoked token" in cli("token", "revoke", token_id)
        # The same processes, no restart: the next request already fails.
        assert api_status(api, token) == 401
        assert not can_open_the_form(browser)
    assert "revoked" in cli("token", "list")


def test_an_expired_token_fails(exposed: Settings) -> None:
    output = cli("token", "create", "--role", "submitter", "--name", "ci", "--expires-in", "1h")
    token = output.strip()
    with TestClient(create_app(exposed)) as api:
        assert api_status(api, token) == 403
        with session_scope(exposed) as session:  # an hour and a minute later
            session.execute(text("UPDATE api_tokens SET expires_at = '2020-01-01 00:00:00'"))
        assert api_status(api, token) == 401
    assert "expired" in cli("token", "list")


@pytest.mark.parametrize("value", ["0d", "soon", "-1h", "12"])
def test_expires_in_must_be_a_positive_duration(exposed: Settings, value: str) -> None:
    result = CliRunner().invoke(
        main, ["token", "create", "--role", "submitter", "--name", "x", "--expires-in", value]
    )
    assert result.exit_code == 2 and "expires-in" in result.output


def test_the_cookie_carries_a_session_id_not_the_token(exposed: Settings) -> None:
    with session_scope(exposed) as session:
        token = create_token(session, "carol", "maintainer", timedelta(days=1))
    with TestClient(create_app(exposed)) as browser:
        signed_in(browser, token)
        cookie = browser.cookies[AUTH_COOKIE]
        carried = URLSafeTimedSerializer(load_secret_key(exposed), salt="auth").loads(cookie)
        assert carried != token and token not in cookie
        assert can_open_the_form(browser)
        form = BeautifulSoup(browser.get("/records/new").text, "html.parser")
        csrf = form.find("input", {"name": "csrf_token"})["value"]
        browser.post("/signout", data={"csrf_token": csrf})
        browser.cookies.set(AUTH_COOKIE, cookie)  # a copy kept from before signing out
        assert not can_open_the_form(browser)
