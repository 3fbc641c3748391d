"""Tasks and the default needle through `servebook bench` and benchmark jobs."""

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.cli import main
from app.config import Settings, get_settings
from app.models import BenchJob, Measurement
from app.web import MAX_ROW_ID
from tests.jobs.test_bench_jobs import job_body, worker_for

SCRIPTED = "fake?answer=scripted&ttft_ms=5&itl_ms=1"
TASK_LINES = [
    {"prompt": "Capital of France? [[reply: Paris]]", "check": {"contains": "Paris"}},
    {"prompt": "2 + 2? [[reply: 5]]", "check": {"number": 4, "tolerance": 0.1}},
]


@pytest.fixture(autouse=True)
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_path}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def bench(*args: str) -> Result:
    # On a thread of its own, as in a terminal (see test_bench_cli).
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(CliRunner().invoke, main, ["bench", *args]).result()


def fast(base_url: str, *extra: str) -> Result:
    flags = ["--concurrency", "1", "--repeat", "2", "--max-tokens", "16", "--timeout", "10"]
    return bench("--base-url", base_url, "--model", SCRIPTED, *flags, *extra)


def test_task_file_scores_into_the_json_contract(fake_server: str, tmp_path: Path) -> None:
    task_file = tmp_path / "mine.jsonl"
    task_file.write_text("\n".join(json.dumps(line) for line in TASK_LINES))
    out = tmp_path / "result.json"
    result = fast(
        fake_server, "--lengths", "512", "--task-file", str(task_file), "--json", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "Task mine v1: 2/4 (50 %)" in result.output
    task = json.loads(out.read_text())["task"]
    assert (task["pass_rate"], task["passed"], task["total"]) == (0.5, 2, 4)
    assert [f["answer"] for f in task["failures"]] == ["5", "5"]


def test_minimum_pass_rate_turns_the_exit_status(fake_server: str, tmp_path: Path) -> None:
    task_file = tmp_path / "mine.jsonl"
    task_file.write_text("\n".join(json.dumps(line) for line in TASK_LINES))
    result = fast(
        fake_server,
        "--lengths",
        "512",
        "--task-file",
        str(task_file),
        "--task-min-pass-rate",
        "0.9",
    )
    assert result.exit_code == 1
    assert "outcome: wrong_answer: task 'mine' passed 2 of 4 (50%), below the required 90%" in (
        result.output
    )


def test_bad_task_file_is_a_usage_error_naming_the_line(fake_server: str, tmp_path: Path) -> None:
    task_file = tmp_path / "mine.jsonl"
    task_file.write_text(
        '{"prompt": "q", "check": {"equals": "a"}}\n{"prompt": "q", "check": {}}\n'
    )
    result = fast(fake_server, "--task-file", str(task_file))
    assert result.exit_code == 2
    assert "mine.jsonl line 2: check: Value error, give exactly one of" in result.output
    both = fast(fake_server, "--task-file", str(task_file), "--task", "1")
    assert both.exit_code == 2 and "give --task or --task-file, not both" in both.output
    missing = fast(fake_server, "--task", "99")
    assert missing.exit_code == 2 and "No task 99." in missing.output


def test_default_flags_on_a_32k_server_run_a_needle(fake_server: str, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    long_server = fake_server.replace("/v1", "/ctx/32768/v1")
    result = fast(long_server, "--json", str(out))
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert [length["length"] for length in saved["lengths"]] == [1024, 4096, 32768]
    assert [(n["length"], n["accuracy"], len(n["cells"])) for n in saved["needle"]] == [
        (32768, 1.0, 6)
    ]
    assert (
        "length 32,768 added for the needle (the context allows 32,768 tokens)" in (saved["notes"])
    )


def test_default_flags_on_a_short_server_say_why_no_needle_ran(
    fake_server: str, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    result = fast(fake_server.replace("/v1", "/ctx/8192/v1"), "--json", str(out))
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert saved["needle"] == [] and [x["length"] for x in saved["lengths"]] == [1024, 4096]
    assert any("allows no length past 16,384" in note for note in saved["notes"])


def test_a_job_runs_a_stored_task_and_its_record_keeps_the_pass_rate(
    client: TestClient, settings: Settings, session: Session, fake_server: str
) -> None:
    created = client.post("/api/tasks", json={"name": "mine", "prompts": TASK_LINES}).json()
    response = client.post(
        "/api/benchmarks", json=job_body(fake_server, SCRIPTED, task_id=created["id"], repeat=2)
    )
    assert response.status_code == 202, response.text
    assert response.json()["plan"]["task"]["name"] == "mine"
    assert worker_for(settings).run_once() is True
    status = client.get(response.json()["url"]).json()
    assert status["status"] == "succeeded", status
    points = session.scalars(
        select(Measurement).where(Measurement.record_id == status["record_id"])
    ).all()
    [point] = [p for p in points if "task" in p.details]
    task = point.details["task"]
    assert (task["id"], task["name"], task["pass_rate"], task["passed"], task["total"]) == (
        created["id"],
        "mine",
        0.5,
        2,
        4,
    )
    assert [f["answer"] for f in task["failures"]] == ["5", "5"]
    assert point.ttft_ms >= 5 and point.repetitions == 4
    job = session.get(BenchJob, response.json()["id"])
    assert job.result["task"]["total"] == 4


def test_a_job_naming_an_unknown_task_is_not_found(
    client: TestClient, session: Session, fake_server: str
) -> None:
    missing = {
        "field": "task_id",
        "message": "no task 4242",
        "code": "job.no_task",
        "params": {"task": "4242"},
    }
    # A valid job whose task is not stored: the row is not found, and the field is named.
    response = client.post("/api/benchmarks", json=job_body(fake_server, task_id=4242))
    assert response.status_code == 404
    assert response.json()["errors"] == [missing]
    # Beside an invalid field, every error at once.
    both = client.post(
        "/api/benchmarks", json=job_body(fake_server, task_id=4242, hardware="no-such-machine")
    )
    assert both.status_code == 422
    assert missing in both.json()["errors"]
    assert "hardware" in [e["field"] for e in both.json()["errors"]]
    bad_type = client.post("/api/benchmarks", json=job_body(fake_server, task_id="seven"))
    assert bad_type.status_code == 422
    assert [e["field"] for e in bad_type.json()["errors"]] == ["task_id"]
    assert session.scalars(select(BenchJob)).all() == []


def test_the_schema_takes_a_task_stored_after_it_was_read(
    client: TestClient, fake_server: str
) -> None:
    """A task id is an integer checked when the job is asked for, never a list of the ids
    stored when the schema was built, which goes stale as people add tasks."""
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/api/benchmarks"]["post"]["requestBody"]["content"]
    task_id = body["application/json"]["schema"]["properties"]["task_id"]
    assert "enum" not in json.dumps(task_id)
    # A stored id's range (a larger integer is no id, and past 64 bits none the parser reads)
    assert {"type": "integer", "minimum": 1, "maximum": MAX_ROW_ID} in task_id["anyOf"]
    created = client.post("/api/tasks", json={"name": "later", "prompts": TASK_LINES}).json()
    assert client.get("/openapi.json").json() == schema  # nothing of the task in it
    response = client.post("/api/benchmarks", json=job_body(fake_server, task_id=created["id"]))
    assert response.status_code == 202, response.text
