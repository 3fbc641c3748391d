"""A detail page summarises its evidence in the database: the medians and ranges are those
of the inserted rows, the page and its JSON show the same digits, and neither the number of
queries nor the records listed grows with the records of the configuration."""

from collections import defaultdict
from statistics import median
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from app.catalog.revision import bump_revision
from app.records.evidence.summary import LATEST
from tests.records.bulk import Inserted, insert_records, target
from tests.records.conftest import GLM

PROFILE = "balanced"


@pytest.fixture
def detail_path(h200: str) -> str:
    return f"/models/{GLM}/hardware/{h200}/profiles/{PROFILE}"


def route_of(client: TestClient, detail_path: str) -> tuple[str, str]:
    data = client.get(f"/api{detail_path}").json()
    return data["artifact"], data["runtime"]


def fill(
    client: TestClient, session: Session, detail_path: str, h200: str, count: int, **options: Any
) -> Inserted:
    artifact, runtime = route_of(client, detail_path)
    return insert_records(session, target(session, GLM, artifact, runtime, h200), count, **options)


def spread(values: list[float | None], digits: int) -> dict[str, float | None]:
    present = [v for v in values if v is not None]
    if not present:
        return {"median": None, "low": None, "high": None}
    return {
        "median": round(median(present), digits),
        "low": round(min(present), digits),
        "high": round(max(present), digits),
    }


def expected_summary(done: Inserted, profile_id: int) -> tuple[list[dict], list[dict]]:
    """The figures worked out here, in Python, from the rows the test inserted."""
    counted = {
        r["id"]
        for r in done.records
        if r["review_state"] == "accepted"
        and r["outcome"] == "ok"
        and r["profile_id"] == profile_id
    }
    points = [m for m in done.measurements if m["record_id"] in counted]
    by_length: dict[int, list[dict]] = defaultdict(list)
    by_users: dict[int, list[dict]] = defaultdict(list)
    for m in points:
        by_users[m["concurrency"]].append(m)
        if m["concurrency"] == 1:
            by_length[m["context_length"]].append(m)
    contexts = [
        {
            "context_length": length,
            "decode_tokens_per_s": spread([m["decode_tokens_per_s"] for m in group], 1),
            "ttft_ms": spread([m["ttft_ms"] for m in group], 0),
            "peak_memory_gb_per_gpu": round(max(m["peak_memory_gb_per_gpu"] for m in group), 1),
            "records": len({m["record_id"] for m in group}),
        }
        for length, group in sorted(by_length.items())
    ]
    ramp = [
        {
            "concurrency": users,
            "context_low": min(m["context_length"] for m in group),
            "context_high": max(m["context_length"] for m in group),
            "throughput_tokens_per_s": spread([m["throughput_tokens_per_s"] for m in group], 1),
            "decode_tokens_per_s": spread([m["decode_tokens_per_s"] for m in group], 1),
            "ttft_ms": spread([m["ttft_ms"] for m in group], 0),
            "records": len({m["record_id"] for m in group}),
        }
        for users, group in sorted(by_users.items())
    ]
    return contexts, ramp


def test_summary_medians_and_ranges_are_those_of_the_rows(
    client: TestClient, session: Session, detail_path: str, h200: str
) -> None:
    done = fill(client, session, detail_path, h200, 301, seed=11)
    profile_id = target(session, GLM, *route_of(client, detail_path), h200).profile_id
    contexts, ramp = expected_summary(done, profile_id)
    assert len(contexts) == 3 and len(ramp) == 3 and contexts[0]["records"] > 50

    data = client.get(f"/api{detail_path}").json()
    summary = data["records"]["summary"]
    assert summary["basis"] == "measured"
    assert summary["by_context"] == contexts
    assert summary["by_concurrency"] == ramp
    # The recipe's own measured figures (the estimate they replace) agree digit for digit.
    assert [
        (
            p["context_length"],
            p["decode_tokens_per_s"],
            p["ttft_ms"],
            p["peak_memory_gb_per_gpu"],
            p["records"],
        )
        for p in data["measured"]
    ] == [
        (
            c["context_length"],
            c["decode_tokens_per_s"]["median"],
            c["ttft_ms"]["median"],
            c["peak_memory_gb_per_gpu"],
            c["records"],
        )
        for c in contexts
    ]

    states = [r["review_state"] for r in done.records]
    records = data["records"]
    assert (records["accepted"], records["pending"]) == (
        states.count("accepted"),
        states.count("pending"),
    )
    newest = sorted(
        (r for r in done.records if r["review_state"] == "accepted"),
        key=lambda r: (r["created_at"], r["id"]),
        reverse=True,
    )[:LATEST]
    assert [r["id"] for r in records["latest"]] == [r["id"] for r in newest]

    page = BeautifulSoup(client.get(detail_path).text, "html.parser")
    section = page.select_one("section#records")
    for row, expected in zip(section.select("#measured-points tbody tr"), contexts, strict=True):
        cells = [td.contents[0].strip() if td.contents else "" for td in row.select("td")]
        assert cells[0] == f"{expected['context_length']:,}"
        assert cells[1] == f"{expected['decode_tokens_per_s']['median']:,.1f}"
        assert cells[3] == f"{expected['peak_memory_gb_per_gpu']:,.1f}"
        assert row.select("td small")[0].text == "{low:,.1f} – {high:,.1f}".format(
            **expected["decode_tokens_per_s"]
        )
    assert len(section.select("#measured-concurrency tbody tr")) == 2  # 4 and 16 at once
    assert len(section.select("#record-list tbody tr")) == LATEST
    assert section.select_one("#pending-review").text.startswith(
        f"{states.count('pending'):,} pending records"
    )
    assert "state=accepted" in section.select_one("#all-accepted")["href"]


def test_a_configuration_with_no_records_shows_counts_and_no_summary(
    client: TestClient, detail_path: str
) -> None:
    records = client.get(f"/api{detail_path}").json()["records"]
    assert records["summary"]["by_context"] == records["summary"]["by_concurrency"] == []
    assert (records["accepted"], records["pending"], records["latest"]) == (0, 0, [])
    section = BeautifulSoup(client.get(detail_path).text, "html.parser").select_one("#records")
    assert section.select_one("#measured-points") is None
    assert section.select_one("#pending-review") is None
    assert "No accepted records" in section.text


class QueryCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args: object) -> None:
        self.count += 1


def cost(client: TestClient, session: Session, url: str) -> tuple[int, int]:
    """Queries and bytes of a freshly built body (the revision moved, so nothing cached)."""
    bump_revision(session)
    session.commit()
    counter = QueryCounter()
    event.listen(Engine, "before_cursor_execute", counter)
    try:
        response = client.get(url)
    finally:
        event.remove(Engine, "before_cursor_execute", counter)
    assert response.status_code == 200
    return counter.count, len(response.content)


def test_queries_and_size_do_not_grow_with_the_records(
    client: TestClient, session: Session, detail_path: str, h200: str
) -> None:
    urls = (detail_path, f"/api{detail_path}")
    for url in urls:  # kept once: each cost below then starts from a body kept and stale
        client.get(url)
    fill(client, session, detail_path, h200, 12, seed=3, accepted_share=1.0)
    few = [cost(client, session, url) for url in urls]
    fill(client, session, detail_path, h200, 600, seed=5)
    many = [cost(client, session, url) for url in urls]
    for (queries_few, size_few), (queries_many, size_many) in zip(few, many, strict=True):
        assert queries_many == queries_few
        assert size_many < size_few * 1.1  # only the counts' and figures' digits differ


def test_the_summary_follows_reviews_and_is_kept_through_pending_submissions(
    client: TestClient, session: Session, detail_path: str, valid: dict
) -> None:
    from tests.records.conftest import accept, post_record

    def at_4096() -> dict:
        summary = client.get(f"/api{detail_path}").json()["records"]["summary"]
        return summary["by_context"][0]["decode_tokens_per_s"]

    first = post_record(client, valid).json()["id"]
    accept(client, first)
    valid["measurements"][0]["decode_tokens_per_s"] = 101.0
    second = post_record(client, valid).json()["id"]
    accept(client, second)
    assert at_4096() == {"median": 98.0, "low": 95.0, "high": 101.0}
    retracted = client.post(
        f"/api/records/{second}/review", json={"action": "retract", "reason": "wrong card"}
    )
    assert retracted.status_code == 200
    assert at_4096() == {"median": 95.0, "low": 95.0, "high": 95.0}

    # A pending submission changes the page (its count) but not the summary: the medians
    # are not read again. Accepting it does both.
    pending = post_record(client, valid).json()["id"]
    kept, _ = cost(client, session, f"/api{detail_path}")
    accept(client, pending)
    recomputed, _ = cost(client, session, f"/api{detail_path}")
    assert recomputed == kept + 2  # per context length and per concurrency
    assert at_4096() == {"median": 98.0, "low": 95.0, "high": 101.0}


def statements(client: TestClient, url: str) -> list[tuple[str, Any]]:
    """The SQL a request runs, with its parameters, building its body afresh (a query
    string the page does not read would not: it is answered from the same kept body)."""
    client.app.state.page_cache.bodies.clear()  # type: ignore[attr-defined]
    seen: list[tuple[str, Any]] = []

    def grab(_conn: object, _cursor: object, statement: str, parameters: Any, *_: object) -> None:
        seen.append((statement, parameters))

    event.listen(Engine, "before_cursor_execute", grab)
    try:
        assert client.get(url).status_code == 200
    finally:
        event.remove(Engine, "before_cursor_execute", grab)
    return seen


def test_within_one_revision_a_page_counts_and_joins_no_records_again(
    client: TestClient, session: Session, detail_path: str, h200: str
) -> None:
    fill(client, session, detail_path, h200, 40, seed=8)
    url = f"/api{detail_path}"
    first = [s for s, _ in statements(client, url)]
    again = [s for s, _ in statements(client, url)]  # built afresh, same revision
    # Counts, medians and the known-good lookup (every acceptance of the configuration).
    heavy = ("count(", "ranked", "record_events.action")
    assert all(any(part in s for s in first) for part in heavy)
    assert not any(part in s for s in again for part in heavy)
    assert any("ORDER BY records.created_at DESC" in s for s in again)  # the newest, read
    pending = client.get(url).json()["records"]["pending"]
    fill(client, session, detail_path, h200, 1, seed=9, accepted_share=0.0)  # the revision moves
    assert client.get(url).json()["records"]["pending"] == pending + 1


def test_counts_and_summary_read_through_the_configuration_indexes(
    client: TestClient, session: Session, detail_path: str, h200: str
) -> None:
    fill(client, session, detail_path, h200, 60, seed=12)
    plans = {}
    for statement, parameters in statements(client, f"/api{detail_path}"):
        if "records" in statement:
            rows = (
                session.connection()
                .exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
                .all()
            )
            plans[statement] = " | ".join(row[-1] for row in rows)
    assert plans and not [p for p in plans.values() if "SCAN records" in p]
    counting = [p for s, p in plans.items() if "count(" in s and "ranked" not in s]
    summary = [p for s, p in plans.items() if "ranked" in s]
    assert len(counting) == 2 and len(summary) == 2  # one query per table of the summary
    assert all("COVERING INDEX ix_records_model_hardware_state_created" in p for p in counting)
    assert all("INDEX ix_records_configuration" in p for p in summary)
    assert all("INDEX ix_measurements_record_id" in p for p in summary)
