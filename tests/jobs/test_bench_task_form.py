"""The benchmark form offers the stored tasks: a job queued from the page runs the chosen one."""

import re

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import BenchJob
from tests.jobs.test_bench_jobs import TARGET

TASK = {
    "name": "capitals",
    "description": "one question",
    "source": "written for the tests",
    "prompts": [{"prompt": "Capital of France?", "check": {"contains": "Paris"}}],
}


def form_for(client: TestClient, **fields: str) -> dict[str, str]:
    page = client.get("/benchmarks")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    return {
        "base_url": "http://127.0.0.1:9/v1",
        "served_model": "m",
        "lengths": "512",
        "concurrency": "1",
        "max_tokens": "16",
        **TARGET,
        "csrf_token": token,
        **fields,
    }


def test_the_form_lists_tasks_and_the_job_runs_the_chosen_one(client: TestClient) -> None:
    task = client.post("/api/tasks", json=TASK).json()
    page = BeautifulSoup(client.get("/benchmarks").text, "html.parser")
    options = {o["value"]: o.text for o in page.select("select[name=task_id] option")}
    assert options[""] == "none"
    assert options[str(task["id"])] == "capitals v1 (1 prompt)"
    response = client.post(
        "/benchmarks", data=form_for(client, task_id=str(task["id"])), follow_redirects=False
    )
    assert response.status_code == 303, response.text
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    plan = client.get(f"/api/benchmarks/{job_id}").json()["plan"]
    assert plan["task"]["name"] == "capitals" and plan["task"]["id"] == task["id"]
    assert [p["prompt"] for p in plan["task"]["prompts"]] == ["Capital of France?"]


def test_no_task_chosen_means_none_runs(client: TestClient) -> None:
    client.post("/api/tasks", json=TASK)
    response = client.post("/benchmarks", data=form_for(client, task_id=""), follow_redirects=False)
    assert response.status_code == 303, response.text
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    assert "task" not in client.get(f"/api/benchmarks/{job_id}").json()["plan"]


def test_an_unknown_task_is_named_beside_the_select_and_nothing_is_queued(
    client: TestClient, session: Session
) -> None:
    response = client.post("/benchmarks", data=form_for(client, task_id="999"))
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select_one("[data-field=task_id]").text == "no task 999"
    assert page.select_one("select[name=task_id]")["aria-invalid"] == "true"
    assert page.select_one("input[name=base_url]")["value"] == "http://127.0.0.1:9/v1"
    assert session.scalar(select(func.count()).select_from(BenchJob)) == 0


def test_a_link_can_preselect_the_task(client: TestClient) -> None:
    task = client.post("/api/tasks", json=TASK).json()
    page = BeautifulSoup(
        client.get("/benchmarks", params={"task_id": task["id"]}).text, "html.parser"
    )
    assert page.select_one("select[name=task_id] option[selected]")["value"] == str(task["id"])
