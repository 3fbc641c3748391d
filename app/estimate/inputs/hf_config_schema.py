"""A config.json as the estimate reads it, written as a JSON Schema: the API states it for
`hf_config` (POST /api/estimate and /api/plan) and the server checks a config against it
before reading it, so a config the schema accepts is one `read_hf_config` reads, and one it
refuses is refused by name, whichever client sent it.

The names are those `read_hf_config` reads (app.estimate.inputs.hf_config): every one it reads as a
number is a whole number here, within MAX_CONFIG_NUMBER; the fields a model cannot be read
without are required under one of their names, at the top or in `text_config` (a
multimodal config's language model); and the fields that come together do (experts with
experts per token, MLA with its head sizes, linear attention with its state sizes). Every
other field is free: its values are bounded as any free-form value is (`other_values`).
"""

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from app.estimate.inputs.hf_config import (
    ACTIVE_EXPERT_FIELDS,
    CONTEXT_FIELDS,
    EXPERT_FIELDS,
    HEAD_FIELDS,
    HIDDEN_FIELDS,
    LAYER_FIELDS,
    LINEAR_FIELDS,
    LLAMA4,
    MLA_FIELDS,
    MODEL_TYPE_DEFAULTS,
    merged_config,
)

# A config.json's numbers are layer counts, widths, head counts, vocabularies, contexts and
# small floats; the largest real one is below 2^31. Bounded before the estimator multiplies
# them: 1e308 layers overflowed a float and 2^62 a formatted figure (500s).
MAX_CONFIG_NUMBER = 2**31 - 1

# Sizes the estimator divides by or multiplies into a cache: at least 1 where given.
_AT_LEAST_ONE = ("num_key_value_heads", "n_head_kv", "head_dim", *LINEAR_FIELDS, *CONTEXT_FIELDS)
# Counts and sizes that may be 0 (an absent feature).
_WHOLE = (
    "intermediate_size",
    "ffn_dim",
    "intermediate_size_mlp",
    *MLA_FIELDS,
    "q_lora_rank",
    "full_attention_interval",
    "sliding_window",
    "sliding_window_pattern",
    *EXPERT_FIELDS,
    *ACTIVE_EXPERT_FIELDS,
    "moe_intermediate_size",
    "first_k_dense_replace",
    "interleave_moe_layer_step",
    "decoder_sparse_step",
    "moe_layer_freq",
    "n_shared_experts",
    "shared_expert_intermediate_size",
    "num_nextn_predict_layers",
)
_REQUIRED = (LAYER_FIELDS, HIDDEN_FIELDS, HEAD_FIELDS, ("vocab_size",))
MLX_BITS = [2, 3, 4, 5, 6, 8]
# The quantization methods a config declares that the quant table names by themselves.
DECLARED_METHODS = ["awq", "bitsandbytes", "fp8", "gptq", "mxfp4", "nvfp4"]
GROUPED_METHODS = ["compressed-tensors", "modelopt"]


def whole(minimum: int, nullable: bool = True) -> dict[str, Any]:
    kind: Any = ["integer", "null"] if nullable else "integer"
    return {"type": kind, "minimum": minimum, "maximum": MAX_CONFIG_NUMBER}


def _given(name: str, minimum: int = 1) -> dict[str, Any]:
    """The field is there, as a whole number of at least `minimum`."""
    return {"required": [name], "properties": {name: whole(minimum, nullable=False)}}


def _one_of_names(names: tuple[str, ...], minimum: int = 1) -> dict[str, Any]:
    return {"anyOf": [_given(name, minimum) for name in names]}


def _required(names: tuple[str, ...]) -> dict[str, Any]:
    """A field the model cannot be read without: under one of its names, or filled in by
    the defaults of the config's model type."""
    defaulted = sorted(
        kind for kind, defaults in MODEL_TYPE_DEFAULTS.items() if set(names) & set(defaults)
    )
    by_type = {"required": ["model_type"], "properties": {"model_type": {"enum": defaulted}}}
    return {"anyOf": [*_one_of_names(names)["anyOf"], *([by_type] if defaulted else [])]}


# Fields that come together, within one object (the top or `text_config`): when any of
# `when` holds, each of `needs` is given (under one of its names, at least so large).
# The server holds a config to them as JSON Schema's if-then (`_if_then`); the document
# states them as data in `x-together` (a generator cannot expand a dozen conditions).
TOGETHER: list[dict[str, Any]] = [
    {  # routed experts: how many a token is sent to, and their width
        "when": [{"names": list(EXPERT_FIELDS), "at_least": 2}],
        "needs": [
            {"names": list(ACTIVE_EXPERT_FIELDS), "at_least": 1},
            {"names": ["moe_intermediate_size", "intermediate_size"], "at_least": 0},
        ],
    },
    {  # multi-head latent attention: its head sizes
        "when": [{"names": ["kv_lora_rank"], "at_least": 1}],
        "needs": [{"names": [name], "at_least": 1} for name in MLA_FIELDS[1:]],
    },
    {  # linear attention (Gated DeltaNet and kin): its state's sizes
        "when": [
            {"names": ["full_attention_interval"], "at_least": 1},
            {"field": "layer_types", "contains": "linear_attention"},
        ],
        "needs": [{"names": [name], "at_least": 1} for name in LINEAR_FIELDS],
    },
    {  # shared experts are as wide as the routed ones
        "when": [{"names": ["n_shared_experts"], "at_least": 1}],
        "needs": [{"names": ["moe_intermediate_size"], "at_least": 0}],
    },
    {  # Llama 4's shared expert is as wide as `intermediate_size`
        "when": [{"field": "model_type", "in": sorted(LLAMA4)}],
        "needs": [{"names": ["intermediate_size"], "at_least": 0}],
    },
]


def _condition(condition: dict[str, Any]) -> dict[str, Any]:
    if "names" in condition:
        return _one_of_names(tuple(condition["names"]), condition["at_least"])
    field = condition["field"]
    if "contains" in condition:
        kept = {"type": "array", "contains": {"const": condition["contains"]}}
    else:
        kept = {"enum": condition["in"]}
    return {"required": [field], "properties": {field: kept}}


def _if_then() -> list[dict[str, Any]]:
    return [
        {
            "if": {"anyOf": [_condition(one) for one in rule["when"]]},
            "then": {"allOf": [_condition(need) for need in rule["needs"]]},
        }
        for rule in TOGETHER
    ]


def _fields(other_values: dict[str, Any]) -> dict[str, Any]:
    """The typed fields of one object, and what the others may hold."""
    properties: dict[str, Any] = {
        **{name: whole(1) for names in _REQUIRED for name in names},
        **{name: whole(1) for name in _AT_LEAST_ONE},
        **{name: whole(0) for name in _WHOLE},
        "layer_types": {
            "type": ["array", "null"],
            "items": {"type": "string", "maxLength": 40},
            "maxItems": MAX_LAYERS,
            # As many kinds as the config has layers (its layer count, under any name).
            "x-as-many-as": list(LAYER_FIELDS),
            "description": "one kind per layer: as many as the config's layers (409 otherwise)",
        },
        "mlp_only_layers": {"type": ["array", "null"], "items": whole(0, nullable=False)},
        "model_type": {"type": ["string", "null"], "maxLength": 100},
        "architectures": {"type": ["array", "null"], "items": {"type": "string"}},
    }
    for name in EXPERT_FIELDS + ACTIVE_EXPERT_FIELDS:
        properties[name] = whole(0)
    for name in ACTIVE_EXPERT_FIELDS:
        # No more than there are experts (the first of their names given).
        properties[name]["x-at-most"] = list(EXPERT_FIELDS)
        properties[name]["description"] = (
            "experts per token: at least 1 and at most the config's experts where it has "
            "them (409 otherwise)"
        )
    return {
        "type": "object",
        "properties": properties,
        "additionalProperties": other_values,
    }


# A layer count past any real model's, and past what a list of kinds may name.
MAX_LAYERS = 10_000


def declared_quantization() -> dict[str, Any]:
    """The quantization a config declares, where the request names none: one the quant
    table names (an MLX quantization's bits, or a method)."""
    return {
        "quantization": {
            "type": ["object", "null"],
            "properties": {"bits": {"enum": [*MLX_BITS, None]}},
        },
        "quantization_config": {
            "type": ["object", "null"],
            "anyOf": [
                {
                    "required": ["quant_method"],
                    "properties": {"quant_method": {"enum": DECLARED_METHODS}},
                },
                # compressed-tensors and ModelOpt: by their algorithm, or by the weights'
                # bits in each group (NVFP4 or GPTQ-INT4 at 4, FP8 or INT8 at 8).
                {
                    "required": ["quant_algo"],
                    "properties": {
                        "quant_method": {"enum": [*GROUPED_METHODS, None]},
                        "quant_algo": {"enum": ["FP8", "NVFP4"]},
                    },
                },
                {
                    "required": ["quant_method", "config_groups"],
                    "properties": {
                        "quant_method": {"enum": GROUPED_METHODS},
                        "config_groups": {
                            "type": "object",
                            "minProperties": 1,
                            "additionalProperties": {
                                "type": "object",
                                "required": ["weights"],
                                "properties": {
                                    "weights": {
                                        "type": "object",
                                        "required": ["num_bits"],
                                        "properties": {"num_bits": {"enum": [4, 8]}},
                                    }
                                },
                            },
                        },
                    },
                },
            ],
        },
    }


def config_schema(other_values: dict[str, Any], nested_values: dict[str, Any]) -> dict[str, Any]:
    """The schema of `hf_config`: `other_values` for fields it does not name at the top,
    `nested_values` for those inside `text_config` (one level deeper). Its quantization
    fields are free here: where the request names no quant, `declared_quantization` holds
    for them too. The fields that come together (TOGETHER) hold over the config as read
    (`merged_config`: `text_config` over the top, over its model type's defaults), which
    JSON Schema cannot merge: they are stated in `x-together`."""
    top = _fields(other_values)
    text = _fields(nested_values)
    text["type"] = ["object", "null"]
    top["properties"]["text_config"] = text
    required = {"allOf": [_required(names) for names in _REQUIRED]}
    top["anyOf"] = [
        required,
        # (an object: a null text_config gives nothing, so it cannot hold them)
        {
            "required": ["text_config"],
            "properties": {"text_config": {"type": "object", **required}},
        },
    ]
    # Over the config as read: `merge`'s fields over the top level's (its nulls give none).
    top["x-together"] = {"merge": "text_config", "rules": TOGETHER}
    top["description"] = (
        "a config.json; fields that need others (experts and their sizes, MLA's and linear "
        "attention's dimensions) come with them, read with text_config's over the top level's "
        "(409 where they do not)"
    )
    return top


@dataclass(frozen=True)
class ConfigFault:
    """Where a config fails its schema: the field (dotted), and why, in the schema's words;
    `missing` names a required field's names when none of them is given; `too_large` the
    number given where it passes the schema's maximum; `together` that the config keeps the
    standard schema and fails only the rules of fields that go together (`x-together`)."""

    field: str
    reason: str
    missing: tuple[str, ...] = ()
    too_large: float | None = None
    together: bool = False


@cache
def _validator(declared: bool) -> Draft202012Validator:
    schema = config_schema({}, {})
    if declared:
        schema["properties"].update(declared_quantization())
    return Draft202012Validator(schema)


@cache
def _together_validator() -> Draft202012Validator:
    return Draft202012Validator({"allOf": _if_then()})


def config_fault(config: Any, declared: bool) -> ConfigFault | None:
    """Why `config` is not one the estimate reads (None when it is). `declared`: the
    request names no quant, so the config's own quantization is read. The fault named is
    the deepest one (an alternative's own fault, not "none of the alternatives")."""
    errors = list(_validator(declared).iter_errors(config))
    together = not errors
    if together:
        errors = list(_together_validator().iter_errors(merged_config(config)))
    leaves = [leaf for error in errors for leaf in _leaves(error)]
    if not leaves:
        return None
    return replace(_fault(config, leaves), together=together)


def _fault(config: Any, leaves: list[ValidationError]) -> ConfigFault:
    """The fault the deepest of the errors found names."""
    read = merged_config(config) if isinstance(config, dict) else {}
    for names in _REQUIRED:
        if isinstance(config, dict) and all(read.get(name) is None for name in names):
            return ConfigFault(names[0], "missing", names)
    deepest = max(len(leaf.absolute_path) for leaf in leaves)
    at = [leaf for leaf in leaves if len(leaf.absolute_path) == deepest]
    field = ".".join(str(part) for part in at[0].absolute_path)
    wrong = [leaf for leaf in at if leaf.validator != "required"]
    if wrong:
        first = wrong[0]
        large = first.instance if first.validator == "maximum" else None
        return ConfigFault(field, first.message[:MAX_REASON], too_large=large)
    missing = tuple(
        dict.fromkeys(
            name
            for leaf in at
            for name in leaf.validator_value
            if isinstance(leaf.instance, dict) and leaf.instance.get(name) is None
        )
    )
    return ConfigFault(field or missing[0], "missing", missing)


MAX_REASON = 200


def _leaves(error: ValidationError) -> Iterator[ValidationError]:
    """The errors under an error of alternatives (anyOf, if-then), or the error itself."""
    if not error.context:
        yield error
    for part in error.context:
        yield from _leaves(part)
