"""Record ingest under load: POST /api/records from concurrent clients, on SQLite and on
PostgreSQL, then each database is read back to count what was lost or stored twice.

Each client is a closed loop (the next record as soon as the last is answered) on its own
keep-alive connection, with its own Idempotency-Key per record; every tenth record is sent
a second time with the same key, as a client retrying after a lost answer would, and must
come back as the first record (tests/perf/ingest_load.py). The server is uvicorn on
127.0.0.1 with no benchmark worker, two app processes: on SQLite one writer at a time (WAL,
BEGIN IMMEDIATE, the processes queued on a lock file). The catalog is migrated and seeded first.

`--database both` (the default when PostgreSQL's server binaries are installed) runs SQLite
on a fresh file, then PostgreSQL on a throwaway cluster started for the run
(tests/pg_server.py), and prints them side by side; DATABASE_URL runs one given database.
Per database: records/s, latency p50/p99/max, lost, duplicated, and the CPU time per
record of the server and of the load generator (the machine's other load leaves those
nearly unchanged, unlike records/s); on PostgreSQL also that of the database server's own
processes, which share the same cores (SQLite runs inside the app, in its figure).
Asserts nothing.

    .venv/bin/python tests/perf/bench_ingest.py [--database sqlite|postgresql|both]
        [--seconds 10] [--clients 32] [--workers N]
    DATABASE_URL=postgresql+psycopg://... .venv/bin/python tests/perf/bench_ingest.py
"""

import argparse
import gc
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
from sqlalchemy import select

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import session_scope, upgrade_database  # noqa: E402
from app.models import Hardware, Record  # noqa: E402
from tests.perf.ingest_load import Tally, run_load  # noqa: E402
from tests.pg_server import PostgresServer, PostgresUnavailable, server_bin_dir  # noqa: E402

BIN = Path(sys.executable).parent
# Two app processes on both: on SQLite they take turns at the write through a lock file
# beside the database (app.db), so one parses and checks a record while the other writes
# (--workers 1 to compare).
DEFAULT_WORKERS = {"sqlite": 2, "postgresql": 2}
BODY = {
    "model": "glm-5.3-flash",
    "artifact": "glm-5.3-flash-fp8",
    "runtime": "sglang",
    "runtime_version": "0.5.10",
    "gpu_count": 8,
    "profile": "balanced",
    "command": "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8",
    "applied_values": {"tensor_parallel": 8, "context": 16384},
    "environment": {"driver": "580.95.05", "os": "Ubuntu 24.04", "runtime_build": "abc1234"},
    "outcome": "ok",
    "measurements": [
        {
            "context_length": 4096,
            "concurrency": 1,
            "repetitions": 3,
            "ttft_ms": 250.0,
            "decode_tokens_per_s": 95.0,
            "itl_ms": 10.5,
            "e2e_latency_ms": 1600.0,
            "peak_memory_gb_per_gpu": 120.0,
        },
        {
            "context_length": 16384,
            "concurrency": 1,
            "repetitions": 3,
            "ttft_ms": 900.0,
            "decode_tokens_per_s": 88.0,
            "peak_memory_gb_per_gpu": 124.0,
        },
    ],
}


@dataclass
class Result:
    database: str
    workers: int
    clients: int
    elapsed_s: float
    tally: Tally
    stored: Counter
    server_cpu_s: float
    client_cpu_s: float
    database_cpu_s: float | None = None  # PostgreSQL's processes; None: inside the app

    @property
    def records(self) -> int:
        return len(self.tally.acknowledged)

    @property
    def lost(self) -> int:
        return sum(1 for marker in self.tally.acknowledged if marker not in self.stored)

    @property
    def duplicated(self) -> int:
        return sum(count - 1 for count in self.stored.values() if count > 1)

    @property
    def unanswered(self) -> int:
        return sum(1 for marker in self.stored if marker not in self.tally.acknowledged)

    def per_record_ms(self, cpu_s: float) -> float:
        return cpu_s * 1000 / self.records if self.records else 0.0

    def latency(self, share: float) -> float:
        ordered = sorted(self.tally.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prepare_database(database_url: str) -> str:
    """Migrate and seed; the seeded 8x H200 slug the records name."""
    settings = Settings(database_url=database_url, run_worker=False)
    upgrade_database(settings)
    with session_scope(settings) as session:
        seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        slugs = session.scalars(select(Hardware.slug).order_by(Hardware.slug)).all()
    return next(s for s in slugs if s.startswith("8x-h200"))


def start_server(database_url: str, port: int, workers: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SERVEBOOK_RUN_WORKER": "false",
        "SERVEBOOK_WRITE_RATE_PER_MINUTE": "0",  # the load is the point
    }
    command = [
        str(BIN / "uvicorn"),
        "app.main:create_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    server = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(300):
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/css/app.css", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def warm_up(port: int, body: dict, workers: int) -> None:
    """A few records first, so every app process has its connections and caches."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        for n in range(4 * workers):
            client.post("/api/records", json={**body, "notes": f"warm-up {n}"}).raise_for_status()


def stored_markers(database_url: str, run: str) -> Counter:
    settings = Settings(database_url=database_url, run_worker=False)
    with session_scope(settings) as session:
        notes = session.scalars(
            select(Record.notes).where(Record.notes.like(f"bench-ingest {run} %"))
        ).all()
    return Counter(notes)


def cpu_seconds(server: subprocess.Popen | int) -> float:
    """User and system time of a server (a process or its id) and its children so far."""
    parent = psutil.Process(server if isinstance(server, int) else server.pid)
    total = 0.0
    for process in [parent, *parent.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def measure(
    database: str,
    database_url: str,
    seconds: float,
    clients: int,
    workers: int,
    database_pid: int | None = None,
) -> Result:
    body = {**BODY, "hardware": prepare_database(database_url)}
    port = free_port()
    server = start_server(database_url, port, workers)
    try:
        warm_up(port, body, workers)
        marker_run = uuid.uuid4().hex[:12]
        gc.collect()
        gc.freeze()  # the load generator's own garbage collection is no part of the figure
        start, own_before = time.perf_counter(), time.process_time()
        cpu_before = cpu_seconds(server)
        database_before = cpu_seconds(database_pid) if database_pid else 0.0
        tally = run_load(port, body, marker_run, clients, seconds)
        elapsed, server_cpu = time.perf_counter() - start, cpu_seconds(server) - cpu_before
        database_cpu = cpu_seconds(database_pid) - database_before if database_pid else None
        client_cpu = time.process_time() - own_before
        gc.unfreeze()
    finally:
        server.terminate()
        server.wait()
    return Result(
        database,
        workers,
        clients,
        elapsed,
        tally,
        stored_markers(database_url, marker_run),
        server_cpu,
        client_cpu,
        database_cpu,
    )


def report(result: Result) -> None:
    tally, lat = result.tally, result.tally.latencies_ms
    print(
        f"--- {result.database}: {result.clients} clients, {result.workers} app process(es), "
        f"{result.elapsed_s:.1f} s"
    )
    print(
        f"records stored      {result.records:8d}  ({result.records / result.elapsed_s:.1f} "
        "records/s, answered 200/201)"
    )
    server_ms = result.per_record_ms(result.server_cpu_s)
    if server_ms:
        print(
            f"server CPU          {result.server_cpu_s:8.1f} s  ({server_ms:.2f} ms per record, "
            f"so {1000 / server_ms:.0f} records/s per fully used core)"
        )
    if result.database_cpu_s is not None:
        print(
            f"database CPU        {result.database_cpu_s:8.1f} s  "
            f"({result.per_record_ms(result.database_cpu_s):.2f} ms per record, PostgreSQL's "
            "own processes)"
        )
    print(
        f"load generator CPU  {result.client_cpu_s:8.1f} s  "
        f"({result.per_record_ms(result.client_cpu_s):.2f} ms per record, same machine)"
    )
    print(
        f"requests            {len(lat):8d}  ({len(lat) / result.elapsed_s:.1f} req/s, "
        "retries included)"
    )
    if lat:
        print(
            f"latency ms          p50 {result.latency(0.5):.1f}  p90 {result.latency(0.9):.1f}"
            f"  p99 {result.latency(0.99):.1f}  max {max(lat):.1f}"
        )
    print(
        f"retries             {tally.retries:8d}  (answered with another record: "
        f"{tally.retry_mismatches})"
    )
    print(f"lost                {result.lost:8d}  (answered, not in the database)")
    print(f"duplicated          {result.duplicated:8d}  (stored more than once)")
    print(f"stored, unanswered  {result.unanswered:8d}")
    failures = ", ".join(f"{code}: {n}" for code, n in tally.failures.items()) or "none"
    print(f"failed requests     {sum(tally.failures.values()):8d}  ({failures})", flush=True)


def side_by_side(results: list[Result]) -> None:
    rows = [
        ("app processes", lambda r: f"{r.workers}"),
        ("records/s", lambda r: f"{r.records / r.elapsed_s:.1f}"),
        ("latency p50 ms", lambda r: f"{r.latency(0.5):.1f}"),
        ("latency p99 ms", lambda r: f"{r.latency(0.99):.1f}"),
        ("latency max ms", lambda r: f"{max(r.tally.latencies_ms, default=0):.1f}"),
        ("lost", lambda r: f"{r.lost}"),
        ("duplicated", lambda r: f"{r.duplicated}"),
        ("failed requests", lambda r: f"{sum(r.tally.failures.values())}"),
        ("server CPU ms/record", lambda r: f"{r.per_record_ms(r.server_cpu_s):.2f}"),
        (
            "database CPU ms/record",
            lambda r: (
                "in server"
                if r.database_cpu_s is None
                else f"{r.per_record_ms(r.database_cpu_s):.2f}"
            ),
        ),
        ("load gen. CPU ms/record", lambda r: f"{r.per_record_ms(r.client_cpu_s):.2f}"),
    ]
    print(f"\n{'':24}" + "".join(f"{r.database:>14}" for r in results))
    for label, cell in rows:
        print(f"{label:24}" + "".join(f"{cell(r):>14}" for r in results))


def postgres_available() -> bool:
    try:
        return (server_bin_dir() / "initdb").exists()
    except PostgresUnavailable:
        return False


def run_postgresql(args: argparse.Namespace) -> Result:
    cluster = PostgresServer.start()
    try:
        url = cluster.url(cluster.create_database(name="bench_ingest"))
        postmaster = int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
        return measure(
            "postgresql",
            url,
            args.seconds,
            args.clients,
            args.workers or DEFAULT_WORKERS["postgresql"],
            postmaster,
        )
    finally:
        cluster.stop()


def run_sqlite(args: argparse.Namespace) -> Result:
    with tempfile.TemporaryDirectory() as folder:
        return measure(
            "sqlite",
            f"sqlite:///{folder}/ingest.db",
            args.seconds,
            args.clients,
            args.workers or DEFAULT_WORKERS["sqlite"],
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--database",
        choices=("sqlite", "postgresql", "both"),
        help="default: both when PostgreSQL's server binaries are installed, "
        "else sqlite; DATABASE_URL instead runs that one database",
    )
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--workers", type=int, default=None, help="app processes (default: 2)")
    args = parser.parse_args()
    given = os.environ.get("DATABASE_URL")
    results = []
    if given:
        kind = "sqlite" if given.startswith("sqlite") else "postgresql"
        results.append(
            measure(kind, given, args.seconds, args.clients, args.workers or DEFAULT_WORKERS[kind])
        )
        report(results[-1])
    else:
        database = args.database or ("both" if postgres_available() else "sqlite")
        if database in ("sqlite", "both"):
            results.append(run_sqlite(args))
            report(results[-1])
        if database in ("postgresql", "both"):
            results.append(run_postgresql(args))
            report(results[-1])
    if len(results) > 1:
        side_by_side(results)


if __name__ == "__main__":
    main()
