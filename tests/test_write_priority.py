"""Kept pages and static files give way to a SQLite write in progress for a moment, and
only for a moment: they are answered while a write holds the lock, not after it."""

import threading
import time

from fastapi.testclient import TestClient

from app.config import Settings
from app.db import _sqlite_writer_queue, make_engine, sqlite_writing
from app.write_priority import GIVE_WAY_S
from tests.recipes.test_serving import DETAIL

STATIC = "/static/css/app.css"
HELD_S = 3.0


def test_reads_are_answered_while_a_write_holds_the_lock(
    client: TestClient, settings: Settings
) -> None:
    kept = client.get(DETAIL)
    assert kept.status_code == 200 and client.get(STATIC).status_code == 200
    engine = make_engine(settings)  # the app's file: the same write turn
    writing = sqlite_writing(engine)
    queue = _sqlite_writer_queue(engine)
    assert not writing()
    held, done = threading.Event(), threading.Event()

    def hold_the_write_turn() -> None:
        queue.acquire()
        try:
            held.set()
            done.wait(HELD_S)
        finally:
            queue.release()

    holder = threading.Thread(target=hold_the_write_turn)
    holder.start()
    try:
        assert held.wait(5) and writing()
        start = time.perf_counter()
        again = client.get(DETAIL)
        static = client.get(STATIC)
        took = time.perf_counter() - start
        assert writing()  # both answered with the lock still held
    finally:
        done.set()
        holder.join()
    assert again.status_code == 200 and again.content == kept.content
    assert static.status_code == 200
    assert GIVE_WAY_S < HELD_S / 10 and took < HELD_S
    assert not writing()
    engine.dispose()
