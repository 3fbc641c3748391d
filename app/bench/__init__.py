"""Benchmark client for OpenAI-compatible LLM servers.

``run_benchmark(plan)`` runs smoke, warm-up, per-length repeats, a concurrency ramp, a
needle test and, when the plan holds one, a task (prompts with checks) against
``plan.base_url`` and returns a JSON-serialisable ``BenchResult``, or raises
``TargetUnreachable`` when nothing answers there. Each stage is a module of
``app.bench.stages``.
"""

from app.bench.memory_reading import MemoryReading
from app.bench.plan import BenchPlan
from app.bench.probes import (
    CompositeProbe,
    MemoryProbe,
    NotMeasuredProbe,
    NvmlProbe,
    PrometheusProbe,
)
from app.bench.procedure import (
    ProgressCallback,
    TargetUnreachable,
    check_plan_hosts,
    run_benchmark,
    run_benchmark_sync,
)
from app.bench.result import BenchResult, RequestSample
from app.bench.transport.hosts import HostNotAllowedError, check_url_allowed

__all__ = [
    "BenchPlan",
    "BenchResult",
    "CompositeProbe",
    "HostNotAllowedError",
    "MemoryProbe",
    "MemoryReading",
    "NotMeasuredProbe",
    "NvmlProbe",
    "ProgressCallback",
    "PrometheusProbe",
    "RequestSample",
    "TargetUnreachable",
    "check_plan_hosts",
    "check_url_allowed",
    "run_benchmark",
    "run_benchmark_sync",
]
