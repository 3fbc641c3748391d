"""Two app processes on one SQLite file, as `uvicorn --workers 2` or two `servebook serve`
run it: each is a real uvicorn process on 127.0.0.1, and their writers take turns through
the lock file beside the database (app.db). Nothing is lost, nothing stored twice, and a
keyed submission sent to both at once is stored once."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import PROJECT_ROOT
from app.db import SqliteWriterQueue
from app.models import Record
from tests.records.test_ingest import at_once, revision, stored
from tests.security.test_exposure_uvicorn import free_port, start_uvicorn


@pytest.fixture
def two_processes(db_path: Path) -> Iterator[list[str]]:
    """Base URLs of two app processes serving the test's database."""
    servers: list[subprocess.Popen] = []
    urls = []
    try:
        for _ in range(2):
            port = free_port()
            servers.append(start_uvicorn(db_path, "127.0.0.1", port))
            urls.append(f"http://127.0.0.1:{port}")
        yield urls
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=10)


def test_copies_of_one_keyed_submission_sent_to_both_processes_store_one_record(
    two_processes: list[str], valid: dict, session: Session
) -> None:
    def send(index: int) -> httpx.Response:
        return httpx.post(
            f"{two_processes[index % 2]}/api/records",
            json=valid,
            timeout=30,
            headers={"Idempotency-Key": "same"},
        )

    answers = at_once(12, send)
    assert sorted(a.status_code for a in answers) == [200] * 11 + [201]
    assert len({a.json()["id"] for a in answers}) == 1
    assert stored(session) == (1, 2, 1)


def test_distinct_submissions_to_both_processes_are_all_stored_once(
    two_processes: list[str], valid: dict, session: Session
) -> None:
    before = revision(session)

    def send(index: int) -> list[int]:
        ids = []
        with httpx.Client(base_url=two_processes[index % 2], timeout=30) as client:
            for n in range(5):
                body = {**valid, "notes": f"client {index} record {n}"}
                answer = client.post(
                    "/api/records", json=body, headers={"Idempotency-Key": f"c{index}-{n}"}
                )
                assert answer.status_code == 201, answer.text
                ids.append(answer.json()["id"])
                if n == 2:  # a retry, to the other process, gets the same record
                    again = httpx.post(
                        f"{two_processes[(index + 1) % 2]}/api/records",
                        json=body,
                        headers={"Idempotency-Key": f"c{index}-{n}"},
                        timeout=30,
                    )
                    assert (again.status_code, again.json()["id"]) == (200, ids[-1])
        return ids

    ids = [i for batch in at_once(12, send) for i in batch]
    assert len(set(ids)) == 60
    assert stored(session) == (60, 120, 60)
    assert revision(session) == before + 60  # each record bumped it in its own commit
    assert len(set(session.scalars(select(Record.notes)).all())) == 60


WAITER = """
import sys
from app.db import SqliteWriterQueue
queue = SqliteWriterQueue(sys.argv[1])
print("waiting", flush=True)
queue.acquire()
print("acquired", flush=True)
queue.release()
"""


def test_a_writer_in_another_process_waits_for_the_turn(db_path: Path) -> None:
    """The file lock, not the thread lock, is what the other process waits on."""
    held = SqliteWriterQueue(str(db_path))
    held.acquire()
    try:
        waiter = subprocess.Popen(
            [sys.executable, "-c", WAITER, str(db_path)],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert waiter.stdout is not None
        assert waiter.stdout.readline().strip() == "waiting"  # started, at the lock
        time.sleep(0.5)
        assert waiter.poll() is None, "the other process wrote while this one held the turn"
    finally:
        held.release()
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and out.strip() == "acquired"
    assert Path(f"{db_path}-writer").exists()


def test_an_in_memory_database_queues_on_the_thread_lock_alone() -> None:
    assert SqliteWriterQueue(":memory:").path is None
    assert SqliteWriterQueue(None).path is None
