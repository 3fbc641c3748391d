"""Large hostile bodies against a served app: how long each refusal takes, how large it
is, the server's peak memory beyond its resting size, and the slowest /healthz meanwhile.

One uvicorn app process on 127.0.0.1 with a seeded SQLite file (no worker, no submission
process), as `make run` serves it. Bodies (each under the 5 MB upload limit):

- one object of 409,090 unknown keys (4.9 MB), to /api/estimate, /api/plan, /api/records;
- 99,999 unknown keys (1.2 MB), under the key caps, so that each is a validation error;
- 5 MB of floats (4.99 MB: a list under an unknown key of the model) to /api/estimate;
- four clients sending the 409,090-key body, or the floats, at once.

Target: each answered in under 1 s with under 100 MB of server memory beyond its resting
size, and /healthz answered in under 100 ms throughout. Asserts nothing; prints figures.

    .venv/bin/python tests/perf/bench_refusals.py
"""

import sys
import threading
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.perf.bench_ingest import free_port, prepare_database  # noqa: E402
from tests.perf.bench_mixed_load import start_server  # noqa: E402

KEYS = 409_090


def many_keys() -> bytes:
    """409,090 distinct unknown keys with small values: 4.9 MB."""
    return ("{" + ",".join(f'"k{i:06d}":{i % 10}' for i in range(KEYS)) + "}").encode()


def keys_under_the_caps() -> bytes:
    """99,999 unknown keys: under every key cap, so validation finds each one."""
    return ("{" + ",".join(f'"k{i:06d}":{i % 10}' for i in range(99_999)) + "}").encode()


def many_floats() -> bytes:
    """5 MB of floats in a list beside a model described by its numbers."""
    head = b'{"model": {"params_b": 8, "quant": "bf16", "name": "m"}, "gpu_count": 1, "x": ['
    count = (4_990_000 - len(head) - 2) // 11
    return head + b",".join([b"0.12345678"] * count) + b"]}"


class Watch:
    """The server's peak RSS (sampled every 5 ms) and the slowest /healthz (every 20 ms)."""

    def __init__(self, port: int, pid: int) -> None:
        self.port, self.process = port, psutil.Process(pid)
        self.stop = threading.Event()
        self.peak_rss = 0
        self.slowest_health = 0.0
        self.threads = [threading.Thread(target=self.rss), threading.Thread(target=self.health)]

    def __enter__(self) -> "Watch":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def rss(self) -> None:
        while not self.stop.is_set():
            self.peak_rss = max(self.peak_rss, self.process.memory_info().rss)
            time.sleep(0.005)

    def health(self) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=30) as client:
            while not self.stop.is_set():
                started = time.perf_counter()
                client.get("/healthz")
                self.slowest_health = max(self.slowest_health, time.perf_counter() - started)
                time.sleep(0.02)


def send(port: int, server: psutil.Process, path: str, body: bytes, at_once: int = 1) -> str:
    """`at_once` clients each send the body together; the slowest answer is reported."""
    resting = server.memory_info().rss
    answers: list[httpx.Response] = []
    times: list[float] = []

    def one() -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            started = time.perf_counter()
            headers = {"Content-Type": "application/json"}
            answers.append(client.post(path, content=body, headers=headers))
            times.append(time.perf_counter() - started)

    with Watch(port, server.pid) as watch:
        senders = [threading.Thread(target=one) for _ in range(at_once)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
        time.sleep(0.1)  # one more /healthz after the answers
    extra = max(0, watch.peak_rss - resting) / 2**20
    statuses = ",".join(sorted({str(a.status_code) for a in answers}))
    size = max(len(a.content) for a in answers)
    label = path if at_once == 1 else f"{path} x{at_once}"
    return (
        f"{label:<19} {len(body) / 1e6:5.2f} MB -> {statuses} "
        f"{size / 1024:8.1f} KB in {max(times) * 1000:6.0f} ms; "
        f"peak +{extra:5.0f} MB; slowest /healthz {watch.slowest_health * 1000:5.0f} ms"
    )


def main() -> None:
    keys, floats = many_keys(), many_floats()
    with __import__("tempfile").TemporaryDirectory() as folder:
        database_url = f"sqlite:///{folder}/refusals.db"
        prepare_database(database_url)
        port = free_port()
        server = start_server(
            database_url, port, SERVEBOOK_SUBMISSION_PROCESS="false", SERVEBOOK_WARM_UP="false"
        )
        try:
            process = psutil.Process(server.pid)
            httpx.get(f"http://127.0.0.1:{port}/estimate", timeout=60)  # imports and caches
            print(f"server resting RSS {process.memory_info().rss / 2**20:.0f} MB")
            print(f"-- {KEYS:,} unknown keys")
            for path in ("/api/estimate", "/api/plan", "/api/records"):
                print(send(port, process, path, keys), flush=True)
            print("-- 99,999 unknown keys (validated: each one an error)")
            for path in ("/api/estimate", "/api/records"):
                print(send(port, process, path, keys_under_the_caps()), flush=True)
            print("-- 5 MB of floats")
            print(send(port, process, "/api/estimate", floats), flush=True)
            print("-- four at once (the slowest answer)")
            for path in ("/api/estimate", "/api/plan", "/api/records"):
                print(send(port, process, path, keys, at_once=4), flush=True)
            print(send(port, process, "/api/estimate", floats, at_once=4), flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
