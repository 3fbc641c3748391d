"""The worker API on a real exposed dashboard: who may call it, what it refuses, and how
leases keep a job to one record however often and however late results are posted."""

import time
from typing import Any

import httpx
import pytest

from app.bench.plan import BenchPlan
from app.jobs.worker import run_on_own_thread
from tests.jobs.remote_support import Dashboard, dashboard  # noqa: F401 (fixture)
from tests.jobs.test_bench_jobs import FAST, job_body

CLAIM = "/api/worker/claim"


PLAN = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "extra_body": {"ignore_eos": True}}
SMALL_RESULT = {
    "plan": PLAN,
    "started_at": "2026-01-01T00:00:00Z",
    "finished_at": "2026-01-01T00:01:00Z",
    "duration_s": 60.0,
    "outcome": "ok",
}


def claim(client: httpx.Client, **body: Any) -> httpx.Response:
    return client.post(CLAIM, json={"worker": "test", **body})


def small_job(fake_server: str, **changes: Any) -> dict[str, Any]:
    return job_body(fake_server, model=FAST, lengths=[512], concurrency=[1], repeat=1, **changes)


def measured(held: dict[str, Any]) -> dict[str, Any]:
    """A real run of the claimed plan against the fake server, as a worker would post it."""
    # On its own thread, as the worker runs it: a browser test may hold this thread's loop.
    return run_on_own_thread(BenchPlan.model_validate(held["plan"])).model_dump(mode="json")


@pytest.mark.parametrize(("role", "status"), [(None, 401), ("submitter", 403), ("maintainer", 403)])
def test_only_worker_tokens_may_claim(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
    role: str | None,
    status: int,
) -> None:
    job_id = dashboard.queue(small_job(fake_server))
    with dashboard.client(role) as client:
        response = claim(client)
    assert response.status_code == status, response.text
    if status == 403:
        assert "needs a worker token" in response.json()["detail"]
    assert dashboard.job(job_id)["status"] == "queued"
    with dashboard.client("worker") as client:
        assert claim(client).json()["job_id"] == job_id


def test_worker_token_may_not_review_submit_or_queue(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    with dashboard.client("worker") as client:
        review = client.post("/api/records/1/review", json={"action": "accept"})
        queue = client.post("/api/benchmarks", json=small_job(fake_server))
        submit = client.post("/api/records", json={})
    assert review.status_code == 403, review.text
    assert "reviewing needs a maintainer" in review.json()["detail"]
    for refused in (queue, submit):
        assert refused.status_code == 403, refused.text
        assert "is a worker token" in refused.json()["detail"]


def test_claim_result_is_stored_once_however_often_it_is_posted(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    job_id = dashboard.queue(small_job(fake_server))
    before = dashboard.record_count()
    with dashboard.client("worker") as client:
        held = claim(client).json()
        assert (held["job_id"], held["attempt"]) == (job_id, 1)
        renewed = client.post(
            f"/api/worker/jobs/{job_id}/lease",
            json={
                "lease_token": held["lease_token"],
                "progress": {"step": "length 512", "done": 1, "total": 3},
            },
        )
        assert renewed.status_code == 200, renewed.text
        assert dashboard.job(job_id)["progress"] == {"step": "length 512", "done": 1, "total": 3}
        body = {"lease_token": held["lease_token"], "result": measured(held)}
        first = client.post(f"/api/worker/jobs/{job_id}/result", json=body)
        again = client.post(f"/api/worker/jobs/{job_id}/result", json=body)
    assert (first.status_code, first.json()["created"]) == (201, True), first.text
    assert (again.status_code, again.json()["created"]) == (200, False), again.text
    assert again.json()["record_id"] == first.json()["record_id"]
    job = dashboard.job(job_id)
    assert (job["status"], job["record_id"]) == ("succeeded", first.json()["record_id"])
    assert dashboard.record_count() == before + 1
    assert dashboard.bench_record_ids() == [job["record_id"]]


def test_late_post_from_an_expired_claim_is_refused_and_stores_nothing(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    job_id = dashboard.queue(small_job(fake_server))
    with dashboard.client("worker") as client:
        stale = claim(client, lease_s=1).json()
        result = measured(stale)
        time.sleep(1.1)  # the first worker's lease runs out
        fresh = claim(client, lease_s=30).json()
        assert (fresh["job_id"], fresh["attempt"]) == (job_id, 2)
        assert fresh["lease_token"] != stale["lease_token"]
        late = {"lease_token": stale["lease_token"]}
        refused = [
            client.post(f"/api/worker/jobs/{job_id}/lease", json=late),
            client.post(f"/api/worker/jobs/{job_id}/result", json={**late, "result": result}),
            client.post(f"/api/worker/jobs/{job_id}/fail", json={**late, "error": "gave up"}),
        ]
        assert [r.status_code for r in refused] == [409, 409, 409], [r.text for r in refused]
        assert "no longer held under this lease" in refused[1].json()["detail"]
        assert dashboard.bench_record_ids() == []
        assert dashboard.job(job_id)["status"] == "running"
        posted = client.post(
            f"/api/worker/jobs/{job_id}/result",
            json={"lease_token": fresh["lease_token"], "result": result},
        )
    assert posted.status_code == 201, posted.text
    assert dashboard.bench_record_ids() == [posted.json()["record_id"]]


def test_pinned_job_is_claimed_only_with_its_label(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    pinned = dashboard.queue(small_job(fake_server, worker_label="gpu-a"))
    anyone = dashboard.queue(small_job(fake_server))
    with dashboard.client("worker") as client:
        assert claim(client).json()["job_id"] == anyone
        assert claim(client).status_code == 204
        assert claim(client, label="gpu-b").status_code == 204
        assert claim(client, label="gpu-a").json()["job_id"] == pinned
    assert dashboard.job(pinned)["worker_label"] == "gpu-a"


def test_failure_is_recorded_with_the_reason_and_no_record(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    job_id = dashboard.queue(small_job(fake_server))
    with dashboard.client("worker") as client:
        held = claim(client).json()
        body = {"lease_token": held["lease_token"], "error": "could not connect to the server"}
        failed = client.post(f"/api/worker/jobs/{job_id}/fail", json=body)
        again = client.post(f"/api/worker/jobs/{job_id}/fail", json=body)
    assert failed.status_code == 200, failed.text
    assert again.status_code == 409
    job = dashboard.job(job_id)
    assert (job["status"], job["error"]) == ("failed", "could not connect to the server")
    assert dashboard.bench_record_ids() == []


def test_result_of_another_server_is_refused_and_the_job_stays_held(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    job_id = dashboard.queue(small_job(fake_server))
    with dashboard.client("worker") as client:
        held = claim(client).json()
        result = measured(held)
        result["plan"]["model"] = "another-model"
        response = client.post(
            f"/api/worker/jobs/{job_id}/result",
            json={"lease_token": held["lease_token"], "result": result},
        )
    # Well formed, but not what the job stored: a conflict naming the field.
    assert response.status_code == 409, response.text
    answer = response.json()
    assert answer["code"] == "job.result_mismatch"
    assert answer["params"]["field"] == "result.plan.model"
    assert "but job" in answer["detail"]
    assert dashboard.job(job_id)["status"] == "running"
    assert dashboard.bench_record_ids() == []


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (CLAIM, {"worker": "w", "extra": 1}, "extra"),
        (CLAIM, {"worker": "w", "label": "gpu a"}, "label"),
        (CLAIM, {"worker": "w", "lease_s": 0}, "lease_s"),
        (CLAIM, {"worker": ""}, "worker"),
        (CLAIM, [], "body"),
        ("/api/worker/jobs/1/lease", {"lease_token": "not-hex"}, "lease_token"),
        ("/api/worker/jobs/1/result", {"lease_token": "0" * 32, "result": {}}, "result.plan"),
        # Every object of a result holds only the fields this server reads, as the schema says.
        (
            "/api/worker/jobs/1/result",
            {"lease_token": "0" * 32, "result": {**SMALL_RESULT, "surprise": 1}},
            "result.surprise",
        ),
        (
            "/api/worker/jobs/1/result",
            {"lease_token": "0" * 32, "result": {**SMALL_RESULT, "plan": {**PLAN, "x": 1}}},
            "result.plan.x",
        ),
        # A plan's free-form extra body keeps to the free-form bounds.
        (
            "/api/worker/jobs/1/result",
            {
                "lease_token": "0" * 32,
                "result": {**SMALL_RESULT, "plan": {**PLAN, "extra_body": {"a": 2.0**70}}},
            },
            "result.plan.extra_body",
        ),
        (
            "/api/worker/jobs/1/result",
            {"lease_token": "0" * 32, "result": {**SMALL_RESULT, "plan": {**PLAN, "lengths": []}}},
            "result.plan.lengths",
        ),
        ("/api/worker/jobs/1/fail", {"lease_token": "0" * 32, "error": ""}, "error"),
    ],
)
def test_bad_bodies_are_refused_naming_the_field(
    dashboard: Dashboard,  # noqa: F811
    path: str,
    body: Any,
    field: str,
) -> None:
    with dashboard.client("worker") as client:
        response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    fields = [error["field"] for error in response.json()["errors"]]
    assert any(f.startswith(field) for f in fields), fields


NO_ROOM_FOR_OUTPUT = {**PLAN, "lengths": [64], "max_tokens": 64}


@pytest.mark.parametrize(
    ("path", "body", "field", "code"),
    [
        (
            "/api/worker/jobs/1/lease",
            {"lease_token": "0" * 32, "progress": {"step": "x", "done": 4, "total": 3}},
            "progress",
            "worker.done_over_total",
        ),
        (
            "/api/worker/jobs/1/result",
            {"lease_token": "0" * 32, "result": {**SMALL_RESULT, "plan": NO_ROOM_FOR_OUTPUT}},
            "result.plan",
            "bench.length_below_output",
        ),
    ],
)
def test_fields_the_schema_accepts_that_contradict_each_other_are_a_conflict(
    dashboard: Dashboard,  # noqa: F811
    path: str,
    body: Any,
    field: str,
    code: str,
) -> None:
    """Each field keeps its schema; together they cannot hold (`done` past `total`, no room
    for the output in a length): 409 naming the field and the relation's code, not 422."""
    with dashboard.client("worker") as client:
        response = client.post(path, json=body)
    assert response.status_code == 409, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == field and error["code"] == code


def test_a_well_formed_result_passes_validation(dashboard: Dashboard) -> None:  # noqa: F811
    with dashboard.client("worker") as client:
        response = client.post(
            "/api/worker/jobs/999999/result",
            json={"lease_token": "0" * 32, "result": SMALL_RESULT},
        )
    # Read in full: only the job is missing.
    assert response.status_code == 404, response.text


def test_unknown_job_and_non_json_are_refused(dashboard: Dashboard) -> None:  # noqa: F811
    with dashboard.client("worker") as client:
        token = {"lease_token": "0" * 32}
        missing = [
            client.post("/api/worker/jobs/999999/lease", json=token),
            client.post("/api/worker/jobs/999999/fail", json={**token, "error": "x"}),
        ]
        text = client.post(CLAIM, content=b"worker=w", headers={"content-type": "text/plain"})
    assert [r.status_code for r in missing] == [404, 404]
    assert "No benchmark job 999999" in missing[0].json()["detail"]
    assert text.status_code == 415


def test_job_label_must_be_a_plain_name(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    with dashboard.client("submitter") as client:
        response = client.post("/api/benchmarks", json=small_job(fake_server, worker_label="a b"))
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["worker_label"]
