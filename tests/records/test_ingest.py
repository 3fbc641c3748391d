"""Ingest under concurrency and failure: a real server on 127.0.0.1, a real SQLite file.

Refused records store nothing, concurrent copies of one keyed submission store one record,
a write that fails half-way leaves nothing and does not use up its key, and the answers
(to a submission and to a review) are what was written.
"""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.revision import current_records_revision
from app.config import Settings
from app.db import session_scope, utcnow
from app.main import create_app
from app.models import ApiToken, Measurement, Record, RecordEvent
from app.records.storage import service
from app.records.storage.store import RecordStore
from app.security import create_token
from tests.conftest import sqlite_settings
from tests.live_server import LiveServer, start_server
from tests.records.conftest import post_record


def stored(session: Session) -> tuple[int, int, int]:
    session.expire_all()
    return tuple(
        session.scalar(select(func.count()).select_from(table)) or 0  # type: ignore[return-value]
        for table in (Record, Measurement, RecordEvent)
    )


def revision(session: Session) -> int:
    """The records revision, which every record and review moves."""
    session.rollback()  # a fresh read, not the session's first
    return current_records_revision(session)


def at_once(count: int, call: Callable[[int], Any]) -> list[Any]:
    """`count` calls released together, each on its own thread."""
    start = threading.Barrier(count)

    def released(index: int) -> Any:
        start.wait()
        return call(index)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(released, range(count)))


class TestRefused:
    def test_an_invalid_record_is_a_422_naming_each_field_and_stores_nothing(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        before = revision(session)
        valid["model"] = "no-such-model"
        valid["measurements"][1]["ttft_ms"] = -5
        response = post_record(client, valid, key="bad-1")
        assert response.status_code == 422
        fields = {e["field"]: e["message"] for e in response.json()["errors"]}
        assert "unknown model 'no-such-model'" in fields["model"]
        assert "measurements.1.ttft_ms" in fields
        assert stored(session) == (0, 0, 0)
        assert revision(session) == before

    def test_a_refused_key_can_be_used_once_the_record_is_fixed(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        valid["runtime"] = "llama-cpp"  # does not load FP8 files
        assert post_record(client, valid, key="fix-me").status_code == 422
        valid["runtime"] = "sglang"
        assert post_record(client, valid, key="fix-me").status_code == 201
        assert stored(session) == (1, 2, 1)


class TestConcurrent:
    def test_copies_of_one_keyed_submission_sent_at_once_store_one_record(
        self, live_server: LiveServer, valid: dict, session: Session
    ) -> None:
        url = live_server.url("api:records_create")

        def send(_: int) -> httpx.Response:
            return httpx.post(url, json=valid, headers={"Idempotency-Key": "same"}, timeout=30)

        answers = at_once(12, send)
        assert sorted(a.status_code for a in answers) == [200] * 11 + [201]
        assert len({a.json()["id"] for a in answers}) == 1
        assert stored(session) == (1, 2, 1)

    def test_distinct_submissions_sent_at_once_are_all_stored_once(
        self, live_server: LiveServer, valid: dict, session: Session
    ) -> None:
        url = live_server.url("api:records_create")
        before = revision(session)

        def send(index: int) -> list[int]:
            ids = []
            for n in range(4):
                body = {**valid, "notes": f"client {index} record {n}"}
                answer = httpx.post(
                    url, json=body, timeout=30, headers={"Idempotency-Key": f"c{index}-{n}"}
                )
                assert answer.status_code == 201, answer.text
                ids.append(answer.json()["id"])
            return ids

        ids = [i for batch in at_once(12, send) for i in batch]
        assert len(set(ids)) == 48
        assert stored(session) == (48, 96, 48)
        assert revision(session) == before + 48  # each record bumped it in its own commit
        notes = session.scalars(select(Record.notes)).all()
        assert len(set(notes)) == 48

    def test_a_retry_is_refused_by_the_unique_key_and_answered_with_the_first(
        self, settings: Any, valid: dict, session: Session, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No lookup before the write: the unique key is what keeps one copy, and the
        first record is read only after it refused the second."""
        from app.main import create_app

        with TestClient(create_app(settings)) as client:
            first = post_record(client, valid, key="twin").json()
            replay = service.replayed
            replays: list[Any] = []

            def replayed(*args: Any) -> Any:
                replays.append(args)
                return replay(*args)

            monkeypatch.setattr(service, "replayed", replayed)
            twin = post_record(client, valid, key="twin")
            changed = post_record(client, {**valid, "notes": "other"}, key="twin")
        assert len(replays) == 2
        assert twin.status_code == 200 and twin.json()["id"] == first["id"]
        assert changed.status_code == 409 and changed.json()["record_id"] == first["id"]
        assert stored(session) == (1, 2, 1)


class TestWithTokens:
    def test_fresh_tokens_noting_their_use_while_others_write_are_never_stuck(
        self, db_path: Any, valid: dict, session: Session
    ) -> None:
        """Noting a token's first use writes before the record does; such a request already
        holds the write lock and must not queue behind a writer (one with a token in use)
        that waits for it."""
        exposed: Settings = sqlite_settings(db_path, host="0.0.0.0")
        with session_scope(exposed) as setup:
            tokens = [create_token(setup, f"lab-{n}", "submitter") for n in range(8)]
            for used in setup.scalars(select(ApiToken).where(ApiToken.name < "lab-4")):
                used.last_used_at = utcnow()  # these write nothing before their record
        server, thread, port = start_server(create_app(exposed))
        try:

            def send(index: int) -> int:
                return httpx.post(
                    f"http://127.0.0.1:{port}/api/records",
                    json=valid,
                    timeout=30,
                    headers={"Authorization": f"Bearer {tokens[index]}"},
                ).status_code

            assert at_once(8, send) == [201] * 8
        finally:
            server.should_exit = True
            thread.join(timeout=10)
        assert stored(session) == (8, 16, 8)


class TestHalfWrites:
    def test_a_constraint_failing_after_the_record_row_leaves_nothing_and_frees_the_key(
        self, settings: Any, valid: dict, session: Session, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        before = revision(session)
        real = RecordStore.write

        def second_point_refused(
            self: RecordStore, row: dict, points: list[dict], *rest: Any
        ) -> int:
            return real(
                self,
                row,
                [points[0], {**points[1], "needle_accuracy": 7.0}],  # 0..1
                *rest,
            )

        monkeypatch.setattr(RecordStore, "write", second_point_refused)
        from app.main import create_app

        with TestClient(create_app(settings), raise_server_exceptions=False) as client:
            assert post_record(client, valid, key="once").status_code == 500
            assert stored(session) == (0, 0, 0)
            assert revision(session) == before
            monkeypatch.undo()
            retried = post_record(client, valid, key="once")
        assert retried.status_code == 201
        assert stored(session) == (1, 2, 1)


class TestAnswers:
    def test_the_created_answer_is_what_a_read_returns(
        self, client: TestClient, valid: dict
    ) -> None:
        created = post_record(client, valid, key="read-back").json()
        read = client.get(f"/api/records/{created['id']}").json()
        assert created["review_state"] == read["review_state"] == "pending"
        assert created["flags"] == read["flag_details"]
        assert created["url"] == read["url"]

    def test_every_point_is_stored_as_sent_in_the_order_sent(
        self, client: TestClient, valid: dict
    ) -> None:
        """On PostgreSQL the points travel as one JSON array read back into rows: their
        order, their floats to the last digit, nulls and nested details survive it."""
        points = [
            {
                "context_length": 131072,
                "concurrency": 64,
                "repetitions": 5,
                "ttft_ms": 0.1,
                "decode_tokens_per_s": 1e-7,
                "itl_ms": 123456.789012345,
                "kv_cache_usage_peak": 0.3333333333333333,
                "needle_accuracy": 1.0,
                "token_count_source": "usage",
                "memory_source": "nvidia-smi",
                "samples": {"ttft_ms": [0.1, 2.5e-5, 99999.99]},
                "details": {"p99_ttft_ms": 7.25, "gpus": [{"name": "H200 \u2160", "peak": 1}]},
            },
            {"context_length": 1, "throughput_tokens_per_s": 5e7},
            {
                "context_length": 4096,
                "concurrency": 2,
                "e2e_latency_ms": 1600.0,
                "peak_memory_gb_per_gpu": 120.5,
            },
        ]
        created = post_record(client, {**valid, "measurements": points}, key="points")
        assert created.status_code == 201, created.text
        read = client.get(f"/api/records/{created.json()['id']}").json()["measurements"]
        assert [p["context_length"] for p in read] == [131072, 1, 4096]
        first = read[0]
        for name in (
            "ttft_ms",
            "decode_tokens_per_s",
            "itl_ms",
            "kv_cache_usage_peak",
            "needle_accuracy",
            "concurrency",
            "repetitions",
            "token_count_source",
            "memory_source",
        ):
            assert first[name] == points[0][name], name
        assert first["e2e_latency_ms"] is None and read[1]["ttft_ms"] is None
        assert first["details"] == {**points[0]["details"], "samples": points[0]["samples"]}
        assert read[1]["throughput_tokens_per_s"] == 5e7 and read[1]["concurrency"] == 1
        assert read[1]["details"] == {}
        assert read[2]["peak_memory_gb_per_gpu"] == 120.5

    def test_a_review_answers_the_new_state_and_history_as_a_read_does(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        record_id = post_record(client, valid).json()["id"]
        before = revision(session)
        reviewed = client.post(
            f"/api/records/{record_id}/review",
            json={"action": "reject", "reason": " not reproduced "},
        )
        assert reviewed.status_code == 200, reviewed.text
        answer = reviewed.json()
        assert answer["review_state"] == "rejected"
        assert [(e["action"], e["reason"]) for e in answer["events"]] == [
            ("submitted", ""),
            ("rejected", "not reproduced"),
        ]
        assert answer == client.get(f"/api/records/{record_id}").json()
        assert revision(session) == before + 1

    def test_a_review_refused_for_its_state_changes_nothing(
        self, client: TestClient, valid: dict, session: Session
    ) -> None:
        record_id = post_record(client, valid).json()["id"]
        before = revision(session)
        refused = client.post(
            f"/api/records/{record_id}/review", json={"action": "retract", "reason": "oops"}
        )
        assert refused.status_code == 409
        assert stored(session) == (1, 2, 1)
        assert revision(session) == before
