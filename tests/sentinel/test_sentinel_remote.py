"""A re-check run by a remote worker confirms a regression as the database worker does: the
first result that reads slow is answered 202 and the job is queued again; the second run's
result stores the record, saying two runs were made."""

import httpx
import pytest

from app.bench.plan import BenchPlan
from app.config import Settings
from app.jobs.worker import run_on_own_thread
from tests.jobs.remote_support import Dashboard, dashboard  # noqa: F401 (fixture)
from tests.sentinel.servers import BASELINE_TIMING, SLOW_DECODE_TIMING, timed_server
from tests.sentinel.test_sentinel_cli import baseline_record

pytestmark = pytest.mark.usefixtures("cli_database")


def run_claimed(client: httpx.Client, job_id: int) -> httpx.Response:
    """Claim the job, run its plan as a worker does, and post the result."""
    held = client.post("/api/worker/claim", json={"worker": "remote-test"}).json()
    assert held["job_id"] == job_id, held
    result = run_on_own_thread(BenchPlan.model_validate(held["plan"]))
    body = {"lease_token": held["lease_token"], "result": result.model_dump(mode="json")}
    return client.post(f"/api/worker/jobs/{job_id}/result", json=body)


def test_a_remote_recheck_is_confirmed_by_a_second_run(
    dashboard: Dashboard,  # noqa: F811
    settings: Settings,
) -> None:
    with timed_server(BASELINE_TIMING, {"version": "0.24.0"}) as fast:
        good = baseline_record(fast.base_url, "0.24.0")
    with dashboard.client("maintainer") as client:
        review = {"action": "accept", "reason": "checked", "confirm_flags": True}
        accepted = client.post(f"/api/records/{good}/review", json=review)
        assert accepted.status_code == 200, accepted.text
    with timed_server(SLOW_DECODE_TIMING, {"version": "0.25.0"}) as slow:
        with dashboard.client("maintainer") as client:
            body = {"base_url": slow.base_url, "served_model": "fake"}
            queued = client.post(f"/api/records/{good}/recheck", json=body)
            assert queued.status_code == 202, queued.text
        job_id = queued.json()["id"]
        with dashboard.client("worker") as client:
            first = run_claimed(client, job_id)
            assert first.status_code == 202, first.text
            assert first.json()["confirming"] is True and first.json()["record_id"] is None
            assert dashboard.job(job_id)["status"] == "queued"
            second = run_claimed(client, job_id)
    assert second.status_code == 201, second.text
    assert second.json()["confirming"] is False
    job = dashboard.job(job_id)
    assert job["status"] == "succeeded" and job["record_id"] == second.json()["record_id"]
    with dashboard.client(None) as client:
        record = client.get(f"/api/records/{job['record_id']}").json()
    sentinel = record["provenance_detail"]["sentinel"]
    assert (sentinel["verdict"], sentinel["runs"]) == ("regressed", 2)
