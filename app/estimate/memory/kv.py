"""KV cache size per sequence and per GPU, by attention kind."""

from __future__ import annotations

import math

import msgspec

from app.estimate.basis import Basis, weakest
from app.estimate.errors import EstimateError
from app.estimate.inputs.attention import (
    KV_DTYPE_BYTES,
    cached_layers,
    check_attention_data,
    kv_dtype_bytes,
    kv_fields,
    kv_unknown,
)
from app.estimate.inputs.specs import ModelSpec


def kv_basis(model: ModelSpec) -> Basis:
    """Basis of a KV size: arithmetic on the model fields it uses; assumed when unknown."""
    if kv_unknown(model):
        return Basis.ASSUMED
    return weakest(Basis.DERIVED, *(model.basis_of(name) for name in kv_fields(model)))


def elements_per_token_per_layer(model: ModelSpec, tensor_parallel: int) -> int:
    """Cached elements per token in one layer on one GPU."""
    if kv_unknown(model):
        return 0
    if model.attention == "mla":
        # The compressed latent is replicated on every rank, never split.
        return model.kv_lora_rank + model.qk_rope_head_dim
    kv_heads_per_gpu = -(-model.num_kv_heads // tensor_parallel)
    return 2 * kv_heads_per_gpu * model.head_dim


def growing_layers(model: ModelSpec, caps_sliding_window: bool) -> int:
    """Layers whose cache keeps growing with context."""
    capped = model.sliding_window_layers if caps_sliding_window else 0
    return cached_layers(model) - capped


def kv_growth_bytes_per_token(
    model: ModelSpec,
    kv_dtype: str = "auto",
    caps_sliding_window: bool = True,
    tensor_parallel: int = 1,
) -> int:
    """Bytes the cache of one sequence grows by per token, past any sliding window, on one GPU."""
    check_attention_data(model)
    return checked_kv_growth_bytes_per_token(model, kv_dtype, caps_sliding_window, tensor_parallel)


def checked_kv_growth_bytes_per_token(
    model: ModelSpec, kv_dtype: str, caps_sliding_window: bool, tensor_parallel: int
) -> int:
    """`kv_growth_bytes_per_token` for a model already checked."""
    per_layer = elements_per_token_per_layer(model, tensor_parallel)
    elements = per_layer * growing_layers(model, caps_sliding_window)
    size = kv_dtype_bytes(kv_dtype)
    return -(-elements * size.numerator // size.denominator)  # exact ceiling, in integers


def kv_cache_bytes(
    model: ModelSpec,
    context: int,
    kv_dtype: str = "auto",
    caps_sliding_window: bool = True,
    tensor_parallel: int = 1,
) -> int:
    """KV cache bytes of one sequence on one GPU at a context length."""
    check_attention_data(model)
    _check_positive("context", context)
    _check_positive("tensor_parallel", tensor_parallel)
    kv_dtype_bytes(kv_dtype)
    return checked_kv_cache_bytes(model, context, kv_dtype, caps_sliding_window, tensor_parallel)


def checked_kv_cache_bytes(
    model: ModelSpec, context: int, kv_dtype: str, caps_sliding_window: bool, tensor_parallel: int
) -> int:
    """`kv_cache_bytes` for inputs already checked."""
    return kv_shape(model, kv_dtype, caps_sliding_window, tensor_parallel).bytes_at(context)


class KvShape(msgspec.Struct, frozen=True):
    """What the KV cache of one sequence on one GPU is made of, worked out once so that its
    size at a context is integer arithmetic: the estimator's inner loop asks it many times."""

    per_layer: int  # cached elements per token in one layer
    full_layers: int  # layers that grow with every token
    sliding_layers: int  # layers capped at the window (when the runtime caps them)
    window: int | None  # tokens a capped layer keeps; None when none is capped
    numerator: int  # bytes per element, as an exact fraction
    denominator: int
    linear_state: int  # fixed state bytes of linear-attention layers

    def bytes_at(self, context: int) -> int:
        sliding = self.sliding_layers
        sliding_tokens = min(context, self.window) if self.window is not None else context
        elements = self.per_layer * (self.full_layers * context + sliding * sliding_tokens)
        cached = -(-elements * self.numerator // self.denominator)  # exact ceiling, integers
        return cached + self.linear_state

    def growth_bytes_per_token(self) -> int:
        """Bytes the cache grows by per token past any capped window."""
        growing = self.full_layers + (self.sliding_layers if self.window is None else 0)
        return -(-self.per_layer * growing * self.numerator // self.denominator)


def layer_share(shape: KvShape, cards: int) -> KvShape:
    """The cache of one card when the layers are split over `cards` cards: the busiest card
    holds a whole-layer share, rounded up, of each kind of layer and of the fixed state."""
    if cards == 1:
        return shape
    return msgspec.structs.replace(
        shape,
        full_layers=-(-shape.full_layers // cards),
        sliding_layers=-(-shape.sliding_layers // cards),
        linear_state=-(-shape.linear_state // cards),
    )


def kv_shape(
    model: ModelSpec, kv_dtype: str, caps_sliding_window: bool, tensor_parallel: int
) -> KvShape:
    """The shape of a checked model's KV cache at a dtype, runtime rule and TP size."""
    sliding = model.sliding_window_layers
    size = KV_DTYPE_BYTES[kv_dtype]
    return KvShape(
        per_layer=elements_per_token_per_layer(model, tensor_parallel),
        full_layers=cached_layers(model) - sliding,
        sliding_layers=sliding,
        window=model.sliding_window if caps_sliding_window and sliding else None,
        numerator=size.numerator,
        denominator=size.denominator,
        linear_state=linear_state_bytes(model, tensor_parallel),
    )


def largest_context_within(
    model: ModelSpec,
    budget_bytes: float,
    kv_dtype: str = "auto",
    caps_sliding_window: bool = True,
    tensor_parallel: int = 1,
) -> float:
    """The context whose cache just fills `budget_bytes` for one sequence on one GPU.

    The cache is linear in context for every layer kind, with one bend where capped sliding
    windows stop growing, so this is a closed form. It is a real number: callers round it
    to their step and confirm the neighbours with `kv_cache_bytes` (rounding up of partial
    bytes can move the boundary by a token).
    """
    check_attention_data(model)
    kv_dtype_bytes(kv_dtype)
    return checked_largest_context_within(
        model, budget_bytes, kv_dtype, caps_sliding_window, tensor_parallel
    )


def checked_largest_context_within(
    model: ModelSpec,
    budget_bytes: float,
    kv_dtype: str,
    caps_sliding_window: bool,
    tensor_parallel: int,
) -> float:
    """`largest_context_within` for a model and dtype already checked."""
    element_bytes = float(KV_DTYPE_BYTES[kv_dtype])
    per_layer = elements_per_token_per_layer(model, tensor_parallel) * element_bytes
    room = budget_bytes - linear_state_bytes(model, tensor_parallel)
    if room < 0:
        return 0.0
    sliding = model.sliding_window_layers if caps_sliding_window else 0
    full = cached_layers(model) - sliding
    window = model.sliding_window or 0
    below_window = (full + sliding) * per_layer  # bytes per token while every layer grows
    if below_window == 0:
        return math.inf
    if not sliding or room <= below_window * window:
        return room / below_window
    if full == 0:
        return math.inf  # only capped layers: the cache stops growing at the window
    return (room - sliding * per_layer * window) / (full * per_layer)


def linear_state_bytes(model: ModelSpec, tensor_parallel: int) -> int:
    """Fixed per-sequence state of linear-attention layers on one GPU."""
    if model.attention != "hybrid_linear":
        return 0
    return -(-model.linear_state_bytes_per_seq // tensor_parallel)


def _check_positive(field: str, value: int) -> None:
    """Refuse a count below one."""
    if value < 1:
        raise EstimateError(field, f"{field} must be at least 1, got {value}")
