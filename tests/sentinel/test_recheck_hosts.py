"""A worker measures only the hosts its own configuration allows. A re-check (or any job)
pinned to a worker label names a host that label's allow-list holds, or is refused saying
so; and a plan that names other hosts in its `allowed_hosts` widens no worker's list: the
database worker and the remote one each refuse it before any request. 10.9.8.7 stands for
a host on the lab's network; nothing here connects to it."""

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import Settings
from app.db import make_engine, make_sessionmaker, session_scope
from app.jobs.worker import Worker
from app.main import create_app
from app.models import BenchJob
from app.records.storage.service import submit_record
from tests.jobs.remote_support import run_worker_once, serve_dashboard
from tests.records.conftest import post_record

FAR = "http://10.9.8.7:8080/v1"
RECHECK = {"base_url": FAR, "served_model": "fake", "worker_label": "gpu-a"}


def job_count(settings: Settings) -> int:
    with session_scope(settings) as session:
        return len(session.scalars(select(BenchJob.id)).all())


def test_a_recheck_for_a_host_no_label_allows_is_refused_with_the_reason(
    client: TestClient, valid: dict, settings: Settings
) -> None:
    record_id = post_record(client, valid).json()["id"]
    refused = client.post(f"/api/records/{record_id}/recheck", json=RECHECK)
    assert refused.status_code == 422, refused.text
    [error] = refused.json()["errors"]
    assert error["field"] == "base_url"
    assert error["code"] == "bench.host_refused_for_label"
    assert "'10.9.8.7' on worker 'gpu-a'" in error["message"]
    assert "SERVEBOOK_BENCH_WORKER_HOSTS" in error["message"]
    blank = client.post(f"/api/records/{record_id}/recheck", json={**RECHECK, "worker_label": ""})
    assert blank.status_code == 422, blank.text
    assert [e["field"] for e in blank.json()["errors"]] == ["worker_label"]
    assert job_count(settings) == 0


def test_a_recheck_names_a_label_whose_list_holds_the_host(settings: Settings, valid: dict) -> None:
    configured = settings.model_copy(update={"bench_worker_hosts": {"gpu-a": ["10.9.8.7"]}})
    with TestClient(create_app(configured)) as client:
        record_id = post_record(client, valid).json()["id"]
        other = client.post(
            f"/api/records/{record_id}/recheck", json={**RECHECK, "worker_label": "gpu-b"}
        )
        unlabelled = client.post(
            f"/api/records/{record_id}/recheck",
            json={"base_url": FAR, "served_model": "fake"},
        )
        queued = client.post(f"/api/records/{record_id}/recheck", json=RECHECK)
    assert other.status_code == 422, other.text
    assert other.json()["errors"][0]["code"] == "bench.host_refused_for_label"
    assert unlabelled.status_code == 422, unlabelled.text
    assert unlabelled.json()["errors"][0]["code"] == "bench.host_refused"
    assert queued.status_code == 202, queued.text
    assert queued.json()["plan"]["allowed_hosts"] == ["10.9.8.7"]


def queue_far_job(settings: Settings, record: dict[str, Any]) -> int:
    """A re-check of 10.9.8.7 for gpu-a, queued by a dashboard whose settings list it."""
    configured = settings.model_copy(update={"bench_worker_hosts": {"gpu-a": ["10.9.8.7"]}})
    with TestClient(create_app(configured)) as client:
        record_id = post_record(client, record).json()["id"]
        queued = client.post(f"/api/records/{record_id}/recheck", json=RECHECK)
    assert queued.status_code == 202, queued.text
    return int(queued.json()["id"])


def test_a_database_worker_measures_only_what_its_own_settings_allow(
    settings: Settings, valid: dict
) -> None:
    job_id = queue_far_job(settings, valid)
    sessions = make_sessionmaker(make_engine(settings))
    # The worker's own settings list nothing for gpu-a: the plan's list does not count.
    worker = Worker(sessions, poll_s=0.05, label="gpu-a", allowed_hosts=[])
    assert worker.run_once()
    with sessions() as session:
        job = session.get(BenchJob, job_id)
        assert job is not None
        assert job.plan["allowed_hosts"] == ["10.9.8.7"]
        assert (job.status, job.record_id) == ("failed", None)
        assert "refusing to benchmark '10.9.8.7'" in (job.error or "")


def test_a_remote_worker_measures_only_what_it_allows(
    settings: Settings, valid: dict, tmp_path: Path
) -> None:
    configured = settings.model_copy(update={"bench_worker_hosts": {"gpu-a": ["10.9.8.7"]}})
    with session_scope(settings) as session:
        submitted = submit_record(session, valid, provenance="api", submitted_by="x")
        record_id = submitted.record.id
    with serve_dashboard(configured) as dashboard:
        with dashboard.client("submitter") as client:
            queued = client.post(f"/api/records/{record_id}/recheck", json=RECHECK)
        assert queued.status_code == 202, queued.text
        done = run_worker_once(dashboard, "--label", "gpu-a")
        assert done.returncode == 0, done.stderr
        job = dashboard.job(queued.json()["id"])
    assert job["status"] == "failed"
    assert "refusing to benchmark '10.9.8.7'" in job["error"]
