"""A calibration job run by a remote worker: it claims the job over HTTP with its worker
token, probes the server it can reach, and posts the points back; the dashboard fits and
stores the profile with the job's success."""

from sqlalchemy import select

from app.calibrate.jobs import CalibrationJobIn, enqueue_calibration
from app.db import make_engine, make_sessionmaker, session_scope
from app.models import CalibrationProfile
from tests.jobs.remote_support import (  # noqa: F401 (fixture)
    Dashboard,
    dashboard,
    run_worker_once,
)

STEADY = "fake?itl_ms=10&ttft_ms=10&tokens=12"


def test_a_remote_worker_runs_a_calibration_and_the_dashboard_stores_it(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    asked = CalibrationJobIn(
        base_url=fake_server,
        served_model=STEADY,
        model="llama-3.1-8b-instruct",
        hardware="h100-80gb",
        runtime="vllm",
    )
    with session_scope(dashboard.settings) as session:
        job_id = enqueue_calibration(session, asked, dashboard.settings, "remote-tester").id
    done = run_worker_once(dashboard)
    assert done.returncode == 0, done.stdout + done.stderr
    job = dashboard.job(job_id)
    assert job["status"] == "succeeded", (job, done.stdout, done.stderr)
    sessions = make_sessionmaker(make_engine(dashboard.settings))
    with sessions() as session:
        profile = session.scalars(select(CalibrationProfile)).one()
        assert (profile.status, profile.run_by) == ("ok", "remote-tester"), (
            profile.reason,
            profile.points,
        )
    body = {"model": asked.model, "hardware": asked.hardware, "runtime": "vllm"}
    with dashboard.client(None) as client:
        answer = client.post("/api/estimate", json={**body, "evidence": "ignore"}).json()
    assert answer["decode_tokens_per_s"]["basis"] == "calibrated"


def test_points_that_are_not_a_probe_are_refused_by_their_field(
    dashboard: Dashboard,  # noqa: F811
) -> None:
    with dashboard.client("worker") as client:
        response = client.post(
            "/api/worker/jobs/1/calibration",
            json={"lease_token": "x", "probe": {"served_model": "m", "decode": [[1, 2, -1]]}},
        )
    assert response.status_code == 422, response.text
    # Every error at once, each naming where in the probe: a negative step time, no prefill.
    fields = [error["field"] for error in response.json()["errors"]]
    assert any(field.startswith("probe.decode.0") for field in fields), fields
    assert "probe.prefill" in fields, fields
