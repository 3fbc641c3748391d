"""The queue's kinds of job: each queued job names its kind, workers run it by that name,
an outcome posted where another kind's goes is refused, and a kind no process knows fails
its job with the reason instead of running it as something else."""

from typing import Any

import httpx
from sqlalchemy.orm import Session

from app.calibrate.jobs import CalibrationJobIn, enqueue_calibration
from app.config import Settings
from app.db import make_engine, make_sessionmaker, session_scope
from app.job_kinds import ALL_KINDS
from app.jobs.kinds import KINDS
from app.jobs.repository import JobRepository
from app.jobs.worker import Worker
from app.models import BenchJob
from tests.jobs.remote_support import Dashboard, dashboard  # noqa: F401 (fixture)
from tests.jobs.test_bench_jobs import FAST, job_body

CLAIM = "/api/worker/claim"
# A well-formed probe and a well-formed result: each is refused only for where it is posted.
PROBE = {"served_model": "m", "decode": [[1, 0, 0.01]], "prefill": [[128, 0.02]]}
RESULT = {
    "plan": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
    "started_at": "2026-01-01T00:00:00Z",
    "finished_at": "2026-01-01T00:01:00Z",
    "duration_s": 60.0,
    "outcome": "ok",
}


def test_every_kind_the_app_runs_is_registered_under_its_own_name() -> None:
    assert (
        {kind.name for kind in ALL_KINDS}
        == set(KINDS)
        == {
            "benchmark",
            "calibration",
            "sentinel",
        }
    )
    assert all(KINDS[kind.name].__class__ is kind for kind in ALL_KINDS)


def queue_calibration(dashboard: Dashboard, fake_server: str) -> int:  # noqa: F811
    asked = CalibrationJobIn(
        base_url=fake_server,
        served_model="m",
        model="llama-3.1-8b-instruct",
        hardware="h100-80gb",
        runtime="vllm",
    )
    with session_scope(dashboard.settings) as session:
        return enqueue_calibration(session, asked, dashboard.settings, "tester").id


def claimed(client: httpx.Client) -> dict[str, Any]:
    response = client.post(CLAIM, json={"worker": "test"})
    assert response.status_code == 200, response.text
    return response.json()


def test_an_outcome_posted_where_another_kind_sends_its_own_is_a_conflict(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    calibration_id = queue_calibration(dashboard, fake_server)
    benchmark_id = dashboard.queue(job_body(fake_server, model=FAST, lengths=[512], repeat=1))
    assert dashboard.job(calibration_id)["kind"] == "calibration"
    assert dashboard.job(benchmark_id)["kind"] == "benchmark"
    with dashboard.client("worker") as client:
        calibration, benchmark = claimed(client), claimed(client)
        assert (calibration["job_id"], calibration["kind"]) == (calibration_id, "calibration")
        assert (benchmark["job_id"], benchmark["kind"]) == (benchmark_id, "benchmark")
        as_result = client.post(
            f"/api/worker/jobs/{calibration_id}/result",
            json={"lease_token": calibration["lease_token"], "result": RESULT},
        )
        as_probe = client.post(
            f"/api/worker/jobs/{benchmark_id}/calibration",
            json={"lease_token": benchmark["lease_token"], "probe": PROBE},
        )
    assert as_result.status_code == 409, as_result.text
    assert f"/api/worker/jobs/{calibration_id}/calibration" in as_result.json()["detail"]
    assert as_probe.status_code == 409, as_probe.text
    assert f"/api/worker/jobs/{benchmark_id}/result" in as_probe.json()["detail"]
    # Neither refused outcome finished its job or stored anything: both still run.
    assert dashboard.job(calibration_id)["status"] == "running"
    assert dashboard.job(benchmark_id)["status"] == "running"
    assert dashboard.job(benchmark_id)["record_id"] is None


def test_a_job_of_a_kind_no_process_knows_fails_with_the_reason(settings: Settings) -> None:
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    with sessions.begin() as session:
        job_id = JobRepository(session).add(BenchJob(kind="transcode", plan={}, target={})).id
    assert Worker(sessions, poll_s=0.01, allowed_hosts=[]).run_once()
    with Session(engine) as session:
        job = JobRepository(session).get(job_id)
        assert job is not None
        assert (job.status, job.record_id) == ("failed", None)
        assert "no job kind 'transcode'" in job.error, job.error
    engine.dispose()
