"""Read a model description from what people have: a config.json, a safetensors index or
header, a GGUF file's header, or bare numbers. Each gives a `ModelDescription`.

File headers give exact weight bytes; configs give shapes (and so the KV cache); bare
numbers give neither, and the estimate then says the KV cache is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.asking.described import ModelDescription
from app.estimate import Basis, EstimateError, Quantity
from app.estimate.inputs.hf_config import ModelShape, read_hf_config
from app.estimate.inputs.quants import QuantType, lookup_quant
from app.estimate.messages import Code, message, plain
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register

# safetensors dtypes whose elements are one weight each (packed integer types are not).
_FLOAT_DTYPES = {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0"}
_TORCH_DTYPES = {"bfloat16": "BF16", "float16": "FP16", "float32": "FP32"}


ACTIVE_OVER_TOTAL = register(
    "estimate.active_over_total",
    _l("%(active)s billion parameters active is more than the model's %(total)s billion"),
)
HEADER_WITHOUT_BYTES = register(
    "estimate.header_without_bytes",
    _l("the header's tensors span no bytes (each data_offsets' end must pass its begin)"),
)


class DescriptionConflict(EstimateError):
    """A description whose fields the schema accepts each of, that contradict each other
    (app.errors.FIELD_CONFLICTS): said as a code, so the refusal is a 409 in the reader's
    words."""

    def __init__(self, field: str, said: Sentence) -> None:
        super().__init__(field, english(said))
        self.said = said


def quant_from_config(config: Mapping[str, Any]) -> QuantType:
    """The quantization a config.json declares, else its dtype (BF16 when it says nothing)."""
    mlx = config.get("quantization")
    if isinstance(mlx, Mapping) and mlx.get("bits"):
        return lookup_quant(f"MLX-{int(mlx['bits'])}BIT")
    q = config.get("quantization_config")
    if isinstance(q, Mapping):
        return lookup_quant(_declared_quant(q))
    text = config.get("text_config") if isinstance(config.get("text_config"), Mapping) else {}
    dtype = config.get("torch_dtype") or config.get("dtype") or text.get("torch_dtype")
    return lookup_quant(_TORCH_DTYPES.get(str(dtype or "bfloat16"), "BF16"))


def _declared_quant(q: Mapping[str, Any]) -> str:
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    bits = q.get("bits") or q.get("w_bit")
    if method == "gptq":
        return "GPTQ-INT8" if bits == 8 else "GPTQ-INT4"
    if method == "bitsandbytes":
        return "BNB-NF4" if q.get("load_in_4bit") else "BNB-INT8"
    if method in ("compressed-tensors", "modelopt"):
        return _compressed_tensors_quant(q)
    return {"fp8": "FP8", "mxfp4": "MXFP4", "awq": "AWQ", "nvfp4": "NVFP4"}.get(method, method)


def _compressed_tensors_quant(q: Mapping[str, Any]) -> str:
    algo = str(q.get("quant_algo") or "").upper()
    if algo in ("FP8", "NVFP4"):
        return algo
    for group in (q.get("config_groups") or {}).values():
        weights = group.get("weights") or {}
        floating = weights.get("type") == "float"
        if weights.get("num_bits") == 4:
            return "NVFP4" if floating else "GPTQ-INT4"
        if weights.get("num_bits") == 8:
            return "FP8" if floating else "INT8"
    raise EstimateError("quant", "cannot tell the quantization from this quantization_config")


def from_numbers(
    params_b: float, active_params_b: float | None, quant: str, name: str | None = None
) -> ModelDescription:
    """Parameter counts and a quant name: weights only, KV unknown."""
    if not params_b > 0:
        raise EstimateError("params_b", "params_b must be a positive number of billions")
    active = active_params_b if active_params_b is not None else params_b
    if not active > 0:
        raise EstimateError("active_params_b", "active_params_b must be more than 0")
    if active > params_b:
        said = ACTIVE_OVER_TOTAL(active=active, total=params_b)
        raise DescriptionConflict("active_params_b", said)
    moe = f", {active:g}B active" if active < params_b else ""
    built = (
        message(Code.DESCRIBED_MOE, params=plain(params_b), active=plain(active))
        if active < params_b
        else message(Code.DESCRIBED_DENSE, params=plain(params_b))
    )
    return ModelDescription(
        name=name or f"{params_b:g}B{moe} model",
        name_words=None if name else built,
        source="numbers",
        quant=lookup_quant(quant),
        params_total_b=params_b,
        params_active_b=active,
        params_basis=Basis.PUBLISHED,
        is_moe=active < params_b,
    )


def from_hf_config(
    config: Mapping[str, Any], quant: str | None = None, name: str | None = None
) -> ModelDescription:
    """A config.json: shapes, KV cache and parameter counts; the quant named or declared."""
    shape = read_hf_config(config)
    chosen = lookup_quant(quant) if quant else quant_from_config(config)
    return _from_shape(shape, chosen, name or _config_name(config, shape), "hf_config")


def _from_shape(
    shape: ModelShape,
    quant: QuantType,
    name: str,
    source: str,
    weights: Quantity | None = None,
    repo: str | None = None,
) -> ModelDescription:
    return ModelDescription(
        name=name,
        source=source,
        quant=quant,
        params_total_b=shape.params_total / 1e9,
        params_active_b=shape.params_active / 1e9,
        shape=shape,
        weights=weights,
        repo=repo,
    )


def _config_name(config: Mapping[str, Any], shape: ModelShape) -> str:
    architectures = config.get("architectures") or []
    kind = architectures[0] if architectures else shape.model_type or "model"
    return f"{kind} {shape.params_total / 1e9:.1f}B"


# What the API states of the two safetensors files (POST /api/estimate, /api/plan), and what
# the readers below check: the index's total size and its map of tensors to files; each
# tensor of a header with its dtype, shape and byte offsets (its `__metadata__` as text).
# Counts and offsets are at most 2^53 (9 PB), which a JSON number holds exactly.
MAX_COUNT = 2**53
_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}
SAFETENSORS_INDEX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["metadata", "weight_map"],
    "additionalProperties": False,
    "properties": {
        "metadata": {
            "type": "object",
            "required": ["total_size"],
            "additionalProperties": False,
            "properties": {
                "total_size": {**_COUNT, "minimum": 1},
                "total_parameters": _COUNT,
            },
        },
        "weight_map": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
TENSOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["dtype", "shape", "data_offsets"],
    "additionalProperties": False,
    "properties": {
        "dtype": {"type": "string", "minLength": 1, "maxLength": 20},
        "shape": {"type": "array", "items": _COUNT, "maxItems": 16},
        "data_offsets": {"type": "array", "items": _COUNT, "minItems": 2, "maxItems": 2},
    },
}
SAFETENSORS_HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"__metadata__": {"type": "object", "additionalProperties": {"type": "string"}}},
    "additionalProperties": TENSOR_SCHEMA,
    # The tensors' offsets span some bytes in all (end after begin, summed).
    "x-spans-bytes": True,
    "description": "a safetensors header: its tensors' offsets span some bytes in all (409 "
    "otherwise)",
}
_INDEX_KEYS = set(SAFETENSORS_INDEX_SCHEMA["properties"])
_METADATA_KEYS = set(SAFETENSORS_INDEX_SCHEMA["properties"]["metadata"]["properties"])


def _count(value: Any, least: int = 0) -> bool:
    """A whole number (JSON's 4.0 too) from `least` up to MAX_COUNT."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return float(value).is_integer() and least <= value <= MAX_COUNT


def safetensors_index_bytes(index: Mapping[str, Any], stated: bool = True) -> int:
    """The exact weight bytes a model.safetensors.index.json states. `stated`: held to what
    the API states of it (a request's); the Hub's own file is read for its total only."""
    if not isinstance(index, Mapping):
        raise EstimateError("safetensors_index", "an index must be a JSON object")
    if not stated:
        metadata = index.get("metadata")
        total = metadata.get("total_size") if isinstance(metadata, Mapping) else None
        if not _count(total, 1):
            raise EstimateError("safetensors_index", "the index has no metadata.total_size")
        return int(total)  # type: ignore[arg-type]
    if set(index) - _INDEX_KEYS:
        raise EstimateError(
            "safetensors_index", "an index holds only metadata and weight_map (as saved)"
        )
    metadata = index.get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, Mapping) else None
    if not _count(total, 1) or set(metadata or {}) - _METADATA_KEYS:  # type: ignore[arg-type]
        raise EstimateError(
            "safetensors_index",
            "the index has no metadata.total_size (a positive byte count), or metadata "
            "other than total_size and total_parameters",
        )
    if not _count(metadata.get("total_parameters", 0)):  # type: ignore[union-attr]
        raise EstimateError("safetensors_index", "metadata.total_parameters is not a count")
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, Mapping) or not all(
        isinstance(file, str) for file in weight_map.values()
    ):
        raise EstimateError("safetensors_index", "the index has no weight_map of file names")
    return int(total)  # type: ignore[arg-type]


def safetensors_header_bytes(header: Mapping[str, Any]) -> tuple[int, int | None]:
    """Exact bytes of a safetensors header's tensors, and their element count when every
    tensor is a plain float type (packed integer types hide how many weights they hold)."""
    if not isinstance(header, Mapping):
        raise EstimateError("safetensors_header", "a safetensors header must be a JSON object")
    metadata = header.get("__metadata__", {})
    if not isinstance(metadata, Mapping) or not all(
        isinstance(text, str) for text in metadata.values()
    ):
        raise EstimateError("safetensors_header", "__metadata__ must map names to text")
    total, elements, plain = 0, 0, True
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        if not _is_tensor(tensor):
            raise EstimateError(
                "safetensors_header",
                f"tensor {name!r} needs just its dtype (text), shape (counts) and "
                "data_offsets (two counts)",
            )
        begin, end = tensor["data_offsets"]
        total += int(end) - int(begin)
        elements += math.prod(int(n) for n in tensor["shape"])
        plain = plain and tensor["dtype"] in _FLOAT_DTYPES
    if total <= 0:
        raise DescriptionConflict("safetensors_header", HEADER_WITHOUT_BYTES())
    return total, elements if plain else None


def _is_tensor(tensor: Any) -> bool:
    if not isinstance(tensor, Mapping) or set(tensor) != {"dtype", "shape", "data_offsets"}:
        return False
    dtype, shape, offsets = tensor["dtype"], tensor["shape"], tensor["data_offsets"]
    return (
        isinstance(dtype, str)
        and 1 <= len(dtype) <= 20
        and isinstance(shape, list)
        and len(shape) <= 16
        and all(_count(n) for n in shape)
        and isinstance(offsets, list)
        and len(offsets) == 2
        and all(_count(n) for n in offsets)
    )


def from_safetensors(
    size_bytes: int,
    what: str,
    config: Mapping[str, Any] | None = None,
    quant: str | None = None,
    params_b: float | None = None,
    name: str | None = None,
    repo: str | None = None,
) -> ModelDescription:
    """Exact bytes from an index or header; shapes from a config when there is one."""
    stated = (message(Code.WEIGHTS_STATED, source=what),)
    weights = Quantity(float(size_bytes), Basis.EXACT, stated)
    if config is not None:
        shape = read_hf_config(config)
        chosen = lookup_quant(quant) if quant else quant_from_config(config)
        label = name or repo or _config_name(config, shape)
        return _from_shape(shape, chosen, label, "safetensors", weights, repo)
    chosen = lookup_quant(quant or "BF16")
    basis = Basis.PUBLISHED if params_b else Basis.DERIVED
    total = params_b or size_bytes * 8 / chosen.bits / 1e9
    built = message(Code.DESCRIBED_SAFETENSORS, params=round(float(total), 1))
    return ModelDescription(
        name=name or repo or f"{total:.1f}B safetensors model",
        name_words=None if name or repo else built,
        source="safetensors",
        quant=chosen,
        params_total_b=total,
        params_active_b=total,
        weights=weights,
        params_basis=basis,
        is_moe=False,
        repo=repo,
    )


def from_gguf(path: Path, name: str | None = None) -> ModelDescription:
    """A GGUF file's header: exact bytes and types per tensor, and the shapes it records."""
    from app.asking.gguf_header import read_gguf

    return read_gguf(path, name)
