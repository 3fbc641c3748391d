"""`GET /api/tasks/{id}/results`: every record that ran a task, across models and hardware,
and two of them compared; bad ids refused with a clear status and message."""

import copy
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.records.comparison.statistics import fisher_exact, wilson_interval
from tests.records.conftest import VALID, post_record

# The records are found by a path into their measurements' JSON: both databases answer it.
pytestmark = pytest.mark.postgresql

TASK = {
    "name": "capitals",
    "prompts": [{"prompt": f"Capital number {i}?", "check": {"contains": "x"}} for i in range(4)],
}


def record_with_score(
    task: dict, passed: int, total: int, *, duration_s: float | None = None, **changes: Any
) -> dict:
    body = copy.deepcopy(VALID)
    body.update({"hardware": "8x-h200-141gb", **changes})
    score = {
        "id": task["id"],
        "name": task["name"],
        "version": task["version"],
        "pass_rate": round(passed / total, 4),
        "passed": passed,
        "total": total,
        "errors": 0,
    }
    if duration_s is not None:
        score["duration_s"] = duration_s
    body["measurements"] = [
        {
            "context_length": 600,
            "concurrency": 1,
            "repetitions": total,
            "ttft_ms": 120.0,
            "decode_tokens_per_s": 80.0,
            "e2e_latency_ms": 900.0,
            "details": {"task": score},
        }
    ]
    return body


def submit(client: TestClient, body: dict) -> int:
    response = post_record(client, body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


QWEN_ON_ONE_H200 = {
    "model": "qwen3-32b",
    "artifact": "qwen3-32b-bf16",
    "runtime": "vllm",
    "runtime_version": "0.11.0",
    "hardware": "h200-141gb",
    "gpu_count": 1,
    "profile": "balanced",
    "command": "vllm serve Qwen/Qwen3-32B --host 127.0.0.1",
    "applied_values": {},
}


def setup(client: TestClient) -> tuple[dict, int, int]:
    task = client.post("/api/tasks", json=TASK).json()
    glm = submit(client, record_with_score(task, 20, 20, duration_s=1800.0))
    qwen = submit(client, record_with_score(task, 5, 20, **QWEN_ON_ONE_H200))
    return task, glm, qwen


def test_every_record_that_ran_the_task_is_listed_with_its_band(client: TestClient) -> None:
    task, glm, qwen = setup(client)
    other = client.post("/api/tasks", json={**TASK, "name": "other"}).json()
    submit(client, record_with_score(other, 1, 2))  # another task's run: not listed
    submit(client, copy.deepcopy(VALID) | {"hardware": "8x-h200-141gb"})  # no task at all
    answer = client.get(f"/api/tasks/{task['id']}/results")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["task"] == {"id": task["id"], "name": "capitals", "version": 1}
    assert [row["record_id"] for row in found["results"]] == [qwen, glm]  # newest first
    rows = {row["record_id"]: row for row in found["results"]}
    assert rows[glm]["model"]["slug"] == "glm-5.3-flash"
    assert rows[qwen]["model"]["slug"] == "qwen3-32b"
    assert rows[qwen]["hardware"]["slug"] == "h200-141gb"
    assert rows[qwen]["runtime"] == {"slug": "vllm", "name": "vLLM", "version": "0.11.0"}
    assert rows[qwen]["review_state"] == "pending"
    assert (rows[qwen]["passed"], rows[qwen]["total"], rows[qwen]["pass_rate"]) == (5, 20, 0.25)
    band = wilson_interval(5, 20)
    assert rows[qwen]["band"] == {
        "low": round(band.low, 4),
        "high": round(band.high, 4),
        "confidence": 0.95,
        "method": "wilson",
    }
    assert rows[glm]["band"]["high"] == 1.0
    assert rows[glm]["decode_tokens_per_s"] == 80.0 and rows[glm]["date"]
    # The task's own time when kept; else the median request's time once per answer.
    assert (rows[glm]["duration_s"], rows[glm]["duration_basis"]) == (1800.0, "measured")
    assert rows[qwen]["duration_s"] == 18.0
    assert rows[qwen]["duration_basis"].startswith("estimated")
    assert all(row["cost_per_solved_task"] is None for row in rows.values())
    assert found["comparison"] is None


def test_a_price_costs_each_solved_task(client: TestClient) -> None:
    task, glm, qwen = setup(client)
    found = client.get(f"/api/tasks/{task['id']}/results", params={"price_per_gpu_hour": 3}).json()
    rows = {row["record_id"]: row for row in found["results"]}
    # 3 per GPU-hour x 8 GPUs x half an hour, over 20 solved.
    assert rows[glm]["cost_per_solved_task"] == 0.6
    assert rows[qwen]["cost_per_solved_task"] == round(3 * 1 * 18 / 3600 / 5, 4)
    assert found["price_per_gpu_hour"] == 3


def test_two_records_compared_with_fishers_exact_test(client: TestClient) -> None:
    task, glm, qwen = setup(client)
    answer = client.get(
        f"/api/tasks/{task['id']}/results",
        params={"compare": f"{glm},{qwen}", "price_per_gpu_hour": 3},
    )
    assert answer.status_code == 200, answer.text
    comparison = answer.json()["comparison"]
    assert (comparison["a"], comparison["b"]) == (glm, qwen)
    assert comparison["p_value"] == fisher_exact(20, 20, 5, 20) < 0.05
    assert comparison["significant"] is True
    assert comparison["prompts_needed"]["alpha"] == 0.05
    assert comparison["prompts_needed"]["power"] == 0.8
    assert comparison["prompts_needed"]["per_arm"] >= 1
    assert comparison["text"].startswith(
        "GLM-5.3-Flash passed 20/20, Qwen3-32B 5/20: the difference is significant at 95%"
    )
    assert (
        "each solved task costs 0.6 with GLM-5.3-Flash and 0.003 with Qwen3-32B"
        in (comparison["text"])
    )
    assert [m["code"] for m in comparison["messages"]] == [
        "task.compare.significant",
        "task.compare.costs",
    ]
    # The parameter given twice reads the same as A,B.
    twice = client.get(
        f"/api/tasks/{task['id']}/results", params=[("compare", glm), ("compare", qwen)]
    )
    assert twice.json()["comparison"]["p_value"] == comparison["p_value"]


def test_equal_rates_say_no_number_of_prompts_tells_them_apart(client: TestClient) -> None:
    task = client.post("/api/tasks", json=TASK).json()
    a = submit(client, record_with_score(task, 5, 10))
    b = submit(client, record_with_score(task, 5, 10, **QWEN_ON_ONE_H200))
    comparison = client.get(
        f"/api/tasks/{task['id']}/results", params={"compare": f"{a},{b}"}
    ).json()["comparison"]
    assert comparison["p_value"] == 1.0 and comparison["significant"] is False
    assert comparison["prompts_needed"]["per_arm"] is None
    assert "the same pass rate, which no number of prompts tells apart" in comparison["text"]


def test_bad_ids_and_prices_are_refused_naming_the_field(client: TestClient) -> None:
    task, glm, qwen = setup(client)
    stranger = submit(client, copy.deepcopy(VALID) | {"hardware": "8x-h200-141gb"})
    url = f"/api/tasks/{task['id']}/results"

    def refused(status: int, **params: Any) -> dict:
        response = client.get(url, params=params)
        assert response.status_code == status, response.text
        return response.json()

    for bad in ("12", "a,b", "1,2,3", "-1,2"):
        errors = refused(422, compare=bad)["errors"]
        assert [(e["field"], e["code"]) for e in errors] == [("compare", "task.compare.format")]
    assert refused(422, compare=f"{glm},{glm}")["errors"][0]["code"] == "task.compare.same"
    not_run = refused(422, compare=f"{glm},{stranger}")["errors"][0]
    assert not_run["field"] == "compare"
    assert not_run["message"] == f"record {stranger} did not run task {task['id']}"
    assert refused(404, compare=f"{glm},999999")["detail"] == "No record 999999."
    for price in ("0", "-2", "many"):
        errors = refused(422, price_per_gpu_hour=price)["errors"]
        assert [e["field"] for e in errors] == ["price_per_gpu_hour"]
    assert client.get("/api/tasks/4242/results").json()["detail"] == "No task 4242."
    assert client.get("/api/tasks/4242/results").status_code == 404


def test_a_records_page_links_to_its_tasks_results(client: TestClient) -> None:
    task, glm, _ = setup(client)
    page = client.get(f"/records/{glm}")
    assert page.status_code == 200
    assert f'href="http://testserver/tasks/{task["id"]}"' in page.text
    results = client.get(f"/tasks/{task['id']}")
    assert results.status_code == 200 and 'id="task-results"' in results.text
    assert client.get("/tasks/4242").status_code == 404
