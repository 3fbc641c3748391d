"""The needle grid and the tool-call check asked for through the API and the page: a
worker runs them and the record keeps their results; bad choices are named beside their
field and queue nothing."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.models import BenchJob, Measurement, Record
from tests.jobs.test_bench_jobs import job_body, worker_for
from tests.jobs.test_bench_task_form import form_for

NEEDLE = "fake?answer=needle&itl_ms=0&ttft_ms=0"


def test_an_api_job_runs_the_grid_and_the_tool_calls_into_its_record(
    client: TestClient, settings: Settings, session: Session, fake_server: str
) -> None:
    url = fake_server.replace("/v1", "/tok/v1")
    body = job_body(
        url,
        NEEDLE,
        lengths=[512],
        concurrency=[1],
        repeat=1,
        needle_grid=True,
        context_length=8192,
        tool_calls=True,
    )
    response = client.post("/api/benchmarks", json=body)
    assert response.status_code == 202, response.text
    plan = response.json()["plan"]
    assert (plan["needle_grid"], plan["context_length"], plan["tool_calls"]) == (True, 8192, True)
    assert worker_for(settings).run_once() is True
    status = client.get(f"/api/benchmarks/{response.json()['id']}").json()
    assert status["status"] == "succeeded", status
    record = session.get(Record, status["record_id"])
    points = session.scalars(select(Measurement).where(Measurement.record_id == record.id)).all()
    graded = next(p for p in points if "needle_grid" in p.details)
    grid = graded.details["needle_grid"]
    assert sorted({cell["length"] for cell in grid["cells"]}) == [4096, 8192]
    assert grid["safe_context_tokens"] == 8192 == graded.context_length
    calls = graded.details["tool_calls"]
    assert calls["valid"] == calls["total"] > 0
    # The speed stages ran as well: the grid was asked beside them, not instead.
    assert any(p.context_length == 512 and p.concurrency == 1 for p in points)


def test_left_out_the_grid_follows_the_lengths_and_no_tool_call_is_checked(
    client: TestClient, fake_server: str
) -> None:
    defaults = job_body(fake_server)
    defaults.pop("lengths")
    automatic = client.post("/api/benchmarks", json=defaults).json()["plan"]
    assert (automatic["needle_grid"], automatic["tool_calls"]) == ("auto", False)
    chosen = client.post("/api/benchmarks", json=job_body(fake_server)).json()["plan"]
    assert chosen["needle_grid"] is False and chosen["context_length"] is None


def test_bad_quality_options_are_refused_by_name(
    client: TestClient, session: Session, fake_server: str
) -> None:
    response = client.post(
        "/api/benchmarks",
        json=job_body(fake_server, needle_grid="yes", tool_calls=1, context_length=100),
    )
    assert response.status_code == 422
    named = {error["field"] for error in response.json()["errors"]}
    assert {"needle_grid", "tool_calls", "context_length"} <= named
    assert session.scalar(select(func.count()).select_from(BenchJob)) == 0


def test_the_form_queues_the_grid_and_the_tool_calls(client: TestClient) -> None:
    fields = {"needle_grid": "true", "context_length": "16384", "tool_calls": "on"}
    response = client.post("/benchmarks", data=form_for(client, **fields), follow_redirects=False)
    assert response.status_code == 303, response.text
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    plan = client.get(f"/api/benchmarks/{job_id}").json()["plan"]
    assert (plan["needle_grid"], plan["context_length"], plan["tool_calls"]) == (True, 16384, True)
    unchecked = client.post("/benchmarks", data=form_for(client), follow_redirects=False)
    job_id = int(unchecked.headers["location"].rsplit("/", 1)[1])
    plan = client.get(f"/api/benchmarks/{job_id}").json()["plan"]
    assert (plan["needle_grid"], plan["tool_calls"]) == (False, False)


def test_the_form_names_a_bad_grid_choice_and_a_short_context(
    client: TestClient, session: Session
) -> None:
    fields = {"needle_grid": "sometimes", "context_length": "512", "tool_calls": "on"}
    response = client.post("/benchmarks", data=form_for(client, **fields))
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select_one("[data-field=needle_grid]") is not None
    assert page.select_one("select[name=needle_grid]")["aria-invalid"] == "true"
    assert page.select_one("[data-field=context_length]") is not None
    # What was chosen is kept for the second try.
    assert page.select_one("input[name=tool_calls]").has_attr("checked")
    assert session.scalar(select(func.count()).select_from(BenchJob)) == 0
