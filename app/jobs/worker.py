"""The benchmark worker: claims queued jobs under a lease, runs them, stores a record.

One loop (`JobRunner`) for every worker; where jobs come from is its `JobSource`: the
dashboard's database (`Worker`, and the worker `servebook serve` runs beside the app) or a
dashboard's HTTP API (`servebook worker --server URL`, app/jobs/remote.py).

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

from app.bench.plan import BenchPlan
from app.bench.procedure import TargetUnreachable
from app.bench.result import BenchResult
from app.config import get_settings
from app.errors import ServebookError
from app.jobs.job_source import DatabaseJobSource, JobSource, SourceRefused
from app.jobs.kinds import kind_named
from app.jobs.leases import Claim, LeaseLost
from app.jobs.versioned import run_and_read_version
from app.records.storage.validation import schema_errors

log = logging.getLogger("servebook.worker")
API_KEY_ENV = "SERVEBOOK_BENCH_API_KEY"


def run_on_own_thread(plan: BenchPlan, **options: Any) -> BenchResult:
    """Run the benchmark's event loop on a fresh thread, whatever loop the caller runs."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="servebook-bench") as pool:
        return pool.submit(run_and_read_version, plan, **options).result()


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class JobRunner:
    """The worker loop: claim a job from a source, run it, report progress, post the result.

    `allowed_hosts` replaces the hosts the job's plan allows: a worker measures only what
    its own configuration allows (loopback and these), whatever the plan says.
    """

    def __init__(
        self,
        source: JobSource,
        *,
        poll_s: float = 1.0,
        api_keys: MutableMapping[int, str] | None = None,
        run: Callable[..., BenchResult] = run_on_own_thread,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        self.source = source
        self.poll_s = poll_s
        self.api_keys = api_keys if api_keys is not None else {}
        self.run = run
        self.allowed_hosts = list(allowed_hosts or [])

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.source.lease_s)

    def run_forever(self, stop: threading.Event) -> None:
        log.info("benchmark worker %s started", self.name)
        while not stop.is_set():
            try:
                worked = self.run_once()
            except SourceRefused:
                raise
            except Exception:  # keep the worker alive; the job itself records its failure
                log.exception("benchmark worker %s: unexpected error", self.name)
                worked = False
            if not worked:
                stop.wait(self.poll_s)

    def run_once(self) -> bool:
        """Claim and run one job; False when there was nothing to do."""
        claim = self.source.claim()
        if claim is None:
            return False
        self.execute(claim)
        return True

    def execute(self, claim: Claim) -> None:
        heartbeat = Heartbeat(self, claim)
        heartbeat.start()
        try:
            outcome = kind_named(claim.kind).run(self, claim, heartbeat.progress)
            heartbeat.stop()
            heartbeat.thread.join()
            self.source.finish(claim, outcome)
        except LeaseLost:
            log.warning("job %s: lease lost to another worker; stopping", claim.job_id)
        except Exception as error:  # the job fails with the reason; the worker goes on
            heartbeat.stop()
            log.info("job %s failed: %s", claim.job_id, describe(error))
            self.source.fail(claim, describe(error))
        finally:
            heartbeat.stop()
            self.api_keys.pop(claim.job_id, None)  # a key lives only as long as its job

    def api_key_for(self, claim: Claim) -> str | None:
        key = self.api_keys.get(claim.job_id) or os.environ.get(API_KEY_ENV)
        if claim.needs_api_key and not key:
            raise ServebookError(
                f"the target needs an API key, but this worker has none: set {API_KEY_ENV} "
                "for workers in other processes"
            )
        return key


class Worker(JobRunner):
    """A worker that reads and writes jobs in the dashboard's own database. It measures
    the hosts its settings allow for its label (None: this process's settings)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        name: str | None = None,
        lease_s: float = 60.0,
        poll_s: float = 1.0,
        api_keys: MutableMapping[int, str] | None = None,
        run: Callable[..., BenchResult] = run_on_own_thread,
        label: str | None = None,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        source = DatabaseJobSource(sessions, name or worker_name(), lease_s, label)
        if allowed_hosts is None:
            allowed_hosts = get_settings().worker_hosts(label)
        super().__init__(
            source, poll_s=poll_s, api_keys=api_keys, run=run, allowed_hosts=allowed_hosts
        )


def describe(error: Exception) -> str:
    if isinstance(error, ServebookError):
        return error.message
    if isinstance(error, TargetUnreachable):
        return str(error)  # "could not connect to URL: reason", as users should read it
    if isinstance(error, ValidationError):  # each field in words, not the library's report
        problems = "; ".join(f"{e.field}: {e.message}" for e in schema_errors(error))
        return f"invalid plan: {problems}"
    return f"{type(error).__name__}: {error}"


class Heartbeat:
    """Renews the lease while a run is in progress, even between progress reports."""

    def __init__(self, runner: JobRunner, claim: Claim) -> None:
        self.source = runner.source
        self.claim = claim
        self.stopped = threading.Event()
        self.lost = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.last_progress = 0.0

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def loop(self) -> None:
        interval = self.source.lease_s / 3
        while not self.stopped.wait(interval):
            if not self.source.renew(self.claim):
                self.lost.set()
                return

    def progress(self, step: str, done: int, total: int) -> None:
        if self.lost.is_set():
            raise LeaseLost(self.claim.job_id)
        now = time.monotonic()
        if now - self.last_progress < 0.5 and done < total:
            return
        self.last_progress = now
        if not self.source.renew(self.claim, {"step": step, "done": done, "total": total}):
            self.lost.set()
            raise LeaseLost(self.claim.job_id)


class InProcessWorker:
    """The worker `servebook serve` runs beside the web app, on a daemon thread."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        api_keys: MutableMapping[int, str],
        allowed_hosts: list[str],
    ) -> None:
        self.worker = Worker(sessions, api_keys=api_keys, allowed_hosts=allowed_hosts)
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
