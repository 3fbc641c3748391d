"""However the app is started, it knows when it is exposed: uvicorn started by hand on
0.0.0.0 (settings still saying 127.0.0.1) refuses every write without a token, answers only
allowed host names, and never echoes an untrusted Host in links or url fields."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.config import PROJECT_ROOT, Settings
from app.db import session_scope
from app.security import create_token
from tests.records.conftest import h200, valid  # noqa: F401 (fixtures)

START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_uvicorn(db_path: Path, host: str, port: int, **env: str) -> subprocess.Popen:
    environment = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db_path}",
        "SERVEBOOK_RUN_WORKER": "false",
        **env,
    }
    environment.pop("SERVEBOOK_HOST", None)
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "app.main:create_app",
        "--factory",
        "--host",
        host,
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {server.returncode}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/models", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.terminate()
    raise RuntimeError("uvicorn did not start")


@pytest.fixture
def served(db_path: Path) -> Iterator[Any]:
    servers: list[subprocess.Popen] = []

    def serve(host: str, **env: str) -> str:
        port = free_port()
        servers.append(start_uvicorn(db_path, host, port, **env))
        return f"http://127.0.0.1:{port}"

    yield serve
    for server in servers:
        server.terminate()
        server.wait(timeout=10)


def test_uvicorn_on_all_interfaces_refuses_writes_without_a_token(
    served: Any,
    settings: Settings,
    valid: dict,  # noqa: F811
) -> None:
    base = served("0.0.0.0", SERVEBOOK_ALLOWED_HOSTS='["servebook.lab"]')
    refused = httpx.post(f"{base}/api/records", json=valid, headers={"Host": "127.0.0.1"})
    assert refused.status_code == 401
    review = httpx.post(f"{base}/api/records/1/review", json={"action": "accept", "reason": "x"})
    assert review.status_code == 401
    assert "sign-in-needed" in httpx.get(f"{base}/records/new").text

    with session_scope(settings) as session:
        token = create_token(session, "ops", "maintainer")
    created = httpx.post(
        f"{base}/api/records",
        json=valid,
        headers={"Authorization": f"Bearer {token}", "Host": "servebook.lab"},
    )
    assert created.status_code == 201, created.text
    assert created.json()["url"].startswith("http://servebook.lab/records/")

    evil = httpx.get(f"{base}/api/records", headers={"Host": "evil.example"})
    assert evil.status_code == 400 and "evil.example" not in evil.text
    listed = httpx.get(f"{base}/api/records", headers={"Host": "servebook.lab"}).json()
    assert all(r["url"].startswith("http://servebook.lab/") for r in listed["records"])


def test_uvicorn_on_loopback_keeps_the_local_maintainer(served: Any, valid: dict) -> None:  # noqa: F811
    base = served("127.0.0.1")
    assert httpx.post(f"{base}/api/records", json=valid).status_code == 201
    assert httpx.get(f"{base}/", headers={"Host": "evil.example"}).status_code == 400
