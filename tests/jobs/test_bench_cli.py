"""`servebook bench` in a terminal: what it prints, what it stores, how it exits."""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.cli import main
from app.config import get_settings
from app.jobs.cli import EXIT_OUTCOME_NOT_OK, EXIT_UNREACHABLE
from app.models import Record
from tests.jobs.test_bench_jobs import FAST, TARGET, closed_port

RECORD_FLAGS = [
    "--record",
    "--catalog-model",
    TARGET["model"],
    "--artifact",
    TARGET["artifact"],
    "--runtime",
    TARGET["runtime"],
    "--runtime-version",
    TARGET["runtime_version"],
    "--hardware",
    TARGET["hardware"],
    "--profile",
    TARGET["profile"],
]


@pytest.fixture(autouse=True)
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def bench(base_url: str, model: str, *extra: str) -> Result:
    args = ["bench", "--base-url", base_url, "--model", model, "--lengths", "512"]
    args += ["--concurrency", "1", "--repeat", "1", "--max-tokens", "16", "--timeout", "5"]
    # On a thread of its own, as in a terminal: the browser fixture, once started in this
    # process, leaves Playwright's event loop running on the main thread.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, main, [*args, *extra]).result()


def records(session: Session) -> list[Record]:
    return list(session.scalars(select(Record)))


def test_healthy_server_exits_zero(fake_server: str, session: Session) -> None:
    result = bench(fake_server, FAST)
    assert result.exit_code == 0, result.output
    assert "outcome: ok" in result.output
    assert records(session) == []  # stored only when asked


def test_unreachable_target_exits_with_its_own_code_and_stores_nothing(
    tmp_path: Path, session: Session
) -> None:
    port = closed_port()
    json_path = tmp_path / "result.json"
    result = bench(f"http://127.0.0.1:{port}/v1", FAST, "--json", str(json_path), *RECORD_FLAGS)
    assert result.exit_code == EXIT_UNREACHABLE, result.output
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    assert f"could not connect to {url}: connection refused" in result.output
    assert "outcome:" not in result.output and "stored as pending record" not in result.output
    assert not json_path.exists()
    assert session.scalar(select(func.count()).select_from(Record)) == 0


@pytest.mark.parametrize(
    ("model", "options", "outcome"),
    [
        ("fake?http_status=404", [], "load_failure"),
        ("fake?ttft_ms=5&itl_ms=1&tokens=6&max_context=300", [], "long_context_failure"),
        ("fake?ttft_ms=5&itl_ms=1&tokens=6", ["--needle"], "wrong_answer"),
    ],
)
def test_outcome_that_is_not_ok_exits_non_zero(
    fake_server: str, model: str, options: list[str], outcome: str
) -> None:
    result = bench(fake_server, model, *options)
    assert result.exit_code == EXIT_OUTCOME_NOT_OK, result.output
    assert f"outcome: {outcome}: " in result.output


def test_load_failure_is_stored_as_evidence_and_still_exits_non_zero(
    fake_server: str, session: Session
) -> None:
    result = bench(fake_server, "fake?http_status=500", *RECORD_FLAGS)
    assert result.exit_code == EXIT_OUTCOME_NOT_OK, result.output
    assert "outcome: load_failure: HTTP 500: injected failure with status 500" in result.output
    [record] = records(session)
    assert (record.provenance, record.review_state, record.outcome) == (
        "bench",
        "pending",
        "load_failure",
    )
    assert f"stored as pending record #{record.id}" in result.output
