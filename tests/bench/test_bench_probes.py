from __future__ import annotations

import asyncio
import sys
from types import SimpleNamespace

import httpx
import pytest
from bench_support import run_with_server
from fake_openai_server import FakeOpenAIServer

from app.bench.memory_reading import MemoryReading
from app.bench.metrics_text import Snapshot, parse_prometheus_text, snapshot_from_metrics
from app.bench.probes import (
    CompositeProbe,
    NotMeasuredProbe,
    NvmlProbe,
    PrometheusProbe,
    SamplingProbe,
    default_probe,
)

VLLM = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="Qwen/Qwen3-8B"}} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{{engine="0",model_name="Qwen/Qwen3-8B"}} {kv}
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{{engine="0",model_name="Qwen/Qwen3-8B"}} 123456.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{{engine="0",le="0.001",model_name="Qwen/Qwen3-8B"}} 0.0
vllm:time_to_first_token_seconds_bucket{{engine="0",le="+Inf",model_name="Qwen/Qwen3-8B"}} 42.0
"""

VLLM_OLD = """\
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.37
"""

SGLANG = """\
# HELP sglang:token_usage The token usage
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="meta-llama/Llama-3.1-8B-Instruct",tp_rank="0"} 0.28
sglang:token_usage{model_name="meta-llama/Llama-3.1-8B-Instruct",tp_rank="1"} 0.31
# HELP sglang:num_used_tokens The number of used tokens
# TYPE sglang:num_used_tokens gauge
sglang:num_used_tokens{model_name="meta-llama/Llama-3.1-8B-Instruct",tp_rank="0"} 131952.0
sglang:num_used_tokens{model_name="meta-llama/Llama-3.1-8B-Instruct",tp_rank="1"} 146090.0
# HELP sglang:max_total_num_tokens Maximum total number of tokens
# TYPE sglang:max_total_num_tokens gauge
sglang:max_total_num_tokens{model_name="meta-llama/Llama-3.1-8B-Instruct",tp_rank="0"} 471258.0
"""

LLAMACPP = """\
# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 1500
# HELP llamacpp:kv_cache_usage_ratio KV-cache usage. 1 means 100 percent usage.
# TYPE llamacpp:kv_cache_usage_ratio gauge
llamacpp:kv_cache_usage_ratio 0.125
# HELP llamacpp:kv_cache_tokens KV-cache tokens.
# TYPE llamacpp:kv_cache_tokens gauge
llamacpp:kv_cache_tokens 512
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 1
"""

LLAMACPP_NEWER = """\
# HELP llamacpp:n_tokens_max Largest observed n_tokens.
# TYPE llamacpp:n_tokens_max counter
llamacpp:n_tokens_max 37
llamacpp:requests_processing 0
"""

DCGM = """\
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-aaaa",modelName="NVIDIA H200",Hostname="h"} 2048
DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-bbbb",modelName="NVIDIA H200",Hostname="h"} 4096
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-aaaa",modelName="NVIDIA H200",Hostname="h"} 141312
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-bbbb",modelName="NVIDIA H200",Hostname="h"} 139264
"""

MIB = 1024 * 1024


def test_parser_reads_labels_values_and_skips_comments() -> None:
    samples = parse_prometheus_text(VLLM.format(kv=0.5))
    kv = next(sample for sample in samples if sample.name == "vllm:kv_cache_usage_perc")
    assert kv.labels == {"engine": "0", "model_name": "Qwen/Qwen3-8B"}
    assert kv.value == 0.5
    inf_bucket = samples[-1]
    assert inf_bucket.labels["le"] == "+Inf"
    assert parse_prometheus_text('m{path="a\\"b"} 1 1700000000000')[0].labels == {"path": 'a"b'}


def test_malformed_exposition_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError):
        parse_prometheus_text('vllm:kv_cache_usage_perc{engine="0" 0.5\n')
    with pytest.raises(ValueError):
        snapshot_from_metrics("vllm:kv_cache_usage_perc half\n")


def test_vllm_kv_cache_usage() -> None:
    snapshot = snapshot_from_metrics(VLLM.format(kv=0.42))
    assert list(snapshot.kv_usage.values()) == [0.42]
    assert snapshot.names_seen == {"vllm:kv_cache_usage_perc"}


def test_older_vllm_gauge_name_is_an_alias() -> None:
    snapshot = snapshot_from_metrics(VLLM_OLD)
    assert list(snapshot.kv_usage.values()) == [0.37]
    assert snapshot.names_seen == {"vllm:gpu_cache_usage_perc"}


def test_sglang_token_usage_per_rank_and_used_tokens() -> None:
    snapshot = snapshot_from_metrics(SGLANG)
    assert sorted(snapshot.kv_usage.values()) == [0.28, 0.31]
    assert snapshot.kv_tokens == 146090.0


def test_llamacpp_kv_ratio_and_tokens() -> None:
    snapshot = snapshot_from_metrics(LLAMACPP)
    assert list(snapshot.kv_usage.values()) == [0.125]
    assert snapshot.kv_tokens == 512


def test_underscore_spelling_of_names_is_accepted() -> None:
    snapshot = snapshot_from_metrics("llamacpp_kv_cache_usage_ratio 0.5\n")
    assert list(snapshot.kv_usage.values()) == [0.5]


def test_dcgm_framebuffer_gives_per_gpu_used_and_total() -> None:
    snapshot = snapshot_from_metrics(DCGM)
    assert snapshot.gpu_used == {"0": 141312 * MIB, "1": 139264 * MIB}
    assert snapshot.gpu_total == {"0": 143360 * MIB, "1": 143360 * MIB}
    assert snapshot.gpu_names["0"] == "NVIDIA H200"


async def run_window(
    server: FakeOpenAIServer, texts: list[str], seconds: float = 0.15
) -> MemoryReading:
    server.metrics_texts = list(texts)
    async with httpx.AsyncClient() as http:
        probe = PrometheusProbe(server.root_url + "/metrics", http, interval_s=0.02)
        async with probe.window() as window:
            await asyncio.sleep(seconds)
    assert window.reading is not None
    return window.reading


@pytest.mark.parametrize(
    ("texts", "peak"),
    [
        ([VLLM.format(kv=0.1), VLLM.format(kv=0.7), VLLM.format(kv=0.3)], 0.7),
        ([VLLM_OLD], 0.37),
        ([SGLANG], 0.31),
        ([LLAMACPP.replace("0.125", "0.2"), LLAMACPP, LLAMACPP], 0.2),
    ],
)
def test_prometheus_probe_keeps_the_peak_seen_during_the_window(
    texts: list[str], peak: float
) -> None:
    async def body(server: FakeOpenAIServer) -> MemoryReading:
        return await run_window(server, texts)

    reading = run_with_server(body)
    assert reading.measured
    assert reading.kv_cache_usage_peak == peak
    assert reading.samples >= 3
    assert reading.sources == ["prometheus"]


def test_prometheus_probe_reads_gpu_peaks_from_a_dcgm_exporter() -> None:
    lower = DCGM.replace("141312", "100000").replace('Hostname="h"} 2048', 'Hostname="h"} 43360')

    async def body(server: FakeOpenAIServer) -> MemoryReading:
        return await run_window(server, [lower, DCGM, lower])

    reading = run_with_server(body)
    assert [gpu.peak_used_bytes for gpu in reading.gpus] == [141312 * MIB, 139264 * MIB]
    assert reading.gpus[0].total_bytes == 143360 * MIB
    assert reading.kv_cache_usage_peak is None


def test_endpoint_without_known_metrics_is_not_measured_with_a_reason() -> None:
    async def body(server: FakeOpenAIServer) -> MemoryReading:
        return await run_window(server, [LLAMACPP_NEWER], seconds=0.05)

    reading = run_with_server(body)
    assert not reading.measured
    assert reading.not_measured_reason == "prometheus: no memory or KV-cache metric found"


def test_unreachable_metrics_endpoint_is_not_measured_and_does_not_raise() -> None:
    async def body() -> MemoryReading:
        async with httpx.AsyncClient() as http:
            probe = PrometheusProbe("http://127.0.0.1:9/metrics", http, interval_s=0.02)
            async with probe.window() as window:
                await asyncio.sleep(0.05)
        assert window.reading is not None
        return window.reading

    reading = asyncio.run(body())
    assert not reading.measured
    assert reading.not_measured_reason is not None
    assert "ConnectError" in reading.not_measured_reason


class FakeNvml:
    """Stands in for pynvml: two GPUs whose used memory rises then falls."""

    def __init__(self, used_gib: list[int]) -> None:
        self.used_gib = used_gib
        self.calls = 0

    def nvmlInit(self) -> None:  # noqa: N802 - pynvml's names
        return None

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        return 2

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:  # noqa: N802
        return index

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:  # noqa: N802
        step = min(self.calls // 2, len(self.used_gib) - 1)
        self.calls += 1
        used = (self.used_gib[step] + handle) * 1024**3
        return SimpleNamespace(used=used, total=141 * 1024**3, free=141 * 1024**3 - used)

    def nvmlDeviceGetName(self, handle: int) -> bytes:  # noqa: N802
        return b"NVIDIA H200"


class BrokenNvml(FakeNvml):
    def nvmlInit(self) -> None:  # noqa: N802
        raise RuntimeError("NVML Shared Library Not Found")


def test_nvml_probe_keeps_per_gpu_peaks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([100, 120, 110]))
    probe = NvmlProbe.create(interval_s=0.01)
    assert isinstance(probe, NvmlProbe)

    async def body() -> MemoryReading:
        async with probe.window() as window:
            await asyncio.sleep(0.08)
        assert window.reading is not None
        return window.reading

    reading = asyncio.run(body())
    assert reading.measured
    assert [(gpu.gpu, gpu.peak_used_bytes // 1024**3) for gpu in reading.gpus] == [
        ("0", 120),
        ("1", 121),
    ]
    assert reading.gpus[0].name == "NVIDIA H200"
    assert reading.gpus[0].total_bytes == 141 * 1024**3


def test_nvml_missing_or_failing_gives_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert NvmlProbe.create() == "pynvml (nvidia-ml-py) is not installed"

    monkeypatch.setitem(sys.modules, "pynvml", BrokenNvml([1]))
    assert NvmlProbe.create() == "NVML unavailable: NVML Shared Library Not Found"


def test_default_probe_without_sources_is_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)

    async def body() -> MemoryReading:
        async with httpx.AsyncClient() as http:
            probe = default_probe(metrics_url=None, http=http, local_server=True, interval_s=0.1)
            assert isinstance(probe, NotMeasuredProbe)
            async with probe.window() as window:
                pass
        assert window.reading is not None
        return window.reading

    reading = asyncio.run(body())
    assert reading == MemoryReading(
        measured=False,
        not_measured_reason="no metrics_url given; pynvml (nvidia-ml-py) is not installed",
    )


def test_composite_probe_merges_nvml_and_engine_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([100]))

    async def body(server: FakeOpenAIServer) -> MemoryReading:
        server.metrics_texts = [SGLANG]
        async with httpx.AsyncClient() as http:
            probe = default_probe(
                metrics_url=server.root_url + "/metrics",
                http=http,
                local_server=True,
                interval_s=0.02,
            )
            assert isinstance(probe, CompositeProbe)
            async with probe.window() as window:
                await asyncio.sleep(0.05)
        assert window.reading is not None
        return window.reading

    reading = run_with_server(body)
    assert reading.sources == ["prometheus", "nvml"]
    assert reading.kv_cache_usage_peak == 0.31
    assert len(reading.gpus) == 2


def test_window_close_lets_an_inflight_scrape_finish() -> None:
    """A scrape is never cancelled mid-request: that could wedge the probe's HTTP pool."""

    class SlowProbe(SamplingProbe):
        name = "slow"

        def __init__(self) -> None:
            super().__init__(interval_s=0.01)
            self.started = 0
            self.finished = 0
            self.in_flight = asyncio.Event()

        async def snapshot(self) -> Snapshot:
            self.started += 1
            if self.started == 2:  # the first one in the background
                self.in_flight.set()
            await asyncio.sleep(0.05)
            self.finished += 1
            return snapshot_from_metrics(VLLM.format(kv=0.5))

    async def body() -> tuple[SlowProbe, MemoryReading]:
        probe = SlowProbe()
        async with probe.window() as window:
            await probe.in_flight.wait()
        assert window.reading is not None
        return probe, window.reading

    probe, reading = asyncio.run(body())
    assert probe.started == probe.finished == reading.samples == 3
    assert reading.errors == []
