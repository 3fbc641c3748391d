"""The API docs work with no network: Swagger UI comes from static/vendor, runs under the
Content-Security-Policy, and lists the operations. /favicon.ico answers too."""

import re

import pytest
from fastapi.testclient import TestClient

from app.security.headers import CONTENT_SECURITY_POLICY
from tests.live_server import LiveServer


@pytest.mark.browser
def test_docs_list_the_operations_offline(page, live_server: LiveServer) -> None:
    elsewhere: list[str] = []

    def only_this_server(route) -> None:  # noqa: ANN001
        if route.request.url.startswith(live_server.base_url):
            route.continue_()
        else:  # no network: anything not served by the app fails, and is noted
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.goto(live_server.base_url + "/docs")
    operations = page.locator(".opblock-summary-path")
    operations.first.wait_for()
    paths = operations.all_inner_texts()
    assert "/api/records" in [p.replace("\u200b", "") for p in paths]
    assert len(paths) >= 10
    page.locator(".opblock-summary").first.click()  # an operation opens: the UI is alive
    page.locator(".opblock-body").first.wait_for()
    assert elsewhere == [] and refused == [] and page.js_errors == []


def test_docs_page_runs_only_its_own_inline_script(client: TestClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy)[1]
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", response.text)
    assert inline == [f' nonce="{nonce}"']
    assert "cdn.jsdelivr" not in response.text
    assert "/static/vendor/swagger-ui-bundle" in response.text
    assert policy.replace(f" 'nonce-{nonce}'", "") == CONTENT_SECURITY_POLICY
    # A fresh nonce each time, and no other page gets one.
    assert client.get("/docs").headers["content-security-policy"] != policy
    assert client.get("/").headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert client.get("/docs/x").headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_favicon_is_served(client: TestClient) -> None:
    response = client.get("/favicon.ico", follow_redirects=True)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert 'rel="icon"' in client.get("/").text
