"""The described path at the estimator's level: interleaved and shared-expert MoE layouts
sized as their configs lay them out, a config without a context answered at the context
asked, tensor parallel over unknown heads assumed and said, a model the data cannot size
given its own verdict, and the names people use for cards and quants."""

import json
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pytest

from app.asking.custom import custom_hardware
from app.asking.described import CONTEXT_WITHOUT_FIELD, described_model
from app.asking.gpu_table import AmbiguousGpu, find_gpu, lookup_gpu, match_gpu
from app.asking.model_sources import from_hf_config
from app.catalog.specs import hardware_spec, model_spec
from app.estimate import Plan, Route, Verdict, assess, estimate
from app.estimate.inputs.hf_config import read_hf_config
from app.estimate.inputs.quants import lookup_quant
from app.estimate.inputs.specs import UNKNOWN_ATTENTION, ArtifactSpec, ModelSpec
from app.estimate.memory.weights import weights_by_tensor_kind
from app.estimate.messages import Code, message
from tests.estimate.estimate_specs import H200_X8, LLAMA_70B, QWEN3_NEXT, SGLANG, VLLM

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
MAVERICK = "llama-4-maverick-17b-128e-instruct"
SCOUT = "llama-4-scout-17b-16e-instruct"


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def spec_of(raw: dict, context: int | None = None) -> ModelSpec:
    return model_spec(described_model(from_hf_config(raw, "BF16"), context))


# (config, published total B, published active B, MoE layers of all layers)
LAYOUTS = [
    (MAVERICK, 400, 17, 24, 48),  # every second layer MoE: 128 routed + 1 shared expert
    (SCOUT, 109, 17, 48, 48),  # every layer MoE: 16 routed + 1 shared expert
    ("deepseek-v3", 671, 37, 58, 61),  # the first 3 layers dense
    ("qwen3-30b-a3b", 30.5, 3.3, 48, 48),
]


@pytest.mark.parametrize(("name", "total_b", "active_b", "moe", "layers"), LAYOUTS)
def test_moe_layouts_are_counted_as_the_config_lays_them_out(
    name: str, total_b: float, active_b: float, moe: int, layers: int
) -> None:
    shape = read_hf_config(config(name))
    assert (shape.moe_layers, shape.num_layers) == (moe, layers)
    assert shape.params_total / 1e9 == pytest.approx(total_b, rel=0.02)
    assert shape.params_active / 1e9 == pytest.approx(active_b, rel=0.03)


def test_maverick_in_bf16_is_800_gb_and_100_gb_per_gpu_on_eight() -> None:
    shape = read_hf_config(config(MAVERICK))
    weights = weights_by_tensor_kind(shape, lookup_quant("BF16")).value / 1e9
    # 400B parameters at 2 bytes; every layer sized as MoE it came out at 1,550 GB.
    assert weights == pytest.approx(801, rel=0.01)
    spec = spec_of(config(MAVERICK), 8192)
    assert (spec.experts, spec.active_experts, spec.moe_layers) == (128, 1, 24)
    artifact = ArtifactSpec(
        "maverick-bf16", "safetensors", "bf16", 16.0, size_bytes=int(weights * 1e9)
    )
    answer = estimate(spec, artifact, VLLM, H200_X8, Plan(context=8192))
    assert answer.tensor_parallel == 8  # 40 heads split over 8
    assert answer.memory.weights.value == pytest.approx(100, rel=0.01)
    assert answer.memory.fits


def test_listed_moe_layers_and_dense_layers_are_honoured() -> None:
    maverick = config(MAVERICK)
    listed = {**maverick, "text_config": {**maverick["text_config"], "moe_layers": [1, 3, 5]}}
    assert read_hf_config(listed).moe_layers == 3
    qwen = config("qwen3-30b-a3b")
    assert read_hf_config({**qwen, "mlp_only_layers": [0, 1, 2, 3]}).moe_layers == 44


def test_the_spec_carries_the_layout_and_mtp_layers_of_a_config() -> None:
    deepseek = spec_of(config("deepseek-v3"))
    assert (deepseek.experts, deepseek.active_experts, deepseek.moe_layers) == (256, 8, 58)
    assert deepseek.mtp_layers == 1  # num_nextn_predict_layers
    dense = spec_of(config("llama-3.1-8b"))
    assert (dense.experts, dense.moe_layers, dense.mtp_layers) == (0, 0, 0)


def test_a_config_without_a_context_is_answered_at_the_context_asked() -> None:
    raw = {k: v for k, v in config("llama-3.1-8b").items() if k != "max_position_embeddings"}
    assert read_hf_config(raw).native_context is None
    asked = described_model(from_hf_config(raw), context=32768)
    assert asked.native_context == 32768
    assert asked.basis["native_context"]["basis"] == "assumed"
    assert described_model(from_hf_config(raw)).native_context == CONTEXT_WITHOUT_FIELD
    # Other names configs give it under are read as published.
    renamed = {**raw, "max_sequence_length": 65536}
    assert read_hf_config(renamed).native_context == 65536


def test_tensor_parallel_over_unknown_heads_is_assumed_and_said() -> None:
    model = replace(LLAMA_70B, num_attention_heads=None)
    bf16 = ArtifactSpec("bf16", "safetensors", "bf16", 16.0, official=True)
    answer = estimate(model, bf16, VLLM, H200_X8, Plan(context=4096))
    assert answer.tensor_parallel == 8
    assert message(Code.TP_HEADS_ASSUMED, size=8) in answer.warnings
    known = estimate(LLAMA_70B, bf16, VLLM, H200_X8, Plan(context=4096))
    assert message(Code.TP_HEADS_ASSUMED, size=8) not in known.warnings
    # Head counts divide by 2, 4 and 8, seldom by 6: six cards are assumed to split by four.
    six = estimate(model, bf16, VLLM, replace(H200_X8, gpu_count=6), Plan(context=4096))
    assert six.tensor_parallel == 4
    assert message(Code.IDLE_GPUS, used=4, count=6) in six.warnings


NVFP4_32B = ArtifactSpec("m-nvfp4", "safetensors", "nvfp4", 4.5)
WEIGHTS_ONLY = ModelSpec("32b-3b", 32, 3, True, 4096, attention=UNKNOWN_ATTENTION)


def test_weights_that_fit_with_the_kv_cache_unknown_never_exceed_memory() -> None:
    rtx_5090 = hardware_spec(custom_hardware(lookup_gpu("RTX 5090")))
    routes = [Route(NVFP4_32B, runtime, False) for runtime in (VLLM, SGLANG)]
    found = assess(WEIGHTS_ONLY, rtx_5090, routes, 4096)
    assert found.verdict == Verdict.EXPERIMENTAL and found.route is not None
    assert found.estimate.memory.kv_cache.value == 0
    assert found.estimate.memory.kv_cache.note[0].code == Code.KV_NOT_COUNTED
    # The same counts at 320B do not fit on their weights alone: that is exceeding memory.
    huge = replace(WEIGHTS_ONLY, params_total_b=320)
    big = replace(NVFP4_32B, size_bytes=int(320e9 * 4.5 / 8))
    assert assess(huge, rtx_5090, [Route(big, VLLM, False)], 4096).verdict == (
        Verdict.EXCEEDS_MEMORY
    )


def test_a_model_the_data_cannot_size_gets_its_own_verdict() -> None:
    unsizable = replace(QWEN3_NEXT, linear_state_bytes_per_seq=None)
    bf16 = ArtifactSpec("bf16", "safetensors", "bf16", 16.0, official=True)
    found = assess(unsizable, H200_X8, [Route(bf16, VLLM, True)], 4096)
    assert found.verdict == Verdict.CANNOT_ESTIMATE and found.route is None
    (reason,) = found.reason
    assert reason.code == Code.CANNOT_ESTIMATE
    assert reason.params["why"].code == Code.KV_FIELDS_MISSING


# (name, memory GB, bandwidth GB/s, dense BF16 TFLOPS, link, vendor domain)
CARDS = [
    ("B300", 288, 8000, 2250, "nvswitch", "www.nvidia.com"),
    ("GB200", 186, 8000, 2500, "nvswitch", "www.nvidia.com"),
    ("GB300", 288, 8000, 2500, "nvswitch", "www.nvidia.com"),
    ("MI325X", 256, 6000, 1307, "xgmi", "www.amd.com"),
    ("MI350X", 288, 8000, 2300, "xgmi", "www.amd.com"),
    ("MI355X", 288, 8000, 2500, "xgmi", "www.amd.com"),
    ("H100", 80, 3350, 989, "nvswitch", "www.nvidia.com"),
    ("H200", 141, 4800, 989, "nvswitch", "www.nvidia.com"),
    ("B200", 180, 8000, 2250, "nvswitch", "www.nvidia.com"),
    ("MI300X", 192, 5300, 1307, "xgmi", "www.amd.com"),
    ("L40S", 48, 864, 362, "pcie", "www.nvidia.com"),
    ("L4", 24, 300, 121, "pcie", "www.nvidia.com"),
    ("A10", 24, 600, 125, "pcie", "www.nvidia.com"),
    ("H800", 80, 3350, 989, "nvswitch", "www.nvidia.com"),
    ("A800", 80, 2039, 312, "nvswitch", "www.nvidia.com"),
]


@pytest.mark.parametrize(("name", "memory", "bandwidth", "tflops", "link", "domain"), CARDS)
def test_datacenter_cards_are_found_with_their_figures_and_vendor_sources(
    name: str, memory: float, bandwidth: float, tflops: float, link: str, domain: str
) -> None:
    entry = find_gpu(name)
    assert (entry.memory_gb, entry.bandwidth_gb_s, entry.bf16_tflops, entry.link) == (
        memory,
        bandwidth,
        tflops,
        link,
    )
    assert urlparse(entry.source_url).netloc == domain
    machine = hardware_spec(custom_hardware(lookup_gpu(name, 8)))
    assert machine.bf16_tflops_per_gpu == tflops and machine.interconnect == link
    assert machine.basis_of("bf16_tflops_per_gpu") == "published"


def test_a_name_sold_in_several_sizes_answers_with_the_common_one() -> None:
    match = match_gpu("A100")
    assert match.entry.label == "A100 SXM 80 GB"
    assert [other.label for other in match.others] == ["A100 SXM 40 GB"]
    described = lookup_gpu("A100", 4)
    assert described.memory_gb_per_gpu == 80 and described.other_sizes == ("A100 SXM 40 GB",)
    # Named with its size, nothing is assumed.
    assert match_gpu("A100 40GB").others == () and find_gpu("A100 40GB").memory_gb == 40
    # A name with no common size still asks which one.
    with pytest.raises(AmbiguousGpu):
        find_gpu("RTX 4060 Ti")


@pytest.mark.parametrize(
    ("alias", "row"),
    [
        ("INT4-AWQ", "AWQ"),
        ("AWQ-INT4", "AWQ"),
        ("W4A16", "GPTQ-INT4"),
        ("W8A8", "INT8"),
        ("FP8-dynamic", "FP8"),
        ("NVFP4", "NVFP4"),
        ("nvfp4", "NVFP4"),
    ],
)
def test_quant_names_people_write_find_their_rows(alias: str, row: str) -> None:
    assert lookup_quant(alias).name == row
