"""Benchmark jobs: queued through the API or the page, run by a worker, stored as a record."""

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.jobs.worker import Worker
from app.models import BenchJob, Measurement, Record

FAST = "fake?ttft_ms=15&itl_ms=2&tokens=24&per_chunk=2"
TARGET = {
    "model": "llama-3.1-8b-instruct",
    "artifact": "llama-3.1-8b-instruct-q4-k-m",
    "runtime": "llama-cpp",
    "runtime_version": "b6100",
    "hardware": "rtx-4090-24gb",
    "profile": "balanced",
    "command": "llama-server -hf x --host 127.0.0.1",
}


def job_body(base_url: str, model: str = FAST, **changes: object) -> dict:
    return {
        "base_url": base_url,
        "served_model": model,
        "lengths": [512, 1024],
        "concurrency": [1, 2],
        "repeat": 3,
        "max_tokens": 16,
        **TARGET,
        **changes,
    }


def worker_for(settings: Settings, **options: object) -> Worker:
    return Worker(make_sessionmaker(make_engine(settings)), poll_s=0.05, **options)


def test_api_job_runs_and_becomes_a_pending_record(
    client: TestClient, settings: Settings, session: Session, fake_server: str
) -> None:
    response = client.post("/api/benchmarks", json=job_body(fake_server))
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    assert response.json()["status"] == "queued"
    assert worker_for(settings).run_once() is True
    status = client.get(f"/api/benchmarks/{job_id}").json()
    assert status["status"] == "succeeded", status
    assert (status["outcome"], status["outcome_error"]) == ("ok", None)
    record = session.get(Record, status["record_id"])
    assert (record.provenance, record.review_state, record.outcome) == ("bench", "pending", "ok")
    points = session.scalars(select(Measurement).where(Measurement.record_id == record.id)).all()
    singles = {
        p.context_length: p for p in points if p.concurrency == 1 and not p.details.get("ramp")
    }
    assert set(singles) == {512, 1024}
    assert all(p.repetitions == 3 and p.ttft_ms >= 15 for p in singles.values())
    assert all(p.token_count_source == "usage" for p in singles.values())
    assert all(
        p.memory_source == "not measured" and p.peak_memory_gb_per_gpu is None
        for p in singles.values()
    )
    assert len(singles[512].details["samples"]["ttft_ms"]) == 3
    ramp = sorted((p for p in points if p.details.get("ramp")), key=lambda p: p.concurrency)
    assert [p.concurrency for p in ramp] == [1, 2]
    assert all(p.throughput_tokens_per_s > 0 and p.details["ttft_ms"]["p90"] for p in ramp)
    assert status["record_url"].endswith(f"/records/{record.id}")
    page = client.get(status["record_url"]).text
    charts = json.loads(
        re.search(
            r'<script type="application/json" id="chart-data">(.*?)</script>', page, re.S
        ).group(1)
    )
    assert charts["by_context"]["context"] == [512, 1024]
    assert [level["concurrency"] for level in charts["ramp"]] == [1, 2]


def test_api_key_is_used_but_never_stored(
    client: TestClient, settings: Settings, session: Session, fake_server: str
) -> None:
    secret = "sk-never-store-me-123"
    job_id = client.post("/api/benchmarks", json=job_body(fake_server, api_key=secret)).json()["id"]
    keys = client.app.state.bench_api_keys
    assert keys[job_id] == secret
    assert worker_for(settings, api_keys=keys).run_once()
    assert job_id not in keys
    dump = "\n".join(
        str(row)
        for table in ("bench_jobs", "records", "measurements", "record_events")
        for row in session.execute(text(f"SELECT * FROM {table}"))
    )
    assert secret not in dump
    assert session.get(BenchJob, job_id).status == "succeeded"


def test_worker_without_the_key_fails_the_job_clearly(
    client: TestClient, settings: Settings, session: Session, fake_server: str
) -> None:
    job_id = client.post("/api/benchmarks", json=job_body(fake_server, api_key="k")).json()["id"]
    client.app.state.bench_api_keys.clear()
    worker_for(settings, api_keys={}).run_once()
    job = session.get(BenchJob, job_id)
    assert job.status == "failed" and "SERVEBOOK_BENCH_API_KEY" in job.error
    assert job.record_id is None


def test_non_loopback_targets_are_refused_before_any_request(client: TestClient) -> None:
    response = client.post("/api/benchmarks", json=job_body("http://10.20.30.40:8000/v1"))
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert "base_url" in fields


def test_bad_plan_and_target_list_every_error(client: TestClient, fake_server: str) -> None:
    body = job_body(fake_server, lengths=[8], hardware="nope", runtime="nope")
    response = client.post("/api/benchmarks", json=body)
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"hardware", "runtime"} <= fields
    assert "lengths" in fields


def closed_port() -> int:
    """A port that nothing listens on: bound to learn a free number, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def record_count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Record))


def test_unreachable_target_fails_the_job_and_stores_nothing(
    client: TestClient, settings: Settings, session: Session
) -> None:
    port = closed_port()
    body = job_body(f"http://127.0.0.1:{port}/v1", request_timeout_s=5)
    job_id = client.post("/api/benchmarks", json=body).json()["id"]
    assert worker_for(settings).run_once() is True
    job = session.get(BenchJob, job_id)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    assert job.status == "failed"
    assert job.error == f"could not connect to {url}: connection refused"
    assert job.record_id is None and job.result is None
    assert record_count(session) == 0
    status = client.get(f"/api/benchmarks/{job_id}").json()
    assert (status["status"], status["error"], status["outcome"]) == ("failed", job.error, None)
    page = client.get(f"/benchmarks/{job_id}").text
    assert 'data-status="failed"' in page
    assert f'id="job-error">could not connect to {url}: connection refused<' in page
    assert 'id="job-record"' not in page


@pytest.mark.parametrize("status", [404, 500])
def test_server_that_answers_with_an_error_becomes_a_load_failure_record(
    client: TestClient, settings: Settings, session: Session, fake_server: str, status: int
) -> None:
    body = job_body(fake_server, model=f"fake?http_status={status}")
    job_id = client.post("/api/benchmarks", json=body).json()["id"]
    worker_for(settings).run_once()
    job = session.get(BenchJob, job_id)
    assert job.status == "succeeded" and job.error == ""
    record = session.get(Record, job.record_id)
    assert (record.provenance, record.review_state, record.outcome) == (
        "bench",
        "pending",
        "load_failure",
    )
    assert record_count(session) == 1
    api = client.get(f"/api/benchmarks/{job_id}").json()
    error = f"HTTP {status}: injected failure with status {status}"
    assert (api["outcome"], api["outcome_error"]) == ("load_failure", error)
    page = client.get(f"/benchmarks/{job_id}").text
    assert 'id="job-outcome"' in page and "<strong>failed to load</strong>: " + error in page
    assert 'id="job-record"' in page


def test_page_prefills_queues_and_shows_progress(
    client: TestClient, settings: Settings, fake_server: str
) -> None:
    page = client.get("/benchmarks", params={"model": TARGET["model"], "hardware": "rtx-4090-24gb"})
    assert page.status_code == 200
    assert 'value="rtx-4090-24gb" selected' in page.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    form = {
        k: str(v) for k, v in job_body(fake_server).items() if k not in ("lengths", "concurrency")
    }
    form.update(lengths="512", concurrency="1, 2", csrf_token=token)
    response = client.post("/benchmarks", data=form, follow_redirects=False)
    assert response.status_code == 303, response.text
    detail = client.get(response.headers["location"])
    assert 'data-status="queued"' in detail.text and 'hx-trigger="every 1s"' in detail.text
    worker_for(settings).run_once()
    done = client.get(response.headers["location"])
    assert 'data-status="succeeded"' in done.text and 'id="job-record"' in done.text
    # Each level with the load it asked for and held.
    assert 'id="job-levels"' in done.text
    assert 'data-concurrency="1"' in done.text and 'data-concurrency="2"' in done.text


def test_form_without_csrf_token_is_refused(client: TestClient, fake_server: str) -> None:
    client.get("/benchmarks")
    form = {k: str(v) for k, v in job_body(fake_server).items()}
    assert client.post("/benchmarks", data=form).status_code == 403


def test_killed_worker_leaves_the_job_to_another(
    db_path: Path, settings: Settings, client: TestClient, fake_server: str
) -> None:
    slow = "fake?ttft_ms=200&itl_ms=40&tokens=30"
    job_id = client.post(
        "/api/benchmarks", json=job_body(fake_server, model=slow, lengths=[512], concurrency=[1])
    ).json()["id"]
    env = {"DATABASE_URL": f"sqlite:///{db_path}", "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "worker", "--lease", "2"],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    sessions = make_sessionmaker(make_engine(settings))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with sessions() as s:
            job = s.get(BenchJob, job_id)
            if job.status == "running" and job.progress.get("done", 0) >= 1:
                break
        time.sleep(0.1)
    process.kill()  # no clean-up: the lease is all that is left
    process.wait()
    with sessions() as s:
        assert s.get(BenchJob, job_id).status == "running"
        assert s.scalar(select(Record.id).where(Record.provenance == "bench")) is None
    time.sleep(2.2)  # let the dead worker's lease run out
    assert Worker(sessions, poll_s=0.05).run_once()
    with sessions() as s:
        job = s.get(BenchJob, job_id)
        assert (job.status, job.attempts) == ("succeeded", 2)
        records = s.scalars(select(Record).where(Record.provenance == "bench")).all()
        assert [r.id for r in records] == [job.record_id]


def test_job_whose_workers_keep_dying_is_failed_not_stuck(
    settings: Settings, client: TestClient, fake_server: str
) -> None:
    job_id = client.post("/api/benchmarks", json=job_body(fake_server)).json()["id"]
    sessions = make_sessionmaker(make_engine(settings))
    with sessions.begin() as s:
        job = s.get(BenchJob, job_id)
        job.status, job.attempts, job.worker_id = "running", job.max_attempts, "gone"
        job.lease_expires_at = job.created_at  # long expired
    assert Worker(sessions, poll_s=0.05).run_once() is False
    with sessions() as s:
        job = s.get(BenchJob, job_id)
        assert job.status == "failed" and "stopped responding" in job.error
