"""One stored task run on two configurations, each against its own OpenAI-compatible test
server on 127.0.0.1: one through a benchmark job queued by the API, one through
`servebook bench --record`. The task's results then compare the two with Fisher's exact
test and say how many prompts would tell them apart."""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.cli import main
from app.config import Settings, get_settings
from app.records.comparison.statistics import fisher_exact, prompts_per_arm
from tests.fake_server_process import fake_server_process
from tests.jobs.test_bench_jobs import job_body, worker_for

STRONG = "fake?answer=scripted&ttft_ms=5&itl_ms=1"  # answers [[reply: ...]]
WEAK = STRONG + "&alternate=1"  # answers [[alt: ...]]
PROMPTS, STRONG_PASSES, WEAK_PASSES = 20, 14, 9
GLM_ON_H200 = {
    "model": "glm-5.3-flash",
    "artifact": "glm-5.3-flash-fp8",
    "runtime": "sglang",
    "runtime_version": "0.5.10",
    "hardware": "8x-h200-141gb",
}


def prompt(index: int) -> dict:
    strong = "yes" if index < STRONG_PASSES else "no"
    weak = "yes" if index < WEAK_PASSES else "no"
    text = f"Question {index}: is it so? [[reply: {strong}]] [[alt: {weak}]]"
    return {"prompt": text, "check": {"equals": "yes"}}


@pytest.fixture
def second_server() -> Iterator[str]:
    """A second test server in its own process: the other configuration's."""
    with fake_server_process() as url:
        yield url


@pytest.fixture
def cli_database(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def bench_record(base_url: str, task_id: int) -> str:
    args = [
        "bench",
        "--base-url",
        base_url,
        "--model",
        WEAK,
        "--lengths",
        "512",
        "--concurrency",
        "1",
        "--repeat",
        "1",
        "--max-tokens",
        "16",
        "--no-needle",
        "--task",
        str(task_id),
        "--record",
        "--catalog-model",
        "qwen3-32b",
        "--artifact",
        "qwen3-32b-bf16",
        "--runtime",
        "vllm",
        "--runtime-version",
        "0.11.0",
        "--hardware",
        "h200-141gb",
        "--profile",
        "balanced",
    ]
    with ThreadPoolExecutor(max_workers=1) as pool:  # as in a terminal: a thread of its own
        result = pool.submit(CliRunner().invoke, main, args).result()
    assert result.exit_code == 0, result.output
    return result.output


def test_same_task_on_two_configurations_is_compared_with_an_exact_test(
    client: TestClient,
    settings: Settings,
    cli_database: None,
    fake_server: str,
    second_server: str,
) -> None:
    body = {"name": "yes-or-no", "prompts": [prompt(i) for i in range(PROMPTS)]}
    task = client.post("/api/tasks", json=body).json()

    # Configuration A: a benchmark job queued through the API, run by a worker.
    job = client.post(
        "/api/benchmarks",
        json={
            **job_body(
                fake_server, STRONG, task_id=task["id"], repeat=1, lengths=[512], concurrency=[1]
            ),
            **GLM_ON_H200,
        },
    )
    assert job.status_code == 202, job.text
    assert worker_for(settings).run_once() is True
    status = client.get(job.json()["url"]).json()
    assert status["status"] == "succeeded", status
    record_a = status["record_id"]

    # Configuration B: the benchmark client in a terminal, against the second server.
    output = bench_record(second_server, task["id"])
    assert "Task yes-or-no v1: 9/20" in output
    [record_b] = [
        r["record_id"]
        for r in client.get(f"/api/tasks/{task['id']}/results").json()["results"]
        if r["record_id"] != record_a
    ]

    answer = client.get(
        f"/api/tasks/{task['id']}/results",
        params={"compare": f"{record_a},{record_b}", "price_per_gpu_hour": 2.5},
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    rows = {row["record_id"]: row for row in found["results"]}
    assert (rows[record_a]["model"]["name"], rows[record_a]["passed"]) == ("GLM-5.3-Flash", 14)
    assert (rows[record_b]["model"]["name"], rows[record_b]["passed"]) == ("Qwen3-32B", 9)
    assert rows[record_a]["hardware"]["slug"] == "8x-h200-141gb"
    assert rows[record_b]["hardware"]["slug"] == "h200-141gb"
    assert all(
        row["total"] == PROMPTS and row["duration_basis"] == "measured" for row in rows.values()
    )
    # The cost per solved task: price x GPUs x the task's own time, over the answers passed.
    a = rows[record_a]
    assert a["cost_per_solved_task"] == round(2.5 * 8 * a["duration_s"] / 3600 / 14, 4)

    comparison = found["comparison"]
    assert comparison["test"] == "fisher_exact_two_sided"
    assert comparison["p_value"] == pytest.approx(fisher_exact(14, 20, 9, 20))
    assert 0.05 < comparison["p_value"] < 0.25 and comparison["significant"] is False
    assert comparison["prompts_needed"]["per_arm"] == prompts_per_arm(0.7, 0.45) == 61
    assert comparison["text"].startswith(
        "GLM-5.3-Flash passed 14/20, Qwen3-32B 9/20: the difference is not significant at "
        "20 prompts (Fisher's exact test, p = 0.2); run 61 to tell 70% from 45%"
    )
