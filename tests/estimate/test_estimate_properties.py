"""Properties that must hold for any model, file, runtime and hardware."""

from dataclasses import replace

from estimate_specs import (
    DEEPSEEK_V3,
    GLM_45,
    GPT_OSS_120B,
    LLAMA_8B,
    LLAMA_70B,
    LLAMA_CPP,
    QWEN3_NEXT,
    SGLANG,
    VLLM,
)
from hypothesis import given
from hypothesis import strategies as st

from app.estimate import (
    ArtifactSpec,
    HardwareSpec,
    ModelSpec,
    Plan,
    estimate,
    kv_cache_bytes,
    max_context,
)

FIXED_MODELS = [LLAMA_8B, LLAMA_70B, DEEPSEEK_V3, GLM_45, GPT_OSS_120B, QWEN3_NEXT]
KV_DTYPES = ["auto", "fp8", "q8_0", "q4_0"]
CUDA_RUNTIMES = [
    replace(
        runtime,
        formats=frozenset({"safetensors"}),
        tensor_parallel=False,
        kv_dtypes=tuple(KV_DTYPES),
    )
    for runtime in (VLLM, SGLANG, LLAMA_CPP)
]


@st.composite
def gqa_models(draw) -> ModelSpec:
    """Dense or MoE GQA models, some with sliding-window layers."""
    layers = draw(st.integers(1, 96))
    total = draw(st.floats(0.5, 400))
    moe = draw(st.booleans())
    return ModelSpec(
        slug="drawn",
        params_total_b=total,
        is_moe=moe,
        params_active_b=total * draw(st.floats(0.05, 1.0)) if moe else total,
        native_context=draw(st.sampled_from([4096, 32768, 131072])),
        num_layers=layers,
        num_attention_heads=64,
        num_kv_heads=draw(st.integers(1, 16)),
        head_dim=draw(st.sampled_from([64, 128, 256])),
        hidden_size=draw(st.none() | st.sampled_from([2048, 4096, 8192])),
        sliding_window=draw(st.sampled_from([128, 4096])),
        sliding_window_layers=draw(st.integers(0, layers)),
    )


models = gqa_models() | st.sampled_from(FIXED_MODELS)
artifacts = st.builds(
    ArtifactSpec,
    slug=st.just("drawn"),
    format=st.just("safetensors"),
    quant=st.just("q"),
    bits_per_weight=st.floats(2.0, 16.0),
)
runtimes = st.sampled_from(CUDA_RUNTIMES)
contexts = st.integers(1, 300_000)


@st.composite
def hardware_pair(draw) -> tuple[HardwareSpec, HardwareSpec]:
    """The same GPU with two usable figures, the second no smaller than the first."""
    memory = draw(st.floats(8, 512))
    low, high = sorted(draw(st.lists(st.floats(0.3, 1.0), min_size=2, max_size=2)))
    base = HardwareSpec(
        slug="drawn",
        platform="cuda",
        unified_memory=False,
        gpu_count=1,
        memory_gb_per_gpu=memory,
        usable_gb_per_gpu=low * memory,
        bandwidth_gb_s_per_gpu=1000.0,
    )
    return base, replace(base, usable_gb_per_gpu=high * memory)


@given(models, artifacts, runtimes, hardware_pair(), st.integers(256, 131072))
def test_more_usable_memory_never_hurts(model, artifact, runtime, pair, context):
    smaller, larger = pair
    plan = Plan(context=context)
    before = estimate(model, artifact, runtime, smaller, plan)
    after = estimate(model, artifact, runtime, larger, plan)
    assert after.memory.fits or not before.memory.fits
    assert (after.max_context or 0) >= (before.max_context or 0)


@given(models, contexts, contexts, st.sampled_from(KV_DTYPES), st.booleans(), st.integers(1, 8))
def test_kv_cache_grows_with_context(model, first, second, kv_dtype, caps, tensor_parallel):
    shorter, longer = sorted((first, second))
    arguments = {
        "kv_dtype": kv_dtype,
        "caps_sliding_window": caps,
        "tensor_parallel": tensor_parallel,
    }
    assert kv_cache_bytes(model, shorter, **arguments) <= kv_cache_bytes(model, longer, **arguments)


@given(models, artifacts, runtimes, st.integers(1, 131072), st.integers(1, 64), st.integers(1, 64))
def test_required_memory_grows_with_concurrency(model, artifact, runtime, context, first, second):
    fewer, more = sorted((first, second))
    hardware = HardwareSpec(
        slug="h",
        platform="cuda",
        unified_memory=False,
        gpu_count=1,
        memory_gb_per_gpu=80,
        usable_gb_per_gpu=72,
        bandwidth_gb_s_per_gpu=3350,
    )
    low = estimate(model, artifact, runtime, hardware, Plan(context=context, concurrency=fewer))
    high = estimate(model, artifact, runtime, hardware, Plan(context=context, concurrency=more))
    assert high.memory.required >= low.memory.required
    assert (high.max_context or 0) <= (low.max_context or 0)


@given(
    models,
    artifacts,
    runtimes,
    st.floats(8, 512),
    st.sampled_from(KV_DTYPES),
    st.integers(1, 32),
)
def test_max_context_fits_and_the_next_step_does_not(
    model, artifact, runtime, memory, kv_dtype, concurrency
):
    """The closed-form solution lands exactly on the boundary the memory sum draws."""
    hardware = HardwareSpec(
        slug="h",
        platform="cuda",
        unified_memory=False,
        gpu_count=1,
        memory_gb_per_gpu=memory,
        usable_gb_per_gpu=0.9 * memory,
        bandwidth_gb_s_per_gpu=None,
    )

    def plan(context: int) -> Plan:
        return Plan(context=context, concurrency=concurrency, kv_dtype=kv_dtype)

    found = max_context(model, artifact, runtime, hardware, plan(4096))
    if found is None:
        assert not estimate(model, artifact, runtime, hardware, plan(256)).memory.fits
        return
    assert found % 256 == 0 and 256 <= found <= model.native_context
    assert estimate(model, artifact, runtime, hardware, plan(found)).memory.fits
    if found + 256 <= model.native_context:
        assert not estimate(model, artifact, runtime, hardware, plan(found + 256)).memory.fits
