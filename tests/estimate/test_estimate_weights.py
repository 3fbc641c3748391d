"""Weight sizes: exact bytes first, parameters x effective bits per weight otherwise."""

from dataclasses import replace

import pytest
from estimate_specs import (
    GIB,
    LLAMA_8B,
    LLAMA_8B_Q4_K_M,
    LLAMA_70B,
    LLAMA_70B_Q4_K_M,
    MOE_320B,
    MOE_320B_MLX_4BIT,
)

from app.estimate import ArtifactSpec, Basis, EstimateError, weights_bytes
from app.estimate.memory.weights import active_weight_bytes


def test_llama_8b_q4_k_m_is_about_4_58_gib():
    weights = weights_bytes(LLAMA_8B, LLAMA_8B_Q4_K_M)
    assert weights.value / GIB == pytest.approx(4.58, abs=0.01)
    assert weights.basis == Basis.DERIVED


def test_llama_70b_q4_k_m_is_about_43_1_gb():
    assert weights_bytes(LLAMA_70B, LLAMA_70B_Q4_K_M).value / 1e9 == pytest.approx(43.1, abs=0.05)


def test_exact_file_size_wins_over_bits_per_weight():
    artifact = ArtifactSpec("llama-8b-q4_k_m", "gguf", "q4_k_m", 4.8944, size_bytes=4_920_739_232)
    weights = weights_bytes(LLAMA_8B, artifact)
    assert weights.value == 4_920_739_232
    assert weights.basis == Basis.EXACT


def test_recorded_size_keeps_its_own_basis():
    artifact = ArtifactSpec(
        "x", "gguf", "q4_k_m", 4.89, size_bytes=10**9, size_basis=Basis.PUBLISHED
    )
    assert weights_bytes(LLAMA_8B, artifact).basis == Basis.PUBLISHED


def test_derived_weights_are_no_stronger_than_the_parameter_count():
    assumed = replace(LLAMA_8B, basis={"params_total_b": Basis.ASSUMED})
    assert weights_bytes(assumed, LLAMA_8B_Q4_K_M).basis == Basis.ASSUMED


def test_moe_memory_counts_all_experts():
    assert weights_bytes(MOE_320B, MOE_320B_MLX_4BIT).value == pytest.approx(180e9)


def test_moe_reads_only_its_active_experts_per_token():
    weights = weights_bytes(MOE_320B, MOE_320B_MLX_4BIT)
    assert active_weight_bytes(MOE_320B, MOE_320B_MLX_4BIT, weights) == pytest.approx(10.125e9)


def test_dense_reads_all_its_weights_per_token():
    weights = weights_bytes(LLAMA_8B, LLAMA_8B_Q4_K_M)
    assert active_weight_bytes(LLAMA_8B, LLAMA_8B_Q4_K_M, weights) == weights.value


@pytest.mark.parametrize(
    "artifact",
    [
        ArtifactSpec("x", "gguf", "q4_k_m", 0.0),
        ArtifactSpec("x", "gguf", "q4_k_m", 4.89, size_bytes=0),
    ],
)
def test_refuses_impossible_artifact_sizes(artifact):
    with pytest.raises(EstimateError) as raised:
        weights_bytes(LLAMA_8B, artifact)
    assert raised.value.field == "artifact"
