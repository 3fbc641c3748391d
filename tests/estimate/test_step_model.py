"""The step-time model: each term of a decode step, prefill and the first token, speculative
decoding, and ranges that say what they held."""

from dataclasses import replace

import msgspec
import pytest

from app.estimate import ArtifactSpec, Plan, estimate
from app.estimate.ranges.classes import (
    MIN_CHECKS,
    MIN_PUBLISHERS,
    RANGE_CLASSES,
    WIDEN,
    class_key,
    pool_keys,
    range_class,
    ttft_range,
)
from app.estimate.ranges.from_records import RangeBook
from app.estimate.speed.coefficients import LINKS, coefficients_for, link_of
from app.estimate.speed.load import RequestShape, load_estimate
from app.estimate.speed.speculative import MTP, NGRAM
from app.estimate.speed.step import (
    OFFLOAD_MIN_BATCH,
    decode_step,
    experts_touched,
    host_chunk_s,
    prefill_seconds,
    step_fixed_s,
)
from tests.estimate.estimate_specs import H200_X8, LLAMA_70B, MOE_320B, MOE_320B_BF16, VLLM

FP8 = ArtifactSpec("moe-fp8", "safetensors", "fp8", 8.0)
BF16 = ArtifactSpec("llama-bf16", "safetensors", "bf16", 16.0)


def _speed(model=MOE_320B, artifact=FP8, hardware=H200_X8, tensor_parallel=8, context=4096):
    plan = Plan(context=context, tensor_parallel=tensor_parallel)
    return estimate(model, artifact, VLLM, hardware, plan).speed_model


def test_a_batch_touches_experts_as_the_law_of_uniform_routing_says():
    assert experts_touched(256, 8, 1) == pytest.approx(8 / 256)
    assert experts_touched(256, 8, 16) == pytest.approx(1 - (1 - 8 / 256) ** 16)
    assert experts_touched(256, 8, 4096) == pytest.approx(1.0, abs=1e-9)
    assert experts_touched(1, 1, 64) == 1.0  # a dense model reads all its weights


def test_weights_are_read_once_per_step_and_the_kv_cache_once_per_request():
    model = _speed()
    one, sixteen = decode_step(model.step, 1, 4096), decode_step(model.step, 16, 4096)
    # Sixteen requests share one read of the dense part; they touch more experts.
    assert one.weights < sixteen.weights < 16 * one.weights
    assert sixteen.kv_cache == pytest.approx(16 * one.kv_cache)
    # So each request slows down while the total grows.
    per_request = [load_estimate(model, b).decode.middle for b in (1, 4, 16, 64)]
    totals = [load_estimate(model, b).throughput.middle for b in (1, 4, 16, 64)]
    assert per_request == sorted(per_request, reverse=True)
    assert totals == sorted(totals)


def test_a_large_batch_turns_compute_bound():
    model = _speed(model=LLAMA_70B, artifact=BF16)
    assert decode_step(model.step, 1, 1024).compute == 0
    big = decode_step(model.step, 2048, 1024)
    assert big.compute > 0
    assert big.shares()["compute"] > 0.3


def test_tensor_parallel_eight_spends_a_larger_share_talking_than_four():
    eight, four = _speed(tensor_parallel=8), _speed(tensor_parallel=4)
    shares_8 = decode_step(eight.step, 1, 4096).shares()
    shares_4 = decode_step(four.step, 1, 4096).shares()
    assert shares_8["communication"] > shares_4["communication"]
    assert shares_8["weights"] < shares_4["weights"]
    assert sum(shares_8.values()) == pytest.approx(1, abs=0.01)


def test_links_by_interconnect_and_generation():
    assert link_of(H200_X8) == LINKS["nvswitch"]
    assert link_of(replace(H200_X8, bandwidth_gb_s_per_gpu=8000)) == LINKS["nvlink5"]
    assert link_of(replace(H200_X8, interconnect="pcie")).latency_s > LINKS["nvswitch"].latency_s


def test_without_cuda_graphs_every_layer_costs_more():
    model = _speed()
    eager = msgspec.structs.replace(model.step, cuda_graphs=False)
    assert decode_step(eager, 1, 4096).fixed > decode_step(model.step, 1, 4096).fixed


def test_each_expert_a_token_is_routed_to_adds_its_time_to_every_moe_layer():
    model = _speed(model=MOE_320B)
    c = msgspec.structs.replace(model.coefficients, expert_s=10e-6)
    step = msgspec.structs.replace(model.step, coefficients=c)
    more = msgspec.structs.replace(step, active_experts=step.active_experts + 4)
    added = decode_step(more, 1, 4096).fixed - decode_step(step, 1, 4096).fixed
    assert step.moe_layers > 0
    # Four more routed experts: 40 us more in each MoE layer, at long context's slowdown.
    assert added == pytest.approx(step.moe_layers * 4 * 10e-6 * c.long_context(4096))
    dense = msgspec.structs.replace(step, moe_layers=0)
    assert decode_step(dense, 1, 4096).fixed < decode_step(step, 1, 4096).fixed


def test_the_first_token_takes_the_runtimes_own_time_per_request():
    model = _speed()
    c = model.coefficients
    assert c.first_token_s > 0
    none = msgspec.structs.replace(
        model,
        step=msgspec.structs.replace(
            model.step, coefficients=msgspec.structs.replace(c, first_token_s=0.0)
        ),
    )
    shape = RequestShape(1024, 256)
    spread = ttft_range(1)
    with_it = load_estimate(model, 1, shape).ttft_ms.low / spread.low
    without = load_estimate(none, 1, shape).ttft_ms.low / spread.low
    assert with_it - without == pytest.approx(1e3 * c.first_token_s, rel=0.01)


def test_the_first_token_waits_for_the_prompt_and_the_prefills_before_it():
    model = _speed()
    short = load_estimate(model, 1, RequestShape(1024, 256))
    long = load_estimate(model, 1, RequestShape(16384, 256))
    crowd = load_estimate(model, 32, RequestShape(1024, 256))
    assert long.ttft_ms.low > short.ttft_ms.low
    # Before each class's spread: 32 requests that arrive together wait, on average, for
    # 16.5 prompts' prefill, packed into chunks, where one request waits for its own.
    c = model.coefficients
    fast = c.prefill_utilisation[1]
    ahead = prefill_seconds(model.step, 1024, model.prefill_chunk, fast, prompts=16.5)
    alone = prefill_seconds(model.step, 1024, model.prefill_chunk, fast)
    waited = 1e3 * (ahead - alone)
    crowd_point = crowd.ttft_burst_ms.low / ttft_range(32).low
    short_point = short.ttft_ms.low / ttft_range(1).low
    assert crowd_point - short_point == pytest.approx(
        waited + 1e3 * (crowd.step.total - short.step.total), rel=0.02
    )
    assert waited > 5 * 1e3 * alone
    # Prefill grows faster than the prompt once attention over it counts.
    ratio = prefill_seconds(model.step, 32768, 32768, c.prefill_utilisation[0]) / prefill_seconds(
        model.step, 4096, 4096, c.prefill_utilisation[0]
    )
    assert ratio > 8


def test_prompts_that_arrive_together_are_prefilled_packed_into_chunks():
    model = _speed()
    c = model.coefficients
    u = c.prefill_utilisation[0]
    one = prefill_seconds(model.step, 256, 2048, u)
    packed = prefill_seconds(model.step, 256, 2048, u, prompts=8)
    # Eight short prompts fill one chunk: one chunk's fixed cost, not eight.
    assert one < packed < 8 * one
    # Long prompts are compute-bound either way: packing saves little.
    long_one = prefill_seconds(model.step, 16384, 2048, u)
    long_packed = prefill_seconds(model.step, 16384, 2048, u, prompts=4)
    assert long_packed == pytest.approx(4 * long_one, rel=0.05)


def test_total_throughput_counts_the_time_each_request_waits_for_its_first_token():
    model = _speed()
    steady = load_estimate(model, 16, RequestShape(4096))
    served = load_estimate(model, 16, RequestShape(4096, 256))
    # Without an output length it is the running batch's decode rate.
    assert steady.throughput.low == pytest.approx(16 * steady.decode.low, rel=0.01)
    # With one, each request also spends its prefill: a closed-loop benchmark's total.
    assert served.throughput.low < 16 * served.decode.low


def test_the_first_tokens_range_comes_from_its_own_checks_and_widens_under_load():
    model = _speed()
    one = load_estimate(model, 1, RequestShape(2048, 256))
    many = load_estimate(model, 32, RequestShape(2048, 256))
    spread = ttft_range(32)
    assert spread.checks > 0 and spread.high > ttft_range(1).high
    assert many.ttft_ms.high / many.ttft_ms.low > one.ttft_ms.high / one.ttft_ms.low


def test_joining_requests_prefills_slow_each_requests_decode():
    model = _speed()
    steady = load_estimate(model, 16, RequestShape(4096))
    served = load_estimate(model, 16, RequestShape(4096, 256))
    assert served.decode.middle < steady.decode.middle


def test_speculative_decoding_buys_most_at_one_request_and_less_under_load():
    model = _speed()
    assert model.speculative == (MTP if MOE_320B.mtp_layers else NGRAM)
    mtp = msgspec.structs.replace(model, speculative=MTP)
    one = load_estimate(mtp, 1, speculative=True)
    loaded = load_estimate(mtp, 256, speculative=True)
    plain = load_estimate(mtp, 1)
    assert 1 < one.speculative_speedup.low <= one.speculative_speedup.high <= MTP.accepted[1]
    assert loaded.speculative_speedup.high < one.speculative_speedup.high
    assert one.decode.low == pytest.approx(plain.decode.low * one.speculative_speedup.low, rel=0.01)


def test_a_class_with_enough_checks_keeps_its_own_range_and_a_thin_one_borrows_widened():
    own = [k for k, c in RANGE_CLASSES.items() if c.stands_alone and "*" not in k]
    assert own, "at least one class has its own checks"
    family, platform, gpus, load = own[0].split("/")
    found = range_class(
        family, platform.replace("+", "/"), 2 if gpus == "multi" else 1, 2 if load == "cN" else 1
    )
    assert found.key == own[0] and not found.borrowed
    # A thin SGLang class borrows, widened, its family's pool under load (its whole pool,
    # where the one under load has checks from too few publishers), and at one request both
    # servers' pool on as many GPUs.
    for gpus, concurrency, pool in ((1, 4, "sglang/*/*/*"), (8, 1, "servers/*/multi/c1")):
        thin = range_class("sglang", "cuda", gpus, concurrency)
        pooled = RANGE_CLASSES[pool]
        assert pooled.stands_alone
        assert thin.borrowed and thin.family == pooled.key
        assert thin.low == round(pooled.low / WIDEN, 2)
        assert thin.high == round(pooled.high * WIDEN, 2)
    # Many checks from too few publishers are one setup measured many times: SGLang on
    # several CUDA cards under load is nearly all one publisher's sweep, and borrows.
    many = RANGE_CLASSES["sglang/cuda/multi/cN"]
    assert many.checks >= MIN_CHECKS and many.publishers < MIN_PUBLISHERS
    swept = range_class("sglang", "cuda", 8, 4)
    assert swept.borrowed and swept.checks == many.checks
    assert swept.family == "sglang/*/*/*" and swept.publishers == many.publishers
    # A pool too thin for anything falls to its family's whole pool, always last.
    assert pool_keys("llama.cpp/metal/single/c1")[-1] == "llama.cpp/*/*/*"
    assert pool_keys("vllm/cuda/multi/c1") == (
        "servers/*/multi/c1",
        "vllm/*/*/c1",
        "servers/*/*/c1",
        "vllm/*/*/*",
    )
    assert pool_keys("vllm/cuda/multi/cN") == ("vllm/*/*/cN", "vllm/*/*/*")
    assert class_key("vllm", "rocm/vulkan", 8, 1) == "vllm/rocm+vulkan/multi/c1"


def test_server_runtimes_have_their_own_coefficients_and_llama_cpp_keeps_its_constants():
    vllm, sglang = coefficients_for("vllm", "cuda"), coefficients_for("sglang", "cuda")
    llama = coefficients_for("llama-cpp", "cuda")
    # Each server family is fitted on its own rows: SGLang's recent releases spend less per
    # layer and a time per routed expert; vLLM's rows leave that to its per-MoE-layer term.
    assert sglang != vllm
    assert sglang.layer_s < vllm.layer_s and sglang.expert_s > 0 == vllm.expert_s
    assert vllm.step_s > 0 and vllm.moe_layer_s > 0
    assert llama.step_s == 0 and llama.moe_layer_s == 0 and llama.expert_s == 0
    assert coefficients_for("ollama", "metal") == coefficients_for("llama-cpp", "metal")


MXFP4 = ArtifactSpec("moe-mxfp4", "safetensors", "MXFP4", 4.25)


def test_quantized_experts_cost_vllm_more_per_moe_layer_and_gpt_oss_kernels_do_not():
    bf16 = _speed(artifact=MOE_320B_BF16).step
    fp8 = _speed(artifact=FP8).step
    mxfp4_h200 = _speed(artifact=MXFP4).step
    a100 = replace(
        H200_X8,
        slug="8x-a100",
        memory_gb_per_gpu=80,
        usable_gb_per_gpu=72,
        bandwidth_gb_s_per_gpu=2039,
        bf16_tflops_per_gpu=312,
    )
    mxfp4_a100 = _speed(artifact=MXFP4, hardware=a100).step
    assert fp8.quantized_experts and not bf16.quantized_experts
    # gpt-oss's MXFP4 kernels on Hopper-class cards; the general dequantizing path on Ampere
    assert not mxfp4_h200.quantized_experts and mxfp4_a100.quantized_experts
    extra = fp8.coefficients.quantized_moe_layer_s
    assert extra > 0
    gap = decode_step(fp8, 1, 4096).fixed - decode_step(bf16, 1, 4096).fixed
    assert gap == pytest.approx(fp8.moe_layers * extra * fp8.coefficients.long_context(4096))
    # SGLang's checks did not bear the term out: it has none.
    assert coefficients_for("sglang", "cuda").quantized_moe_layer_s == 0


def test_a_request_never_decodes_faster_beside_others_than_alone():
    model = _speed()
    generous = {
        key: msgspec.structs.replace(found, high=found.high * 3)
        for key, found in RANGE_CLASSES.items()
        if key.endswith("cN")
    }
    book = RangeBook({**RANGE_CLASSES, **generous})
    wide = msgspec.structs.replace(model, ranges=book)
    alone, two = load_estimate(wide, 1), load_estimate(wide, 2)
    assert two.decode.high == pytest.approx(alone.decode.high, abs=0.1)
    assert two.decode.low < two.decode.high
    # The point the class's spread is put around is the step model's own.
    assert two.decode_point < alone.decode_point


def test_a_thin_class_borrows_its_loads_pool_where_that_has_enough_checks():
    vllm_c1 = range_class("vllm", "rocm/vulkan", 8, 1)
    pool = RANGE_CLASSES["servers/*/multi/c1"]
    assert pool.checks >= MIN_CHECKS
    assert vllm_c1.borrowed and vllm_c1.family == pool.key
    assert vllm_c1.low == round(pool.low / WIDEN, 2)
    # Under load, the family's pool at that load.
    vllm_cn = range_class("vllm", "cuda", 1, 4)
    assert vllm_cn.borrowed and vllm_cn.family == "vllm/*/*/cN"

    # At one request, where both servers' pool on as many GPUs is thin, the family's at one
    # request; where that is thin too, both servers' at one request, never the family's
    # whole pool, whose checks are nearly all under load.
    def thinned(*keys: str) -> dict:
        thin = {k: msgspec.structs.replace(RANGE_CLASSES[k], checks=MIN_CHECKS - 1) for k in keys}
        return {**RANGE_CLASSES, **thin}

    assert range_class("vllm", "rocm/vulkan", 8, 1).family == "servers/*/multi/c1"
    assert range_class("vllm", "rocm/vulkan", 8, 1, thinned("servers/*/multi/c1")).family == (
        "vllm/*/*/c1"
    )
    both = thinned("servers/*/multi/c1", "vllm/*/*/c1")
    assert range_class("vllm", "rocm/vulkan", 8, 1, both).family == "servers/*/*/c1"
    # SGLang's pool at one request has checks from too few publishers: it is passed over.
    assert not RANGE_CLASSES["sglang/*/*/c1"].stands_alone
    assert range_class("sglang", "cuda", 8, 1, thinned("servers/*/multi/c1")).family == (
        "servers/*/*/c1"
    )


def test_requests_arriving_independently_wait_for_the_prefills_queued_before_them():
    """The stated arrival model: 32 users each send a turn when the last is answered, so
    prompts come at 32 over a turn's time, and each waits as in a queue of random arrivals
    and fixed service (M/D/1), never longer than in a burst, never less than alone."""
    model = _speed()
    shape = RequestShape(1024, 256)
    alone = load_estimate(model, 1, shape)
    crowd = load_estimate(model, 32, shape)
    c = model.coefficients
    fast = c.prefill_utilisation[1]
    one = prefill_seconds(model.step, 1024, model.prefill_chunk, fast)
    first_step = crowd.step.total / c.speed_factor + c.first_token_s
    turn = one + first_step + 256 / crowd.decode_point
    rho = 32 * one / turn
    assert 0 < rho < 1
    expected = 1e3 * ((one + rho * one / (2 * (1 - rho)) + first_step) * ttft_range(32).low)
    assert crowd.ttft_ms.low == pytest.approx(expected, abs=0.1)
    assert alone.ttft_ms.low / ttft_range(1).low < crowd.ttft_ms.low / ttft_range(32).low
    assert crowd.ttft_ms.low <= crowd.ttft_burst_ms.low
    assert crowd.ttft_ms.high <= crowd.ttft_burst_ms.high
    # Without an output length there are no turns to count: the burst is the answer.
    steady = load_estimate(model, 32, RequestShape(1024, None))
    assert steady.ttft_ms == steady.ttft_burst_ms


def _offload_step(**changes):
    """A hand-sized step: 10 GB of experts of 128 (8 routed) in system memory, a 25 GB/s
    host link, 53.76 GB/s from system memory, an FP16 peak of 100 TFLOPS."""
    step = _speed().step
    fields = dict(
        dense_bytes=0.0,
        expert_bytes=0.0,
        experts=128,
        active_experts=8,
        active_params=1e9,
        layers=10,
        moe_layers=10,
        attention_width=1000,
        tensor_parallel=1,
        expert_parallel=1,
        flops=100e12,
        host_bytes=0.0,
        host_bandwidth_b_s=53.76e9,
        host_resident_bytes=10e9,
        host_link_b_s=25e9,
        coefficients=msgspec.structs.replace(
            step.coefficients,
            layer_eager_s=0.0,
            moe_layer_s=0.0,
            quantized_moe_layer_s=0.0,
            expert_s=0.0,
            step_s=0.0,
        ),
        quantized_experts=False,
    )
    fields.update(changes)
    return msgspec.structs.replace(step, **fields)


def test_a_prefill_chunk_copies_the_experts_it_routes_to_from_system_memory():
    step = _offload_step()
    # 512 tokens route to 1 - (1 - 8/128)^512 of the experts: all but a trace.
    touched = 1 - (1 - 8 / 128) ** 512
    assert host_chunk_s(step, 512) == pytest.approx(10e9 * touched / 25e9)  # 0.4 s
    # 64 tokens touch 98.4% of them.
    assert host_chunk_s(step, 64) == pytest.approx(10e9 * (1 - (15 / 16) ** 64) / 25e9)
    # Below 32 tokens llama.cpp computes on the CPU, which reads them from system memory.
    assert OFFLOAD_MIN_BATCH == 32
    assert host_chunk_s(step, 16) == pytest.approx(10e9 * (1 - (15 / 16) ** 16) / 53.76e9)
    # Nothing in system memory, nothing to copy.
    assert host_chunk_s(_offload_step(host_resident_bytes=0.0), 512) == 0.0


def test_an_offloaded_prefill_adds_one_copy_per_chunk_to_the_compute():
    step = _offload_step()
    # 4,096 tokens: 2 x 1e9 x 4096 + 2 x 10 x 1000 x 4096^2 = 8.528e12 FLOPs at 0.5 x 100
    # TFLOPS = 0.17056 s, and 8 chunks of 512 each copying 10 GB at 25 GB/s.
    compute = (2 * 1e9 * 4096 + 2 * 10 * 1000 * 4096**2) / (0.5 * 100e12)
    copies = 8 * 10e9 * (1 - (1 - 8 / 128) ** 512) / 25e9
    assert prefill_seconds(step, 4096, 512, 0.5) == pytest.approx(compute + copies)
    assert prefill_seconds(step, 4096, 512, 0.5) == pytest.approx(0.17056 + 3.2, abs=1e-3)


def test_apple_gpus_prefill_at_their_fp16_rate_not_at_one_read_per_chunk():
    metal = coefficients_for("llama-cpp", "metal")
    mlx = coefficients_for("mlx-lm", "metal")
    assert metal.prefill_utilisation == (0.6, 0.85)
    assert mlx.prefill_utilisation == (0.7, 0.95)
    assert coefficients_for("llama-cpp", "cuda").prefill_utilisation == (0.3, 0.5)
    # An M2 Ultra: 76 cores x 128 ALUs x 2 x 1.398 GHz = 27.2 TFLOPS. A 5.1B-active MoE's
    # 4,096-token prompt (attention aside) is 2 x 5.1e9 x 4096 = 4.18e13 FLOPs: 2.26 s at
    # 0.68 of the peak, where one read of its 2.8 GB per 2,048-token chunk took 7 ms.
    step = _offload_step(
        host_resident_bytes=0.0,
        flops=27.2e12,
        active_params=5.1e9,
        attention_width=0,
        dense_bytes=2.8e9,
        bandwidth_b_s=800e9,
        coefficients=metal,
    )
    seconds = prefill_seconds(step, 4096, 2048, 0.68)
    fixed = 2 * step_fixed_s(step, eager=True)
    assert seconds == pytest.approx(2 * 5.1e9 * 4096 / (0.68 * 27.2e12) + fixed)
    assert seconds > 100 * (2 * 2.8e9 / 800e9)
