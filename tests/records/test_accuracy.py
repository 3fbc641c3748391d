"""Accepted records are scored against the estimate kept when they were accepted, and move
their class's figures and range, and nothing else."""

import copy
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.accuracy.evidence import counted_ratios, range_book
from app.catalog.revision import current_revision
from app.estimate import ESTIMATOR_VERSION
from app.models import Record, RecordEstimate
from app.records.review.steps import review_record
from app.records.storage.service import submit_record
from tests.records.conftest import GLM, accept, post_record

# Acceptance writes the kept estimate: the write path runs on both databases.
pytestmark = pytest.mark.postgresql

CLASS = "sglang/cuda/multi/c1"  # GLM on 8x H200 with SGLang, one request at a time


def classes(client: TestClient) -> dict[str, dict]:
    response = client.get("/api/accuracy")
    assert response.status_code == 200
    return {c["key"]: c for c in response.json()["classes"]}


def kept(session: Session, record_id: int) -> list[RecordEstimate]:
    statement = select(RecordEstimate).where(RecordEstimate.record_id == record_id)
    return list(session.scalars(statement.order_by(RecordEstimate.id)))


def test_accepting_keeps_the_estimate_it_was_compared_with(
    client: TestClient, session: Session, valid: dict
) -> None:
    record_id = post_record(client, valid).json()["id"]
    assert kept(session, record_id) == []  # pending: nothing kept yet
    revision = current_revision(session)
    session.rollback()
    accept(client, record_id)
    rows = kept(session, record_id)
    assert [row.context_length for row in rows] == [4096, 16384]
    for row, measured in zip(rows, (95.0, 88.0), strict=True):
        assert row.estimator_version == ESTIMATOR_VERSION
        assert row.catalog_revision == revision
        assert row.class_key == CLASS and row.concurrency == 1 and row.gpus == 8
        assert 0 < row.decode_low < row.decode_high and row.measured_decode == measured
        assert row.decode_low < row.decode_point < row.decode_high
        assert 0 < row.ttft_ms_low < row.ttft_ms_high and not row.flagged
        assert row.basis == "estimated" and row.range_records == 0


def test_the_kept_estimate_is_never_rewritten(
    client: TestClient, session: Session, valid: dict
) -> None:
    record_id = post_record(client, valid).json()["id"]
    accept(client, record_id)
    before = [
        (r.id, r.decode_low, r.decode_high, r.catalog_revision) for r in kept(session, record_id)
    ]
    session.rollback()
    second = post_record(client, {**valid, "notes": "another run"}).json()["id"]
    accept(client, second)
    review = {"action": "retract", "reason": "wrong driver"}
    assert client.post(f"/api/records/{record_id}/review", json=review).status_code == 200
    after = [
        (r.id, r.decode_low, r.decode_high, r.catalog_revision) for r in kept(session, record_id)
    ]
    assert after == before
    assert classes(client)[CLASS]["records"]["count"] == 2  # the second record's points alone


def test_accepting_changes_its_class_figures_and_nothing_else(
    client: TestClient, valid: dict
) -> None:
    before = classes(client)
    record_id = post_record(client, valid).json()["id"]
    assert classes(client) == before  # a pending record counts nowhere
    accept(client, record_id)
    after = classes(client)
    changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
    assert changed == {CLASS}
    found = after[CLASS]["records"]
    assert found["count"] == 2
    assert 0 <= found["median_error"] and 0 <= found["within_30"] <= 1
    assert found["range_held"] in (0.0, 0.5, 1.0)
    assert after[CLASS]["range"] == before.get(CLASS, after[CLASS])["range"]


def test_rejected_and_flagged_records_never_count(
    client: TestClient, session: Session, valid: dict
) -> None:
    before = classes(client)
    rejected = post_record(client, valid).json()["id"]
    review = {"action": "reject", "reason": "numbers from another GPU"}
    assert client.post(f"/api/records/{rejected}/review", json=review).status_code == 200
    flagged_body = copy.deepcopy(valid)
    flagged_body["measurements"][0]["e2e_latency_ms"] = 100.0  # below the first token: flagged
    flagged = post_record(client, flagged_body).json()
    assert flagged["flags"]
    confirmed = {"action": "accept", "reason": "checked", "confirm_flags": True}
    response = client.post(f"/api/records/{flagged['id']}/review", json=confirmed)
    assert response.status_code == 200, response.text
    assert kept(session, rejected) == []
    assert all(row.flagged for row in kept(session, flagged["id"]))
    assert classes(client) == before
    assert counted_ratios(session) == []


def _accepted(session: Session, body: dict[str, Any], submitter: str, decode: float) -> int:
    body = copy.deepcopy(body)
    body["notes"] = f"{submitter} {decode}"
    for point in body["measurements"]:
        point["decode_tokens_per_s"] = decode
        point.pop("itl_ms", None)
    found = submit_record(session, body, provenance="api", submitted_by=submitter)
    record_id = found.record.id
    review_record(session, record_id, {"action": "accept", "reason": "reproduced"}, "maintainer")
    return record_id


def _estimate(client: TestClient, h200: str, model: str = GLM) -> dict:
    body = {"model": model, "hardware": h200, "runtime": "sglang", "evidence": "ignore"}
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_records_from_several_submitters_calibrate_the_class(
    client: TestClient, session: Session, valid: dict, h200: str
) -> None:
    shipped = _estimate(client, h200)["coverage"]
    assert shipped["records"] == 0 and shipped["widened"]
    other = _estimate(client, h200, "deepseek-v3")  # no record names it: cached as it is
    assert other["coverage"]["segment"] == CLASS and other["coverage"]["records"] == 0
    for submitter in ("ana", "bo", "chen"):
        for _ in range(2):
            _accepted(session, valid, submitter, 95.0)
    session.commit()
    book = range_book(session)
    assert CLASS in book.updated and book.classes[CLASS].records == 6
    found = _estimate(client, h200)["coverage"]
    assert found["records"] == 6 and not found["widened"]
    assert "calibrated by 6 records" in found["note"]
    # Every model of the class moves with it, not only the one the records name.
    other = _estimate(client, h200, "deepseek-v3")
    assert other["coverage"]["records"] == 6
    page = client.get(f"/accuracy#{CLASS}")
    assert "calibrated by 6 records" in page.text


@pytest.mark.parametrize("state", ["rejected", "retracted"])
def test_records_that_left_the_accepted_state_stop_counting(
    session: Session, valid: dict, state: str
) -> None:
    ids = [_accepted(session, valid, s, 95.0) for s in ("ana", "bo", "chen", "dee")]
    assert len({r.record_id for r in counted_ratios(session)}) == 4
    session.execute(update(Record).where(Record.id == ids[0]).values(review_state=state))
    assert len({r.record_id for r in counted_ratios(session)}) == 3
