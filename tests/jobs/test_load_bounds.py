"""Load is bounded: a stated maximum concurrency (1,024) refused above it by the CLI, the
jobs API and the plan a worker runs; a run that loses more than a tenth of a level's
requests ends load_failure with the share, not ok."""

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.bench.plan import MAX_CONCURRENCY, BenchPlan
from app.jobs.worker import describe
from app.models import BenchJob
from tests.jobs.test_bench_cli import bench, database  # noqa: F401 (fixture)
from tests.jobs.test_bench_jobs import FAST, job_body
from tests.records.test_surrogates import count


def test_cli_refuses_concurrency_past_the_maximum(fake_server: str) -> None:
    result = bench(fake_server, FAST, "--concurrency", f"1,{MAX_CONCURRENCY + 1}")
    assert result.exit_code == 2, result.output
    # The flag, the value given and the bound, in words: not the library's report.
    assert f"--concurrency {MAX_CONCURRENCY + 1}: " in result.output
    assert "less than or equal to 1024" in result.output
    for text in ("validation error", "BenchPlan", "pydantic", "input_value"):
        assert text not in result.output


def test_jobs_api_refuses_concurrency_past_the_maximum(
    client: TestClient, session: Session, fake_server: str
) -> None:
    response = client.post(
        "/api/benchmarks", json=job_body(fake_server, concurrency=[10_000, 100_000])
    )
    assert response.status_code == 422, response.text
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"concurrency.0", "concurrency.1"}
    assert count(session, BenchJob) == 0
    accepted = client.post("/api/benchmarks", json=job_body(fake_server, concurrency=[1024]))
    assert accepted.status_code == 202, accepted.text


def test_a_worker_refuses_a_stored_plan_past_the_maximum() -> None:
    """A job stored before the limit, or by an older server, reaches a worker as a plan."""
    plan = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "concurrency_levels": [2048]}
    with pytest.raises(ValidationError, match="less than or equal to 1024") as caught:
        BenchPlan.model_validate(plan)
    # The job's error names the field in words, not the library's report.
    said = describe(caught.value)
    assert said == "invalid plan: concurrency_levels.0: Input should be less than or equal to 1024"


def test_a_run_that_loses_requests_under_load_is_a_load_failure(fake_server: str) -> None:
    """More than two requests in flight get 503: at 8, most of the level fails."""
    overloaded = FAST + "&max_inflight=2"
    result = bench(fake_server, overloaded, "--concurrency", "1,8")
    assert "outcome: load_failure" in result.output, result.output
    assert "requests (" in result.output and "failed at concurrency 8" in result.output
