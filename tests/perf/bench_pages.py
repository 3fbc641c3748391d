"""Pages, JSON and a static file of one server under load, side by side (locust, headless).

Each endpoint runs alone at 1 and at 32 concurrent users (closed loop) against a uvicorn
server on 127.0.0.1 with a seeded SQLite database and no worker, after one warm-up request.
Prints the time of one `POST /api/estimate` over HTTP, then p50, p99, requests per second
and the ratio to the static file; then the catalog recompute and the custom estimate's own
work, as bench_catalog_recompute prints them (tests/perf/resolve_figures.py). Asserts
nothing.

    .venv/bin/python tests/perf/bench_pages.py [--seconds 8]
"""

import argparse
import csv
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker, session_scope, upgrade_database  # noqa: E402
from tests.perf.resolve_figures import (  # noqa: E402
    CUSTOM_REQUEST,
    CUSTOM_TARGET_MS,
    catalog_recompute,
    custom_estimate,
)

BIN = Path(sys.executable).parent
ENDPOINTS = [
    ("static file /static/css/app.css", "/static/css/app.css", False),
    ("fit page /models/glm-5.3-flash", "/models/glm-5.3-flash", False),
    ("fit page, 304", "/models/glm-5.3-flash", True),
    ("fit JSON /api/models/glm-5.3-flash/fit", "/api/models/glm-5.3-flash/fit", False),
    (
        "detail page 8x H200 balanced",
        "/models/glm-5.3-flash/hardware/8x-h200-141gb/profiles/balanced",
        False,
    ),
    ("home page /", "/", False),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(database_url: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": database_url, "SERVEBOOK_RUN_WORKER": "false"}
    server = subprocess.Popen(
        [str(BIN / "servebook"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/css/app.css", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def load(base: str, path: str, users: int, seconds: int, etag: str | None) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        prefix = f"{folder}/run"
        env = {**os.environ, "SERVEBOOK_PERF_PATH": path}
        if etag:
            env["SERVEBOOK_PERF_ETAG"] = etag
        subprocess.run(
            [
                str(BIN / "locust"),
                "-f",
                str(ROOT / "tests/perf/locustfile.py"),
                "--headless",
                "--host",
                base,
                "-u",
                str(users),
                "-r",
                str(users),
                "-t",
                f"{seconds}s",
                "--csv",
                prefix,
                "--only-summary",
                "--loglevel",
                "ERROR",
            ],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(f"{prefix}_stats.csv") as stats:
            total = next(row for row in csv.DictReader(stats) if row["Name"] == "Aggregated")
    return {
        "p50": float(total["50%"]),
        "p99": float(total["99%"]),
        "rps": float(total["Requests/s"]),
        "failures": int(total["Failure Count"]),
    }


def serve_figures(database_url: str, seconds: int) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(database_url, port)
    try:
        etag = httpx.get(base + "/models/glm-5.3-flash").headers["etag"]
        for _, path, _ in ENDPOINTS:
            httpx.get(base + path)  # warm: resolve and render once
        estimate_over_http(base)
        print(
            f"{'endpoint':42} {'users':>5} {'p50 ms':>7} {'p99 ms':>7} {'req/s':>8} "
            f"{'x static':>8} {'fail':>5}"
        )
        for users in (1, 32):
            static_rps = None
            for name, path, conditional in ENDPOINTS:
                figures = load(base, path, users, seconds, etag if conditional else None)
                static_rps = static_rps or figures["rps"]
                print(
                    f"{name:42} {users:5} {figures['p50']:7.1f} {figures['p99']:7.1f} "
                    f"{figures['rps']:8.1f} {figures['rps'] / static_rps:8.2f} "
                    f"{figures['failures']:5}",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait()


def resolve_figures(settings: Settings) -> None:
    """The catalog recompute and the custom estimate, as bench_catalog_recompute prints them."""
    engine = make_engine(settings)
    sessions = make_sessionmaker(engine)
    with sessions() as session:
        print("\n" + catalog_recompute(session, 5))
    print(custom_estimate(sessions, settings, 50))
    engine.dispose()


def estimate_over_http(base: str, runs: int = 50) -> None:
    """`POST /api/estimate` itself, one request at a time, through the server."""
    with httpx.Client(base_url=base) as client:
        assert client.post("/api/estimate", json=CUSTOM_REQUEST).status_code == 200
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            assert client.post("/api/estimate", json=CUSTOM_REQUEST).status_code == 200
            times.append((time.perf_counter() - start) * 1000)
    print(
        f"POST /api/estimate over HTTP (4x 96 GB, glm-5.3-flash), {runs} runs: "
        f"median {statistics.median(times):.2f} ms, max {max(times):.2f} ms wall "
        f"(target {CUSTOM_TARGET_MS:g} ms for the estimate's own work)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database_url = f"sqlite:///{folder}/perf.db"
        settings = Settings(database_url=database_url, run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        serve_figures(database_url, args.seconds)
        resolve_figures(settings)


if __name__ == "__main__":
    main()
