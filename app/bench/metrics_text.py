"""What a benchmark reads from a ``/metrics`` page: the engine's KV-cache gauges (vLLM,
SGLang, llama.cpp server) and a DCGM exporter's per-GPU framebuffer use, parsed from the
Prometheus text format into one :class:`Snapshot` per scrape."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

# Names are compared with ':' folded to '_', as some scrape pipelines rewrite them.
KV_USAGE_RATIO_METRICS = (
    "vllm:kv_cache_usage_perc",  # vLLM v1; a 0..1 fraction despite the name
    "vllm:gpu_cache_usage_perc",  # older vLLM name of the same gauge
    "sglang:token_usage",  # SGLang token pool (KV) usage, 0..1
    "llamacpp:kv_cache_usage_ratio",  # llama.cpp server --metrics (dropped in newer builds)
)
KV_TOKENS_METRICS = (
    "sglang:num_used_tokens",
    "llamacpp:kv_cache_tokens",
)
GPU_USED_MIB_METRICS = ("DCGM_FI_DEV_FB_USED",)
GPU_FREE_MIB_METRICS = ("DCGM_FI_DEV_FB_FREE",)
GPU_TOTAL_MIB_METRICS = ("DCGM_FI_DEV_FB_TOTAL",)
_MIB = 1024 * 1024


def _fold(name: str) -> str:
    return name.replace(":", "_")


_WANTED = {
    _fold(name): name
    for name in (
        *KV_USAGE_RATIO_METRICS,
        *KV_TOKENS_METRICS,
        *GPU_USED_MIB_METRICS,
        *GPU_FREE_MIB_METRICS,
        *GPU_TOTAL_MIB_METRICS,
    )
}
_WANTED_PREFIXES = tuple({*_WANTED, *_WANTED.values()})


@dataclass(frozen=True)
class PromSample:
    name: str
    labels: dict[str, str]
    value: float


def parse_prometheus_text(text: str, only: tuple[str, ...] | None = None) -> list[PromSample]:
    """Samples of the text exposition format, read by prometheus_client's parser (labels
    unescaped, timestamps and comments understood); ``only`` keeps samples whose names start
    with one of those. Malformed text raises ValueError, which fails that one scrape."""
    return [
        PromSample(sample.name, dict(sample.labels), sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if only is None or sample.name.startswith(only)
    ]


@dataclass
class Snapshot:
    """One reading of a source: GPU used/total bytes, KV gauges per series, names seen."""

    gpu_used: dict[str, int] = field(default_factory=dict)
    gpu_total: dict[str, int] = field(default_factory=dict)
    gpu_names: dict[str, str] = field(default_factory=dict)
    kv_usage: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(default_factory=dict)
    kv_tokens: float | None = None
    names_seen: set[str] = field(default_factory=set)


def snapshot_from_metrics(text: str) -> Snapshot:
    snapshot = Snapshot()
    free: dict[str, int] = {}
    for sample in parse_prometheus_text(text, only=_WANTED_PREFIXES):
        canonical = _WANTED.get(_fold(sample.name))
        if canonical is None or math.isnan(sample.value) or math.isinf(sample.value):
            continue
        snapshot.names_seen.add(sample.name)
        if canonical in KV_USAGE_RATIO_METRICS:
            key = (canonical, tuple(sorted(sample.labels.items())))
            snapshot.kv_usage[key] = sample.value
        elif canonical in KV_TOKENS_METRICS:
            # Tensor-parallel ranks each report the same pool: the max, not the sum.
            snapshot.kv_tokens = max(sample.value, snapshot.kv_tokens or sample.value)
        else:
            _take_gpu_metric(snapshot, free, canonical, sample)
    for gpu, used in snapshot.gpu_used.items():
        if gpu not in snapshot.gpu_total and gpu in free:
            snapshot.gpu_total[gpu] = used + free[gpu]
    return snapshot


def _take_gpu_metric(
    snapshot: Snapshot, free: dict[str, int], canonical: str, sample: PromSample
) -> None:
    gpu = sample.labels.get("gpu") or sample.labels.get("UUID") or "0"
    if sample.labels.get("modelName"):
        snapshot.gpu_names[gpu] = sample.labels["modelName"]
    size = int(sample.value * _MIB)
    if canonical in GPU_USED_MIB_METRICS:
        snapshot.gpu_used[gpu] = size
    elif canonical in GPU_TOTAL_MIB_METRICS:
        snapshot.gpu_total[gpu] = size
    else:
        free[gpu] = size
