"""Pages beside writes, the pages that used to be slow, pauses and memory, side by side.

One uvicorn app process (and its submission process) on 127.0.0.1 with a seeded SQLite
file and no worker; the load generators are closed-loop raw HTTP/1.1 clients
(tests/perf/mixed_load.py, ingest_load.py), readers and writers each in a process of their
own. Prints:

- /estimate, /records and the fit page against the static file at 32 clients;
- the fit page alone vs with 16 writers, and submissions alone vs with 16 readers of the
  fit page (and of the static file); then the same with records checked and written in the
  app's own process (SERVEBOOK_SUBMISSION_PROCESS=false), as before;
- /records at 0 and at 25k (pending) records: kept, and built afresh (60 vs 25k);
- the largest garbage-collector pause the server saw under all of it (its /metrics);
- the server's RSS before and after a run of distinct junk query strings.

Asserts nothing. `--seconds` per measurement (default 4); the whole run takes about two
minutes.

    .venv/bin/python tests/perf/bench_mixed_load.py [--seconds 4] [--phase NAME ...]
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.config import Settings  # noqa: E402
from app.db import session_scope  # noqa: E402
from tests.perf.bench_ingest import BODY, free_port, prepare_database  # noqa: E402
from tests.perf.mixed_load import Reads, run_reads, share, side_by_side  # noqa: E402
from tests.records.bulk import insert_records, target  # noqa: E402

BIN = Path(sys.executable).parent
FIT = "/models/glm-5.3-flash"
STATIC = "/static/css/app.css"
PHASES = ("pages", "mixed", "records", "junk", "cold")
DETAIL = f"{FIT}/hardware/{{hardware}}/profiles/balanced"
JUNK_URLS = 5000
GENERATION_PAUSE = 'servebook_gc_pause_max_cpu_seconds_by_generation{{generation="{}"}}'


def start_server(database_url: str, port: int, **extra_env: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "SERVEBOOK_RUN_WORKER": "false",
        "SERVEBOOK_WRITE_RATE_PER_MINUTE": "0",  # the load is the point
        **extra_env,
    }
    command = [
        str(BIN / "uvicorn"),
        "app.main:create_app",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    server = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(300):
        try:
            httpx.get(f"http://127.0.0.1:{port}{STATIC}", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def rss_mb(server: subprocess.Popen) -> float:
    return psutil.Process(server.pid).memory_info().rss / 2**20


def metric(port: int, name: str) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else float("nan")


def write_holds(port: int) -> tuple[float, float, float]:
    """The server's SQLite write-lock holds so far: how many, their time, their CPU time."""
    return (
        metric(port, "servebook_sqlite_write_holds"),
        metric(port, "servebook_sqlite_write_held_seconds_total"),
        metric(port, "servebook_sqlite_write_held_cpu_seconds_total"),
    )


def wait_for_warm_up(port: int) -> float:
    """Seconds until the server's background warm-up froze its long-lived objects."""
    start = time.perf_counter()
    while metric(port, "servebook_gc_frozen_objects") == 0 and time.perf_counter() - start < 60:
        time.sleep(0.05)
    return time.perf_counter() - start


def start_submission_process(port: int, body: dict) -> None:
    """The first submission starts the app's submission process: one, then until it is ready
    (its own start-up is not what the mixed load measures)."""
    httpx.post(f"http://127.0.0.1:{port}/api/records", json=body, timeout=30).raise_for_status()
    start = time.perf_counter()
    while metric(port, "servebook_submission_process_ready") != 1:
        if time.perf_counter() - start > 60:
            raise SystemExit("the submission process did not start")
        time.sleep(0.05)


def line(label: str, reads: Reads) -> str:
    lat = reads.latencies_ms
    return (
        f"{label:<44} {reads.rate:8.0f} req/s  p50 {share(lat, 0.5):6.1f} ms  "
        f"p99 {share(lat, 0.99):6.1f} ms"
        + (f"  ({reads.failures} failed)" if reads.failures else "")
    )


def write_line(label: str, written: tuple) -> str:
    tally, seconds = written
    lat = tally.latencies_ms
    failed = sum(tally.failures.values())
    return (
        f"{label:<44} {len(tally.acknowledged) / seconds:8.0f} rec/s  p50 {share(lat, 0.5):6.1f} "
        f"ms  p99 {share(lat, 0.99):6.1f} ms" + (f"  ({failed} failed)" if failed else "")
    )


def ratio(part: float, whole: float) -> str:
    return f"{part / whole:.2f}x" if whole else "-"


def cores_used(server: subprocess.Popen, run: Callable[[], Any]) -> tuple[Any, str]:
    """`run()`, and the cores the server and the load generators kept busy meanwhile (CPU
    seconds per second): on two cores, what the clients take the server cannot have."""
    # The app process and its own (the submission process,
    # app.records.endpoints.submission_process).
    processes = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]

    def server_cpu_s() -> float:
        return sum(sum(process.cpu_times()[:2]) for process in processes)

    server_before = server_cpu_s()
    clients_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = run()  # its client processes are joined by now: their time is in CHILDREN
    wall = time.perf_counter() - start
    clients_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = server_cpu_s() - server_before
    clients_cpu = (clients_after.ru_utime + clients_after.ru_stime) - (
        clients_before.ru_utime + clients_before.ru_stime
    )
    return result, f"cores: server {server_cpu / wall:.2f}, clients {clients_cpu / wall:.2f}"


def mixed(port: int, server: subprocess.Popen, body: dict, seconds: float, how: str) -> None:
    print(f"-- mixed load: 16 readers and 16 writers (each alone, then together); {how}")

    holds: dict[str, str] = {}

    def run(path: str | None, readers: int, writing: dict | None, writers: int) -> tuple:
        before = write_holds(port)
        result = cores_used(
            server,
            lambda: side_by_side(
                port, path, readers, writing, writers, seconds, uuid.uuid4().hex[:8]
            ),
        )
        count, held, cpu = (
            after - then for after, then in zip(write_holds(port), before, strict=True)
        )
        if count:
            holds[path or "alone"] = (
                f"{held / count * 1000:.2f} ms ({cpu / count * 1000:.2f} of CPU)"
            )
        return result

    (alone_reads, _), reads_cores = run(FIT, 16, None, 0)
    (_, alone_writes), writes_cores = run(None, 0, body, 16)
    (with_reads, with_writes), mixed_cores = run(FIT, 16, body, 16)
    (static_reads, beside_static), static_cores = run(STATIC, 16, body, 16)
    assert alone_reads and with_reads and alone_writes and with_writes and beside_static
    print(line("fit page alone", alone_reads), reads_cores)
    print(
        line("fit page with 16 writers", with_reads),
        ratio(with_reads.rate, alone_reads.rate),
        mixed_cores,
    )
    print(write_line("submissions alone", alone_writes), writes_cores)
    rate = len(alone_writes[0].acknowledged) / alone_writes[1]
    with_rate = len(with_writes[0].acknowledged) / with_writes[1]
    static_rate = len(beside_static[0].acknowledged) / beside_static[1]
    print(write_line("submissions with 16 fit-page readers", with_writes), ratio(with_rate, rate))
    print(
        write_line("submissions with 16 static-file readers", beside_static),
        ratio(static_rate, rate),
        static_cores,
    )
    assert static_reads
    print(line("static file with 16 writers", static_reads))
    # Writers take the one SQLite write lock in turn: a hold that grows beside readers, its
    # CPU time not, is a writer waiting for the interpreter with the lock held.
    print(
        f"{'write lock held per record':<44} alone {holds['alone']}; beside the fit page "
        f"{holds[FIT]}; beside the static file {holds[STATIC]}"
    )


def pages(port: int, seconds: float) -> dict[str, float]:
    print("-- pages at 32 clients, against the static file in the same run")
    rates = {}
    for label, path in (
        ("static file", STATIC),
        ("/estimate", "/estimate"),
        ("/records", "/records"),
        ("fit page", FIT),
    ):
        reads = run_reads(port, [path], 32, seconds)
        rates[label] = reads.rate
        print(line(label, reads), ratio(reads.rate, rates["static file"]))
    return rates


def built(port: int) -> Reads:
    """/records built afresh each time (page sizes of 31 to 60 rows, each asked once after
    the records moved), 1 client."""
    return run_reads(port, [f"/records?limit={n}" for n in range(31, 61)], 1, 60)


def add_pending(database_url: str, count: int) -> None:
    settings = Settings(database_url=database_url, run_worker=False)
    with session_scope(settings) as session:
        where = target(
            session, "glm-5.3-flash", "glm-5.3-flash-fp8", "sglang", "8x-h200-141gb", "balanced"
        )
        insert_records(session, where, count, pending_only=True)


def records_at_scale(port: int, database_url: str, seconds: float) -> None:
    print("-- /records at 0 and at 25k records (1 client, then 32)")
    kept_none = run_reads(port, ["/records"], 1, seconds)
    add_pending(database_url, 60)
    built_few = built(port)
    add_pending(database_url, 25_000 - 60)
    built_many = built(port)
    kept_many = run_reads(port, ["/records"], 1, seconds)
    print(line("/records kept, no records", kept_none))
    print(
        line("/records kept, 25k records", kept_many),
        ratio(share(kept_many.latencies_ms, 0.5), share(kept_none.latencies_ms, 0.5)),
        "of the p50 with none",
    )
    print(line("/records built afresh, 60 records", built_few))
    print(
        line("/records built afresh, 25k records", built_many),
        ratio(share(built_many.latencies_ms, 0.5), share(built_few.latencies_ms, 0.5)),
        "of the p50 with 60",
    )
    print(line("/records, 25k records, 32 clients", run_reads(port, ["/records"], 32, seconds)))
    pending = run_reads(port, ["/records?state=pending"], 32, seconds)
    print(line("/records?state=pending, 25k records, 32", pending))


def junk(port: int, server: subprocess.Popen) -> None:
    print(f"-- cache-busting run: {JUNK_URLS} distinct junk query strings on four pages")
    before = rss_mb(server)
    urls = [
        f"{path}?utm_source=bench&junk={number}"
        for number in range(JUNK_URLS // 4)
        for path in (FIT, f"{FIT}/hardware/8x-h200-141gb/profiles/balanced", "/", "/estimate")
    ]
    reads = run_reads(port, urls, 16, 600)
    print(line("junk query strings", reads))
    print(f"{'server RSS before / after':<44} {before:8.0f} MB / {rss_mb(server):.0f} MB")
    for child in psutil.Process(server.pid).children():  # pages never reach it
        if "spawn_main" in " ".join(child.cmdline()):
            rss = child.memory_info().rss / 2**20
            print(f"{'  its submission process, RSS':<44} {rss:8.0f} MB")


COLD_HARDWARE = ("8x-h200-141gb", "8x-h100-80gb", "8x-b200-180gb")
RESTARTS = 6


def first_requests(database_url: str, warm_up: bool, order: tuple[str, ...]) -> list[float]:
    """A fresh server's detail pages in `order`, each built (none kept yet), in ms of
    round trip on one kept connection (so the first does not pay the client's set-up)."""
    port = free_port()
    server = start_server(database_url, port, SERVEBOOK_WARM_UP=str(warm_up).lower())
    try:
        if warm_up:
            wait_for_warm_up(port)
        took = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            client.get("/healthz").raise_for_status()  # the connection, not a page
            for hardware in order:
                start = time.perf_counter()
                client.get(DETAIL.format(hardware=hardware)).raise_for_status()
                took.append((time.perf_counter() - start) * 1000)
        return took
    finally:
        server.terminate()
        server.wait()


def cold(database_url: str) -> None:
    print(
        f"-- after a restart: the first detail page, then later ones (none kept yet); "
        f"medians of {RESTARTS} restarts, the pages taken in turn"
    )
    for warm_up in (False, True):
        firsts, laters = [], []
        for turn in range(RESTARTS):
            turn %= len(COLD_HARDWARE)
            order = COLD_HARDWARE[turn:] + COLD_HARDWARE[:turn]
            first, *later = first_requests(database_url, warm_up, order)
            firsts.append(first)
            laters.extend(later)
        first_ms, later_ms = share(firsts, 0.5), share(laters, 0.5)
        label = "with the warm-up" if warm_up else "without the warm-up"
        print(
            f"{label:<44} first {first_ms:6.1f} ms, later {later_ms:6.1f} ms "
            f"({first_ms / later_ms:.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--phase", action="append", choices=PHASES)
    args = parser.parse_args()
    phases = args.phase or PHASES
    with __import__("tempfile").TemporaryDirectory() as folder:
        database_url = f"sqlite:///{folder}/mixed.db"
        body = {**BODY, "hardware": prepare_database(database_url)}
        port = free_port()
        server = start_server(database_url, port)
        try:
            print(f"{'background warm-up after start':<44} {wait_for_warm_up(port):8.2f} s")
            for path in (FIT, "/records", "/estimate"):
                httpx.get(f"http://127.0.0.1:{port}{path}", timeout=30).raise_for_status()
            if "pages" in phases:
                pages(port, args.seconds)
            if "mixed" in phases:
                start_submission_process(port, body)
                mixed(port, server, body, args.seconds, "records in their own process")
            if "records" in phases:
                records_at_scale(port, database_url, args.seconds)
            if "junk" in phases:
                junk(port, server)
            gc_figures(port)
        finally:
            server.terminate()
            server.wait()
        if "mixed" in phases:  # as before the submission process, for comparison
            port = free_port()
            server = start_server(database_url, port, SERVEBOOK_SUBMISSION_PROCESS="false")
            try:
                wait_for_warm_up(port)
                mixed(port, server, body, args.seconds, "records in the app's own process")
            finally:
                server.terminate()
                server.wait()
        if "cold" in phases:
            cold(database_url)


def gc_figures(port: int) -> None:
    print(
        f"{'largest GC pause in the server':<44} "
        f"{metric(port, 'servebook_gc_pause_max_seconds') * 1000:8.1f} ms "
        f"({metric(port, 'servebook_gc_pause_max_cpu_seconds') * 1000:.1f} ms of CPU; "
        f"{metric(port, 'servebook_gc_pauses'):.0f} collections, "
        f"{metric(port, 'servebook_gc_pause_seconds_total'):.2f} s in all)"
    )
    by_generation = " / ".join(
        f"{metric(port, GENERATION_PAUSE.format(generation)) * 1000:.1f}" for generation in range(3)
    )
    print(f"{'  its most CPU, generation 0 / 1 / 2':<44} {by_generation} ms")


if __name__ == "__main__":
    main()
