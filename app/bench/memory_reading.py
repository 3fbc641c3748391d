"""What a step's memory probes saw: each GPU's peak, the KV cache's use as the server's
metrics report it, or why nothing was measured (app/bench/probes.py takes the readings)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class GpuMemoryPeak(BaseModel):
    gpu: str = Field(description="index or UUID as the source names it")
    name: str | None = None
    peak_used_bytes: int
    total_bytes: int | None = None
    source: str


class SeriesPeak(BaseModel):
    metric: str
    labels: dict[str, str] = Field(default_factory=dict)
    peak: float


class MemoryReading(BaseModel):
    """Peaks seen while one step ran; ``measured`` false means no number, with the reason."""

    measured: bool
    sources: list[str] = Field(default_factory=list)
    not_measured_reason: str | None = None
    gpus: list[GpuMemoryPeak] = Field(default_factory=list)
    kv_cache_usage_peak: float | None = Field(
        default=None, description="fraction 0..1, max over series"
    )
    kv_cache_usage_series: list[SeriesPeak] = Field(default_factory=list)
    kv_cache_tokens_peak: float | None = None
    metric_names_seen: list[str] = Field(default_factory=list)
    samples: int = 0
    errors: list[str] = Field(default_factory=list)
