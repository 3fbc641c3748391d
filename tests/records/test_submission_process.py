"""Record submissions answered in a process of their own (app.records.endpoints.submission_process):
the same answers as the app's own process gives, the record on the next page the app serves,
and a process that dies answered for. On SQLite and on PostgreSQL."""

import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.main import create_app
from app.records.endpoints.submission_process import SubmissionProcess
from tests.conftest import database_settings
from tests.pg_server import PostgresServer
from tests.records.conftest import post_record

pytestmark = pytest.mark.postgresql


@pytest.fixture
def twin_url(
    database_backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[str]:
    """A second database, the same as the test's `database_url` before either is written."""
    if database_backend == "sqlite":
        path = tmp_path / "twin.db"
        shutil.copyfile(request.getfixturevalue("seeded_template"), path)
        yield f"sqlite:///{path}"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database(template=request.getfixturevalue("postgres_template"))
    yield server.url(name)
    server.drop_database(name)


def served(url: str, submission_process: bool) -> TestClient:
    return TestClient(create_app(database_settings(url, submission_process=submission_process)))


def started(client: TestClient) -> SubmissionProcess:
    """The app's first submission starts its submission process (this one stores nothing)."""
    assert post_record(client, {}).status_code == 422
    return ready(client)


def ready(client: TestClient) -> SubmissionProcess:
    process: SubmissionProcess = client.app.state.submission_process  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while not process.ready:
        assert time.monotonic() < deadline, "the submission process never said it was ready"
        time.sleep(0.05)
    return process


def exchange(client: TestClient, valid: dict[str, Any]) -> list[tuple[int, Any]]:
    """One of each answer the record API gives, in order."""
    answers: list[Response] = [
        post_record(client, valid, key="first"),  # stored
        post_record(client, valid, key="first"),  # a retry: the first record
        post_record(client, {**valid, "notes": "other"}, key="first"),  # the key reused: 409
        post_record(client, {"model": "no-such-model"}),  # every field error at once
        post_record(client, {"model": "no-such-model"}, **{"Accept-Language": "ko"}),
        client.post(
            "/api/records", content=b"{not json", headers={"Content-Type": "application/json"}
        ),
        client.post("/api/records", content=b"{}", headers={"Content-Type": "text/plain"}),
        # From beyond, through a proxy nobody listed: a write needs a token.
        post_record(client, valid, **{"X-Forwarded-For": "203.0.113.9"}),
        post_record(client, valid),  # a second record
    ]
    return [(answer.status_code, answer.json()) for answer in answers]


def test_it_answers_as_the_app_does_and_the_next_page_shows_the_record(
    database_url: str, twin_url: str, valid: dict[str, Any]
) -> None:
    with served(twin_url, submission_process=False) as here:
        expected = exchange(here, valid)
    assert [status for status, _ in expected] == [201, 200, 409, 422, 422, 422, 415, 401, 201]

    with served(database_url, submission_process=True) as client:
        process: SubmissionProcess = client.app.state.submission_process  # type: ignore[attr-defined]
        assert client.get("/records").status_code == 200
        assert process.process is None  # pages alone start no second process
        started(client)
        answers = exchange(client, valid)
        assert process.answered == len(answers) and process.restarts == 0
        assert answers == expected  # the same ids too: both databases began the same
        created = answers[-1][1]["id"]
        record = client.get(f"/api/records/{created}")
        assert record.status_code == 200 and record.json()["review_state"] == "pending"
        assert f"/records/{created}" in client.get("/records").text
        child = process.process
        assert child.is_alive()
    assert not child.is_alive()  # stopped with the app


def metric(client: TestClient, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    raise AssertionError(f"no {name}")


def test_its_write_lock_holds_are_the_apps_metrics(db_path: Path, valid: dict[str, Any]) -> None:
    with served(f"sqlite:///{db_path}", submission_process=True) as client:
        assert metric(client, "servebook_submission_process_ready") == 0
        started(client)
        assert metric(client, "servebook_submission_process_ready") == 1
        before = metric(client, "servebook_sqlite_write_holds")
        assert post_record(client, valid).status_code == 201
        assert metric(client, "servebook_sqlite_write_holds") == before + 1
    with served(f"sqlite:///{db_path}", submission_process=False) as client:
        assert metric(client, "servebook_submission_process_ready") == 0


def test_a_record_in_flight_when_it_dies_is_answered_503_and_a_new_one_takes_over(
    database_url: str, valid: dict[str, Any]
) -> None:
    with served(database_url, submission_process=True) as client:
        process = started(client)
        first = process.process
        os.kill(first.pid, signal.SIGSTOP)  # the request waits in its socket, unread
        answered: list[Response] = []
        posting = threading.Thread(
            target=lambda: answered.append(post_record(client, valid, key="in-flight"))
        )
        posting.start()
        deadline = time.monotonic() + 30
        while not process.pending:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(first.pid, signal.SIGKILL)
        posting.join(30)
        assert answered and answered[0].status_code == 503
        assert "Idempotency-Key" in answered[0].text

        # Sent again: never stored, so stored now (by the app itself or the new process).
        again = post_record(client, valid, key="in-flight")
        assert again.status_code == 201, again.text
        process = ready(client)
        assert process.restarts == 1 and process.process.pid != first.pid
        assert metric(client, "servebook_submission_process_restarts") == 1
        retried = post_record(client, valid, key="in-flight")
        assert retried.status_code == 200 and retried.json()["id"] == again.json()["id"]
        assert process.answered >= 1


def test_a_child_whose_app_is_ending_is_not_started_again(
    db_path: Path, valid: dict[str, Any]
) -> None:
    """As when the app's shutdown is cut short (a second Ctrl-C): the loop cancels what is
    left, the child reads the end of its socket and returns, and none is started instead."""
    with served(f"sqlite:///{db_path}", submission_process=True) as client:
        process = started(client)
        child, listening = process.process, process.listening
        assert client.portal is not None and listening is not None
        client.portal.call(listening.cancel)
        child.join(60)
        assert child.exitcode == 0
        deadline = time.monotonic() + 30
        while not listening.done():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert process.restarts == 0 and process.process is child and not process.ready
        assert post_record(client, valid).status_code == 201  # the app answers it itself
