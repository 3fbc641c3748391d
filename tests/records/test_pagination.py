"""Every list pages newest first with an opaque cursor: each item exactly once across the
pages even while rows arrive, filters kept, a stated maximum page size, and a clear 400 for
a cursor the list never gave out."""

import base64
import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import insert
from sqlalchemy.orm import Session

from app.models import BenchJob
from app.pagination import MAX_LIMIT, decode_cursor, encode_cursor
from tests.records.bulk import insert_records, target
from tests.records.conftest import GLM, GLM_FP8

PENDING = {"state": "pending", "model": GLM}


@pytest.fixture
def glm_h200(session: Session, h200: str):  # noqa: ANN201 - a bulk.Target
    return target(session, GLM, GLM_FP8, "sglang", h200)


def follow(client: TestClient, url: str, key: str, between=None) -> list[list[int]]:  # noqa: ANN001
    """The ids of every page, following `next` to the end; `between` runs after each page."""
    pages = []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append([item["record_id" if key == "records" else "id"] for item in body[key]])
        assert body["count"] == len(body[key])
        url = body["next"]
        if between:
            between()
    return pages


def test_records_page_through_every_item_once_while_new_ones_arrive(
    client: TestClient, session: Session, glm_h200
) -> None:  # noqa: ANN001
    # Five records share each timestamp, so the id breaks ties inside a page and across two.
    done = insert_records(session, glm_h200, 53, accepted_share=0.0, same_stamp_every=5)
    arrivals = iter(range(100, 200))

    def a_new_record_arrives() -> None:
        insert_records(
            session, glm_h200, 1, accepted_share=0.0, seed=next(arrivals), start=datetime.now(UTC)
        )

    pages = follow(client, "/api/records?limit=7&state=pending", "records", a_new_record_arrives)
    seen = [record_id for page in pages for record_id in page]
    expected = sorted(done.records, key=lambda r: (r["created_at"], r["id"]), reverse=True)
    assert seen == [r["id"] for r in expected]  # newest first, each once, none of the new
    assert [len(p) for p in pages] == [7] * 7 + [4]


def test_filters_are_kept_on_every_page(client: TestClient, session: Session, glm_h200) -> None:  # noqa: ANN001
    done = insert_records(session, glm_h200, 40, accepted_share=0.5, seed=2)
    first = client.get("/api/records", params={"state": "accepted", "limit": 5}).json()
    assert "state=accepted" in first["next"] and "limit=5" in first["next"]
    pages = follow(client, first["next"], "records")
    accepted = {r["id"] for r in done.records if r["review_state"] == "accepted"}
    seen = [i for page in [[r["record_id"] for r in first["records"]], *pages] for i in page]
    assert sorted(seen) == sorted(accepted) and len(seen) == len(accepted)
    assert client.get("/api/records", params={"hardware": "nothing-here"}).json() == {
        "count": 0,
        "limit": 50,
        "next": None,
        "records": [],
    }


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        "1764583200000000",  # no id
        "1764583200000000-0",  # no row has id 0
        "1764583200000000-4-5",
        "1764583200000000x-4",
        "12345678901234567-4",  # past the year 2286
        "1764583200000000-4\n",
        base64.urlsafe_b64encode(b'["2026-12-01T10:00:00", 4]').decode(),  # an old form
    ],
)
@pytest.mark.parametrize("url", ["/api/records", "/records", "/api/benchmarks", "/benchmarks"])
def test_a_cursor_the_list_never_gave_out_is_a_clear_400(
    client: TestClient, url: str, cursor: str
) -> None:
    response = client.get(url, params={"cursor": cursor}, headers={"Accept": "application/json"})
    assert response.status_code == 400
    assert "cursor is not one this list gave out" in response.json()["detail"]


@pytest.mark.parametrize("url", ["/api/records", "/api/benchmarks"])
def test_page_size_has_a_stated_maximum(client: TestClient, url: str) -> None:
    for limit in (0, MAX_LIMIT + 1):
        assert client.get(url, params={"limit": limit}).status_code == 422
    assert client.get(url, params={"limit": MAX_LIMIT}).status_code == 200
    assert client.get(url, params={"cursor": "x" * 201}).status_code == 422
    described = client.get("/openapi.json").json()["paths"][url]["get"]["parameters"]
    limit = next(p for p in described if p["name"] == "limit")
    assert limit["schema"]["maximum"] == MAX_LIMIT and str(MAX_LIMIT) in limit["description"]


def test_cursors_round_trip() -> None:
    stamp = datetime(2026, 12, 1, 22, 0, 0, 123456, tzinfo=UTC)
    assert decode_cursor(encode_cursor(stamp, 42)) == (stamp, 42)
    naive = stamp.replace(tzinfo=None)
    assert decode_cursor(encode_cursor(naive, 1)) == (naive, 1)
    assert encode_cursor(naive, 1) == "1796162400123456-1"
    assert encode_cursor(stamp, 42) == "1796162400123456u-42"


def test_every_cursor_of_the_stated_form_is_a_place_in_the_list(client: TestClient) -> None:
    """The schema states the cursor's form; any text of that form is answered, a page of
    the rows older than the place it names (none older than the epoch's first second)."""
    described = client.get("/openapi.json").json()["paths"]["/api/records"]["get"]
    pattern = next(p for p in described["parameters"] if p["name"] == "cursor")["schema"]
    for cursor in ("0-1", "9999999999999999u-9999999999", "1796162400123456-7"):
        assert re.search(pattern["pattern"], cursor)
        for url in ("/api/records", "/api/benchmarks"):
            answer = client.get(url, params={"cursor": cursor})
            assert answer.status_code == 200, answer.text
    assert client.get("/api/records", params={"cursor": "0-1"}).json()["records"] == []


def test_records_page_links_to_older_and_back_to_newest(
    client: TestClient, session: Session, glm_h200
) -> None:  # noqa: ANN001
    done = insert_records(session, glm_h200, 5, accepted_share=0.0)
    newest_first = [r["id"] for r in reversed(done.records)]
    first = BeautifulSoup(
        client.get("/records", params={**PENDING, "limit": 3}).text, "html.parser"
    )
    assert [int(tr["data-record"]) for tr in first.select("tr[data-record]")] == newest_first[:3]
    assert first.select_one("#newest-page") is None
    older = first.select_one("#older-page")["href"]
    assert "state=pending" in older and f"model={GLM}" in older
    second = BeautifulSoup(client.get(older).text, "html.parser")
    assert [int(tr["data-record"]) for tr in second.select("tr[data-record]")] == newest_first[3:]
    assert second.select_one("#older-page") is None
    assert "state=pending" in second.select_one("#newest-page")["href"]


def add_jobs(session: Session, count: int, start: datetime) -> list[int]:
    rows = [
        {
            "status": "succeeded",
            "plan": {},
            "target": {"model": GLM},
            "progress": {},
            "created_at": start + timedelta(seconds=n // 2),
        }
        for n in range(count)
    ]
    ids = session.scalars(insert(BenchJob).returning(BenchJob.id), rows).all()
    session.commit()
    return list(ids)


def test_jobs_page_through_every_job_once(client: TestClient, session: Session) -> None:
    ids = add_jobs(session, 45, datetime.now(UTC) - timedelta(hours=1))

    def a_job_is_queued() -> None:
        add_jobs(session, 1, datetime.now(UTC))

    pages = follow(client, "/api/benchmarks?limit=20", "jobs", a_job_is_queued)
    assert [len(p) for p in pages] == [20, 20, 5]
    assert [i for page in pages for i in page] == sorted(ids, reverse=True)

    def shown(page: BeautifulSoup) -> list[str]:
        return [a.text for a in page.select("#jobs tbody tr td:first-child a")]

    first = BeautifulSoup(client.get("/benchmarks").text, "html.parser")
    second = BeautifulSoup(client.get(first.select_one("#older-page")["href"]).text, "html.parser")
    assert len(shown(first)) == len(shown(second)) == 20
    assert not set(shown(first)) & set(shown(second))
    assert first.select_one("#newest-page") is None
    assert second.select_one("#newest-page") is not None


def test_the_review_queue_reaches_every_one_of_5000_pending_records_once(
    client: TestClient, session: Session, glm_h200
) -> None:  # noqa: ANN001
    # Accepted records around and among the pending ones must never show in the queue;
    # seven pending records share each timestamp, so page ends fall inside a tie.
    before = insert_records(session, glm_h200, 150, accepted_share=1.0, seed=3)
    queue = insert_records(
        session,
        glm_h200,
        5_000,
        accepted_share=0.0,
        same_stamp_every=7,
        start=before.records[-1]["created_at"] + timedelta(seconds=1),
    )
    insert_records(session, glm_h200, 150, accepted_share=1.0, seed=4)
    pending = [
        r["id"]
        for r in sorted(queue.records, key=lambda r: (r["created_at"], r["id"]), reverse=True)
    ]

    api_pages = follow(client, f"/api/records?state=pending&limit={MAX_LIMIT}", "records")
    assert [i for page in api_pages for i in page] == pending
    assert len(api_pages) == len(pending) // MAX_LIMIT

    # 25 pages of 200 rows: read with two patterns, not a parsed tree, to keep the test quick.
    shown, url = [], f"/records?state=pending&limit={MAX_LIMIT}"
    while url:
        text = client.get(url).text
        shown.append([int(i) for i in re.findall(r'<tr data-record="(\d+)"', text)])
        older = re.search(r'<a href="([^"]+)" id="older-page"', text)
        url = html.unescape(older.group(1)) if older else None
        assert url is None or "state=pending" in url
    assert [i for page in shown for i in page] == pending
    assert [len(p) for p in shown] == [MAX_LIMIT] * (len(pending) // MAX_LIMIT)
