"""`servebook bench --needle-grid --context-length N [--tool-calls] --json FILE`: the JSON
contract of the quality checks, and the record that keeps them."""

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cli import main
from app.config import get_settings
from app.models import Measurement, Record
from tests.jobs.test_bench_cli import RECORD_FLAGS


@pytest.fixture(autouse=True)
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def bench(base_url: str, model: str, *extra: str) -> Result:
    args = ["bench", "--base-url", base_url, "--model", model, "--repeat", "1"]
    args += ["--max-tokens", "16", "--timeout", "5", *extra]
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, main, args).result()


def test_grid_and_tool_calls_write_the_contract(fake_server: str, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    url = fake_server.replace("/v1", "/tok/v1")
    model = "fake?answer=needle&needle_cutoff=10000&itl_ms=0&ttft_ms=0"
    result = bench(
        url, model, "--needle-grid", "--context-length", "20000", "--tool-calls", "--json", str(out)
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    grid = data["needle_grid"]
    assert sorted({cell["length"] for cell in grid["cells"]}) == [4096, 8192, 16384, 20000]
    assert len({cell["depth"] for cell in grid["cells"]}) == 5
    for cell in grid["cells"]:
        assert {"length", "depth", "found", "repeats"} <= set(cell)
        assert cell["found"] == (cell["repeats"] if cell["length"] <= 8192 else 0)
    assert grid["safe_context_tokens"] == 8192
    assert grid["threshold"] == 0.95
    calls = data["tool_calls"]
    assert (calls["valid"], calls["total"], calls["valid_rate"]) == (40, 40, 1.0)
    assert set(calls["band"]) == {"low", "high"}
    # Alone, the grid runs no speed stages.
    assert data["lengths"] == [] and data["concurrency"] is None
    assert "safe ceiling at 95%: 8,192 tokens" in result.output


def test_the_grid_needs_the_context_length(fake_server: str) -> None:
    result = bench(fake_server, "fake", "--needle-grid")
    assert result.exit_code == 2
    assert "--context-length" in result.output


def test_a_stored_record_keeps_the_grid_and_tool_calls(fake_server: str, session: Session) -> None:
    url = fake_server.replace("/v1", "/tok/v1")
    result = bench(
        url,
        "fake?answer=needle&itl_ms=0&ttft_ms=0",
        "--needle-grid",
        "--context-length",
        "8192",
        "--tool-calls",
        *RECORD_FLAGS,
    )
    assert result.exit_code == 0, result.output
    record = session.scalars(select(Record)).one()
    points = session.scalars(select(Measurement).where(Measurement.record_id == record.id))
    point = next(m for m in points if "needle_grid" in m.details)
    grid = point.details["needle_grid"]
    assert point.context_length == 8192 == grid["safe_context_tokens"]
    assert point.needle_accuracy == 1.0
    assert [cell["hits"] for cell in grid["cells"]] == ["1"] * 10
    assert point.details["tool_calls"]["valid"] == 40
