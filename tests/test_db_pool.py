"""The PostgreSQL pool: a pooled connection whose server session has ended is replaced at
checkout (without a round trip per checkout), so the next request runs on a new one."""

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from app.db import make_engine
from tests.conftest import database_settings

PID = text("SELECT pg_backend_pid()")


def end_session(url: str, pid: int) -> None:
    """End a server session from outside the pool, as a server restart would, and wait
    until its process has gone (and so has closed its socket)."""
    outside = create_engine(url, poolclass=NullPool)
    try:
        with outside.connect() as connection:
            # With a timeout the server waits until the process has exited (or the timeout
            # passed): a poll of pg_stat_activity inside one transaction would keep reading
            # the transaction's first snapshot and could never see the session go.
            ended = connection.scalar(
                text("SELECT pg_terminate_backend(:pid, 30000)"), {"pid": pid}
            )
        assert ended, f"session {pid} did not end"
    finally:
        outside.dispose()


@pytest.mark.parametrize("database_backend", ["postgresql"], indirect=True)
def test_a_connection_the_server_ended_is_replaced_at_checkout(database_url: str) -> None:
    engine = make_engine(database_settings(database_url))
    try:
        with engine.connect() as connection:
            first = connection.scalar(PID)
        with engine.connect() as connection:
            assert connection.scalar(PID) == first  # pooled: the same session again
        end_session(database_url, first)
        with engine.connect() as connection:
            assert connection.scalar(PID) != first
        assert engine.pool.checkedout() == 0
    finally:
        engine.dispose()


@pytest.mark.parametrize("database_backend", ["postgresql"], indirect=True)
def test_a_live_pooled_connection_is_kept(database_url: str) -> None:
    engine = make_engine(database_settings(database_url))
    try:
        pids = set()
        for _ in range(5):
            with engine.connect() as connection:
                pids.add(connection.scalar(PID))
        assert len(pids) == 1
    finally:
        engine.dispose()
