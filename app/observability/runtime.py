"""The process's garbage collector and its one SQLite write lock, measured and tuned.

Pauses. A full collection walks every object the process holds: the catalog, the resolved
recipes, the templates and the cached pages, hundreds of thousands of objects that live as
long as the process, so it stalls every request in flight for 100 ms and more. After start-up
(and its warm-up) those objects are moved out of the collector's sight (`gc.freeze`), and
the thresholds are raised so that the young generations, which requests fill and empty,
are collected less often and the oldest one rarely; each pause is timed (`gc.callbacks`)
and the largest is a metric, so a benchmark can print it.

The write lock. On SQLite every writer holds the database's one write lock for its few
statements; `HeldStats` times each hold, so the time a writer spends waiting, with the
lock held, for the interpreter (see `app.main`) shows as a metric too.
"""

import gc
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.db import CONNECTIONS_OPENED, WRITE_LOCK_HOLDS


class PauseTimer:
    """The longest collection seen (on the clock, and in the collecting thread's CPU time,
    which a busy machine's scheduler does not stretch), and the count and sum of them all."""

    def __init__(self) -> None:
        self.started = self.started_cpu = 0.0
        self.largest_s = self.largest_cpu_s = 0.0
        self.count = 0
        self.total_s = 0.0
        # The most CPU time of a collection of each generation: which one stalls most says
        # which threshold to move.
        self.largest_cpu_by_generation = [0.0, 0.0, 0.0]

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        # Called by the collector in the collecting thread, with the GIL held throughout.
        if phase == "start":
            self.started, self.started_cpu = time.perf_counter(), time.thread_time()
            return
        took = time.perf_counter() - self.started
        self.count += 1
        self.total_s += took
        self.largest_s = max(self.largest_s, took)
        cpu = time.thread_time() - self.started_cpu
        self.largest_cpu_s = max(self.largest_cpu_s, cpu)
        generation = info["generation"]
        self.largest_cpu_by_generation[generation] = max(
            self.largest_cpu_by_generation[generation], cpu
        )


PAUSES = PauseTimer()


def time_pauses() -> None:
    if PAUSES not in gc.callbacks:
        gc.callbacks.append(PAUSES)


def settle_long_lived_objects(thresholds: tuple[int, int, int]) -> None:
    """After start-up and its warm-up: everything alive is frozen (never walked again) and
    the tuned thresholds apply (Settings.gc_thresholds, measured with
    tests/perf/bench_mixed_load.py). No full collection first: it would be the very pause
    this avoids, and what garbage it would free is a few kilobytes, once."""
    gc.freeze()
    gc.set_threshold(*thresholds)


class RuntimeCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "servebook_gc_pause_max_seconds",
            "The longest garbage-collector pause of this process since it started.",
            value=PAUSES.largest_s,
        )
        yield GaugeMetricFamily(
            "servebook_gc_pause_max_cpu_seconds",
            "The most CPU time one garbage collection of this process took.",
            value=PAUSES.largest_cpu_s,
        )
        by_generation = GaugeMetricFamily(
            "servebook_gc_pause_max_cpu_seconds_by_generation",
            "The most CPU time one collection of each generation took (2 is a full one).",
            labels=["generation"],
        )
        for generation, cpu in enumerate(PAUSES.largest_cpu_by_generation):
            by_generation.add_metric([str(generation)], cpu)
        yield by_generation
        yield GaugeMetricFamily(
            "servebook_gc_pauses",
            "Garbage collections of this process since it started.",
            value=PAUSES.count,
        )
        yield GaugeMetricFamily(
            "servebook_gc_pause_seconds_total",
            "Time this process spent in garbage collection since it started.",
            value=PAUSES.total_s,
        )
        yield GaugeMetricFamily(
            "servebook_gc_frozen_objects",
            "Objects moved out of the collector's sight after start-up.",
            value=gc.get_freeze_count(),
        )
        yield GaugeMetricFamily(
            "servebook_database_connections_opened",
            "Database connections this process opened since it started.",
            value=CONNECTIONS_OPENED.count,
        )
        holds = WRITE_LOCK_HOLDS.read()
        yield GaugeMetricFamily(
            "servebook_sqlite_write_holds",
            "SQLite write transactions of this process (each holds the one write lock).",
            value=holds.count,
        )
        yield GaugeMetricFamily(
            "servebook_sqlite_write_held_seconds_total",
            "Time this process held the SQLite write lock, summed.",
            value=holds.total_s,
        )
        yield GaugeMetricFamily(
            "servebook_sqlite_write_held_cpu_seconds_total",
            "CPU time this process's writers spent holding the SQLite write lock, summed "
            "(the rest of the time held they waited for the interpreter).",
            value=holds.cpu_s,
        )
        yield GaugeMetricFamily(
            "servebook_sqlite_write_held_max_seconds",
            "The longest this process held the SQLite write lock.",
            value=holds.largest_s,
        )
