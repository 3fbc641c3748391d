"""Security headers on every kind of response, and a 405 that names every allowed method."""

from fastapi import APIRouter
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.security.headers import SECURITY_HEADERS


def assert_secured(response) -> None:  # noqa: ANN001
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, (response.request.url, name)


def test_every_kind_of_response_carries_the_security_headers(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    etag = page.headers["etag"]
    responses = [
        page,
        client.get("/", headers={"If-None-Match": etag}),  # 304 before routing
        client.get("/api/models"),
        client.get("/static/css/app.css"),
        client.get("/static/vendor/htmx-2.0.11.min.js"),
        client.get("/records/999999"),  # 404 page
        client.get("/api/records/999999"),  # 404 JSON
        client.get("/api/records/0"),  # 422
        client.get("/nowhere"),  # unknown route
        client.get("/", headers={"Host": "evil.example"}),  # refused host
        client.delete("/api/records"),  # 405
        client.post("/api/records", content=b"x", headers={"Content-Type": "text/plain"}),  # 415
    ]
    assert [r.status_code for r in responses] == [
        200,
        304,
        200,
        200,
        200,
        404,
        404,
        422,
        404,
        400,
        405,
        415,
    ]
    for response in responses:
        assert_secured(response)


def test_the_policy_allows_nothing_inline_and_no_framing() -> None:
    policy = SECURITY_HEADERS["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe" not in policy and "frame-ancestors 'none'" in policy
    assert SECURITY_HEADERS["X-Frame-Options"] == "DENY"


def test_405_lists_every_method_of_the_path(client: TestClient) -> None:
    response = client.request("OPTIONS", "/api/records")
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == {"GET", "POST"}
    review = client.put("/api/records/1/review")
    assert review.status_code == 405 and review.headers["allow"] == "POST"


def test_a_route_that_raises_answers_500_with_the_security_headers(settings: Settings) -> None:
    app = create_app(settings)
    broken = APIRouter()

    @broken.get("/broken")
    @broken.get("/api/broken")
    def raises() -> None:
        raise RuntimeError("a bug, with a secret inside: hunter2")

    app.include_router(broken)
    with TestClient(app, raise_server_exceptions=False) as client:
        page, api = client.get("/broken"), client.get("/api/broken")
    assert page.status_code == api.status_code == 500
    assert page.headers["content-type"].startswith("text/plain")
    assert api.json() == {"detail": "Internal Server Error"}
    for response in (page, api):
        assert_secured(response)
        assert "hunter2" not in response.text
