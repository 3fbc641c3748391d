""" "Calibrate this hardware" from the detail page: the form queues a job, a benchmark
worker claims it under a lease and runs the probe, and the dashboard stores the profile
with the job's success; the page then gives the account in the reader's language."""

import re

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.jobs.worker import Worker
from app.models import BenchJob, CalibrationProfile

STEADY = "fake?itl_ms=40&ttft_ms=30&tokens=12"
TARGET = {"model": "llama-3.1-8b-instruct", "hardware": "h100-80gb", "runtime": "vllm"}
DETAIL = "/models/llama-3.1-8b-instruct/hardware/h100-80gb/profiles/balanced"


def form_for(client: TestClient, **fields: str) -> dict[str, str]:
    page = client.get("/calibrate", params=TARGET)
    assert page.status_code == 200
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    return {"base_url": "http://127.0.0.1:9/v1", **TARGET, "csrf_token": token, **fields}


def test_the_detail_page_links_to_the_calibration_of_its_hardware(client: TestClient) -> None:
    page = client.get(DETAIL)
    assert page.status_code == 200, page.text[:500]
    link = re.search(r'id="calibrate" href="([^"]+)"', page.text)
    assert link is not None
    form = client.get(link.group(1).replace("&amp;", "&"))
    assert 'value="h100-80gb" selected' in form.text
    assert 'value="llama-3.1-8b-instruct" selected' in form.text


def test_a_queued_calibration_runs_on_a_worker_and_calibrates_the_estimate(
    client: TestClient, settings: Settings, session: Session, fake_server: str
) -> None:
    form = form_for(client, base_url=fake_server, served_model=STEADY, budget_s="120")
    response = client.post("/calibrate", data=form, follow_redirects=False)
    assert response.status_code == 303, response.text[:2000]
    job = session.scalars(select(BenchJob)).one()
    assert job.target["kind"] == "calibrate" and job.status == "queued"
    worker = Worker(make_sessionmaker(make_engine(settings)), poll_s=0.05)
    assert worker.run_once() is True
    session.expire_all()
    job = session.get(BenchJob, job.id)
    assert job.status == "succeeded", job.error
    profile = session.scalars(select(CalibrationProfile)).one()
    assert profile.status == "ok" and job.result["calibration_id"] == profile.id
    page = client.get(response.headers["location"])
    assert "effective bandwidth" in page.text and "calibration stored" in page.text
    korean = client.get(response.headers["location"], params={"lang": "ko"})
    assert "effective bandwidth" not in korean.text
    listed = client.get("/benchmarks")
    assert listed.status_code == 200 and f"/benchmarks/{job.id}" in listed.text
    moved = client.get(f"/benchmarks/{job.id}", follow_redirects=False)
    assert moved.headers["location"].endswith(f"/calibrate/jobs/{job.id}")
    api = client.get(f"/api/benchmarks/{job.id}").json()
    assert api["status"] == "succeeded" and api["record_id"] is None
    body = {**TARGET, "evidence": "ignore"}
    decode = client.post("/api/estimate", json=body).json()["decode_tokens_per_s"]
    assert decode["basis"] == "calibrated"
    assert abs((decode["low"] + decode["high"]) / 2 / (1000 / 40) - 1) < 0.15


def test_a_target_outside_the_allowed_hosts_is_refused_by_its_field(
    client: TestClient, session: Session
) -> None:
    form = form_for(client, base_url="http://10.20.30.40:8000/v1", hardware="no-such-card")
    response = client.post("/calibrate", data=form)
    assert response.status_code == 200
    assert 'data-field="base_url"' in response.text and 'data-field="hardware"' in response.text
    assert session.scalars(select(BenchJob)).all() == []
