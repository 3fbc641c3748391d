"""Kept pages and static files give way to a SQLite write this process holds, for at most a
moment: they are answered while a write holds the lock, not after it. A writer that only
waits for another process's lock is not given way to."""

import fcntl
import os
import threading
import time

from fastapi.testclient import TestClient

from app.config import Settings
from app.db import _sqlite_writer_queue, make_engine, sqlite_write_lock_free
from app.write_priority import GIVE_WAY_S
from tests.recipes.test_serving import DETAIL

STATIC = "/static/css/app.css"
HELD_S = 3.0


def test_reads_are_answered_while_a_write_holds_the_lock(
    client: TestClient, settings: Settings
) -> None:
    kept = client.get(DETAIL)
    assert kept.status_code == 200 and client.get(STATIC).status_code == 200
    engine = make_engine(settings)  # the app's file: the same write lock
    free = sqlite_write_lock_free(engine)
    queue = _sqlite_writer_queue(engine)
    assert free.is_set()
    held, done = threading.Event(), threading.Event()

    def hold_the_write_lock() -> None:
        queue.acquire()
        try:
            held.set()
            done.wait(HELD_S)
        finally:
            queue.release()

    holder = threading.Thread(target=hold_the_write_lock)
    holder.start()
    try:
        assert held.wait(5) and not free.is_set()
        start = time.perf_counter()
        again = client.get(DETAIL)
        static = client.get(STATIC)
        took = time.perf_counter() - start
        assert not free.is_set()  # both answered with the lock still held
    finally:
        done.set()
        holder.join()
        engine.dispose()
    assert again.status_code == 200 and again.content == kept.content
    assert static.status_code == 200
    assert GIVE_WAY_S < HELD_S / 10 and took < HELD_S
    assert free.is_set()


def test_a_writer_waiting_for_another_process_is_not_given_way_to(settings: Settings) -> None:
    engine = make_engine(settings)
    queue = _sqlite_writer_queue(engine)
    assert queue.path is not None
    # Another process's writer: the file lock on a description of its own.
    other = os.open(queue.path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(other, fcntl.LOCK_EX)
    acquired = threading.Event()

    def write() -> None:
        queue.acquire()
        acquired.set()
        queue.release()

    writer = threading.Thread(target=write)
    try:
        writer.start()
        time.sleep(0.2)
        assert not acquired.is_set()  # it waits for the other process ...
        assert queue.free.is_set()  # ... and reads do not wait for it
    finally:
        fcntl.flock(other, fcntl.LOCK_UN)
        os.close(other)
        writer.join(5)
        engine.dispose()
    assert acquired.is_set() and queue.free.is_set()
