"""Record ingest under load: POST /api/records from concurrent clients, then the database
is read back to count what was lost or stored twice.

Each client is a closed loop (the next record as soon as the last is answered) with its own
Idempotency-Key per record; every tenth record is sent a second time with the same key, as a
client retrying after a lost answer would, and must come back as the first record. The
server is uvicorn on 127.0.0.1 with no benchmark worker: one process on SQLite (one writer),
two or more on PostgreSQL. DATABASE_URL picks the database (default: a fresh SQLite file);
the catalog is migrated and seeded first. Prints records/s, latency percentiles and the
counts, and the server's CPU time per record (the machine's other load leaves it unchanged);
asserts nothing.

    .venv/bin/python tests/perf/bench_ingest.py [--seconds 10] [--clients 32] [--workers N]
    DATABASE_URL=postgresql+psycopg://... .venv/bin/python tests/perf/bench_ingest.py
"""

import argparse
import asyncio
import copy
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
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

BIN = Path(sys.executable).parent
RETRY_EVERY = 10
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
        {"context_length": 4096, "concurrency": 1, "repetitions": 3, "ttft_ms": 250.0,
         "decode_tokens_per_s": 95.0, "itl_ms": 10.5, "e2e_latency_ms": 1600.0,
         "peak_memory_gb_per_gpu": 120.0},
        {"context_length": 16384, "concurrency": 1, "repetitions": 3, "ttft_ms": 900.0,
         "decode_tokens_per_s": 88.0, "peak_memory_gb_per_gpu": 124.0},
    ],
}


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    acknowledged: dict[str, int] = field(default_factory=dict)  # marker -> record id
    retries: int = 0
    retry_mismatches: int = 0
    failures: Counter = field(default_factory=Counter)


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
    env = {**os.environ, "DATABASE_URL": database_url, "SERVEBOOK_RUN_WORKER": "false"}
    command = [str(BIN / "uvicorn"), "app.main:create_app", "--factory", "--host", "127.0.0.1",
               "--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/css/app.css", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


async def post(client: httpx.AsyncClient, body: dict, key: str, tally: Tally) -> int | None:
    start = time.perf_counter()
    try:
        response = await client.post("/api/records", json=body,
                                     headers={"Idempotency-Key": key})
    except httpx.HTTPError as error:
        tally.failures[type(error).__name__] += 1
        return None
    tally.latencies_ms.append((time.perf_counter() - start) * 1000)
    if response.status_code not in (200, 201):
        tally.failures[str(response.status_code)] += 1
        return None
    return response.json()["id"]


async def client_loop(client: httpx.AsyncClient, hardware: str, run: str, number: int,
                      deadline: float, tally: Tally) -> None:
    sent = 0
    while time.perf_counter() < deadline:
        marker = f"bench-ingest {run} {number}-{sent}"
        body = copy.deepcopy(BODY)
        body["hardware"] = hardware
        body["notes"] = marker
        record_id = await post(client, body, marker.replace(" ", "/"), tally)
        if record_id is not None:
            tally.acknowledged[marker] = record_id
            if sent % RETRY_EVERY == 0:
                tally.retries += 1
                again = await post(client, body, marker.replace(" ", "/"), tally)
                tally.retry_mismatches += again != record_id
        sent += 1


async def load(base: str, hardware: str, run: str, clients: int, seconds: float) -> Tally:
    tally = Tally()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        deadline = time.perf_counter() + seconds
        await asyncio.gather(*(client_loop(client, hardware, run, n, deadline, tally)
                               for n in range(clients)))
    return tally


def stored_markers(database_url: str, run: str) -> Counter:
    settings = Settings(database_url=database_url, run_worker=False)
    with session_scope(settings) as session:
        notes = session.scalars(select(Record.notes).where(
            Record.notes.like(f"bench-ingest {run} %"))).all()
    return Counter(notes)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def cpu_seconds(server: subprocess.Popen) -> float:
    """User and system time of the server and its worker processes so far."""
    parent = psutil.Process(server.pid)
    total = 0.0
    for process in [parent, *parent.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def report(tally: Tally, stored: Counter, elapsed: float, clients: int, workers: int,
           server_cpu: float) -> None:
    lost = sum(1 for marker in tally.acknowledged if marker not in stored)
    duplicated = sum(count - 1 for count in stored.values() if count > 1)
    unanswered = sum(1 for marker in stored if marker not in tally.acknowledged)
    lat = tally.latencies_ms
    print(f"{clients} clients, {workers} app process(es), {elapsed:.1f} s")
    stored_count = len(tally.acknowledged)
    print(f"records stored      {stored_count:8d}  ({stored_count / elapsed:.1f} records/s, "
          "answered 200/201)")
    if tally.acknowledged and server_cpu:
        per_record = server_cpu * 1000 / len(tally.acknowledged)
        print(f"server CPU          {server_cpu:8.1f} s  ({per_record:.1f} ms per record, so "
              f"{1000 / per_record:.0f} records/s per fully used core)")
    print(f"requests            {len(lat):8d}  ({len(lat) / elapsed:.1f} req/s, retries included)")
    if lat:
        print(f"latency ms          p50 {statistics.median(lat):.1f}  p90 "
              f"{percentile(lat, 0.90):.1f}  p99 {percentile(lat, 0.99):.1f}  max {max(lat):.1f}")
    print(f"retries             {tally.retries:8d}  (answered with another record: "
          f"{tally.retry_mismatches})")
    print(f"lost                {lost:8d}  (answered, not in the database)")
    print(f"duplicated          {duplicated:8d}  (stored more than once)")
    print(f"stored, unanswered  {unanswered:8d}")
    failures = ", ".join(f"{code}: {n}" for code, n in tally.failures.items()) or "none"
    print(f"failed requests     {sum(tally.failures.values()):8d}  ({failures})")


def run(database_url: str, seconds: float, clients: int, workers: int) -> None:
    hardware = prepare_database(database_url)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(database_url, port, workers)
    try:
        body = {**copy.deepcopy(BODY), "hardware": hardware, "notes": "warm-up"}
        httpx.post(base + "/api/records", json=body, timeout=30).raise_for_status()
        marker_run = uuid.uuid4().hex[:12]
        start, own_before = time.perf_counter(), time.process_time()
        cpu_before = cpu_seconds(server)
        tally = asyncio.run(load(base, hardware, marker_run, clients, seconds))
        elapsed, server_cpu = time.perf_counter() - start, cpu_seconds(server) - cpu_before
        client_cpu = time.process_time() - own_before
    finally:
        server.terminate()
        server.wait()
    report(tally, stored_markers(database_url, marker_run), elapsed, clients, workers,
           server_cpu)
    print(f"client CPU          {client_cpu:8.1f} s  (the load generator, same machine)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--workers", type=int, default=None,
                        help="app processes (default: 1 on SQLite, 2 otherwise)")
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL")
    with tempfile.TemporaryDirectory() as folder:
        database_url = database_url or f"sqlite:///{folder}/ingest.db"
        workers = args.workers or (1 if database_url.startswith("sqlite") else 2)
        run(database_url, args.seconds, args.clients, workers)


if __name__ == "__main__":
    main()
