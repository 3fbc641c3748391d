"""Prometheus metrics through prometheus_client.

Request counts and latencies are kept per process. Several app processes behind one
proxy each count their own requests, so a scrape through the proxy sees one process at a
time: either scrape each process, or set PROMETHEUS_MULTIPROC_DIR (an empty folder shared
by the processes, emptied before they start) and every process then answers with the sum
(prometheus_client's multiprocess mode). Jobs and records by state are read from the
database at scrape time, one grouped query each, so they are the same whichever process
answers.
"""

import logging
import os
import time
from collections.abc import Iterator

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.queries import (
    jobs_by_state,
    records_by_review_state,
    sentinel_runs_by_verdict,
)
from app.observability.runtime import RuntimeCollector
from app.records.endpoints.submission_process import SubmissionProcessCollector
from app.security.exposure import request_is_exposed

log = logging.getLogger("servebook.metrics")

JOB_STATES = ("queued", "running", "succeeded", "failed")
RECORD_STATES = ("pending", "accepted", "rejected", "retracted")
SENTINEL_VERDICTS = ("no_regression", "improved", "regressed")
UNMATCHED_ROUTE = "<unmatched>"  # any path no route answers: one series, not one per URL


class RequestMetrics:
    """The request counter and latency histogram of one app."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "servebook_http_requests",
            "HTTP requests answered, by method, route template and status code.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "servebook_http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            registry=self.registry,
        )

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)

    def request_source(self) -> Collector:
        """This process's registry, or every process's files in multiprocess mode."""
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            return self.registry
        shared = CollectorRegistry(auto_describe=False)
        multiprocess.MultiProcessCollector(shared)
        return shared


class RequestMetricsMiddleware:
    """Counts every HTTP response under the template of the route that answered it."""

    def __init__(self, app: ASGIApp, metrics: RequestMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # what the server sends if the app raises before answering

        async def remember_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, remember_status)
        finally:
            route = getattr(scope.get("route"), "path", None) or UNMATCHED_ROUTE
            self.metrics.observe(scope["method"], route, status, time.perf_counter() - start)


class DatabaseCollector(Collector):
    """Benchmark jobs and records by state, counted when Prometheus scrapes."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "servebook_database_up", "1 when the last scrape could read the database."
        )
        try:
            with self.sessions() as session:
                jobs = jobs_by_state(session)
                records = records_by_review_state(session)
                sentinels = sentinel_runs_by_verdict(session)
        except SQLAlchemyError as error:
            log.warning("metrics: database unreadable: %s", type(error).__name__)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield _by_state("servebook_bench_jobs", "Benchmark jobs by state.", JOB_STATES, jobs)
        yield _by_state(
            "servebook_records", "Records by review state.", RECORD_STATES, records, "status"
        )
        yield _by_state(
            "servebook_sentinel_runs",
            "Sentinel runs (pending or accepted) by verdict against their known-good record; "
            "regressed: a runtime version made a known-good configuration worse.",
            SENTINEL_VERDICTS,
            sentinels,
            "verdict",
        )


def _by_state(
    name: str,
    documentation: str,
    known: tuple[str, ...],
    counts: dict[str, int],
    label: str = "state",
) -> GaugeMetricFamily:
    gauge = GaugeMetricFamily(name, documentation, labels=[label])
    for state in dict.fromkeys([*known, *sorted(counts)]):  # known states appear at zero
        gauge.add_metric([state], counts.get(state, 0))
    return gauge


metrics_router = APIRouter(tags=["operations"])


@metrics_router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """The Prometheus text format; beyond loopback only when the settings enable it."""
    if request_is_exposed(request) and not request.state.settings.metrics_beyond_loopback:
        return JSONResponse(
            {
                "detail": "Metrics are off while the app is served beyond loopback; "
                "set SERVEBOOK_METRICS_BEYOND_LOOPBACK=true to serve them."
            },
            status_code=404,
        )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(request.app.state.request_metrics.request_source())
    registry.register(DatabaseCollector(request.state.sessionmaker))
    registry.register(RuntimeCollector())
    registry.register(SubmissionProcessCollector(request.state.submission_process))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
