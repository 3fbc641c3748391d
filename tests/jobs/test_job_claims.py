"""Job claims under concurrency: however many workers poll at once, each job is claimed
by exactly one of them."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select, text

from app.config import Settings
from app.db import make_engine, make_sessionmaker, utcnow
from app.jobs.job_source import DatabaseJobSource
from app.jobs.repository import JobRepository
from app.models import BenchJob

CLAIMERS = 4
JOBS = 12


def queue_jobs(settings: Settings, count: int) -> list[int]:
    engine = make_engine(settings)
    with make_sessionmaker(engine).begin() as session:
        jobs = [BenchJob(plan={}, target={}) for _ in range(count)]
        session.add_all(jobs)
        session.flush()
        ids = [job.id for job in jobs]
    engine.dispose()
    return ids


@pytest.mark.postgresql
def test_concurrent_claimers_never_take_the_same_job(settings: Settings) -> None:
    ids = queue_jobs(settings, JOBS)
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    workers = [DatabaseJobSource(sessions, f"claimer-{n}") for n in range(CLAIMERS)]
    start = threading.Barrier(CLAIMERS)

    def claim_all(worker: DatabaseJobSource) -> list[int]:
        start.wait()
        claimed = []
        while (claim := worker.claim()) is not None:
            claimed.append(claim.job_id)
        return claimed

    with ThreadPoolExecutor(CLAIMERS) as pool:
        claimed = dict(zip(workers, pool.map(claim_all, workers), strict=True))
    every_claim = [job_id for ids_ in claimed.values() for job_id in ids_]
    assert sorted(every_claim) == ids  # each job once, none twice, none left
    with sessions() as session:
        holders = dict(session.execute(select(BenchJob.id, BenchJob.worker_id)).all())
    for worker, job_ids in claimed.items():
        assert {holders[job_id] for job_id in job_ids} <= {worker.name}
    engine.dispose()


@pytest.mark.parametrize("database_backend", ["postgresql"], indirect=True)
def test_a_job_being_claimed_is_skipped_not_waited_for(settings: Settings) -> None:
    """While one claimer's transaction holds the first job, another takes the next at once."""
    first, second = queue_jobs(settings, 2)
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    with sessions.begin() as holding:
        assert JobRepository(holding).next_claimable(utcnow()).id == first
        with sessions.begin() as other:
            # Without SKIP LOCKED this would wait on the held row; fail instead of hanging.
            other.execute(text("SET LOCAL lock_timeout = '5s'"))
            assert JobRepository(other).next_claimable(utcnow()).id == second
    engine.dispose()
