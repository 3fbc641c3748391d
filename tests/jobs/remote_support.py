"""A dashboard served beyond loopback (so every call needs a token) and remote worker
processes that reach it over HTTP, for the remote worker tests."""

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from app.config import Settings
from app.db import make_engine, make_sessionmaker, session_scope
from app.main import create_app
from app.models import Record
from app.security import ROLES, create_token
from tests.live_server import start_server

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0


@dataclass
class Dashboard:
    url: str
    settings: Settings
    tokens: dict[str, str]  # role -> token

    def client(self, role: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def job(self, job_id: int) -> dict[str, Any]:
        with self.client(None) as client:
            response = client.get(f"/api/benchmarks/{job_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def queue(self, body: dict[str, Any]) -> int:
        with self.client("submitter") as client:
            response = client.post("/api/benchmarks", json=body)
        assert response.status_code == 202, response.text
        return response.json()["id"]

    def wait_for(self, job_id: int, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if done(job):
                return job
            time.sleep(0.05)
        raise AssertionError(f"job {job_id} never got there: {self.job(job_id)}")

    def bench_record_ids(self) -> list[int]:
        sessions = make_sessionmaker(make_engine(self.settings))
        with sessions() as session:
            statement = select(Record.id).where(Record.provenance == "bench").order_by(Record.id)
            return list(session.scalars(statement))

    def record_count(self) -> int:
        sessions = make_sessionmaker(make_engine(self.settings))
        with sessions() as session:
            return session.scalar(select(func.count()).select_from(Record)) or 0


@pytest.fixture
def dashboard(settings: Settings) -> Iterator[Dashboard]:
    """The app on a free 127.0.0.1 port, configured as exposed (host 0.0.0.0): every
    write needs a token, as on a team's server. No in-process worker: jobs wait for
    remote ones."""
    with serve_dashboard(settings) as board:
        yield board


@contextmanager
def serve_dashboard(settings: Settings) -> Iterator[Dashboard]:
    with session_scope(settings) as session:
        tokens = {role: create_token(session, f"{role}-token", role) for role in ROLES}
    exposed = settings.model_copy(update={"host": "0.0.0.0", "run_worker": False})
    app = create_app(exposed)
    server, thread, port = start_server(app)
    try:
        yield Dashboard(f"http://127.0.0.1:{port}", settings, tokens)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def worker_command(*options: str) -> list[str]:
    return [sys.executable, "-m", "app.cli", "worker", "--poll", "0.1", *options]


def worker_env(dashboard: Dashboard, role: str = "worker") -> dict[str, str]:
    """No DATABASE_URL: the worker knows the dashboard only by its URL and token."""
    return {
        "PATH": "/usr/bin:/bin",
        "SERVEBOOK_SERVER": dashboard.url,
        "SERVEBOOK_TOKEN": dashboard.tokens[role],
    }


def start_worker(dashboard: Dashboard, log: Path, *options: str) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen(
            worker_command(*options),
            env=worker_env(dashboard),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def run_worker_once(
    dashboard: Dashboard, *options: str, role: str = "worker"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        worker_command("--once", *options),
        env=worker_env(dashboard, role),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
