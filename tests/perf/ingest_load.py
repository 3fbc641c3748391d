"""The ingest benchmark's load generator: closed-loop clients on raw HTTP/1.1 keep-alive
connections, lean enough to share the machine's cores with the server it measures.

Each request is bytes prepared up front (the JSON body is serialised once, with a slot for
the record's marker), written to an open connection, and its answer read by Content-Length;
no HTTP library runs per request. Every tenth record is sent a second time with the same
Idempotency-Key and must come back as the first record.
"""

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

try:  # uvicorn[standard] installs it; the client runs on the plain loop without
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None

RETRY_EVERY = 10
MARKER_SLOT = "\x01marker\x01"


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    acknowledged: dict[str, int] = field(default_factory=dict)  # marker -> record id
    retries: int = 0
    retry_mismatches: int = 0
    failures: Counter = field(default_factory=Counter)


class RequestBytes:
    """POST /api/records with a given marker (the record's notes) and Idempotency-Key, as
    bytes: the head and body are joined from pieces serialised once."""

    def __init__(self, host: str, body: dict[str, Any]) -> None:
        text = json.dumps({**body, "notes": MARKER_SLOT}, separators=(",", ":"))
        before, after = text.split(json.dumps(MARKER_SLOT))
        self.before, self.after = f'{before}"'.encode(), f'"{after}'.encode()
        self.head = (
            f"POST /api/records HTTP/1.1\r\nHost: {host}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\n"
        ).encode()

    def build(self, marker: str, key: str) -> bytes:
        body = b"".join((self.before, marker.encode(), self.after))
        return b"".join(
            (
                self.head,
                b"Idempotency-Key: ",
                key.encode(),
                b"\r\nContent-Length: ",
                str(len(body)).encode(),
                b"\r\n\r\n",
                body,
            )
        )


class ConnectionLost(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection, one request at a time."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, payload: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        try:
            self.writer.write(payload)
            head = await self.reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = content_length(head)
            if length is None:
                raise ConnectionLost("an answer without Content-Length")
            body = await self.reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            self.close()
            raise ConnectionLost(type(error).__name__) from error
        if b"connection: close" in head.lower():
            self.close()
        return status, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return None


async def post(connection: Connection, payload: bytes, tally: Tally) -> int | None:
    start = time.perf_counter()
    try:
        status, body = await connection.request(payload)
    except ConnectionLost as error:
        tally.failures[str(error)] += 1
        return None
    tally.latencies_ms.append((time.perf_counter() - start) * 1000)
    if status not in (200, 201):
        tally.failures[str(status)] += 1
        return None
    return int(json.loads(body)["id"])


async def client_loop(
    connection: Connection,
    requests: RequestBytes,
    run: str,
    number: int,
    deadline: float,
    tally: Tally,
) -> None:
    sent = 0
    while time.perf_counter() < deadline:
        marker = f"bench-ingest {run} {number}-{sent}"
        payload = requests.build(marker, marker.replace(" ", "/"))
        record_id = await post(connection, payload, tally)
        if record_id is not None:
            tally.acknowledged[marker] = record_id
            if sent % RETRY_EVERY == 0:  # a client retrying after a lost answer
                tally.retries += 1
                again = await post(connection, payload, tally)
                tally.retry_mismatches += again != record_id
        sent += 1
    connection.close()


async def load(port: int, body: dict[str, Any], run: str, clients: int, seconds: float) -> Tally:
    tally = Tally()
    requests = RequestBytes(f"127.0.0.1:{port}", body)
    connections = [Connection("127.0.0.1", port) for _ in range(clients)]
    deadline = time.perf_counter() + seconds
    await asyncio.gather(
        *(
            client_loop(connection, requests, run, number, deadline, tally)
            for number, connection in enumerate(connections)
        )
    )
    return tally


def run_load(port: int, body: dict[str, Any], run: str, clients: int, seconds: float) -> Tally:
    coroutine = load(port, body, run, clients, seconds)
    if uvloop is None:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)
