"""One input gate for every entry: the record form (multipart, as the page sends it), the
JSON API, an imported file and the console refuse the same hostile values (NUL, a lone
surrogate, an integer past 64 bits, a number JSON cannot carry) with a 422 or an error
naming where, and store nothing, on SQLite and PostgreSQL alike."""

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.cli import main
from app.config import get_settings
from app.models import Record
from app.records.importers.result_file import import_record
from app.records.storage.service import submit_record
from app.records.storage.validation import RecordInvalid
from tests.records.conftest import GLM, GLM_FP8
from tests.records.test_form import form_fields, hidden, open_form

pytestmark = pytest.mark.postgresql

DATA = Path(__file__).parents[1] / "records" / "data"
# Each hostile value as text (a field a person types) and where a number goes.
HOSTILE_TEXT = {"nul": "before\x00after", "surrogate": "before\udc80after"}
HOSTILE_NUMBER = {"huge_int": 2**64, "infinity": float("inf")}
# As JSON text: what a client sends, escapes and all.
HOSTILE_JSON = {
    "nul": '"before\\u0000after"',
    "surrogate": '"before\\udc80after"',
    "huge_int": str(2**64),
    "infinity": "1e400",
}


def count(session: Session) -> int:
    session.rollback()
    return session.scalar(select(func.count()).select_from(Record)) or 0


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_the_json_api_refuses_each_hostile_value(
    client: TestClient, session: Session, valid: dict, name: str
) -> None:
    where = "notes" if name in HOSTILE_TEXT else "applied_values"
    value = HOSTILE_JSON[name] if where == "notes" else f'{{"x": {HOSTILE_JSON[name]}}}'
    body = json.dumps({**valid, where: "@"}).replace('"@"', value)
    before = count(session)
    response = client.post(
        "/api/records", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["errors"], response.text
    assert "pydantic" not in response.text
    assert count(session) == before


def multipart(fields: dict[str, str], raw: dict[str, bytes]) -> tuple[bytes, str]:
    """A multipart body as a browser builds it, with some fields' bytes given as is."""
    boundary = "gate-boundary-7d1f"
    parts = []
    for name, value in [*((k, v.encode()) for k, v in fields.items()), *raw.items()]:
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
        parts.append(head.encode() + value + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


FORM_HOSTILE = {
    "nul": {"notes": b"before\x00after"},
    "surrogate": {"notes": b"before\xed\xb2\x80after"},  # U+DC80 written out as UTF-8 would
    "huge_int": {"measurements.0.ttft_ms": str(2**64).encode()},
    "infinity": {"measurements.0.ttft_ms": b"1e400"},
}


@pytest.mark.parametrize("name", sorted(FORM_HOSTILE))
def test_the_form_refuses_each_hostile_value(
    client: TestClient, session: Session, h200: str, name: str
) -> None:
    fields = {**hidden(open_form(client)), **form_fields(h200)}
    raw = FORM_HOSTILE[name]
    for field in raw:
        fields.pop(field, None)
    body, content_type = multipart(fields, raw)
    before = count(session)
    response = client.post(
        client.app.url_path_for("records:create"),
        content=body,
        headers={"Content-Type": content_type},
        follow_redirects=False,
    )
    assert response.status_code == 422, (response.status_code, response.text[:300])
    assert count(session) == before


def hostile_record(valid: dict[str, Any], name: str) -> dict[str, Any]:
    if name in HOSTILE_TEXT:
        return {**valid, "notes": HOSTILE_TEXT[name]}
    return {**valid, "applied_values": {"x": HOSTILE_NUMBER[name]}}


@pytest.mark.parametrize("name", [*HOSTILE_TEXT, *HOSTILE_NUMBER])
def test_a_python_caller_meets_the_same_gate(session: Session, valid: dict, name: str) -> None:
    before = count(session)
    with pytest.raises(RecordInvalid) as caught:
        submit_record(session, hostile_record(valid, name), provenance="api", submitted_by="x")
    [error] = caught.value.errors
    assert error.field == ("notes" if name in HOSTILE_TEXT else "applied_values.x"), error
    assert error.code is not None
    assert count(session) == before


def meta(h200: str, **overrides: Any) -> dict[str, Any]:
    values = {
        "model": GLM,
        "artifact": GLM_FP8,
        "hardware": h200,
        "runtime": "vllm",
        "runtime_version": "0.30.1",
        "profile": "balanced",
    }
    return {**values, **overrides}


@pytest.mark.parametrize("name", sorted(HOSTILE_JSON))
def test_an_imported_file_meets_the_same_gate(session: Session, h200: str, name: str) -> None:
    content = (DATA / "vllm_bench_serve.json").read_text()
    document = json.loads(content)
    document["model_id"] = "@"  # a text the importer keeps, then a hostile one in its place
    text = json.dumps(document).replace('"@"', HOSTILE_JSON[name])
    before = count(session)
    with pytest.raises(RecordInvalid) as caught:
        import_record(session, text.encode(), meta(h200), submitted_by="ci")
    assert [e.field for e in caught.value.errors] == ["file"], caught.value.errors
    assert count(session) == before
    with pytest.raises(RecordInvalid) as text_field:
        import_record(
            session,
            content.encode(),
            meta(h200, notes=HOSTILE_TEXT.get(name, "x\x00")),
            submitted_by="ci",
        )
    assert [e.field for e in text_field.value.errors] == ["notes"]
    assert count(session) == before


def test_the_console_meets_the_same_gate(
    cli_database: str, session: Session, h200: str, tmp_path: Path
) -> None:
    args = ["import", str(DATA / "vllm_bench_serve.json"), "--model", GLM, "--hardware", h200]
    args += ["--artifact", GLM_FP8, "--runtime", "vllm", "--runtime-version", "0.30.1"]
    before = count(session)
    # An argument the terminal could not decode reaches Python as a lone surrogate.
    result = CliRunner().invoke(main, [*args, "--notes", "before\udcffafter"])
    assert result.exit_code == 1, result.output
    assert "notes" in result.output and "lone surrogate" in result.output
    hostile = tmp_path / "hostile.json"
    hostile.write_text('{"model_id": "a\\u0000b"}')
    result = CliRunner().invoke(main, [*args[:1], str(hostile), *args[2:]])
    assert result.exit_code == 1, result.output
    assert "NUL" in result.output
    assert count(session) == before
    get_settings.cache_clear()
