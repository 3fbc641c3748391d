"""What the estimator and the resolution say, as codes and figures rather than sentences.

A verdict's reason, a warning or an offload split is a `Message`: a code from `Code` and the
numbers and names it speaks of. No language lives here; app/i18n/messages.py words each
code for the reader (or in English for the CLI and JSON's `text`), with the numbers
formatted for the reader's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any


class Code(StrEnum):
    """Every message the estimator and the resolution can give (one template each)."""

    # Verdict reasons, clause by clause.
    FITS_WITH_SPARE = "fits_with_spare"
    FITS = "fits"
    FITS_WITH_REQUESTS = "fits_with_requests"
    FITS_WITH_PAGED_REQUESTS = "fits_with_paged_requests"
    FITS_UP_TO = "fits_up_to"
    FITS_UP_TO_NOT_ASKED = "fits_up_to_not_asked"
    PAIRING_UNVERIFIED = "pairing_unverified"
    COMPRESSED_UNVERIFIED = "compressed_unverified"
    RUNS_WITH_OFFLOAD = "runs_with_offload"
    NEEDS_MEMORY = "needs_memory"
    FITS_BELOW_MINIMUM = "fits_below_minimum"
    NO_RUNTIME_RUNS_FORMATS = "no_runtime_runs_formats"
    NO_RUNTIME_RUNS_MODEL = "no_runtime_runs_model"
    CANNOT_ESTIMATE = "cannot_estimate"
    # Where an offloaded model's weights go.
    OFFLOAD_SPLIT_LAYERS = "offload_split_layers"
    OFFLOAD_SPLIT_EXPERTS = "offload_split_experts"
    OFFLOAD_SPLIT_LAYERS_CARDS = "offload_split_layers_cards"
    OFFLOAD_SPLIT_BYTES = "offload_split_bytes"
    OFFLOAD_SPLIT_EXPERTS_CARDS = "offload_split_experts_cards"
    # Warnings and cautions.
    PCIE_TENSOR_PARALLEL = "pcie_tensor_parallel"
    IDLE_GPUS = "idle_gpus"
    LAYER_SPLIT_IN_TURN = "layer_split_in_turn"
    BEYOND_NATIVE_CONTEXT = "beyond_native_context"
    UNCAPPED_SLIDING_WINDOW = "uncapped_sliding_window"
    Q4_KV_LONG_CONTEXT = "q4_kv_long_context"
    SPECULATIVE_WITH_MTP = "speculative_with_mtp"
    MTP_LAYERS = "mtp_layers"
    SPECULATIVE_ON = "speculative_on"
    OFFLOAD_SLOWER = "offload_slower"
    KV_UNKNOWN = "kv_unknown"
    # Why the estimator refused an input (the "cannot estimate" reason's cause).
    INPUT_REFUSED = "input_refused"
    KV_FIELDS_MISSING = "kv_fields_missing"
    ATTENTION_UNKNOWN = "attention_unknown"
    FIELD_BELOW = "field_below"
    LAYERS_CONTRADICT = "layers_contradict"
    EXPERTS_PER_TOKEN_RANGE = "experts_per_token_range"
    LAYER_TYPES_COUNT = "layer_types_count"
    MODEL_COUNTS_INVALID = "model_counts_invalid"
    HEADS_UNKNOWN = "heads_unknown"
    UNKNOWN_QUANT = "unknown_quant"
    UNKNOWN_QUANT_CLOSE = "unknown_quant_close"
    HEADS_NOT_DIVISIBLE = "heads_not_divisible"
    TOO_FEW_GPUS = "too_few_gpus"
    # What a described model's answer assumed where its description fell short.
    TP_HEADS_ASSUMED = "tp_heads_assumed"
    ASSUMED_NATIVE_CONTEXT = "assumed_native_context"
    GPU_SIZE_ASSUMED = "gpu_size_assumed"
    USABLE_FROM_CATALOG = "usable_from_catalog"
    LENGTHS_DEFAULTED = "lengths_defaulted"
    NO_TENSOR_PARALLEL = "no_tensor_parallel"
    KV_DTYPE_NOT_ACCEPTED = "kv_dtype_not_accepted"
    # Why the resolution applied a value (the knobs table's "why").
    TP_ONE_CARD = "tp_one_card"
    TP_SPLIT_BY_LAYER = "tp_split_by_layer"
    TP_NO_SPLIT = "tp_no_split"
    TP_HEADS_DIVIDE = "tp_heads_divide"
    TP_HEADS_DO_NOT_SPLIT = "tp_heads_do_not_split"
    CONTEXT_LOWERED = "context_lowered"
    CONCURRENCY_LOWERED = "concurrency_lowered"
    START_LOWERED = "start_lowered"
    ONE_REQUEST_OFFLOAD = "one_request_offload"
    ONE_REQUEST_NO_MORE_KV = "one_request_no_more_kv"
    # How a memory figure was reached (the breakdown's basis notes).
    WEIGHTS_FROM_PARAMS = "weights_from_params"
    WEIGHTS_RECORDED = "weights_recorded"
    WEIGHTS_RECORDED_FILE = "weights_recorded_file"
    WEIGHTS_BY_TENSOR_KIND = "weights_by_tensor_kind"
    TENSOR_KIND_EXPERTS = "tensor_kind_experts"
    TENSOR_KIND_LINEAR = "tensor_kind_linear"
    TENSOR_KIND_EMBEDDINGS = "tensor_kind_embeddings"
    WEIGHTS_DESCRIBED = "weights_described"
    WEIGHTS_STATED = "weights_stated"
    WEIGHTS_GGUF_HEADER = "weights_gguf_header"
    WEIGHTS_SPLIT_OVER = "weights_split_over"
    WEIGHTS_SPLIT_BY_LAYER = "weights_split_by_layer"
    WEIGHTS_IN_SYSTEM_MEMORY = "weights_in_system_memory"
    KV_AT = "kv_at"
    KV_NOT_COUNTED = "kv_not_counted"
    USABLE_UNIFIED = "usable_unified"
    USABLE_PER_GPU = "usable_per_gpu"
    RESERVE_GPU_MEMORY_UTILIZATION = "reserve_gpu_memory_utilization"
    RESERVE_MEMORY_FRACTION = "reserve_memory_fraction"
    RESERVE_CUDA_GRAPHS = "reserve_cuda_graphs"
    RESERVE_SGLANG = "reserve_sglang"
    RESERVE_FIXED = "reserve_fixed"
    WORKSPACE_IN_SGLANG_RESERVE = "workspace_in_sglang_reserve"
    WORKSPACE_HIDDEN_UNKNOWN = "workspace_hidden_unknown"
    WORKSPACE_PREFILL = "workspace_prefill"
    # How a speed range was reached (the speed notes).
    DECODE_READ = "decode_read"
    DECODE_BANDWIDTH_DENSE = "decode_bandwidth_dense"
    DECODE_BANDWIDTH_MOE = "decode_bandwidth_moe"
    DECODE_LAYERS_ASSUMED = "decode_layers_assumed"
    DECODE_FROM_SYSTEM_MEMORY = "decode_from_system_memory"
    DECODE_LONG_CONTEXT = "decode_long_context"
    DECODE_TENSOR_PARALLEL = "decode_tensor_parallel"
    DECODE_READ_IN_TURN = "decode_read_in_turn"
    DECODE_RUNTIME_FACTOR = "decode_runtime_factor"
    DECODE_RANGE_COVERS = "decode_range_covers"
    DECODE_STEP = "decode_step"
    DECODE_RANGE_HELD = "decode_range_held"
    DECODE_RANGE_BORROWED = "decode_range_borrowed"
    DECODE_RANGE_FEW_PUBLISHERS = "decode_range_few_publishers"
    DECODE_RANGE_CALIBRATED = "decode_range_calibrated"
    DECODE_CALIBRATED = "decode_calibrated"
    SPECULATIVE_SPEEDUP = "speculative_speedup"
    # The terms of a step (the "where the time goes" breakdown).
    TERM_WEIGHTS = "term_weights"
    TERM_KV_CACHE = "term_kv_cache"
    TERM_COMPUTE = "term_compute"
    TERM_COMMUNICATION = "term_communication"
    TERM_FIXED = "term_fixed"
    TERM_OFFLOAD = "term_offload"
    # The one change most likely to help (the breakdown's advice).
    ADVICE_TENSOR_PARALLEL = "advice_tensor_parallel"
    ADVICE_CONCURRENCY = "advice_concurrency"
    ADVICE_SPECULATIVE = "advice_speculative"
    ADVICE_CUDA_GRAPHS = "advice_cuda_graphs"
    ADVICE_KV_FP8 = "advice_kv_fp8"
    PREFILL_MFU = "prefill_mfu"
    PREFILL_ATTENTION_NOT_COUNTED = "prefill_attention_not_counted"
    # Where a shown figure comes from (the figure notes).
    MEASURED_SPEED_ONE = "measured_speed_one"
    MEASURED_SPEED = "measured_speed"
    MEASURED_PEAK_ONE = "measured_peak_one"
    MEASURED_PEAK = "measured_peak"
    TOKENS_AT = "tokens_at"
    TOKENS_SPAN = "tokens_span"
    ESTIMATED_EXACT = "estimated_exact"
    ESTIMATED_PUBLISHED = "estimated_published"
    ESTIMATED_DERIVED = "estimated_derived"
    ESTIMATED_ASSUMED = "estimated_assumed"
    ESTIMATED_ON_GPU = "estimated_on_gpu"
    SPECULATIVE_NOT_MODELLED = "speculative_not_modelled"
    REPORTED = "reported"
    # Why a runtime's command leaves a knob alone (the knobs table's notes).
    KNOB_SPLITS_BY_LAYER = "knob_splits_by_layer"
    KNOB_FIXED_MARGIN = "knob_fixed_margin"
    KNOB_NEEDS_DRAFT = "knob_needs_draft"
    KNOB_OWN_CUDA_GRAPHS = "knob_own_cuda_graphs"
    KNOB_ONE_APPLE_GPU = "knob_one_apple_gpu"
    KNOB_NO_CONTEXT_FLAG = "knob_no_context_flag"
    KNOB_KV_AT_MODEL_PRECISION = "knob_kv_at_model_precision"
    KNOB_NO_PREFILL_FLAG = "knob_no_prefill_flag"
    KNOB_NO_CONCURRENCY_FLAG = "knob_no_concurrency_flag"
    KNOB_UNIFIED_SHARE = "knob_unified_share"
    KNOB_NOT_CUDA = "knob_not_cuda"
    KNOB_BATCH_PER_MODEL = "knob_batch_per_model"
    KNOB_NO_SPECULATIVE = "knob_no_speculative"
    KNOB_MODEL_PRECISION = "knob_model_precision"
    KNOB_ON_BY_DEFAULT = "knob_on_by_default"
    # An input the answer rests on that was assumed (the estimate's "Assumed:" list).
    ASSUMED_WEIGHTS = "assumed_weights"
    ASSUMED_KV_CACHE = "assumed_kv_cache"
    ASSUMED_PREFILL_WORKSPACE = "assumed_prefill_workspace"
    ASSUMED_RUNTIME_RESERVE = "assumed_runtime_reserve"
    ASSUMED_HARDWARE = "assumed_hardware"
    ASSUMED_QUANT = "assumed_quant"
    QUANT_SIZED_LIKE = "quant_sized_like"
    CUSTOM_USABLE_SHARE = "custom_usable_share"
    # The name a described model gets when none is given.
    DESCRIBED_DENSE = "described_dense"
    DESCRIBED_MOE = "described_moe"
    DESCRIBED_SAFETENSORS = "described_safetensors"
    # The runtime versions an official source vouches for.
    VERSIONS_BETWEEN = "versions_between"
    VERSIONS_FROM = "versions_from"
    VERSIONS_ANY = "versions_any"
    # How to share a server with other machines (the detail page's shared setup).
    SHARED_WITH_KEY = "shared_with_key"
    SHARED_NO_ACCESS_CONTROL = "shared_no_access_control"


@dataclass(frozen=True, slots=True)
class Message:
    """A code and its parameters: numbers, names, lists of names, or other messages.

    An unknown code is refused here, so a sentence without a template cannot be made.
    """

    code: Code
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if type(self.code) is not Code:
            object.__setattr__(self, "code", Code(self.code))  # ValueError when unknown

    def __hash__(self) -> int:
        return hash((self.code, tuple(sorted(self.params.items(), key=_key))))

    def as_json(self) -> dict[str, Any]:
        """The code and its parameters; a list stays a list, a message a nested object."""
        return {"code": self.code.value, "params": {k: _json(v) for k, v in self.params.items()}}


def _key(item: tuple[str, Any]) -> str:
    return item[0]


def _json(value: Any) -> Any:
    if isinstance(value, Message):
        return value.as_json()
    if isinstance(value, tuple | list):
        return [_json(v) for v in value]
    return value


Notes = tuple[Message, ...]  # how a figure was reached, clause by clause


def plain(value: float) -> int | float:
    """A number as `:g` would show it: a whole number without its decimal point."""
    return int(value) if float(value).is_integer() else value


def message(code: Code, **params: Any) -> Message:
    """A message; list parameters are kept as tuples so the message stays hashable.

    A message is frozen, so one instance serves every call with the same code and
    parameters: a catalog pass asks for some 25,000 messages, about 1,000 of them distinct
    (a card's usable memory, a runtime's reserve), and finding one costs less than making it.
    """
    try:
        return _kept(code, **params)
    except TypeError:  # an unhashable parameter (a list): made afresh, as a tuple
        return _made(code, **params)


def _made(code: Code, **params: Any) -> Message:
    for name, value in params.items():  # a fresh dict: the keyword arguments' own
        if type(value) is list:
            params[name] = tuple(value)
    return Message(code, params)


# Typed, so parameters that are equal but worded differently (2 and 2.0) keep their own
# message; the least recently used of the distinct messages kept go first.
MESSAGES_KEPT = 4096
_kept = lru_cache(maxsize=MESSAGES_KEPT, typed=True)(_made)
