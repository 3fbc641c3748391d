"""The console commands a team runs, against a real PostgreSQL server: migrate, seed,
serve the app in one process and run benchmark jobs in another."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from app.db import make_engine
from app.models import LlmModel
from tests.conftest import TEST_SECRET_KEY, database_settings
from tests.jobs.test_bench_jobs import job_body
from tests.pg_server import PostgresServer, free_port

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60
JOB_TIMEOUT_S = 60


@pytest.fixture
def empty_database(postgres_server: PostgresServer) -> Iterator[str]:
    name = postgres_server.create_database()
    yield postgres_server.url(name)
    postgres_server.drop_database(name)


def environment(database_url: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": database_url,
        "SERVEBOOK_SECRET_KEY": TEST_SECRET_KEY,
        **extra,
    }


def servebook(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env=environment(database_url),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def started(database_url: str, *args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        env=environment(database_url, **extra),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_ready(base: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            if httpx.get(f"{base}/readyz", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("servebook serve did not become ready")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def count_models(database_url: str) -> int:
    engine = make_engine(database_settings(database_url))
    with engine.connect() as connection:
        models = connection.scalar(select(func.count()).select_from(LlmModel))
    engine.dispose()
    return models or 0


def test_upgrade_seed_serve_and_worker_on_postgresql(empty_database: str, fake_server: str) -> None:
    upgraded = servebook(empty_database, "db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    first = servebook(empty_database, "seed")
    assert first.returncode == 0, first.stderr
    models = count_models(empty_database)
    assert models > 0
    again = servebook(empty_database, "seed")
    assert again.returncode == 0, again.stderr
    assert count_models(empty_database) == models  # a second seed adds nothing

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app = started(empty_database, "serve", "--port", str(port), SERVEBOOK_RUN_WORKER="false")
    worker = None
    try:
        wait_until_ready(base, app)
        body = job_body(fake_server, lengths=[512], concurrency=[1], repeat=1)
        queued = httpx.post(f"{base}/api/benchmarks", json=body, trust_env=False, timeout=10)
        assert queued.status_code == 202, queued.text
        job_url = f"{base}/api/benchmarks/{queued.json()['id']}"
        worker = started(empty_database, "worker", "--poll", "0.1")
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while (status := httpx.get(job_url, trust_env=False).json())["status"] in (
            "queued",
            "running",
        ):
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        assert status["status"] == "succeeded", status
        metrics = httpx.get(f"{base}/metrics", trust_env=False).text
        jobs = {
            sample.labels["state"]: sample.value
            for family in text_string_to_metric_families(metrics)
            for sample in family.samples
            if sample.name == "servebook_bench_jobs"
        }
        assert jobs["succeeded"] == 1 and jobs["queued"] == 0
    finally:
        if worker is not None:
            stop(worker)
        stop(app)
