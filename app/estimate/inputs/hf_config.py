"""A Hugging Face config.json read into the estimator's model fields, with parameter counts
derived from the shapes it gives.

Counts are of the language model (a multimodal config's `text_config`); vision and audio
towers and multi-token-prediction layers are left out, as published totals mostly do.
MoE layers are counted as the config lays them out: every `decoder_sparse_step`-th or
`interleave_moe_layer_step`-th layer (Llama 4 Maverick alternates MoE and dense layers),
past `first_k_dense_replace`, without `mlp_only_layers`, or the `moe_layers` listed.
Active parameters count everything a token passes through: attention, dense layers, the
shared and the routed experts it is sent to, the router, and both embedding tables (the
convention Qwen, DeepSeek and Mistral publish; OpenAI's gpt-oss figures omit embeddings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.estimate.errors import EstimateError
from app.estimate.messages import Code, message

# Fields transformers fills in when a config leaves them out, by model type.
MODEL_TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {
        "vocab_size": 262208,
        "max_position_embeddings": 131072,
        "sliding_window_pattern": 6,
        "tie_word_embeddings": True,
    },
    "gemma2": {"tie_word_embeddings": True},
    "gemma": {"tie_word_embeddings": True},
}
# Models whose full-attention layers carry an output gate (q_proj is twice as wide).
_GATED_ATTENTION = {"qwen3_next"}
# Llama 4: every MoE layer adds one always-active shared expert of the routed experts' size,
# and its dense layers have their own, wider MLP (`intermediate_size_mlp`).
LLAMA4 = {"llama4", "llama4_text"}
# The names a config gives each field under (the first one given is read); the schema the
# API states (app.estimate.inputs.hf_config_schema) is written from the same names.
LAYER_FIELDS = ("num_hidden_layers", "n_layer", "num_layers")
HIDDEN_FIELDS = ("hidden_size", "n_embd", "d_model")
HEAD_FIELDS = ("num_attention_heads", "n_head")
EXPERT_FIELDS = ("num_local_experts", "num_experts", "n_routed_experts")
ACTIVE_EXPERT_FIELDS = ("num_experts_per_tok", "experts_per_token", "top_k_experts")
MLA_FIELDS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
LINEAR_FIELDS = (
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
)
# Fields a config may give its native context under.
CONTEXT_FIELDS = (
    "max_position_embeddings",
    "max_seq_len",
    "max_sequence_length",
    "n_positions",
    "n_ctx",
    "seq_length",
    "model_max_length",
)
# Linear-attention recurrent state is kept in fp32, the conv state in the model's 16 bits.
STATE_BYTES, CONV_BYTES = 4, 2


@dataclass(frozen=True)
class ModelShape:
    """What a config says about a model, in the estimator's terms."""

    model_type: str
    native_context: int | None  # None: the config names no context (the caller assumes one)
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int | None
    vocab_size: int
    attention: str  # gqa | mla | hybrid_linear
    kv_lora_rank: int | None
    qk_rope_head_dim: int | None
    sliding_window: int | None
    sliding_window_layers: int
    full_attention_layers: int | None
    linear_state_bytes_per_seq: int | None
    experts: int
    active_experts: int
    embedding_params: int  # input table plus output head (once when tied)
    expert_params: int  # every routed expert of every layer
    active_expert_params: int  # the routed experts one token is sent to
    linear_params: int  # everything else: attention, dense MLPs, shared experts, routers, norms
    tied_embeddings: bool
    moe_layers: int = 0  # layers with routed experts (the rest are dense)
    mtp_layers: int = 0  # multi-token-prediction layers shipped beside the model

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def params_total(self) -> int:
        return self.embedding_params + self.expert_params + self.linear_params

    @property
    def params_active(self) -> int:
        return self.embedding_params + self.active_expert_params + self.linear_params


class _Config:
    """Reads fields under their several names, refusing missing or malformed ones by name."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise EstimateError("hf_config", "a config.json must be a JSON object")
        self.values = merged_config(raw)
        self.model_type = str(self.values.get("model_type") or "")

    def int(self, *names: str, default: int | None = None, required: bool = True) -> int | None:
        for name in names:
            value = self.values.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise EstimateError("hf_config", f"{name} must be a whole number, got {value!r}")
            if int(value) != value:
                raise EstimateError("hf_config", f"{name} must be a whole number, got {value!r}")
            return int(value)
        if default is None and required:
            raise EstimateError("hf_config", f"the config has no {' / '.join(names)}")
        return default

    def get(self, name: str, default: Any = None) -> Any:
        value = self.values.get(name)
        return default if value is None else value


def merged_config(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The fields as read: the language model's (`text_config`) over the top level's, over
    the defaults transformers fills in for its model type (a null gives none: a default,
    or the level below, stands)."""
    text = raw.get("text_config")
    merged = dict(raw)
    if isinstance(text, Mapping):
        given = {k: v for k, v in text.items() if v is not None}
        merged = {**{k: v for k, v in raw.items() if k != "text_config"}, **given}
    model_type = str(merged.get("model_type") or "")
    given = {k: v for k, v in merged.items() if v is not None}
    return {**MODEL_TYPE_DEFAULTS.get(model_type, {}), **given}


def read_hf_config(raw: Mapping[str, Any]) -> ModelShape:
    """The model fields and parameter counts a config.json gives."""
    c = _Config(raw)
    layers = c.int(*LAYER_FIELDS)
    hidden = c.int(*HIDDEN_FIELDS)
    heads = c.int(*HEAD_FIELDS)
    if not layers or not hidden or not heads:
        raise EstimateError("hf_config", "layers, hidden_size and attention heads must be > 0")
    kv_heads = c.int("num_key_value_heads", "n_head_kv", default=heads)
    head_dim = c.int("head_dim", default=hidden // heads)
    vocab = c.int("vocab_size")
    context = c.int(*CONTEXT_FIELDS, required=False)
    tied = bool(c.get("tie_word_embeddings", True))
    embedding = vocab * hidden * (1 if tied else 2)

    attention, mla, linear = _attention_kind(c), None, None
    if attention == "mla":
        mla = (c.int("kv_lora_rank"), c.int("qk_rope_head_dim"))
    full_layers, linear_layers = _full_and_linear_layers(c, layers)
    if attention == "hybrid_linear":
        linear = _linear_state_bytes(c, linear_layers)
    window, sliding_layers = _sliding(c, layers)

    experts, active, routed_each, moe_layers = _moe(c, hidden)
    dense_layers = layers - moe_layers
    attention_params = _attention_params(c, attention, hidden, heads, kv_heads, head_dim)
    linear_attention_params = _linear_attention_params(c, hidden) if linear_layers else 0
    linear_params = (
        attention_params * full_layers
        + linear_attention_params * linear_layers
        + dense_layers * 3 * hidden * _dense_mlp_size(c)
        + moe_layers * (_shared_expert_params(c, hidden) + hidden * experts)
        + layers * 2 * hidden  # the two norms of each layer
    )
    return ModelShape(
        model_type=c.model_type,
        native_context=context,
        num_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=c.int("intermediate_size", "ffn_dim", required=False),
        vocab_size=vocab,
        attention=attention,
        kv_lora_rank=mla[0] if mla else None,
        qk_rope_head_dim=mla[1] if mla else None,
        sliding_window=window,
        sliding_window_layers=sliding_layers,
        full_attention_layers=full_layers if attention == "hybrid_linear" else None,
        linear_state_bytes_per_seq=linear,
        experts=experts,
        active_experts=active,
        embedding_params=embedding,
        expert_params=routed_each * experts * moe_layers,
        active_expert_params=routed_each * active * moe_layers,
        linear_params=linear_params,
        tied_embeddings=tied,
        moe_layers=moe_layers,
        mtp_layers=c.int("num_nextn_predict_layers", default=0) or 0,
    )


def _attention_kind(c: _Config) -> str:
    if c.get("kv_lora_rank"):
        return "mla"
    types = c.get("layer_types") or []
    if "linear_attention" in types or c.get("full_attention_interval"):
        return "hybrid_linear"
    return "gqa"


def _full_and_linear_layers(c: _Config, layers: int) -> tuple[int, int]:
    """Layers with full attention and with linear attention (Gated DeltaNet and kin)."""
    types = c.get("layer_types")
    if types:
        _check_layer_types(types, layers)
        linear = sum(1 for kind in types if kind == "linear_attention")
        return layers - linear, linear
    interval = c.int("full_attention_interval", required=False)
    if interval:
        full = layers // interval  # layers i with (i + 1) % interval == 0
        return full, layers - full
    return layers, 0


def _check_layer_types(types: Any, layers: int) -> None:
    if not isinstance(types, list) or len(types) != layers:
        raise EstimateError(
            "hf_config",
            f"layer_types must list one kind per layer ({layers} layers)",
            message(Code.LAYER_TYPES_COUNT, layers=layers),
        )


def _sliding(c: _Config, layers: int) -> tuple[int | None, int]:
    """The sliding window and how many layers use it (0 when none does)."""
    window = c.int("sliding_window", required=False)
    if not window or c.get("use_sliding_window") is False:
        return None, 0
    types = c.get("layer_types")
    if types:
        _check_layer_types(types, layers)
        count = sum(1 for kind in types if kind == "sliding_attention")
        return (window, count) if count else (None, 0)
    pattern = c.int("sliding_window_pattern", required=False)
    if pattern:
        # Every pattern-th layer is global: layers i with (i + 1) % pattern == 0.
        return window, layers - layers // pattern
    if c.model_type == "gemma2":
        return window, (layers + 1) // 2  # even layers slide, odd layers are global
    return window, layers  # Mistral-style: every layer slides


def _linear_state_bytes(c: _Config, linear_layers: int) -> int:
    """Fixed state per sequence of the linear-attention layers: recurrent state + conv state."""
    key_heads = c.int("linear_num_key_heads")
    value_heads = c.int("linear_num_value_heads")
    key_dim = c.int("linear_key_head_dim")
    value_dim = c.int("linear_value_head_dim")
    kernel = c.int("linear_conv_kernel_dim")
    recurrent = value_heads * key_dim * value_dim * STATE_BYTES
    channels = 2 * key_heads * key_dim + value_heads * value_dim
    conv = (kernel - 1) * channels * CONV_BYTES
    return linear_layers * (recurrent + conv)


def _linear_attention_params(c: _Config, hidden: int) -> int:
    """One Gated DeltaNet layer: q/k/v/z and b/a projections, conv, gates and output."""
    key = c.int("linear_num_key_heads") * c.int("linear_key_head_dim")
    value_heads = c.int("linear_num_value_heads")
    value = value_heads * c.int("linear_value_head_dim")
    conv = (2 * key + value) * c.int("linear_conv_kernel_dim")
    return hidden * (2 * key + 2 * value) + hidden * 2 * value_heads + conv + value * hidden


def _attention_params(
    c: _Config, kind: str, hidden: int, heads: int, kv_heads: int, head_dim: int
) -> int:
    """One full-attention layer's projections (biases where the config says so)."""
    if kind == "mla":
        rope, nope = c.int("qk_rope_head_dim"), c.int("qk_nope_head_dim")
        value_dim, kv_rank = c.int("v_head_dim"), c.int("kv_lora_rank")
        q_rank = c.int("q_lora_rank", required=False)
        q_out = heads * (nope + rope)
        query = hidden * q_rank + q_rank * q_out if q_rank else hidden * q_out
        kv = hidden * (kv_rank + rope) + kv_rank * heads * (nope + value_dim)
        return query + kv + heads * value_dim * hidden
    q_out = heads * head_dim * (2 if c.model_type in _GATED_ATTENTION else 1)
    kv_out = 2 * kv_heads * head_dim
    bias = q_out + kv_out if c.get("attention_bias") or c.model_type == "qwen2" else 0
    return hidden * (q_out + kv_out) + heads * head_dim * hidden + bias


def _moe(c: _Config, hidden: int) -> tuple[int, int, int, int]:
    """Routed experts, experts per token, parameters of one routed expert, MoE layers."""
    experts = c.int(*EXPERT_FIELDS, default=0) or 0
    if experts <= 1:
        return 0, 0, 0, 0
    active = c.int(*ACTIVE_EXPERT_FIELDS)
    if not 1 <= active <= experts:
        said = message(Code.EXPERTS_PER_TOKEN_RANGE, active=active, experts=experts)
        raise EstimateError("hf_config", f"{active} experts per token of {experts}", said)
    size = c.int("moe_intermediate_size", "intermediate_size")
    layers = c.int(*LAYER_FIELDS)
    # gate, up and down projections; gpt-oss adds a bias to each
    bias = 2 * size + hidden if c.model_type == "gpt_oss" else 0
    return experts, active, 3 * hidden * size + bias, _moe_layer_count(c, layers)


def _moe_layer_count(c: _Config, layers: int) -> int:
    """How many layers carry routed experts, as the config lays them out."""
    listed = c.get("moe_layers")
    if isinstance(listed, list):  # Llama 4 configs may list them outright
        return len({i for i in listed if isinstance(i, int) and 0 <= i < layers})
    first_dense = c.int("first_k_dense_replace", default=0) or 0
    dense_listed = set(c.get("mlp_only_layers", []) or [])
    step = (
        c.int("interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_freq", default=1) or 1
    )
    # Layer i is MoE when (i + 1) % step == 0: every layer at step 1, every second at 2
    # (the rule of transformers' Qwen MoE and Llama 4 models).
    moe = [i for i in range(first_dense, layers) if (i + 1) % step == 0 and i not in dense_listed]
    return len(moe)


def _dense_mlp_size(c: _Config) -> int:
    """The MLP width of a dense (non-MoE) layer."""
    if c.model_type in LLAMA4:
        return c.int("intermediate_size_mlp", "intermediate_size", default=0) or 0
    return c.int("intermediate_size", "ffn_dim", default=0) or 0


def _shared_expert_params(c: _Config, hidden: int) -> int:
    """Always-active experts of one MoE layer (DeepSeek n_shared_experts, Qwen shared expert)."""
    shared = c.int("n_shared_experts", default=0) or 0
    if shared:
        return shared * 3 * hidden * c.int("moe_intermediate_size")
    if c.model_type in LLAMA4:
        return 3 * hidden * c.int("intermediate_size")
    size = c.int("shared_expert_intermediate_size", default=0) or 0
    return 3 * hidden * size + hidden if size else 0  # plus its one-output gate
