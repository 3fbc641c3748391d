"""A detail page and its JSON with no records, then with 10,000 for the same configuration.

GLM-5.3-Flash on 8x H200 (balanced), served by uvicorn on 127.0.0.1 over a seeded SQLite
file. Each request carries a query string of its own, so every body is built afresh (as it
is after each new record moves the catalog revision) while the resolved recipe stays warm.
Then 10,000 records, half accepted and half pending, each with three single-request lengths
and a concurrency ramp, go in through SQLAlchemy Core in one transaction, and the same
requests run again (and once in between, at 100 records, when every table of the section
already shows). Prints p50 time and size of each and the ratios. Asserts nothing; the aim
is within 1.5x of empty for both.

    .venv/bin/python tests/perf/bench_detail_scale.py [--records 10000] [--requests 40]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]

from bench_pages import free_port, start_server  # noqa: E402

from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import session_scope, upgrade_database  # noqa: E402
from tests.records.bulk import insert_records, target  # noqa: E402

MODEL, HARDWARE, PROFILE = "glm-5.3-flash", "8x-h200-141gb", "balanced"
DETAIL = f"/models/{MODEL}/hardware/{HARDWARE}/profiles/{PROFILE}"
FEW = 100  # a configuration with some evidence: every table of the section is shown
ENDPOINTS = [("detail page", DETAIL), ("detail JSON", f"/api{DETAIL}")]


def measure(base: str, path: str, requests: int, tag: str) -> tuple[float, int]:
    """p50 milliseconds and the body size over `requests` freshly built bodies."""
    times, sizes = [], []
    with httpx.Client(base_url=base, timeout=60) as client:
        client.get(path)  # warm: the revision's resolution
        for number in range(requests):
            start = time.perf_counter()
            response = client.get(path, params={"fresh": f"{tag}-{number}"})
            times.append((time.perf_counter() - start) * 1000)
            response.raise_for_status()
            sizes.append(len(response.content))
    return statistics.median(times), max(sizes)


def route(base: str) -> tuple[str, str]:
    data = httpx.get(f"{base}/api{DETAIL}", timeout=60).json()
    return data["artifact"], data["runtime"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database_url = f"sqlite:///{folder}/perf.db"
        settings = Settings(database_url=database_url, run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start_server(database_url, port)
        try:
            empty = {name: measure(base, path, args.requests, "empty") for name, path in ENDPOINTS}
            artifact, runtime = route(base)
            with session_scope(settings) as session:
                where = target(session, MODEL, artifact, runtime, HARDWARE)
            fill(settings, where, FEW, seed=1)
            few = {name: measure(base, path, args.requests, "few") for name, path in ENDPOINTS}
            fill(settings, where, args.records - FEW, seed=2)
            full = {name: measure(base, path, args.requests, "full") for name, path in ENDPOINTS}
        finally:
            server.terminate()
            server.wait()
    print(
        f"{'endpoint':12} {'records':>8} {'p50 ms':>8} {'x empty':>8} {'bytes':>8} "
        f"{'x empty':>8}   ({args.requests} requests each)"
    )
    for name, _ in ENDPOINTS:
        t0, s0 = empty[name]
        for count, (t, s) in ((0, empty[name]), (FEW, few[name]), (args.records, full[name])):
            print(f"{name:12} {count:8,} {t:8.1f} {t / t0:8.2f} {s:8,} {s / s0:8.2f}")
    for name, _ in ENDPOINTS:
        (t1, s1), (t2, s2) = few[name], full[name]
        print(
            f"{name}: {args.records:,} records against {FEW}: time x{t2 / t1:.2f}, "
            f"size x{s2 / s1:.2f}"
        )


def fill(settings: Settings, where, count: int, seed: int) -> None:  # noqa: ANN001
    start = time.perf_counter()
    with session_scope(settings) as session:
        done = insert_records(session, where, count, accepted_share=0.5, seed=seed)
    accepted = sum(r["review_state"] == "accepted" for r in done.records)
    print(
        f"inserted {len(done.records):,} records ({accepted:,} accepted, "
        f"{len(done.records) - accepted:,} pending) and {len(done.measurements):,} "
        f"measurements in {time.perf_counter() - start:.1f} s"
    )


if __name__ == "__main__":
    main()
