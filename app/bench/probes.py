"""Peak memory probes sampled in the background while a benchmark step runs.

- :class:`PrometheusProbe` scrapes a ``/metrics`` endpoint: the engine's KV-cache gauges
  (vLLM, SGLang, llama.cpp server) and, from a DCGM exporter, per-GPU framebuffer use.
- :class:`NvmlProbe` reads per-GPU used memory through NVML (``pynvml`` from nvidia-ml-py),
  only when it imports and initialises.
- :class:`NotMeasuredProbe` reports no number and says why; nothing is ever made up.

Engines preallocate GPU memory (vLLM ``gpu_memory_utilization``, SGLang
``mem_fraction_static``), so device "used" memory is flat under load; the KV-cache usage
peak is the figure that moves with context and concurrency, and both are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Protocol

import httpx

from app.bench.memory_reading import GpuMemoryPeak, MemoryReading, SeriesPeak
from app.bench.metrics_text import (
    Snapshot,
    snapshot_from_metrics,
)

MAX_KEPT_ERRORS = 5


@dataclass
class PeakTracker:
    """Keeps the maxima over the snapshots of one step."""

    source: str
    samples: int = 0
    gpu_peak: dict[str, int] = field(default_factory=dict)
    gpu_total: dict[str, int] = field(default_factory=dict)
    gpu_names: dict[str, str] = field(default_factory=dict)
    kv_peak: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(default_factory=dict)
    kv_tokens_peak: float | None = None
    names_seen: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)

    def add(self, snapshot: Snapshot) -> None:
        self.samples += 1
        for gpu, used in snapshot.gpu_used.items():
            self.gpu_peak[gpu] = max(used, self.gpu_peak.get(gpu, used))
        self.gpu_total.update(snapshot.gpu_total)
        self.gpu_names.update(snapshot.gpu_names)
        for series, value in snapshot.kv_usage.items():
            self.kv_peak[series] = max(value, self.kv_peak.get(series, value))
        if snapshot.kv_tokens is not None:
            self.kv_tokens_peak = max(snapshot.kv_tokens, self.kv_tokens_peak or snapshot.kv_tokens)
        self.names_seen |= snapshot.names_seen

    def add_error(self, message: str) -> None:
        if len(self.errors) < MAX_KEPT_ERRORS:
            self.errors.append(message)

    def reading(self) -> MemoryReading:
        gpus = [
            GpuMemoryPeak(
                gpu=gpu,
                name=self.gpu_names.get(gpu),
                peak_used_bytes=used,
                total_bytes=self.gpu_total.get(gpu),
                source=self.source,
            )
            for gpu, used in sorted(self.gpu_peak.items())
        ]
        series = [
            SeriesPeak(metric=metric, labels=dict(labels), peak=peak)
            for (metric, labels), peak in sorted(self.kv_peak.items())
        ]
        measured = bool(gpus or series or self.kv_tokens_peak is not None)
        reason = None
        if not measured:
            reason = (
                self.errors[0]
                if self.errors
                else f"{self.source}: no memory or KV-cache metric found"
            )
        return MemoryReading(
            measured=measured,
            sources=[self.source] if measured else [],
            not_measured_reason=reason,
            gpus=gpus,
            kv_cache_usage_peak=max(self.kv_peak.values()) if self.kv_peak else None,
            kv_cache_usage_series=series,
            kv_cache_tokens_peak=self.kv_tokens_peak,
            metric_names_seen=sorted(self.names_seen),
            samples=self.samples,
            errors=list(self.errors),
        )


class MemoryProbe(Protocol):
    """Samples in the background for the duration of ``async with probe.window() as w``."""

    name: str

    def window(self) -> contextlib.AbstractAsyncContextManager[ProbeWindow]: ...


@dataclass
class ProbeWindow:
    """Filled in when the window closes."""

    reading: MemoryReading | None = None


class SamplingProbe(ABC):
    """Base for probes that take snapshots on an interval; subclasses implement ``snapshot``."""

    name = "sampling"

    def __init__(self, interval_s: float = 0.25) -> None:
        self.interval_s = interval_s

    @abstractmethod
    async def snapshot(self) -> Snapshot:
        """One reading of the source right now."""

    @contextlib.asynccontextmanager
    async def window(self) -> AsyncIterator[ProbeWindow]:
        tracker = PeakTracker(self.name)
        window = ProbeWindow()
        await self._sample_into(tracker)
        stop = asyncio.Event()
        sampler = asyncio.create_task(self._sample_until(stop, tracker))
        try:
            yield window
        finally:
            # The sampler stops between snapshots, never inside one: a scrape cancelled
            # mid-request can leave httpcore's pool holding a dead connection, and every
            # later scrape of the run then fails with PoolTimeout (encode/httpcore#1093).
            stop.set()
            await sampler
            await self._sample_into(tracker)
            window.reading = tracker.reading()

    async def _sample_until(self, stop: asyncio.Event, tracker: PeakTracker) -> None:
        while True:
            try:
                async with asyncio.timeout(self.interval_s):
                    await stop.wait()
                return
            except TimeoutError:
                await self._sample_into(tracker)

    async def _sample_into(self, tracker: PeakTracker) -> None:
        try:
            tracker.add(await self.snapshot())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a failed scrape must never fail the benchmark
            tracker.add_error(f"{self.name}: {type(exc).__name__}: {exc}")


class PrometheusProbe(SamplingProbe):
    name = "prometheus"

    def __init__(self, url: str, http: httpx.AsyncClient, interval_s: float = 0.25) -> None:
        super().__init__(interval_s)
        self.url = url
        self.http = http

    async def snapshot(self) -> Snapshot:
        response = await self.http.get(self.url, headers={"Accept": "text/plain"})
        response.raise_for_status()
        return snapshot_from_metrics(response.text)


class NvmlProbe(SamplingProbe):
    """Per-GPU used memory from NVML; NVML calls block, so they run in a worker thread."""

    name = "nvml"

    def __init__(self, nvml: ModuleType, interval_s: float = 0.25) -> None:
        super().__init__(interval_s)
        self.nvml = nvml

    @classmethod
    def create(cls, interval_s: float = 0.25) -> NvmlProbe | str:
        """The probe, or the reason it cannot run (module missing, no driver, no GPU)."""
        try:
            nvml = importlib.import_module("pynvml")
        except ImportError:
            return "pynvml (nvidia-ml-py) is not installed"
        try:
            nvml.nvmlInit()
            count = nvml.nvmlDeviceGetCount()
        except Exception as exc:  # pynvml raises its own NVMLError family
            return f"NVML unavailable: {exc}"
        if count == 0:
            return "NVML reports no GPU"
        return cls(nvml, interval_s)

    async def snapshot(self) -> Snapshot:
        return await asyncio.to_thread(self._read_devices)

    def _read_devices(self) -> Snapshot:
        snapshot = Snapshot()
        for index in range(self.nvml.nvmlDeviceGetCount()):
            handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
            memory = self.nvml.nvmlDeviceGetMemoryInfo(handle)
            gpu = str(index)
            snapshot.gpu_used[gpu] = int(memory.used)
            snapshot.gpu_total[gpu] = int(memory.total)
            name = self.nvml.nvmlDeviceGetName(handle)
            snapshot.gpu_names[gpu] = name.decode() if isinstance(name, bytes) else str(name)
        snapshot.names_seen.add("nvmlDeviceGetMemoryInfo")
        return snapshot


class NotMeasuredProbe:
    """Reports that memory was not measured, and why."""

    name = "not_measured"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    @contextlib.asynccontextmanager
    async def window(self) -> AsyncIterator[ProbeWindow]:
        window = ProbeWindow()
        try:
            yield window
        finally:
            window.reading = MemoryReading(measured=False, not_measured_reason=self.reason)


class CompositeProbe:
    """Runs several probes over the same window and merges what they saw."""

    name = "composite"

    def __init__(self, probes: Sequence[MemoryProbe]) -> None:
        self.probes = list(probes)

    @contextlib.asynccontextmanager
    async def window(self) -> AsyncIterator[ProbeWindow]:
        window = ProbeWindow()
        async with contextlib.AsyncExitStack() as stack:
            inner = [await stack.enter_async_context(probe.window()) for probe in self.probes]
            try:
                yield window
            finally:
                await stack.aclose()
                window.reading = merge_readings([part.reading for part in inner if part.reading])


def merge_readings(readings: Sequence[MemoryReading]) -> MemoryReading:
    measured = [reading for reading in readings if reading.measured]
    if not measured:
        reasons = [
            reading.not_measured_reason for reading in readings if reading.not_measured_reason
        ]
        return MemoryReading(
            measured=False,
            not_measured_reason="; ".join(reasons) or "no probe",
            errors=[error for reading in readings for error in reading.errors],
        )
    kv_peaks = [r.kv_cache_usage_peak for r in measured if r.kv_cache_usage_peak is not None]
    kv_tokens = [r.kv_cache_tokens_peak for r in measured if r.kv_cache_tokens_peak is not None]
    return MemoryReading(
        measured=True,
        sources=[source for reading in measured for source in reading.sources],
        gpus=[gpu for reading in measured for gpu in reading.gpus],
        kv_cache_usage_peak=max(kv_peaks) if kv_peaks else None,
        kv_cache_usage_series=[
            series for reading in measured for series in reading.kv_cache_usage_series
        ],
        kv_cache_tokens_peak=max(kv_tokens) if kv_tokens else None,
        metric_names_seen=sorted(
            {name for reading in measured for name in reading.metric_names_seen}
        ),
        samples=max(reading.samples for reading in measured),
        errors=[error for reading in readings for error in reading.errors],
    )


def default_probe(
    *, metrics_url: str | None, http: httpx.AsyncClient, local_server: bool, interval_s: float
) -> MemoryProbe:
    """Prometheus when a URL is given, NVML when the server runs on this machine and NVML works."""
    probes: list[MemoryProbe] = []
    reasons: list[str] = []
    if metrics_url:
        probes.append(PrometheusProbe(metrics_url, http, interval_s))
    else:
        reasons.append("no metrics_url given")
    if local_server:
        nvml = NvmlProbe.create(interval_s)
        if isinstance(nvml, NvmlProbe):
            probes.append(nvml)
        else:
            reasons.append(nvml)
    else:
        reasons.append("NVML skipped: the server is not on this machine")
    if not probes:
        return NotMeasuredProbe("; ".join(reasons))
    if len(probes) == 1:
        return probes[0]
    return CompositeProbe(probes)
