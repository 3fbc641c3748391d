"""Behind a reverse proxy: a trusted proxy's requests are judged by the client and scheme it
forwards (the rightmost hop it did not itself trust), forwarding headers from anyone else
count for nothing but a sign that some proxy is in front, and an app listening on loopback
then treats the request as from beyond: writes need a token."""

from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import ip_network
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import session_scope
from app.main import create_app
from app.security import create_token
from app.security.csrf import CSRF_COOKIE
from app.security.forwarded import address_of, client_hop
from tests.live_server import start_server
from tests.records.conftest import h200, valid  # noqa: F401 (fixtures)

LOCAL_PROXY = ["127.0.0.1"]
VISITOR = "203.0.113.9"


@contextmanager
def peer(settings: Settings, address: str, trusted: list[str]) -> Iterator[TestClient]:
    """The app, reached from `address` as its socket peer, trusting `trusted` as proxies."""
    networks = [ip_network(t) for t in trusted]
    app = create_app(settings.model_copy(update={"trusted_proxies": networks}))
    with TestClient(app, client=(address, 40000), base_url="http://127.0.0.1") as client:
        yield client


def submit(client: Any, body: dict, **headers: str) -> int:
    return client.post("/api/records", json=body, headers=headers).status_code


@pytest.mark.parametrize(
    ("trusted", "headers", "status"),
    [
        # Nobody trusted: no forwarding headers, the local maintainer; any of them, beyond.
        ([], {}, 201),
        ([], {"X-Forwarded-For": VISITOR}, 401),
        ([], {"X-Forwarded-For": "127.0.0.1"}, 401),
        ([], {"Forwarded": "for=127.0.0.1"}, 401),
        ([], {"X-Real-IP": "127.0.0.1"}, 401),
        ([], {"X-Forwarded-Proto": "https"}, 401),
        # Trusted: the client it forwards decides.
        (LOCAL_PROXY, {"X-Forwarded-For": VISITOR}, 401),
        (LOCAL_PROXY, {"X-Forwarded-For": "127.0.0.1"}, 201),
        (LOCAL_PROXY, {"X-Forwarded-For": f"127.0.0.1, {VISITOR}"}, 401),  # forged on the left
        (LOCAL_PROXY, {"Forwarded": f'for="{VISITOR}:4711";proto=https'}, 401),
        (LOCAL_PROXY, {"Forwarded": 'for="[::1]:4711"'}, 201),
        (LOCAL_PROXY, {"X-Real-IP": VISITOR}, 401),
        (LOCAL_PROXY, {"X-Forwarded-For": "unknown"}, 401),
        (LOCAL_PROXY, {"X-Forwarded-Proto": "https"}, 401),  # says not whom it forwards
        # Two proxies, both trusted: the visitor is left of both.
        (["127.0.0.1", "10.0.0.0/8"], {"X-Forwarded-For": f"{VISITOR}, 10.1.2.3"}, 401),
        (["127.0.0.1", "10.0.0.0/8"], {"X-Forwarded-For": "127.0.0.1, 10.1.2.3"}, 201),
        # A trusted proxy elsewhere; this peer is not it, so its headers are set aside.
        (["10.0.0.1"], {"X-Forwarded-For": "127.0.0.1"}, 401),
    ],
)
def test_a_write_from_loopback_is_judged_by_its_forwarding_headers(
    settings: Settings,
    valid: dict,  # noqa: F811
    trusted: list[str],
    headers: dict[str, str],
    status: int,
) -> None:
    with peer(settings, "127.0.0.1", trusted) as client:
        assert submit(client, valid, **headers) == status


def test_a_token_writes_through_a_proxy(settings: Settings, valid: dict) -> None:  # noqa: F811
    with session_scope(settings) as session:
        token = create_token(session, "ops", "submitter")
    for trusted in ([], LOCAL_PROXY):
        with peer(settings, "127.0.0.1", trusted) as client:
            headers = {"X-Forwarded-For": VISITOR, "Authorization": f"Bearer {token}"}
            assert submit(client, dict(valid), **headers) == 201


def test_the_scheme_is_the_trusted_proxys_and_no_one_elses(settings: Settings) -> None:
    forwarded = {"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "https"}
    with peer(settings, "127.0.0.1", LOCAL_PROXY) as client:
        page = client.get("/records/new", headers=forwarded)
        listed = client.get("/api/records?limit=1", headers=forwarded).json()
    assert "secure" in page.headers["set-cookie"].lower()
    assert CSRF_COOKIE in page.headers["set-cookie"]
    assert listed["records"] == [] or listed["records"][0]["url"].startswith("https://")
    with peer(settings, "127.0.0.1", []) as client:
        page = client.get("/records/new", headers=forwarded)
    assert "secure" not in page.headers["set-cookie"].lower()


def test_a_peer_beyond_loopback_is_trusted_only_when_listed(settings: Settings) -> None:
    # The app listens on loopback here, so such a peer can only be a proxy's own address.
    with peer(settings, "10.0.0.7", ["10.0.0.0/8"]) as client:
        assert client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"}).status_code == 200
        assert client.get("/metrics", headers={"X-Forwarded-For": VISITOR}).status_code == 404
    with peer(settings, "127.0.0.1", []) as client:
        assert client.get("/metrics").status_code == 200
        assert client.get("/metrics", headers={"X-Forwarded-For": "::1"}).status_code == 404


@pytest.mark.parametrize(
    ("node", "address"),
    [
        ("192.0.2.1", "192.0.2.1"),
        (" 192.0.2.1:4711 ", "192.0.2.1"),
        ('"[2001:db8::1]:80"', "2001:db8::1"),
        ("2001:db8::1", "2001:db8::1"),
        ("_hidden", "_hidden"),
        ("unknown", "unknown"),
    ],
)
def test_hops_are_read_as_addresses(node: str, address: str) -> None:
    assert address_of(node) == address


def test_the_client_is_the_rightmost_untrusted_hop() -> None:
    trusted = [ip_network("127.0.0.1"), ip_network("10.0.0.0/8")]
    assert client_hop(["198.51.100.1", VISITOR, "10.0.0.2"], "127.0.0.1", trusted) == VISITOR
    assert client_hop(["10.0.0.3", "10.0.0.2"], "127.0.0.1", trusted) == "10.0.0.3"
    assert client_hop([], "127.0.0.1", trusted) == "127.0.0.1"


def test_a_live_server_behind_a_proxy_on_its_host(settings: Settings, valid: dict) -> None:  # noqa: F811
    """Real HTTP, uvicorn started as `servebook serve` starts it (its own proxy handling off)."""
    through_proxy = {"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "https"}
    for trusted, proxied_status in (([], 401), (LOCAL_PROXY, 201)):
        networks = [ip_network(t) for t in trusted]
        app = create_app(settings.model_copy(update={"trusted_proxies": networks}))
        server, thread, port = start_server(app, proxy_headers=False)
        base = f"http://127.0.0.1:{port}/api/records"
        try:
            visitor = httpx.post(base, json=valid, headers={"X-Forwarded-For": VISITOR})
            assert visitor.status_code == 401
            proxied = httpx.post(base, json=dict(valid), headers=through_proxy)
            assert proxied.status_code == proxied_status, proxied.text
            if proxied_status == 201:
                assert proxied.json()["url"].startswith(f"https://127.0.0.1:{port}/records/")
            local = httpx.post(base, json=dict(valid))
            assert local.status_code == 201, local.text
            assert local.json()["url"].startswith(f"http://127.0.0.1:{port}/records/")
        finally:
            server.should_exit = True
            thread.join(timeout=10)
