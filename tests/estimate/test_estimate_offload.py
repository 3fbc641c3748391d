"""Partial offload to system memory (llama.cpp -ngl / --n-cpu-moe), worked by hand."""

import math
from dataclasses import replace

import pytest
from estimate_specs import (
    DGX_SPARK,
    H100,
    LLAMA_8B,
    LLAMA_8B_Q4_K_M,
    LLAMA_70B,
    LLAMA_CPP,
    MAC_STUDIO_256,
    RTX_4090,
    route,
)

from app.estimate import Verdict, assess
from app.estimate.inputs.specs import ArtifactSpec
from app.estimate.messages import Code, message
from app.estimate.speed.llama_constants import HOST_LINK_GB_S
from app.estimate.speed.load import RequestShape, load_estimate
from app.estimate.speed.model import offloaded
from app.estimate.speed.offload import (
    ASSUMED_HOST_MEMORY_GB,
    HOST_SHARE,
    OffloadInputs,
    plan_offload,
)
from app.estimate.speed.step import prefill_seconds
from app.estimate.units import GB

LLAMA_SERVER = replace(LLAMA_CPP, slug="llama-cpp")
LLAMA_70B_Q4_K_M = ArtifactSpec("llama-3.1-70b-q4_k_m", "gguf", "q4_k_m", 4.89)

# A 40 GB dense model of 80 layers (0.5 GB each) with 20.3 GB of the GPU left for weights.
DENSE = OffloadInputs(
    runtime="llama-cpp",
    unified_memory=False,
    gpu_count=1,
    num_layers=80,
    is_moe=False,
    params_total_b=70,
    params_active_b=70,
    weights_gb=40.0,
    active_weights_gb=40.0,
    gpu_room_gb=20.3,
)
# A 60 GB MoE, 120B total / 6B active (5%), 36 layers, 50 GB of room.
MOE = replace(
    DENSE,
    num_layers=36,
    is_moe=True,
    params_total_b=120,
    params_active_b=6,
    weights_gb=60.0,
    active_weights_gb=3.0,
    gpu_room_gb=50.0,
)


def test_a_dense_model_keeps_whole_layers_on_the_gpu():
    split = plan_offload(DENSE)
    # floor(20.3 / 0.5) = 40 layers on the GPU; the other 40 (20 GB) in system memory.
    assert split.gpu_layers == 40
    assert split.cpu_moe_layers is None
    assert split.gpu_weights_gb == pytest.approx(20.0)
    assert split.host_weights_gb == pytest.approx(20.0)
    assert split.flags == ["--n-gpu-layers", "40"]
    # Every offloaded layer is read from system memory each token, the rest on the GPU.
    assert split.host_read_bytes == pytest.approx(20e9)
    assert split.gpu_read_bytes == pytest.approx(20e9)
    assert split.summary == message(Code.OFFLOAD_SPLIT_LAYERS, gpu=20.0, host=20.0, layers=40)


def test_an_moe_moves_the_experts_of_its_first_layers():
    split = plan_offload(MOE)
    # Experts: 60 x (1 - 0.05) = 57 GB, 1.5833 GB per layer; 10 GB too much -> 7 layers.
    per_layer = 57 / 36
    assert split.cpu_moe_layers == math.ceil(10 / per_layer) == 7
    assert split.host_weights_gb == pytest.approx(7 * per_layer)
    assert split.flags == ["--n-gpu-layers", "999", "--n-cpu-moe", "7"]
    # A token reads 5% of the offloaded experts there, the rest of its 3 GB on the GPU.
    host_read = 7 * per_layer * 0.05
    assert split.host_read_bytes == pytest.approx(host_read * 1e9)
    assert split.gpu_read_bytes == pytest.approx((3.0 - host_read) * 1e9)


@pytest.mark.parametrize(
    ("why", "inputs"),
    [
        ("another runtime", replace(DENSE, runtime="vllm")),
        ("one memory pool already", replace(DENSE, unified_memory=True)),
        ("several GPUs the layers are not split over", replace(DENSE, gpu_count=2)),
        ("no room beside the KV cache", replace(DENSE, gpu_room_gb=-0.5)),
        ("it fits", replace(DENSE, weights_gb=20.0, active_weights_gb=20.0)),
        ("not one layer fits", replace(DENSE, gpu_room_gb=0.4)),
        ("more than the host holds", replace(DENSE, weights_gb=20.3 + 48.5)),
        ("more than all the experts", replace(MOE, gpu_room_gb=2.0)),
    ],
)
def test_offloading_is_refused_where_it_cannot_help(why, inputs):
    assert plan_offload(inputs) is None, why


def test_the_host_limit_is_three_quarters_of_the_assumed_desktop():
    assert ASSUMED_HOST_MEMORY_GB * HOST_SHARE == 48
    at_limit = replace(DENSE, weights_gb=20.3 + 48, active_weights_gb=68.3, num_layers=683)
    assert plan_offload(at_limit) is not None


def test_a_70b_on_one_4090_with_llama_cpp_fits_with_offload():
    result = assess(LLAMA_70B, RTX_4090, [route(LLAMA_70B_Q4_K_M, LLAMA_SERVER)], context=8192)
    assert result.verdict == Verdict.FITS_WITH_OFFLOAD
    assert result.context == 8192
    assert not result.estimate.memory.fits  # the all-on-GPU estimate that did not fit
    split = result.offload
    assert 0 < split.gpu_layers < 80
    assert split.gpu_weights_gb + split.host_weights_gb == pytest.approx(43.12, abs=0.01)
    # The step model reads the offloaded share at the host's bandwidth: far slower.
    slowed = offloaded(result.estimate.speed_model, split.gpu_read_bytes, split.host_read_bytes)
    assert load_estimate(slowed, 1).decode.high < result.estimate.decode_tokens_per_s.low
    assert result.reason == (message(Code.RUNS_WITH_OFFLOAD, tokens=8192, split=split.summary),)


def test_a_route_that_fits_on_the_gpu_is_never_offloaded():
    result = assess(LLAMA_8B, RTX_4090, [route(LLAMA_8B_Q4_K_M, LLAMA_SERVER)], context=8192)
    assert result.verdict == Verdict.FITS
    assert result.offload is None


@pytest.mark.parametrize(
    ("hardware", "runtime"),
    [(MAC_STUDIO_256, LLAMA_SERVER), (DGX_SPARK, LLAMA_SERVER), (H100, LLAMA_CPP)],
)
def test_unified_memory_or_a_runtime_that_cannot_offload_still_exceeds(hardware, runtime):
    huge = replace(LLAMA_70B, slug="huge", params_total_b=700, params_active_b=700)
    result = assess(huge, hardware, [route(LLAMA_70B_Q4_K_M, runtime)], context=8192)
    assert result.verdict == Verdict.EXCEEDS_MEMORY
    assert result.offload is None


def test_an_offloaded_prefill_copies_the_resident_weights_over_the_host_link_per_chunk():
    result = assess(LLAMA_70B, RTX_4090, [route(LLAMA_70B_Q4_K_M, LLAMA_SERVER)], context=8192)
    split = result.offload
    speed = result.estimate.speed_model
    host = split.host_weights_gb * GB
    slowed = offloaded(speed, split.gpu_read_bytes, split.host_read_bytes, host)
    assert slowed.step.host_resident_bytes == host
    assert slowed.step.host_link_b_s == HOST_LINK_GB_S * 1e9 == 25e9
    # A dense model's offloaded layers are all read by every chunk: a 4,096-token prompt in
    # chunks of 512 (llama.cpp's micro-batch) copies them 8 times at 25 GB/s.
    assert slowed.prefill_chunk == 512
    u = slowed.coefficients.prefill_utilisation[0]
    without = offloaded(speed, split.gpu_read_bytes, split.host_read_bytes)
    extra = prefill_seconds(slowed.step, 4096, 512, u) - prefill_seconds(without.step, 4096, 512, u)
    assert extra == pytest.approx(8 * host / 25e9)
    # The first token waits for it, at both ends of its band.
    first = load_estimate(slowed, 1, RequestShape(prompt_tokens=4096)).ttft_ms
    alone = load_estimate(without, 1, RequestShape(prompt_tokens=4096)).ttft_ms
    assert first.low > alone.low and first.high > alone.high
