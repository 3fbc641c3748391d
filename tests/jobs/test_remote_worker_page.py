"""In a real browser: pin a job to a worker label from the "Run a benchmark" page."""

import re

import pytest

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.jobs.worker import Worker
from tests.live_server import LiveServer

pytestmark = pytest.mark.browser


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The dashboard's own list for the worker labelled gpu-a: the host a job pinned to it
    may name (a pinned job names only hosts its worker's list holds)."""
    return settings.model_copy(update={"bench_worker_hosts": {"gpu-a": ["gpu-a.lab"]}})


def fill_job(page, base_url: str, label: str) -> None:  # noqa: ANN001
    query = "?model=llama-3.1-8b-instruct&hardware=rtx-4090-24gb&runtime=llama-cpp"
    page.goto("/benchmarks" + query)
    form = page.locator("#job-form")
    form.locator('input[name="base_url"]').fill(base_url)
    form.locator('input[name="served_model"]').fill("org/model")
    form.locator('input[name="worker_label"]').fill(label)
    form.locator('input[name="lengths"]').fill("512")
    form.locator('input[name="max_tokens"]').fill("16")
    form.locator('select[name="artifact"]').select_option("llama-3.1-8b-instruct-q4-k-m")
    form.locator('input[name="runtime_version"]').fill("b6100")
    form.locator('select[name="profile"]').select_option("balanced")
    form.get_by_role("button", name="Queue the benchmark").click()


def test_pinned_job_names_its_worker_and_waits_for_it(page, live_server: LiveServer) -> None:
    # The host is on gpu-a's list, so the dashboard takes a non-loopback URL pinned to it.
    fill_job(page, "http://gpu-a.lab:8000/v1", "gpu-a")
    page.wait_for_url(re.compile(r"/benchmarks/\d+$"))
    assert page.locator("#job-status").get_attribute("data-status") == "queued"
    assert page.locator("#job-label").inner_text() == "on worker gpu-a"
    sessions = make_sessionmaker(make_engine(live_server.settings))
    assert Worker(sessions, poll_s=0.05).run_once() is False  # an unlabelled worker passes
    page.reload()
    assert page.locator("#job-status").get_attribute("data-status") == "queued"


def test_bad_label_and_unpinned_remote_host_are_shown_beside_their_fields(
    page,  # noqa: ANN001
) -> None:
    fill_job(page, "http://gpu-a.lab:8000/v1", "gpu a")
    label_error = page.locator('.field-error[data-field="worker_label"]')
    label_error.wait_for()
    assert "a worker label is letters, digits" in label_error.inner_text()
    fill_job(page, "http://gpu-a.lab:8000/v1", "")
    host_error = page.locator('.field-error[data-field="base_url"]')
    host_error.wait_for()
    assert "refusing to benchmark 'gpu-a.lab'" in host_error.inner_text()
