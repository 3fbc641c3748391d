"""The benchmark and record forms say what the server will ask of them: each field the job
request requires is marked beside its label (and required in the browser), and a runtime
version's example is one the catalog accepts, read from the catalog, never a version the
record checker flags as older than the runtime's first."""

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.jobs.schemas import JobIn
from app.models import Runtime
from app.records.schemas import RecordIn

# Fields of the request the form does not show (filled from the server's own settings).
NOT_ON_THE_FORM = {"profile"}


def label_of(page: BeautifulSoup, field: str):  # noqa: ANN201
    control = page.select_one(f'#job-form [name="{field}"]')
    assert control is not None, field
    return control.find_parent("label")


def test_the_benchmark_form_marks_each_field_the_job_requires(client: TestClient) -> None:
    page = BeautifulSoup(client.get("/benchmarks").text, "html.parser")
    required = {name for name, info in JobIn.model_fields.items() if info.is_required()}
    assert {"base_url", "served_model", "runtime_version"} <= required
    for field in sorted(required - NOT_ON_THE_FORM):
        assert label_of(page, field).select_one(".req"), f"{field} is not marked required"
    optional = {"metrics_url", "worker_label", "lengths", "repeat", "command"}
    for field in optional:
        assert not label_of(page, field).select_one(".req"), f"{field} is marked required"
    for field in ("base_url", "served_model", "runtime_version"):
        assert page.select_one(f'#job-form input[name="{field}"]').has_attr("required")
    assert page.select_one("#required-legend .req")


def test_an_empty_benchmark_form_is_refused_on_the_marked_fields(client: TestClient) -> None:
    """What the server refuses as missing is what the form marked."""
    page = BeautifulSoup(client.get("/benchmarks").text, "html.parser")
    token = page.select_one('#job-form input[name="csrf_token"]')["value"]
    answer = client.post("/benchmarks", data={"csrf_token": token}, headers={"HX-Request": "true"})
    refused = BeautifulSoup(answer.text, "html.parser")
    missing = {e["data-field"] for e in refused.select(".field-error[data-field]")}
    assert missing, answer.text[:500]
    for field in missing:
        assert label_of(refused, field).select_one(".req"), f"{field} refused but not marked"


@pytest.mark.parametrize("path", ["/benchmarks", "/records/new"])
def test_a_runtime_versions_example_is_the_catalogs(
    client: TestClient, session: Session, path: str
) -> None:
    page = BeautifulSoup(client.get(path).text, "html.parser")
    control = page.select_one('input[name="runtime_version"]')
    shown = control.find_parent("label").get_text(" ", strip=True)
    assert "0.11.2" not in shown and not control.get("placeholder")
    for runtime in session.scalars(select(Runtime)):
        if runtime.min_version:
            assert f"{runtime.name} {runtime.min_version}" in shown


def test_the_record_form_marks_what_a_record_requires(client: TestClient) -> None:
    page = BeautifulSoup(client.get("/records/new").text, "html.parser")
    required = {name for name, info in RecordIn.model_fields.items() if info.is_required()}
    # The outcome is a choice that always holds one ("loaded and answered" unless changed).
    assert page.select_one(
        '#record-form select[name="outcome"] option[selected], '
        '#record-form select[name="outcome"] option'
    )
    for field in sorted(required - {"outcome"}):
        control = page.select_one(f'#record-form [name="{field}"]')
        assert control.find_parent("label").select_one(".req"), f"{field} is not marked"
    for field in ("gpu_count", "profile"):
        control = page.select_one(f'#record-form [name="{field}"]')
        assert not control.find_parent("label").select_one(".req"), f"{field} is marked"
