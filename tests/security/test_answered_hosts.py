"""`Host: testserver` is the in-process test client's name: a real server refuses it like
any other name it was not told to answer, while loopback names keep working."""

import httpx

from tests.live_server import LiveServer


def test_a_real_server_refuses_the_test_client_host(live_server: LiveServer) -> None:
    refused = httpx.get(f"{live_server.base_url}/healthz", headers={"Host": "testserver"})
    assert refused.status_code == 400
    for name in ("127.0.0.1", "localhost"):
        answered = httpx.get(f"{live_server.base_url}/healthz", headers={"Host": name})
        assert answered.status_code == 200, name
