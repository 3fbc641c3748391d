"""Remote workers as separate processes: `servebook worker --server URL --token T`, with no
database of their own, run a dashboard's jobs against a server on their own loopback."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from app.i18n.labels import stage_label
from app.i18n.messages import in_locale
from tests.jobs.remote_support import (  # noqa: F401 (fixture)
    WAIT_S,
    Dashboard,
    dashboard,
    run_worker_once,
    serve_dashboard,
    start_worker,
)
from tests.jobs.test_bench_jobs import FAST, job_body

SLOW = "fake?ttft_ms=200&itl_ms=40&tokens=30"


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=10)


def steady_progress_page(board: Dashboard, job_id: int, stage: str) -> tuple[dict[str, Any], str]:
    """The running job and its page, read in `stage` (a step's kind, "length") while its
    progress held still: the worker moves from stage to stage (each with its own total) while
    the test reads, so a page is compared with the progress read on both sides of it."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        before = board.job(job_id)
        page = httpx.get(f"{board.url}/benchmarks/{job_id}").text
        after = board.job(job_id)
        running = before["status"] == after["status"] == "running"
        progress = after["progress"]
        in_stage = progress["step"].partition(":")[0] == stage and progress["done"] >= 1
        if running and before["progress"] == progress and in_stage:
            return after, page
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} never held its progress still in {stage} while running")


def test_remote_worker_runs_the_job_and_its_record_is_pending(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
    tmp_path: Path,
) -> None:
    job_id = dashboard.queue(job_body(fake_server, model=SLOW, lengths=[512], concurrency=[1]))
    worker = start_worker(dashboard, tmp_path / "worker.log", "--lease", "5")
    try:
        # A stage with a figure in its name, its first request done: a page the reader sees
        # for most of a run.
        running, page = steady_progress_page(dashboard, job_id, "length")
        # The job page shows the progress the worker streams back.
        progress = running["progress"]
        shown = re.search(r'<progress max="(\d+)" value="(\d+)">', page)
        assert shown is not None, page
        assert int(shown[2]) == progress["done"] >= 1
        assert int(shown[1]) == progress["total"]
        # The stage in the reader's words ("length:512" as "length 512"), the counts beside it.
        with in_locale("en"):
            step = f"{stage_label(progress['step'])} ({progress['done']}/{progress['total']})"
        assert f'<span class="sub" id="job-step">{step}</span>' in page, page
        job = dashboard.wait_for(job_id, lambda j: j["status"] in ("succeeded", "failed"))
    finally:
        stop(worker)
    log = (tmp_path / "worker.log").read_text()
    assert job["status"] == "succeeded", (job, log)
    assert (job["outcome"], job["attempts"]) == ("ok", 1)
    assert dashboard.bench_record_ids() == [job["record_id"]]
    with dashboard.client(None) as client:
        record = client.get(f"/api/records/{job['record_id']}").json()
    assert (record["provenance"], record["review_state"]) == ("bench", "pending")


def test_killed_remote_worker_leaves_the_job_to_another_with_one_record(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
    tmp_path: Path,
) -> None:
    job_id = dashboard.queue(job_body(fake_server, model=SLOW, lengths=[512], concurrency=[1]))
    first = start_worker(dashboard, tmp_path / "first.log", "--lease", "2")
    try:
        dashboard.wait_for(
            job_id, lambda j: j["status"] == "running" and j["progress"]["done"] >= 1
        )
    finally:
        first.send_signal(signal.SIGKILL)  # no clean-up: the lease is all that is left
        first.wait()
    assert dashboard.job(job_id)["status"] == "running"
    assert dashboard.bench_record_ids() == []
    second = start_worker(dashboard, tmp_path / "second.log", "--lease", "2")
    try:
        job = dashboard.wait_for(job_id, lambda j: j["status"] in ("succeeded", "failed"))
    finally:
        stop(second)
    assert (job["status"], job["attempts"]) == ("succeeded", 2), job
    assert dashboard.bench_record_ids() == [job["record_id"]]


def test_pinned_job_waits_for_the_worker_with_its_label(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    job_id = dashboard.queue(job_body(fake_server, model=FAST, worker_label="gpu-a"))
    unlabelled = run_worker_once(dashboard)
    assert unlabelled.returncode == 0, unlabelled.stderr
    assert dashboard.job(job_id)["status"] == "queued"
    labelled = run_worker_once(dashboard, "--label", "gpu-a")
    assert labelled.returncode == 0, labelled.stderr
    job = dashboard.job(job_id)
    assert (job["status"], job["worker_label"]) == ("succeeded", "gpu-a"), job
    assert dashboard.bench_record_ids() == [job["record_id"]]


def test_pinned_job_for_a_host_the_worker_does_not_allow_fails_before_any_request(
    settings: Settings,
) -> None:
    # The dashboard lists gpu-a.lab for the label; the worker itself allows only loopback.
    configured = settings.model_copy(update={"bench_worker_hosts": {"gpu-a": ["gpu-a.lab"]}})
    with serve_dashboard(configured) as board:
        job_id = board.queue(job_body("http://gpu-a.lab:8000/v1", worker_label="gpu-a"))
        done = run_worker_once(board, "--label", "gpu-a")
        assert done.returncode == 0, done.stderr
        job = board.job(job_id)
        assert job["status"] == "failed"
        assert "refusing to benchmark 'gpu-a.lab'" in job["error"]
        assert board.bench_record_ids() == []


def test_pinned_job_for_a_host_its_label_does_not_list_is_refused(
    dashboard: Dashboard,  # noqa: F811
) -> None:
    with dashboard.client("submitter") as client:
        response = client.post(
            "/api/benchmarks", json=job_body("http://gpu-a.lab:8000/v1", worker_label="gpu-a")
        )
    assert response.status_code == 422, response.text
    assert [e["code"] for e in response.json()["errors"]] == ["bench.host_refused_for_label"]


def test_worker_with_a_token_of_another_role_stops_and_says_why(
    dashboard: Dashboard,  # noqa: F811
    fake_server: str,
) -> None:
    job_id = dashboard.queue(job_body(fake_server, model=FAST))
    refused = run_worker_once(dashboard, role="submitter")
    assert refused.returncode == 1
    assert "refused this worker" in refused.stderr
    assert "running benchmark jobs needs a worker token" in refused.stderr
    assert dashboard.job(job_id)["status"] == "queued"


def test_worker_needs_a_server_for_its_token() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "worker", "--token", "sb_x", "--once"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "--token and --allow-host go with --server URL" in done.stderr
