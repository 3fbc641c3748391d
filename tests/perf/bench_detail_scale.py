"""A detail page and its JSON with no records, with 100 and with 10,000 for the same
configuration, measured side by side so that load on the machine hits all three alike.

GLM-5.3-Flash on 8x H200 (balanced). One seeded SQLite file is copied three times: left
empty, filled with 100 records (every table of the section shows) and with 10,000 (half
accepted with their acceptance events, half pending, each with three single-request
lengths and a concurrency ramp, in through SQLAlchemy Core). Three `servebook serve`
processes serve the three copies, and the requests go round robin: empty, 100, 10,000,
then the next round in another order, so a burst of load from elsewhere costs each the
same. Each request carries a query string of its own, so every body is built afresh while
the resolved recipe stays warm.

Printed per endpoint and configuration: median and p90 wall time, the server process's CPU
time per request (what load from other processes disturbs least), the body size, and each
as a ratio to the empty configuration, then one line per endpoint saying whether 10,000
records stay within the target of 1.5x empty in time and size. Asserts nothing.

    .venv/bin/python tests/perf/bench_detail_scale.py [--records 10000] [--rounds 60]
"""

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
from sqlalchemy import insert

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]

from bench_pages import free_port, start_server  # noqa: E402

from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import session_scope, upgrade_database  # noqa: E402
from app.models import RecordEvent  # noqa: E402
from tests.records.bulk import insert_records, target  # noqa: E402

MODEL, HARDWARE, PROFILE = "glm-5.3-flash", "8x-h200-141gb", "balanced"
DETAIL = f"/models/{MODEL}/hardware/{HARDWARE}/profiles/{PROFILE}"
FEW = 100  # a configuration with some evidence: every table of the section is shown
ENDPOINTS = [("detail page", DETAIL), ("detail JSON", f"/api{DETAIL}")]
TARGET = 1.5  # 10,000 records: within this many times the empty configuration


@dataclass
class Served:
    """One database copy behind its own server, and what its requests cost."""

    records: int
    base: str
    process: subprocess.Popen
    times_ms: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    cpu_s: float = 0.0

    def cpu(self) -> float:
        times = psutil.Process(self.process.pid).cpu_times()
        return times.user + times.system


def copy_database(source: Path, target_path: Path) -> None:
    """A consistent copy through SQLite's backup API (the write-ahead log included)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target_path) as dst:
        src.backup(dst)


def fill(path: Path, count: int, seed: int) -> None:
    settings = Settings(database_url=f"sqlite:///{path}", run_worker=False)
    artifact, runtime = route(settings)
    with session_scope(settings) as session:
        where = target(session, MODEL, artifact, runtime, HARDWARE)
        done = insert_records(session, where, count, accepted_share=0.5, seed=seed)
    # Each accepted record with its acceptance, as a review leaves it: the known-good
    # block looks for the configuration's latest.
    accepted_events = [
        {
            "record_id": r["id"],
            "action": "accepted",
            "reason": "",
            "actor": "bench",
            "created_at": r["created_at"],
        }
        for r in done.records
        if r["review_state"] == "accepted"
    ]
    with session_scope(settings) as session:  # insert_records commits its own transaction
        session.execute(insert(RecordEvent), accepted_events)
    accepted = sum(r["review_state"] == "accepted" for r in done.records)
    print(
        f"{path.name}: {len(done.records):,} records ({accepted:,} accepted, "
        f"{len(done.records) - accepted:,} pending), {len(done.measurements):,} measurements"
    )


def route(settings: Settings) -> tuple[str, str]:
    """The model file and runtime the detail page resolves to, read from its JSON."""
    from fastapi.testclient import TestClient

    from app.main import create_app

    with TestClient(create_app(settings)) as client:
        data = client.get(f"/api{DETAIL}").json()
    return data["artifact"], data["runtime"]


def run_rounds(servers: list[Served], path: str, rounds: int) -> None:
    """`rounds` requests to each server, interleaved, rotating who goes first."""
    clients = {s.base: httpx.Client(base_url=s.base, timeout=60) for s in servers}
    try:
        for served in servers:
            clients[served.base].get(path).raise_for_status()  # warm: the revision's work
            served.times_ms, served.sizes = [], []
        start_cpu = {s.base: s.cpu() for s in servers}
        for number in range(rounds):
            shift = number % len(servers)
            for served in servers[shift:] + servers[:shift]:
                began = time.perf_counter()
                response = clients[served.base].get(path, params={"fresh": number})
                served.times_ms.append((time.perf_counter() - began) * 1000)
                response.raise_for_status()
                served.sizes.append(len(response.content))
        for served in servers:
            served.cpu_s = served.cpu() - start_cpu[served.base]
    finally:
        for client in clients.values():
            client.close()


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def report(name: str, servers: list[Served], rounds: int) -> list[str]:
    empty = servers[0]
    base_time = statistics.median(empty.times_ms)
    base_cpu = empty.cpu_s / rounds * 1000
    base_size = max(empty.sizes)
    for served in servers:
        median_ms = statistics.median(served.times_ms)
        cpu_ms = served.cpu_s / rounds * 1000
        size = max(served.sizes)
        print(
            f"{name:12} {served.records:>8,} {median_ms:9.1f} {median_ms / base_time:7.2f} "
            f"{p90(served.times_ms):8.1f} {cpu_ms:8.1f} {cpu_ms / base_cpu:7.2f} "
            f"{size:8,} {size / base_size:7.2f}"
        )
    full = servers[-1]
    ratios = {
        "time": statistics.median(full.times_ms) / base_time,
        "CPU": full.cpu_s / empty.cpu_s,
        "size": max(full.sizes) / base_size,
    }
    verdicts = ", ".join(f"{what} x{ratio:.2f}" for what, ratio in ratios.items())
    met = all(ratio <= TARGET for ratio in ratios.values())
    return [
        f"{name}, {full.records:,} records against none: {verdicts}; "
        f"target {TARGET}x: {'met' if met else 'not met'}"
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60, help="requests per server per endpoint")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        seeded = Path(folder) / "empty.db"
        settings = Settings(database_url=f"sqlite:///{seeded}", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        counts = [0, FEW, args.records]
        paths = [seeded, Path(folder) / "few.db", Path(folder) / "full.db"]
        for count, path in zip(counts[1:], paths[1:], strict=True):
            copy_database(seeded, path)
            fill(path, count, seed=count)
        servers: list[Served] = []
        try:
            for count, path in zip(counts, paths, strict=True):
                port = free_port()
                process = start_server(f"sqlite:///{path}", port)
                servers.append(Served(count, f"http://127.0.0.1:{port}", process))
            print(
                f"\n{'endpoint':12} {'records':>8} {'p50 ms':>9} {'x empty':>7} {'p90 ms':>8} "
                f"{'CPU ms':>8} {'x empty':>7} {'bytes':>8} {'x empty':>7}   "
                f"({args.rounds} interleaved requests each)"
            )
            verdicts = []
            for name, path in ENDPOINTS:
                run_rounds(servers, path, args.rounds)
                verdicts += report(name, servers, args.rounds)
        finally:
            for served in servers:
                served.process.terminate()
                served.process.wait()
    print()
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
