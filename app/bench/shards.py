"""Concurrent streams of one ramp level, in this event loop or spread over worker processes.

One event loop stamps every chunk of every stream; at a few hundred streams it cannot keep
up and its own delay shows up as TTFT. Above ``STREAMS_PER_PROCESS`` streams a level is
split over ``shard_count`` worker processes ("spawn": no inherited event loop or sockets),
each with its own event loop and HTTP clients. The workers start together once all of them
are ready, and send their samples back to the parent, which summarises the level as usual.

Offsets stay comparable: every worker stamps against the parent's ``origin_ns``, and
``perf_counter_ns`` is CLOCK_MONOTONIC, one clock for every process on the machine. The plan,
API key included, crosses the process boundary in memory (the spawn pipe), never in a file.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import multiprocessing
import os
import queue
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.bench.result import RequestSample
from app.bench.stream.request import stream_chat
from app.bench.transport.endpoint import ChatEndpoint, StreamClients, make_http_client
from app.bench.transport.event_loops import fastest_event_loop_factory

STREAMS_PER_PROCESS = 32
PROCESSES_PER_CPU = 2
READY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Turn:
    """One request of a stream: the messages and the prompt size they were built for."""

    messages: list[dict[str, str]]
    prompt_tokens_target: int | None = None


async def run_streams(
    endpoint: ChatEndpoint,
    clients: StreamClients,
    streams: Sequence[Sequence[Turn]],
    max_tokens: int,
    on_sample: Callable[[RequestSample], Any] | None = None,
    seconds: float | None = None,
) -> list[list[RequestSample]]:
    """Every stream at once, each sending its next request when the previous one ends.
    With ``seconds``, a stream sends no request once that long has passed since the streams
    started (it has sent one at least; the one in flight finishes).

    Returns each stream's samples in turn order, streams in the order given.
    """
    samples: list[list[RequestSample]] = [[] for _ in streams]
    deadline = None if seconds is None else asyncio.get_running_loop().time() + seconds

    async def one_stream(index: int, turns: Sequence[Turn]) -> None:
        stream_endpoint = endpoint.using(clients.get(index))
        loop = asyncio.get_running_loop()
        for turn in turns:
            if deadline is not None and samples[index] and loop.time() >= deadline:
                return
            sample = await stream_chat(
                stream_endpoint,
                turn.messages,
                max_tokens,
                prompt_tokens_target=turn.prompt_tokens_target,
            )
            samples[index].append(sample)
            if on_sample is not None:
                outcome = on_sample(sample)
                if asyncio.iscoroutine(outcome):
                    await outcome

    await asyncio.gather(*(one_stream(index, turns) for index, turns in enumerate(streams)))
    return samples


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """No garbage-collector pauses while a level's streams run.

    A collection stops the event loop, and a first token that arrives meanwhile is read
    late: one client process running 256 streams paused 2-6 ms for each of the collector's
    middle-generation passes and 20-160 ms for full ones, and a request read more than one
    inter-token gap late is stamped with a later chunk's arrival. So the collector runs
    once before the level, what survives is frozen out of its sight, and it is off until
    the level ends. A request leaves no cyclic garbage behind (``stream_chat`` breaks
    httpx's response-stream cycle), so memory does not grow meanwhile.
    """
    gc.collect()
    gc.freeze()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.unfreeze()


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def shard_count(streams: int, per_process: int | None = None) -> int:
    """How many processes a level of ``streams`` streams needs; 1 keeps it in this loop.

    Up to ``PROCESSES_PER_CPU`` per CPU: a worker spends much of its time waiting for its
    sockets, and a core that is parsing one worker's chunks can hand over to another whose
    bytes just arrived. On 2 cores shared with the server, 256 streams over 4 processes
    had a p90 TTFT error of 0.1-0.2 ms in 5 runs out of 5, over 2 processes 8-17 ms: a
    worker that does not read a socket within one inter-token gap gets the next chunk
    merged into the first one, and the kernel's arrival stamp with it.
    """
    per_process = per_process or STREAMS_PER_PROCESS
    if streams <= per_process:
        return 1
    most = PROCESSES_PER_CPU * usable_cpus()
    return max(1, min(most, math.ceil(streams / per_process)))


@dataclass(frozen=True)
class _ShardJob:
    endpoint: ChatEndpoint  # without its HTTP client; each worker makes its own
    api_key: str | None
    connect_timeout_s: float
    max_tokens: int
    streams: list[list[Turn]]
    seconds: float | None = None


async def run_sharded(
    endpoint: ChatEndpoint,
    streams: Sequence[Sequence[Turn]],
    max_tokens: int,
    *,
    shards: int,
    api_key: str | None,
    connect_timeout_s: float,
    seconds: float | None = None,
) -> list[list[RequestSample]]:
    """``streams`` dealt round-robin over ``shards`` worker processes; as ``run_streams``.

    The event loop stays free while the workers run (the wait is in a thread). Raises
    RuntimeError if a worker fails or does not get ready in time: that is the client's
    failure, not the server's.
    """
    bare = replace(endpoint, http=None)  # type: ignore[arg-type]
    jobs = [
        _ShardJob(
            bare, api_key, connect_timeout_s, max_tokens, [list(turns) for turns in share], seconds
        )
        for share in (streams[k::shards] for k in range(shards))
    ]
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(shards + 1)
    results = context.Queue()
    workers = [
        context.Process(target=_worker, args=(k, job, barrier, results), daemon=True)
        for k, job in enumerate(jobs)
    ]
    for worker in workers:
        worker.start()
    try:
        shares = await asyncio.to_thread(_collect, workers, barrier, results)
        samples: list[list[RequestSample]] = [[] for _ in streams]
        for k, share in enumerate(shares):
            samples[k::shards] = share
        return samples
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join(timeout=5)
        results.close()


def _collect(
    workers: list[multiprocessing.process.BaseProcess],
    barrier: Any,
    results: Any,
) -> list[list[list[RequestSample]]]:
    """Each worker's streams, by worker."""
    try:
        barrier.wait(timeout=READY_TIMEOUT_S)
    except Exception as error:  # threading.BrokenBarrierError, by timeout or a dead worker
        raise RuntimeError("benchmark worker processes did not start") from error
    shares: list[list[list[RequestSample]]] = [[] for _ in workers]
    pending = len(workers)
    while pending:
        try:
            status, k, payload = results.get(timeout=1.0)
        except queue.Empty:
            if any(worker.exitcode not in (None, 0) for worker in workers):
                raise RuntimeError("a benchmark worker process died") from None
            continue
        if status != "ok":
            raise RuntimeError(f"a benchmark worker process failed:\n{payload}")
        shares[k] = [[RequestSample.model_validate(item) for item in stream] for stream in payload]
        pending -= 1
    return shares


def _worker(k: int, job: _ShardJob, barrier: Any, results: Any) -> None:
    clients = StreamClients(
        lambda: make_http_client(
            api_key=job.api_key,
            connect_timeout_s=job.connect_timeout_s,
            request_timeout_s=job.endpoint.request_timeout_s,
        )
    )

    async def main() -> list[list[RequestSample]]:
        try:
            return await run_streams(
                job.endpoint, clients, job.streams, job.max_tokens, seconds=job.seconds
            )
        finally:
            await clients.aclose()

    try:
        with asyncio.Runner(loop_factory=fastest_event_loop_factory()) as runner, quiet_gc():
            runner.get_loop()  # the loop exists before the start signal
            barrier.wait(timeout=READY_TIMEOUT_S)
            samples = runner.run(main())
        payload = [[sample.model_dump(mode="json") for sample in stream] for stream in samples]
        results.put(("ok", k, payload))
    except BaseException:
        barrier.abort()  # a parent still waiting for the start learns at once
        results.put(("error", k, traceback.format_exc()))
