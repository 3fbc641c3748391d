"""The benchmark run: smoke, warm-up, per-length repeats, concurrency ramp, needle, task.

Each stage lives in its own module under ``app.bench.stages``, takes the shared run context
and returns its part of the result; this module chains them and owns the clients.

A target that nothing answers (no connection opened for the smoke request) gives no result
at all: ``TargetUnreachable`` is raised, since an absent server says nothing about a model.
A server that answers but cannot serve (an HTTP error, an error in the stream, no tokens)
gives a ``load_failure`` result, which is evidence worth keeping.
"""

from __future__ import annotations

import asyncio

import httpx

from app.bench.plan import BenchPlan
from app.bench.probes import MemoryProbe, default_probe
from app.bench.result import BenchResult
from app.bench.stages.context import ProgressCallback, RunContext, truncation_message
from app.bench.stages.lengths import run_lengths
from app.bench.stages.long_length import add_long_length
from app.bench.stages.needle import needle_lengths, run_needles
from app.bench.stages.needle_grid import run_needle_grid
from app.bench.stages.quality_context import decide_quality_context
from app.bench.stages.ramp import level_summary, run_ramp
from app.bench.stages.smoke import SMOKE_MAX_TOKENS, run_smoke
from app.bench.stages.task import run_task
from app.bench.stages.tool_calls import run_tool_calls
from app.bench.stages.verdict import assemble, classify, quality_failure, token_count_source
from app.bench.stages.warmup import WARMUP_TARGET_TOKENS, run_warmup
from app.bench.transport.endpoint import StreamClients, make_http_client
from app.bench.transport.event_loops import fastest_event_loop_factory
from app.bench.transport.hosts import check_url_allowed, is_loopback

__all__ = [
    "SMOKE_MAX_TOKENS",
    "WARMUP_TARGET_TOKENS",
    "ProgressCallback",
    "TargetUnreachable",
    "check_plan_hosts",
    "classify",
    "fastest_event_loop_factory",
    "level_summary",
    "run_benchmark",
    "run_benchmark_sync",
    "token_count_source",
    "truncation_message",
]


class TargetUnreachable(Exception):
    """Nothing answered at ``url``: the connection was refused, the name did not resolve or
    the connect timed out. Nothing was measured, so there is no result to keep."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"could not connect to {url}: {reason}")
        self.url = url
        self.reason = reason


def check_plan_hosts(plan: BenchPlan) -> None:
    """Raise HostNotAllowedError before any request if a URL leaves the allowed hosts."""
    check_url_allowed(plan.base_url, plan.allowed_hosts)
    if plan.metrics_url:
        check_url_allowed(plan.metrics_url, plan.allowed_hosts)


async def run_benchmark(
    plan: BenchPlan,
    *,
    probe: MemoryProbe | None = None,
    on_progress: ProgressCallback | None = None,
    http: httpx.AsyncClient | None = None,
) -> BenchResult:
    """Run the whole procedure against ``plan.base_url``.

    Raises ``HostNotAllowedError`` before any request for a host outside the allowed ones,
    and ``TargetUnreachable`` when no connection opens for the smoke request.

    ``http``, when given, carries every request (the caller closes it); by default each
    concurrent stream of the ramp gets a client of its own (see ``StreamClients``).
    """
    check_plan_hosts(plan)
    api_key = plan.api_key.get_secret_value() if plan.api_key else None

    def server_client() -> httpx.AsyncClient:
        return make_http_client(
            api_key=api_key,
            connect_timeout_s=plan.connect_timeout_s,
            request_timeout_s=plan.request_timeout_s,
        )

    # The probe has its own client: a scrape never waits for, or delays, a measured request,
    # and the API key is not sent to the metrics endpoint.
    probe_http = make_http_client(
        api_key=None, connect_timeout_s=plan.connect_timeout_s, request_timeout_s=10.0
    )
    owns_client = http is None
    http = http or server_client()
    stream_clients = StreamClients(server_client) if owns_client else StreamClients.sharing(http)
    try:
        if probe is None:
            probe = default_probe(
                metrics_url=plan.metrics_url,
                http=probe_http,
                local_server=is_loopback(httpx.URL(plan.base_url).host),
                interval_s=plan.probe_interval_s,
            )
        run = RunContext(plan, http, stream_clients, probe, on_progress, shard=owns_client)
        return await execute(run)
    finally:
        await stream_clients.aclose()
        await probe_http.aclose()
        if owns_client:
            await http.aclose()


async def execute(run: RunContext) -> BenchResult:
    """The stages in order; a failed smoke request ends the run as a load failure."""
    smoke = await run_smoke(run)
    failure = smoke.sample.error
    if failure is not None and failure.kind == "connect":
        raise TargetUnreachable(run.endpoint.url, failure.message)
    if not smoke.ok:  # the server answered, but could not serve the model
        _skip_all_after_smoke(run)
        error = failure.message if failure else "smoke request failed"
        return assemble(run, "load_failure", error, smoke=smoke)
    warmup, lengths, ramp, needles = None, [], None, []
    if run.plan.measure_speed:
        await add_long_length(run)
        warmup = await run_warmup(run)
        lengths = await run_lengths(run)
        ramp = await run_ramp(run, lengths)
        needles = await run_needles(run, lengths)
    await decide_quality_context(run)
    grid = await run_needle_grid(run)
    tool_calls = await run_tool_calls(run)
    task = await run_task(run)
    outcome, error = classify(smoke, lengths, needles, task, run.plan.task_min_pass_rate, ramp)
    outcome, error = quality_failure(outcome, error, grid, tool_calls)
    return assemble(
        run,
        outcome,
        error,
        smoke=smoke,
        warmup=warmup,
        lengths=lengths,
        ramp=ramp,
        needles=needles,
        task=task,
        grid=grid,
        tool_calls=tool_calls,
    )


def _skip_all_after_smoke(run: RunContext) -> None:
    plan = run.plan
    names = ["warmup", *(f"length:{length}" for length in run.lengths)]
    names += [f"concurrency:{level}" for level in plan.concurrency_levels]
    names += [f"needle:{length}" for length in needle_lengths(run)]
    names += ["needle_grid"] if plan.needle_grid is True else []
    names += ["tool_calls"] if plan.tool_calls else []
    names += [f"task:{plan.task.name}"] if plan.task else []
    run.skip(names, "skipped: the smoke request failed")


def run_benchmark_sync(
    plan: BenchPlan,
    *,
    probe: MemoryProbe | None = None,
    on_progress: ProgressCallback | None = None,
) -> BenchResult:
    """For callers without an event loop (a CLI command, a worker thread).

    Runs on uvloop when it is installed: its cheaper per-event cost is the client's own
    share of TTFT when many streams deliver their first tokens at once.
    """
    with asyncio.Runner(loop_factory=fastest_event_loop_factory()) as runner:
        return runner.run(run_benchmark(plan, probe=probe, on_progress=on_progress))
