"""What goes into an estimate: the model, its file, the runtime, the hardware and the plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from app.estimate.basis import Basis
from app.estimate.messages import Code, Notes, message

if TYPE_CHECKING:
    from app.estimate.speed.coefficients import Coefficients

# The catalog seed names some hardware figures differently from the fields below.
_HARDWARE_BASIS_ALIASES: dict[str, str] = {
    "memory_gb_per_gpu": "memory_gb",
    "usable_gb_per_gpu": "usable_memory_gb",
    "bandwidth_gb_s_per_gpu": "memory_bandwidth_gb_s",
    "bf16_tflops_per_gpu": "bf16_dense_tflops",
}


# A model described only by its parameter counts: its KV cache cannot be sized.
UNKNOWN_ATTENTION = "unknown"


@dataclass(frozen=True)
class ModelSpec:
    """Architecture facts of a model that drive its memory and speed."""

    slug: str
    params_total_b: float
    params_active_b: float
    is_moe: bool
    native_context: int
    num_layers: int | None = None
    num_attention_heads: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None
    attention: str = "gqa"  # "gqa" (incl. MHA) | "mla" | "hybrid_linear" | "unknown"
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    full_attention_layers: int | None = None
    linear_state_bytes_per_seq: int | None = None
    # MoE layout: routed experts per MoE layer, how many a token is sent to, and how many
    # layers are MoE (interleaved layouts such as Llama 4 alternate MoE and dense layers).
    experts: int | None = None
    active_experts: int | None = None
    moe_layers: int | None = None
    mtp_layers: int = 0  # multi-token-prediction layers shipped for speculative decoding
    basis: Mapping[str, Basis] = field(default_factory=dict, hash=False)

    def basis_of(self, field_name: str) -> Basis:
        """Basis of one field; published unless the catalog says otherwise."""
        found = self.basis.get(field_name, Basis.PUBLISHED)
        return found if type(found) is Basis else Basis(found)


@dataclass(frozen=True)
class ArtifactSpec:
    """One set of weights of a model: official checkpoint or community quantization."""

    slug: str
    format: str  # "safetensors" | "gguf" | "mlx"
    quant: str
    bits_per_weight: float  # effective whole-file bits per weight
    size_bytes: int | None = None
    size_basis: Basis = Basis.EXACT
    size_note: Notes = (message(Code.WEIGHTS_RECORDED_FILE),)
    official: bool = False


@dataclass(frozen=True)
class BudgetRule:
    """How a runtime decides how much GPU memory it leaves for itself."""

    kind: str  # "vllm_fraction" | "sglang_static" | "fixed_margin"
    fraction: float | None = None
    margin_gb: float = 0.0


@dataclass(frozen=True)
class RuntimeSpec:
    """A serving runtime: where it runs, what it loads and how it budgets memory."""

    slug: str
    platforms: frozenset[str]
    formats: frozenset[str]
    budget: BudgetRule
    tensor_parallel: bool = False
    # Spreads whole layers over several cards (llama.cpp `--split-mode layer`, Ollama): each
    # card holds its layers' weights and KV cache, and the cards run one after another.
    layer_split: bool = False
    kv_dtypes: tuple[str, ...] = ("auto",)
    caps_sliding_window: bool = True
    cuda_graphs: bool = False
    default_prefill_tokens: int = 2048


@dataclass(frozen=True)
class HardwareSpec:
    """A hardware configuration: one device type times a count, per-GPU figures."""

    slug: str
    platform: str
    unified_memory: bool
    gpu_count: int
    memory_gb_per_gpu: float
    usable_gb_per_gpu: float
    bandwidth_gb_s_per_gpu: float | None
    bf16_tflops_per_gpu: float | None = None
    interconnect: str = "none"  # "nvlink" | "nvswitch" | "xgmi" | "pcie" | "none"
    basis: Mapping[str, Basis] = field(default_factory=dict, hash=False)
    # Coefficients fitted on this hardware by runtime slug (`servebook calibrate`): they
    # stand for the shipped ones of that runtime, for every model.
    calibrated: Mapping[str, Coefficients] = field(default_factory=dict, hash=False)

    def basis_of(self, field_name: str) -> Basis:
        """Basis of one figure, by field name or the seed's name for it; published by default."""
        alias = _HARDWARE_BASIS_ALIASES.get(field_name, field_name)
        found = self.basis.get(field_name, self.basis.get(alias, Basis.PUBLISHED))
        return found if type(found) is Basis else Basis(found)


class Plan(msgspec.Struct, frozen=True):
    """How the model is to be served; None fields take the runtime's or hardware's default."""

    context: int
    concurrency: int = 1
    kv_dtype: str = "auto"
    prefill_tokens: int | None = None
    tensor_parallel: int | None = None
    cuda_graphs: bool | None = None
    # The share of each GPU the runtime may take (vLLM gpu_memory_utilization, SGLang
    # mem_fraction_static); None keeps the runtime's own budget rule.
    memory_fraction: float | None = None


class Serving(NamedTuple):
    """What every estimate is asked about, as one value: a model file of a model, on a
    runtime and a hardware configuration, under a plan. The estimator's public functions
    take the five by name; inside, they travel together as this."""

    model: ModelSpec
    artifact: ArtifactSpec
    runtime: RuntimeSpec
    hardware: HardwareSpec
    plan: Plan


@lru_cache(maxsize=4096, typed=True)
def shared_plan(
    context: int,
    concurrency: int,
    kv_dtype: str,
    prefill_tokens: int | None,
    tensor_parallel: int | None,
    cuda_graphs: bool | None,
    memory_fraction: float | None,
) -> Plan:
    """The plan of these values, one instance for each distinct set: plans are frozen, and
    a catalog pass asks for the same few thousand some ten thousand times."""
    return Plan(
        context,
        concurrency,
        kv_dtype,
        prefill_tokens,
        tensor_parallel,
        cuda_graphs,
        memory_fraction,
    )


# Runtimes that share a serving engine's scheduling and kernels: the step model's
# coefficients and the KV pool's pages go by family.
RUNTIME_FAMILY: dict[str, str] = {
    "vllm": "vllm",
    "sglang": "sglang",
    "llama-cpp": "llama.cpp",
    "ollama": "llama.cpp",
    "mlx-lm": "mlx",
}


def family_of(runtime: str) -> str:
    """A runtime's family (llama.cpp's for a runtime the table does not name)."""
    return RUNTIME_FAMILY.get(runtime, "llama.cpp")
