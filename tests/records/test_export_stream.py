"""Exports are complete: every matching record, streamed in batches, in both formats, a
page of at most 10,000 records a response, each with the next page's address."""

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
        "next": None,
    }


def test_an_unknown_format_is_refused(client: TestClient) -> None:
    assert client.get("/api/records/export", params={"format": "xml"}).status_code == 422


def test_an_export_pages_by_cursor_with_a_link_to_the_next_page(
    client: TestClient, many: int
) -> None:
    """At most `limit` records a response (10,000 at most); `next` and the Link header
    lead through every record once, in both formats."""
    seen: list[int] = []
    url: str | None = "/api/records/export?format=json&limit=1200"
    pages = 0
    while url is not None:
        response = client.get(url)
        assert response.status_code == 200, response.text[:200]
        document = json.loads(response.text)
        assert document["count"] == len(document["records"]) <= 1200
        seen += [record["record_id"] for record in document["records"]]
        url = document["next"]
        assert (url is None) == ("link" not in response.headers)
        if url is not None:
            assert response.headers["link"] == f'<{url}>; rel="next"'
        pages += 1
    assert pages == 5
    assert seen == sorted(set(seen), reverse=True) and len(seen) == MANY
    first = client.get("/api/records/export", params={"format": "csv", "limit": 4000})
    assert len(set(csv_record_ids(first.text))) == 4000
    rest = client.get(first.headers["link"].split(";")[0].strip("<>"))
    assert len(set(csv_record_ids(rest.text))) == MANY - 4000
    assert "link" not in rest.headers
    too_many = client.get("/api/records/export", params={"limit": export.EXPORT_LIMIT + 1})
    assert too_many.status_code == 422


def test_one_export_response_holds_at_most_ten_thousand_records(
    client: TestClient, valid: dict, session: Session
) -> None:
    record_id = post_record(client, valid).json()["id"]
    bulk_copies(session, record_id, export.EXPORT_LIMIT)
    document = json.loads(client.get("/api/records/export").text)
    assert document["count"] == export.EXPORT_LIMIT
    rest = json.loads(client.get(document["next"]).text)
    assert (rest["count"], rest["next"]) == (1, None)
    assert rest["records"][0]["record_id"] == record_id
