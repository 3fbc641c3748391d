"""Several cards that split a model by whole layers (llama.cpp `--split-mode layer`, Ollama):
each card holds its share of the weights and KV cache, what the cards together cannot hold
is offloaded, and decode runs the cards in turn, worked by hand."""

import math
from dataclasses import replace

import pytest
from estimate_specs import LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_70B, LLAMA_CPP, RTX_4090, VLLM, route

from app.estimate import Plan, Verdict, assess, estimate
from app.estimate.inputs.specs import ArtifactSpec
from app.estimate.memory.kv import kv_cache_bytes
from app.estimate.messages import Code, message
from app.estimate.speed.coefficients import LINKS
from app.estimate.speed.load import load_estimate
from app.estimate.speed.offload import OffloadInputs, plan_offload
from app.estimate.speed.step import ACTIVATION_BYTES, decode_step

LAYER_SPLIT = replace(LLAMA_CPP, slug="llama-cpp", layer_split=True)
Q4_K_M_70B = ArtifactSpec("llama-3.1-70b-q4_k_m", "gguf", "q4_k_m", 4.89)
TWO_4090 = replace(RTX_4090, slug="2x-rtx-4090", gpu_count=2, interconnect="pcie")
THREE_4090 = replace(TWO_4090, slug="3x-rtx-4090", gpu_count=3)


def per_card(model, artifact, hardware, context=4096, runtime=LAYER_SPLIT):
    return estimate(model, artifact, runtime, hardware, Plan(context=context))


def test_each_card_holds_its_share_of_the_weights_and_the_cache():
    one = per_card(LLAMA_8B, LLAMA_8B_Q4_K_M, RTX_4090)
    two = per_card(LLAMA_8B, LLAMA_8B_Q4_K_M, TWO_4090)
    assert two.memory.weights.value == pytest.approx(one.memory.weights.value / 2)
    # 32 layers over two cards: 16 layers of K and V on each.
    assert two.memory.kv_cache.value * 1e9 == kv_cache_bytes(LLAMA_8B, 4096) / 2
    assert two.kv_bytes_per_token_per_gpu == one.kv_bytes_per_token_per_gpu // 2
    # The workspace and the runtime's margin are each card's own.
    assert two.memory.prefill_workspace == one.memory.prefill_workspace
    assert two.memory.runtime_reserve == one.memory.runtime_reserve
    assert two.memory.weights.note[-1] == message(Code.WEIGHTS_SPLIT_BY_LAYER, count=2)
    assert two.tensor_parallel == 1
    codes = [warning.code for warning in two.warnings]
    assert Code.IDLE_GPUS not in codes and Code.LAYER_SPLIT_IN_TURN in codes


def test_the_busiest_card_holds_the_rounded_up_share_of_layers():
    odd = replace(LLAMA_8B, slug="odd", num_layers=33)
    three = per_card(odd, LLAMA_8B_Q4_K_M, THREE_4090)
    assert three.memory.kv_cache.value * 1e9 == kv_cache_bytes(odd, 4096) * 11 / 33
    two = per_card(odd, LLAMA_8B_Q4_K_M, TWO_4090)
    assert two.memory.kv_cache.value * 1e9 == kv_cache_bytes(odd, 4096) * 17 / 33


def test_the_largest_context_counts_both_cards_caches():
    big = replace(RTX_4090, memory_gb_per_gpu=96, usable_gb_per_gpu=80)
    one = per_card(LLAMA_70B, Q4_K_M_70B, big)
    two = per_card(
        LLAMA_70B, Q4_K_M_70B, replace(TWO_4090, memory_gb_per_gpu=48, usable_gb_per_gpu=40)
    )
    assert one.max_context is not None and two.max_context is not None
    # Both hold the same weights and cache in all; two cards pay the workspace and margin
    # twice, so they fit a little less.
    assert one.max_context - 40 * 256 < two.max_context < one.max_context
    assert two.memory.fits and one.memory.fits


def test_a_runtime_that_does_not_split_by_layer_still_uses_one_card():
    found = per_card(LLAMA_8B, LLAMA_8B_Q4_K_M, TWO_4090, runtime=LLAMA_CPP)
    assert found.memory.weights.value == pytest.approx(4.92, abs=0.05)
    assert message(Code.IDLE_GPUS, used=1, count=2) in found.warnings


def test_decode_takes_the_cards_in_turn_plus_one_hand_over():
    one = per_card(LLAMA_8B, LLAMA_8B_Q4_K_M, RTX_4090)
    two = per_card(LLAMA_8B, LLAMA_8B_Q4_K_M, TWO_4090)
    step_one = decode_step(one.speed_model.step, 1, 4096)
    step_two = decode_step(two.speed_model.step, 1, 4096)
    # Every weight and every layer's cache is read once per token, one card after another.
    assert step_two.weights == pytest.approx(step_one.weights)
    assert step_two.kv_cache == pytest.approx(step_one.kv_cache)
    # One hand-over of the hidden state from the first card to the second over PCIe.
    link = LINKS["pcie"]
    hand_over = link.latency_s + LLAMA_8B.hidden_size * ACTIVATION_BYTES / link.bandwidth_b_s
    slow = one.speed_model.coefficients.long_context(4096)
    assert step_two.communication == pytest.approx(hand_over * slow)
    assert step_one.communication == 0
    speed_one = load_estimate(one.speed_model, 1)
    speed_two = load_estimate(two.speed_model, 1)
    assert speed_two.gpus == 2 and speed_two.layer_split == 2
    assert two.decode_tokens_per_s.note[0].code == Code.DECODE_READ_IN_TURN
    # No faster for the second card, and only a little slower.
    assert speed_two.step.total > speed_one.step.total
    assert speed_two.step.total < 1.01 * speed_one.step.total


def test_offload_keeps_what_both_cards_hold_and_leaves_the_rest():
    inputs = OffloadInputs(
        runtime="llama-cpp",
        unified_memory=False,
        gpu_count=2,
        num_layers=80,
        is_moe=False,
        params_total_b=70,
        params_active_b=70,
        weights_gb=43.0,
        active_weights_gb=43.0,
        gpu_room_gb=20.6,
        cards=2,
    )
    split = plan_offload(inputs)
    layer_gb = 43.0 / 80
    assert split.gpu_layers == 2 * math.floor(20.6 / layer_gb) == 76
    assert split.host_weights_gb == pytest.approx(4 * layer_gb)
    assert split.gpu_weights_gb_per_card == pytest.approx(38 * layer_gb)
    assert split.flags == ["--n-gpu-layers", "76"]
    gpu, host = round(76 * layer_gb, 1), round(43.0 - 76 * layer_gb, 1)
    assert split.summary == message(
        Code.OFFLOAD_SPLIT_LAYERS_CARDS, gpu=gpu, cards=2, host=host, layers=76
    )
    # Cards that do not all hold layers (tensor parallel, or idle) cannot offload this way.
    assert plan_offload(replace(inputs, cards=1)) is None


def test_a_70b_on_two_24_gb_cards_offloads_a_little_not_half():
    routes = [route(Q4_K_M_70B, LAYER_SPLIT, verified=False)]
    one = assess(LLAMA_70B, RTX_4090, routes, context=4096)
    two = assess(LLAMA_70B, TWO_4090, routes, context=4096)
    assert one.verdict == two.verdict == Verdict.FITS_WITH_OFFLOAD
    assert one.offload.host_weights_gb > 20
    assert two.offload.host_weights_gb < 3
    assert two.offload.cards == 2


def test_the_offload_chooses_the_file_that_leaves_the_cpu_least():
    bigger = ArtifactSpec("llama-3.1-70b-q8_0", "gguf", "q8_0", 8.5)
    routes = [route(bigger, LAYER_SPLIT, verified=False), route(Q4_K_M_70B, LAYER_SPLIT, False)]
    found = assess(LLAMA_70B, TWO_4090, routes, context=4096)
    assert found.verdict == Verdict.FITS_WITH_OFFLOAD
    assert found.route.artifact == Q4_K_M_70B


def test_tensor_parallel_runtimes_are_not_layer_split():
    found = per_card(LLAMA_8B, replace(LLAMA_8B_Q4_K_M, format="safetensors"), TWO_4090, 4096, VLLM)
    assert found.tensor_parallel == 2
    assert found.speed_model.step.layer_split == 1


def test_a_model_without_a_layer_count_offloads_by_size():
    inputs = OffloadInputs(
        runtime="llama-cpp",
        unified_memory=False,
        gpu_count=1,
        num_layers=None,
        is_moe=False,
        params_total_b=70,
        params_active_b=70,
        weights_gb=42.0,
        active_weights_gb=42.0,
        gpu_room_gb=20.5,
    )
    split = plan_offload(inputs)
    assert split is not None
    assert split.gpu_layers is None and split.cpu_moe_layers is None
    assert split.flags == []
    assert split.summary.code == Code.OFFLOAD_SPLIT_BYTES
    assert 0 < split.host_weights_gb - (42.0 - 20.5) < 42.0 / 40  # at most one assumed layer
