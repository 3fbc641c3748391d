"""The benchmark worker: claims queued jobs under a lease, runs them, stores a record.

A job's record and its "succeeded" state are written in one transaction, guarded by the
lease, so a worker that dies mid-run leaves no half record: the lease expires, another
worker claims the job again (or marks it failed once its attempts are used up).

A server that answers, even with errors, gives a record (a load failure is evidence). A
target that nothing answers gives none: the job fails with "could not connect to URL: ...".
"""

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session, sessionmaker

from app.bench.procedure import TargetUnreachable, run_benchmark_sync
from app.bench.result import BenchPlan, BenchResult
from app.benchmarks.repository import JobRepository, claimable
from app.benchmarks.to_record import record_from_result
from app.db import utcnow
from app.errors import ServebookError
from app.models import BenchJob
from app.records.service import submit_record

log = logging.getLogger("servebook.worker")
API_KEY_ENV = "SERVEBOOK_BENCH_API_KEY"


def run_on_own_thread(plan: BenchPlan, **options: Any) -> BenchResult:
    """Run the benchmark's event loop on a fresh thread, whatever loop the caller runs."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="servebook-bench") as pool:
        return pool.submit(run_benchmark_sync, plan, **options).result()


class LeaseLost(RuntimeError):
    """Another worker took the job over; this one must stop without writing."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        name: str | None = None,
        lease_s: float = 60.0,
        poll_s: float = 1.0,
        api_keys: MutableMapping[int, str] | None = None,
        run: Callable[..., BenchResult] = run_on_own_thread,
    ) -> None:
        self.sessions = sessions
        self.name = name or worker_name()
        self.lease = timedelta(seconds=lease_s)
        self.poll_s = poll_s
        self.api_keys = api_keys if api_keys is not None else {}
        self.run = run

    def run_forever(self, stop: threading.Event) -> None:
        log.info("benchmark worker %s started", self.name)
        while not stop.is_set():
            try:
                worked = self.run_once()
            except Exception:  # keep the worker alive; the job itself records its failure
                log.exception("benchmark worker %s: unexpected error", self.name)
                worked = False
            if not worked:
                stop.wait(self.poll_s)

    def run_once(self) -> bool:
        """Claim and run one job; False when there was nothing to do."""
        job = self.claim()
        if job is None:
            return False
        self.execute(job)
        return True

    def claim(self) -> BenchJob | None:
        while True:
            with self.sessions.begin() as session:
                repo = JobRepository(session)
                now = utcnow()
                job = repo.next_claimable(now)
                if job is None:
                    return None
                if job.status == "running" and job.attempts >= job.max_attempts:
                    give_up(repo, job, now)
                    continue
                won = repo.compare_and_set(
                    job.id,
                    claimable(now),
                    status="running",
                    worker_id=self.name,
                    attempts=job.attempts + 1,
                    lease_expires_at=now + self.lease,
                    started_at=now,
                    error="",
                )
                if won:
                    session.expunge(job)
                    return job

    def execute(self, job: BenchJob) -> None:
        heartbeat = Heartbeat(self, job.id)
        heartbeat.start()
        try:
            result = self.run(self.plan_for(job), on_progress=heartbeat.progress)
            heartbeat.stop()
            heartbeat.thread.join()
            self.finish(job, result)
        except LeaseLost:
            log.warning("job %s: lease lost to another worker; stopping", job.id)
        except Exception as error:  # the job fails with the reason; the worker goes on
            heartbeat.stop()
            log.info("job %s failed: %s", job.id, describe(error))
            self.fail(job.id, describe(error))
        finally:
            heartbeat.stop()
            self.api_keys.pop(job.id, None)  # a key lives only as long as its job

    def plan_for(self, job: BenchJob) -> BenchPlan:
        key = self.api_keys.get(job.id) or os.environ.get(API_KEY_ENV)
        if job.needs_api_key and not key:
            raise ServebookError(
                f"the target needs an API key, but this worker has none: set {API_KEY_ENV} "
                "for workers in other processes"
            )
        return BenchPlan.model_validate({**job.plan, "api_key": key})

    def finish(self, job: BenchJob, result: BenchResult) -> None:
        """Store the record and mark the job done together, or neither."""
        with self.sessions.begin() as session:
            repo = JobRepository(session)
            submission = submit_record(
                session,
                record_from_result(result, job.target),
                provenance="bench",
                submitted_by=job.submitted_by,
                idempotency_key=f"bench-job-{job.id}",
                provenance_detail={
                    "tool": "servebook bench",
                    "job_id": job.id,
                    "base_url": result.plan.base_url,
                },
            )
            done = repo.compare_and_set(
                job.id,
                repo.held_by(self.name),
                status="succeeded",
                record_id=submission.record.id,
                finished_at=utcnow(),
                lease_expires_at=None,
                result=result.model_dump(mode="json"),
                progress={"step": "done", "done": 1, "total": 1},
            )
            if not done:
                raise LeaseLost(job.id)

    def fail(self, job_id: int, message: str) -> None:
        with self.sessions.begin() as session:
            repo = JobRepository(session)
            repo.compare_and_set(
                job_id,
                repo.held_by(self.name),
                status="failed",
                error=message[:5000],
                finished_at=utcnow(),
                lease_expires_at=None,
            )

    def renew(self, job_id: int, progress: dict[str, Any] | None = None) -> bool:
        values: dict[str, Any] = {"lease_expires_at": utcnow() + self.lease}
        if progress is not None:
            values["progress"] = progress
        with self.sessions.begin() as session:
            repo = JobRepository(session)
            return repo.compare_and_set(job_id, repo.held_by(self.name), **values)


def give_up(repo: JobRepository, job: BenchJob, now) -> None:  # noqa: ANN001
    """A job whose workers kept dying fails cleanly instead of staying 'running'."""
    repo.compare_and_set(
        job.id,
        claimable(now),
        status="failed",
        finished_at=now,
        lease_expires_at=None,
        error=f"the worker running it stopped responding {job.attempts} times; no record "
        "was stored",
    )


def describe(error: Exception) -> str:
    if isinstance(error, ServebookError):
        return error.message
    if isinstance(error, TargetUnreachable):
        return str(error)  # "could not connect to URL: reason", as users should read it
    if isinstance(error, ValidationError):
        return f"invalid plan: {error}"
    return f"{type(error).__name__}: {error}"


class Heartbeat:
    """Renews the lease while a run is in progress, even between progress reports."""

    def __init__(self, worker: Worker, job_id: int) -> None:
        self.worker = worker
        self.job_id = job_id
        self.stopped = threading.Event()
        self.lost = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.last_progress = 0.0

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def loop(self) -> None:
        interval = self.worker.lease.total_seconds() / 3
        while not self.stopped.wait(interval):
            if not self.worker.renew(self.job_id):
                self.lost.set()
                return

    def progress(self, step: str, done: int, total: int) -> None:
        if self.lost.is_set():
            raise LeaseLost(self.job_id)
        now = time.monotonic()
        if now - self.last_progress < 0.5 and done < total:
            return
        self.last_progress = now
        if not self.worker.renew(self.job_id, {"step": step, "done": done, "total": total}):
            self.lost.set()
            raise LeaseLost(self.job_id)


class InProcessWorker:
    """The worker `servebook serve` runs beside the web app, on a daemon thread."""

    def __init__(self, sessions: sessionmaker[Session], api_keys: MutableMapping[int, str]) -> None:
        self.worker = Worker(sessions, api_keys=api_keys)
        self.stopped = threading.Event()
        self.thread = threading.Thread(
            target=self.worker.run_forever,
            args=(self.stopped,),
            name="servebook-worker",
            daemon=True,
        )

    def start(self) -> "InProcessWorker":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
