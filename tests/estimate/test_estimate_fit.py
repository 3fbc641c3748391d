"""Fit verdicts chosen across the routes a caller offers, in its order of preference."""

from dataclasses import replace

import pytest
from estimate_specs import (
    DGX_SPARK,
    H100,
    LLAMA_8B,
    LLAMA_8B_Q4_K_M,
    LLAMA_CPP,
    MAC_STUDIO_256,
    MLX_LM,
    MOE_320B,
    MOE_320B_BF16,
    MOE_320B_MLX_4BIT,
    MOE_320B_Q4_K_M,
    RTX_4090,
    SGLANG,
    route,
)

from app.estimate import EstimateError, Verdict, assess
from app.estimate.messages import Code, message
from app.i18n.messages import english

OFFICIAL_MLX = replace(MOE_320B_MLX_4BIT, slug="moe-320b-mlx-official", official=True)


def test_a_verified_route_that_fits_is_fits():
    result = assess(LLAMA_8B, RTX_4090, [route(LLAMA_8B_Q4_K_M, LLAMA_CPP)], context=8192)
    assert result.verdict == Verdict.FITS
    assert result.context == 8192
    assert result.route.artifact == LLAMA_8B_Q4_K_M
    assert result.estimate.memory.fits
    spare = round(result.estimate.memory.headroom, 1)
    assert result.reason == (message(Code.FITS_WITH_SPARE, tokens=8192, spare=spare),)


def test_only_an_unverified_community_route_fits_is_experimental():
    routes = [route(MOE_320B_BF16, SGLANG), route(MOE_320B_MLX_4BIT, MLX_LM, verified=False)]
    result = assess(MOE_320B, MAC_STUDIO_256, routes, context=32768)
    assert result.verdict == Verdict.EXPERIMENTAL
    assert result.route.artifact == MOE_320B_MLX_4BIT
    assert result.reason == (message(Code.COMPRESSED_UNVERIFIED),)
    assert result.context == 32768


def test_an_unverified_official_file_needs_its_runtime_pairing_verified():
    result = assess(
        MOE_320B, MAC_STUDIO_256, [route(OFFICIAL_MLX, MLX_LM, verified=False)], context=32768
    )
    assert result.verdict == Verdict.EXPERIMENTAL
    assert result.reason == (message(Code.PAIRING_UNVERIFIED),)


def test_nothing_fits_is_exceeds_memory_with_what_it_needs():
    routes = [route(MOE_320B_Q4_K_M, LLAMA_CPP)]
    result = assess(MOE_320B, DGX_SPARK, routes, context=32768)
    assert result.verdict == Verdict.EXCEEDS_MEMORY
    assert result.route.artifact == MOE_320B_Q4_K_M
    required = result.estimate.memory.required
    assert result.reason == (message(Code.NEEDS_MEMORY, needed=round(required), usable=116),)


def test_exceeds_memory_reports_the_route_that_came_closest():
    bigger = replace(MOE_320B_Q4_K_M, slug="q8", quant="q8_0", bits_per_weight=8.5)
    routes = [route(bigger, LLAMA_CPP), route(MOE_320B_Q4_K_M, LLAMA_CPP)]
    result = assess(MOE_320B, DGX_SPARK, routes, context=32768)
    assert result.verdict == Verdict.EXCEEDS_MEMORY
    assert result.route.artifact == MOE_320B_Q4_K_M


def test_a_verified_route_that_fits_only_a_shorter_context_is_reduced():
    result = assess(LLAMA_8B, RTX_4090, [route(LLAMA_8B_Q4_K_M, LLAMA_CPP)], context=131072)
    assert result.verdict == Verdict.FITS_REDUCED_CONTEXT
    assert result.context == result.max_context < 131072
    asked = message(Code.FITS_UP_TO_NOT_ASKED, largest=result.max_context, asked=131072)
    assert result.reason == (asked,)
    assert result.estimate.memory.fits
    (kv,) = result.estimate.memory.kv_cache.note
    assert kv == message(Code.KV_AT, requests=1, tokens=result.max_context, kv_dtype="auto")


def test_a_reduced_context_below_the_minimum_exceeds_memory():
    result = assess(
        LLAMA_8B, RTX_4090, [route(LLAMA_8B_Q4_K_M, LLAMA_CPP)], context=131072, min_context=131072
    )
    assert result.verdict == Verdict.EXCEEDS_MEMORY
    needs, below = result.reason
    assert needs.code == Code.NEEDS_MEMORY
    assert below == message(
        Code.FITS_BELOW_MINIMUM, tokens=result.results[0].max_context, least=131072
    )


def test_a_verified_reduced_route_beats_an_unverified_one_that_fits():
    quantized_kv = replace(LLAMA_CPP, slug="fork", kv_dtypes=("q8_0",))
    routes = [
        route(LLAMA_8B_Q4_K_M, quantized_kv, verified=False),
        route(LLAMA_8B_Q4_K_M, LLAMA_CPP),
    ]
    result = assess(LLAMA_8B, RTX_4090, routes, context=131072)
    assert result.results[0].fits_at_context
    assert result.verdict == Verdict.FITS_REDUCED_CONTEXT
    assert result.route.runtime == LLAMA_CPP


def test_among_fitting_routes_the_callers_order_wins():
    second = replace(LLAMA_8B_Q4_K_M, slug="second")
    routes = [route(LLAMA_8B_Q4_K_M, LLAMA_CPP), route(second, LLAMA_CPP)]
    assert assess(LLAMA_8B, H100, routes, context=8192).route.artifact == LLAMA_8B_Q4_K_M
    assert assess(LLAMA_8B, H100, routes[::-1], context=8192).route.artifact == second


def test_context_is_capped_at_the_native_context():
    result = assess(LLAMA_8B, H100, [route(LLAMA_8B_Q4_K_M, LLAMA_CPP)], context=10**6)
    assert result.verdict == Verdict.FITS
    assert result.context == LLAMA_8B.native_context


def test_incompatible_routes_are_recorded_as_errors():
    routes = [
        route(MOE_320B_BF16, SGLANG),
        route(MOE_320B_Q4_K_M, MLX_LM),
        route(MOE_320B_MLX_4BIT, MLX_LM, verified=False),
    ]
    result = assess(MOE_320B, MAC_STUDIO_256, routes, context=8192)
    platform_error, format_error, ok = result.results
    assert "does not run on metal" in platform_error.error.message
    assert platform_error.estimate is None and not platform_error.fits_at_context
    assert "cannot load gguf" in format_error.error.message
    assert ok.error is None and ok.fits_at_context and ok.max_context == 131072


def test_no_compatible_route_at_all_says_so():
    result = assess(MOE_320B, MAC_STUDIO_256, [route(MOE_320B_BF16, SGLANG)], context=8192)
    assert result.verdict == Verdict.CANNOT_ESTIMATE  # nothing was sized: no memory verdict
    assert result.route is None and result.estimate is None
    found = message(Code.NO_RUNTIME_RUNS_FORMATS, formats=["safetensors"], platform="metal")
    assert result.reason == (found,)


def test_model_data_that_cannot_be_estimated_says_why():
    model = replace(LLAMA_8B, num_layers=None)
    result = assess(model, RTX_4090, [route(LLAMA_8B_Q4_K_M, LLAMA_CPP)], context=8192)
    assert result.route is None
    (reason,) = result.reason
    why = message(Code.KV_FIELDS_MISSING, model=model.slug, fields="num_layers")
    assert reason == message(Code.CANNOT_ESTIMATE, why=why)


def test_runtime_without_auto_kv_uses_its_first_kv_dtype():
    fp8_only = replace(LLAMA_CPP, kv_dtypes=("q8_0",))
    result = assess(LLAMA_8B, RTX_4090, [route(LLAMA_8B_Q4_K_M, fp8_only)], context=8192)
    assert english(result.estimate.memory.kv_cache.note).endswith("q8_0")


@pytest.mark.parametrize(
    "bad",
    [{"context": 0}, {"context": 8192, "concurrency": 0}, {"context": 8192, "min_context": 0}],
)
def test_refuses_counts_below_one(bad):
    with pytest.raises(EstimateError):
        assess(LLAMA_8B, RTX_4090, [route(LLAMA_8B_Q4_K_M, LLAMA_CPP)], **bad)
