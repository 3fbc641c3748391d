"""What a model's attention fields must hold to size its KV cache, checked before any
estimate: the fields each attention kind needs, the layers that keep a per-token cache, and
the bytes of each KV cache dtype. `app.estimate.memory.kv` sizes the cache from them."""

from __future__ import annotations

from fractions import Fraction

from app.estimate.errors import EstimateError
from app.estimate.inputs.specs import UNKNOWN_ATTENTION, ModelSpec
from app.estimate.messages import Code, message

# Bytes per cached element; llama.cpp block formats include their per-block scales.
KV_DTYPE_BYTES: dict[str, Fraction] = {
    "auto": Fraction(2),
    "bf16": Fraction(2),
    "fp16": Fraction(2),
    "fp8": Fraction(1),
    "fp8_e4m3": Fraction(1),
    "fp8_e5m2": Fraction(1),
    "q8_0": Fraction(17, 16),
    "q4_0": Fraction(9, 16),
}

_REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "gqa": ("num_layers", "num_kv_heads", "head_dim"),
    "mla": ("num_layers", "kv_lora_rank", "qk_rope_head_dim"),
    "hybrid_linear": (
        "num_layers",
        "num_kv_heads",
        "head_dim",
        "full_attention_layers",
        "linear_state_bytes_per_seq",
    ),
    # A model known only by its parameter counts: the KV term cannot be sized. Estimates
    # then cover the weights alone and say so (see `kv_unknown`), never a silent zero.
    UNKNOWN_ATTENTION: (),
}


def kv_unknown(model: ModelSpec) -> bool:
    """Whether the model's KV cache cannot be sized (weights-only estimates)."""
    return model.attention == UNKNOWN_ATTENTION


_POSITIVE_FIELDS = frozenset({"num_layers", "num_kv_heads", "head_dim", "sliding_window"})


def kv_dtype_bytes(kv_dtype: str) -> Fraction:
    """Bytes per cached element for a KV cache dtype."""
    if kv_dtype not in KV_DTYPE_BYTES:
        known = ", ".join(KV_DTYPE_BYTES)
        raise EstimateError("kv_dtype", f"unknown KV cache dtype {kv_dtype!r}; known: {known}")
    return KV_DTYPE_BYTES[kv_dtype]


def kv_fields(model: ModelSpec) -> tuple[str, ...]:
    """The model fields the KV cache size depends on."""
    sliding = ("sliding_window", "sliding_window_layers") if model.sliding_window_layers else ()
    return _REQUIRED_FIELDS.get(model.attention, ()) + sliding


def check_attention_data(model: ModelSpec) -> None:
    """Refuse a model whose attention data cannot size its KV cache."""
    if model.attention not in _REQUIRED_FIELDS:
        kinds = ", ".join(_REQUIRED_FIELDS)
        raise EstimateError(
            "model",
            f"{model.slug}: unknown attention {model.attention!r}; known: {kinds}",
            message(Code.ATTENTION_UNKNOWN, model=model.slug, attention=model.attention),
        )
    missing = [name for name in kv_fields(model) if getattr(model, name) is None]
    if missing:
        raise EstimateError(
            "model",
            f"{model.slug}: cannot size the KV cache without {', '.join(missing)}",
            message(Code.KV_FIELDS_MISSING, model=model.slug, fields=", ".join(missing)),
        )
    _check_layer_counts(model)


def _check_layer_counts(model: ModelSpec) -> None:
    """Refuse sizes and layer counts that contradict each other."""
    for name in kv_fields(model):
        lowest = 1 if name in _POSITIVE_FIELDS else 0
        if getattr(model, name) < lowest:
            raise EstimateError(
                "model",
                f"{model.slug}: {name} must be at least {lowest}",
                message(Code.FIELD_BELOW, model=model.slug, field=name, lowest=lowest),
            )
    if model.full_attention_layers is not None and model.full_attention_layers > model.num_layers:
        raise EstimateError(
            "model",
            f"{model.slug}: more full-attention layers than layers",
            message(Code.LAYERS_CONTRADICT, model=model.slug),
        )
    if model.sliding_window_layers > cached_layers(model):
        raise EstimateError(
            "model",
            f"{model.slug}: more sliding-window layers than KV layers",
            message(Code.LAYERS_CONTRADICT, model=model.slug),
        )


def cached_layers(model: ModelSpec) -> int:
    """Layers that keep a per-token KV cache (linear-attention layers keep a fixed state)."""
    if model.attention == "hybrid_linear":
        return model.full_attention_layers or 0
    return model.num_layers or 0
