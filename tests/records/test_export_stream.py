"""Exports are complete: every matching record, streamed in batches, in both formats."""

import csv
import io
import json

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.models import Measurement, Record
from app.records import export
from tests.records.conftest import post_record

MANY = 5_000


def bulk_copies(session: Session, record_id: int, copies: int, **changes: object) -> None:
    """`copies` more records like `record_id` (measurements included), inserted in bulk."""
    table, points = Record.__table__, Measurement.__table__
    row = dict(session.execute(select(table).where(table.c.id == record_id)).mappings().one())
    measured = [
        dict(p)
        for p in session.execute(select(points).where(points.c.record_id == record_id)).mappings()
    ]
    del row["id"]
    for point in measured:
        del point["id"]
    # The database numbers the copies (on PostgreSQL its sequence must see every id).
    rows = [
        {**row, **changes, "idempotency_key": None, "notes": f"copy {n}"} for n in range(copies)
    ]
    ids = session.scalars(
        insert(table).returning(table.c.id, sort_by_parameter_order=True), rows
    ).all()
    session.execute(
        insert(points), [{**p, "record_id": new_id} for new_id in ids for p in measured]
    )
    session.commit()


@pytest.fixture
def many(client: TestClient, valid: dict, session: Session) -> int:
    """MANY records: one submitted, the rest bulk copies; returns the submitted id."""
    record_id = post_record(client, valid).json()["id"]
    bulk_copies(session, record_id, MANY - 1)
    return record_id


def csv_record_ids(text: str) -> list[int]:
    return [int(row["record_id"]) for row in csv.DictReader(io.StringIO(text))]


def test_json_export_holds_every_record_and_stays_valid(client: TestClient, many: int) -> None:
    response = client.get("/api/records/export", params={"format": "json"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    document = json.loads(response.text)
    ids = [record["record_id"] for record in document["records"]]
    assert document["count"] == len(ids) == MANY
    assert ids == sorted(set(ids), reverse=True)  # newest first, none twice
    assert all(len(record["measurements"]) == 2 for record in document["records"])


def test_csv_export_holds_every_record(client: TestClient, many: int) -> None:
    for response in (
        client.get("/api/records/export", params={"format": "csv"}),
        client.get("/api/records", params={"format": "csv"}),
    ):
        assert response.headers["content-type"].startswith("text/csv")
        ids = csv_record_ids(response.text)
        assert len(ids) == 2 * MANY  # one row per measurement
        assert len(set(ids)) == MANY
        assert response.text.splitlines()[0].split(",") == list(export.CSV_FIELDS)


def test_the_export_is_written_batch_by_batch(client: TestClient, many: int) -> None:
    with client.stream("GET", "/api/records/export", params={"format": "csv"}) as response:
        chunks = [chunk for chunk in response.iter_bytes() if chunk]
    # the header, then one chunk per batch of records
    assert len(chunks) >= MANY // export.BATCH_SIZE
    assert csv_record_ids(b"".join(chunks).decode()) == sorted(
        csv_record_ids(b"".join(chunks).decode()), reverse=True
    )


def test_filters_apply_across_batches(client: TestClient, valid: dict, session: Session) -> None:
    record_id = post_record(client, valid).json()["id"]
    bulk_copies(session, record_id, 1_200, review_state="accepted")
    bulk_copies(session, record_id, 300)
    accepted = json.loads(client.get("/api/records/export", params={"state": "accepted"}).text)
    pending = json.loads(client.get("/api/records/export", params={"state": "pending"}).text)
    assert accepted["count"] == 1_200
    assert {r["review_state"] for r in accepted["records"]} == {"accepted"}
    assert pending["count"] == 301
    assert json.loads(client.get("/api/records/export", params={"state": "rejected"}).text) == {
        "records": [],
        "count": 0,
    }


def test_an_unknown_format_is_refused(client: TestClient) -> None:
    assert client.get("/api/records/export", params={"format": "xml"}).status_code == 422
