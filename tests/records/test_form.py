"""The record form: pre-fill, inline errors that keep what was typed, CSRF, uploads, escaping."""

from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Record
from tests.records.conftest import GLM, GLM_FP8

DATA = Path(__file__).parent / "data"
HTMX = {"HX-Request": "true"}


def open_form(client: TestClient, **query: str) -> BeautifulSoup:
    url = client.app.url_path_for("records:new")
    response = client.get(url, params=query)
    assert response.status_code == 200
    return BeautifulSoup(response.text, "html.parser")


def hidden(page: BeautifulSoup) -> dict[str, str]:
    form = page.select_one("#record-form")
    assert form is not None
    return {i["name"]: i["value"] for i in form.select("input[type=hidden]")}


def form_fields(h200: str, **overrides: str) -> dict[str, str]:
    fields = {
        "model": GLM,
        "artifact": GLM_FP8,
        "runtime": "sglang",
        "runtime_version": "0.5.10",
        "hardware": h200,
        "gpu_count": "8",
        "profile": "balanced",
        "outcome": "ok",
        "command": "python -m sglang.launch_server --tp 8",
        "applied_values": "tensor_parallel = 8\ncontext = 16384",
        "environment.driver": "580.95.05",
        "environment.os": "Ubuntu 24.04",
        "measurements.0.context_length": "4096",
        "measurements.0.concurrency": "1",
        "measurements.0.ttft_ms": "250",
        "measurements.0.decode_tokens_per_s": "95",
        "measurements.0.repetitions": "3",
        "measurements.2.context_length": "16384",
        "measurements.2.decode_tokens_per_s": "88",
    }
    fields.update(overrides)
    return fields


def submit(
    client: TestClient,
    fields: dict[str, str],
    page: BeautifulSoup | None = None,
    headers: dict[str, str] | None = None,
    files: Any = None,
) -> Any:
    page = page or open_form(client)
    data = {**hidden(page), **fields}
    return client.post(
        client.app.url_path_for("records:create"),
        data=data,
        files=files,
        headers=headers or {},
        follow_redirects=False,
    )


def records(session: Session) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(Record)) or 0


def test_query_parameters_prefill_the_form(client: TestClient, h200: str) -> None:
    page = open_form(
        client, model=GLM, hardware=h200, artifact=GLM_FP8, runtime="sglang", profile="speed"
    )
    for name, value in (
        ("model", GLM),
        ("hardware", h200),
        ("artifact", GLM_FP8),
        ("runtime", "sglang"),
        ("profile", "speed"),
        ("outcome", "ok"),
    ):
        assert page.select_one(f"select[name='{name}'] option[selected]")["value"] == value
    assert page.select_one("input[name='gpu_count']")["value"] == "8"
    assert len(page.select("tr.measurement-row")) == 3
    assert {"csrf_token", "idempotency_key"} <= set(hidden(page))


def test_a_valid_form_creates_a_record(client: TestClient, h200: str, session: Session) -> None:
    response = submit(client, form_fields(h200))
    assert response.status_code == 303
    record_id = int(response.headers["location"].rsplit("/", 1)[1])
    record = client.get(f"/api/records/{record_id}").json()
    assert record["provenance"] == "form"
    assert record["applied_values"] == {"tensor_parallel": 8, "context": 16384}
    assert [m["context_length"] for m in record["measurements"]] == [4096, 16384]
    assert records(session) == 1


def test_htmx_success_redirects_with_a_header(client: TestClient, h200: str) -> None:
    response = submit(client, form_fields(h200), headers=HTMX)
    assert response.status_code == 200
    assert "/records/" in response.headers["HX-Redirect"]


def test_errors_show_inline_and_keep_what_was_typed(
    client: TestClient, h200: str, session: Session
) -> None:
    fields = form_fields(
        h200,
        **{
            "measurements.2.decode_tokens_per_s": "-88",
            "runtime": "vllm",
            "artifact": "glm-5.3-flash-q4-k-m",
            "applied_values": "tensor_parallel 8",
            "notes": "typed notes stay",
        },
    )
    response = submit(client, fields, headers=HTMX)
    assert response.status_code == 200  # htmx 2 only swaps 2xx
    form = BeautifulSoup(response.text, "html.parser")
    assert form.select_one("form#record-form") is not None and form.select_one("h1") is None
    errors = {e["data-field"]: e.text for e in form.select(".field-error[data-field]")}
    assert "measurements.2.decode_tokens_per_s" in errors  # the form's row, not the list index
    assert "gguf" in errors["runtime"] and "line 1" in errors["applied_values"]
    assert form.select_one("input[name='measurements.2.decode_tokens_per_s']")["value"] == "-88"
    assert form.select_one("input[name='measurements.0.ttft_ms']")["value"] == "250"
    assert form.select_one("textarea[name='notes']").text == "typed notes stay"
    assert form.select_one("select[name='runtime'] option[selected]")["value"] == "vllm"
    assert records(session) == 0

    plain = submit(client, fields)
    assert plain.status_code == 422 and "<h1>" in plain.text
    # The summary above the form names every error by its label, a row's too: on a phone
    # the row sits in a table that scrolls sideways.
    summary = {li["data-field"]: li.text for li in form.select("#form-errors #error-summary li")}
    assert summary.keys() == errors.keys()
    assert summary["measurements.2.decode_tokens_per_s"].startswith("Row 3, Decode (tok/s):")
    assert summary["applied_values"].startswith("Applied values:")
    link = form.select_one('#error-summary a[href="#error-measurements-2-decode_tokens_per_s"]')
    assert link is not None and form.select_one("#error-measurements-2-decode_tokens_per_s")


def test_the_hidden_key_makes_a_double_submit_harmless(
    client: TestClient, h200: str, session: Session
) -> None:
    page = open_form(client)
    first = submit(client, form_fields(h200), page=page)
    second = submit(client, form_fields(h200), page=page)
    assert first.headers["location"] == second.headers["location"]
    assert records(session) == 1
    changed = submit(client, form_fields(h200, notes="changed my mind"), page=page)
    assert changed.status_code == 409 and "already used" in changed.text


def test_missing_or_forged_csrf_token_is_refused(
    client: TestClient, h200: str, session: Session
) -> None:
    page = open_form(client)
    tokens = hidden(page)
    url = client.app.url_path_for("records:create")
    missing = client.post(url, data=form_fields(h200))
    assert missing.status_code == 403 and "security token" in missing.text
    forged = client.post(url, data={**form_fields(h200), "csrf_token": tokens["csrf_token"] + "x"})
    assert forged.status_code == 403
    client.cookies.clear()  # a token without the browser's cookie is worthless
    stolen = client.post(url, data={**form_fields(h200), "csrf_token": tokens["csrf_token"]})
    assert stolen.status_code == 403
    assert records(session) == 0


def test_upload_imports_the_file_with_its_hash(client: TestClient, h200: str) -> None:
    content = (DATA / "vllm_bench_serve.json").read_bytes()
    fields = {
        k: v
        for k, v in form_fields(h200, runtime="vllm").items()
        if not k.startswith("measurements.")
    }
    response = submit(
        client, fields, files={"result_file": ("run.json", content, "application/json")}
    )
    assert response.status_code == 303, response.text
    record_id = int(response.headers["location"].rsplit("/", 1)[1])
    record = client.get(f"/api/records/{record_id}").json()
    assert record["provenance"] == "import"
    assert record["provenance_detail"]["tool"] == "vllm bench serve"
    assert record["provenance_detail"]["filename"] == "run.json"
    page = BeautifulSoup(client.get(f"/records/{record_id}").text, "html.parser")
    assert len(page.select_one("#file-sha256").text) == 64
    # The same file again, from a fresh form (a new key): refused, naming the first record.
    again = submit(client, fields, files={"result_file": ("run.json", content, "application/json")})
    assert again.status_code == 409
    notes = BeautifulSoup(again.text, "html.parser").select_one("#form-errors").text
    assert f"already imported as record {record_id}" in notes


def test_a_bad_upload_is_an_inline_error_with_the_metadata_errors(
    client: TestClient, h200: str
) -> None:
    fields = form_fields(h200, hardware="")
    response = submit(
        client,
        fields,
        headers=HTMX,
        files={"result_file": ("x.json", b'{"hello": 1}', "application/json")},
    )
    form = BeautifulSoup(response.text, "html.parser")
    errors = {e["data-field"] for e in form.select(".field-error[data-field]")}
    assert {"file", "hardware"} <= errors


def test_user_text_is_escaped_everywhere(client: TestClient, h200: str) -> None:
    script = "<script>alert('x')</script>"
    fields = form_fields(h200, notes=script, command=script, **{"environment.os": script})
    location = submit(client, fields).headers["location"]
    html = client.get(location).text
    assert script not in html and "&lt;script&gt;" in html
    assert script not in client.get("/records").text
    typed = submit(client, form_fields(h200, runtime_version="", notes=script), headers=HTMX)
    assert script not in typed.text and "&lt;script&gt;" in typed.text


def test_add_row_returns_one_more_row(client: TestClient) -> None:
    response = client.get(
        client.app.url_path_for("records:new_row"), params={"index": 5}, headers=HTMX
    )
    page = BeautifulSoup(f"<table>{response.text}</table>", "html.parser")
    names = [i["name"] for i in page.select("tr.measurement-row input")]
    assert names[0] == "measurements.5.context_length" and len(names) == 10
