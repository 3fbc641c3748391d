"""A GGUF file's header read with the `gguf` package: exact bytes and type of every tensor,
and the architecture fields llama.cpp records (`{arch}.block_count`, head counts, ...).

Only the header is read (the package maps the file; tensor data is never loaded).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from app.asking.described import ModelDescription
from app.estimate import Basis, EstimateError, Quantity
from app.estimate.inputs.hf_config import ModelShape
from app.estimate.inputs.quants import UnknownQuant, lookup_quant
from app.estimate.messages import Code, message

_EMBEDDING_TENSORS = ("token_embd.", "output.")


def read_gguf(path: Path, name: str | None = None) -> ModelDescription:
    import gguf

    try:
        reader = gguf.GGUFReader(path)
    except (OSError, ValueError) as error:
        raise EstimateError("gguf", f"{path}: not a readable GGUF file ({error})") from error
    fields = {key: _value(field) for key, field in reader.fields.items()}
    arch = str(fields.get("general.architecture") or "")
    tensors = list(reader.tensors)
    if not arch or not tensors:
        raise EstimateError("gguf", f"{path}: the header names no architecture or tensors")
    total_bytes = sum(int(t.n_bytes) for t in tensors)
    shape = _shape(fields, arch, tensors)
    quant_name = _quant_name(fields, tensors)
    types = Counter(t.tensor_type.name for t in tensors)
    kinds = ", ".join(f"{count} {kind}" for kind, count in types.most_common(4))
    note = (message(Code.WEIGHTS_GGUF_HEADER, types=kinds),)
    try:
        quant = lookup_quant(quant_name)
    except UnknownQuant:
        quant = lookup_quant(types.most_common(1)[0][0])
    label = name or str(fields.get("general.name") or path.stem)
    return ModelDescription(
        name=label,
        source="gguf",
        quant=quant,
        params_total_b=shape.params_total / 1e9,
        params_active_b=shape.params_active / 1e9,
        shape=shape,
        weights=Quantity(float(total_bytes), Basis.EXACT, note),
        params_basis=Basis.EXACT,
    )


def _value(field: Any) -> Any:
    try:
        value = field.contents()
    except (AttributeError, IndexError, ValueError):
        return None
    return value


def _quant_name(fields: dict[str, Any], tensors: list) -> str:
    import gguf

    file_type = fields.get("general.file_type")
    if isinstance(file_type, int):
        try:
            return gguf.LlamaFileType(file_type).name.removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    return Counter(t.tensor_type.name for t in tensors).most_common(1)[0][0]


def _int(fields: dict[str, Any], key: str, default: int | None = None) -> int:
    value = fields.get(key)
    if isinstance(value, list):  # per-layer arrays: the largest bounds the cache
        value = max(value) if value else None
    if value is None:
        if default is None:
            raise EstimateError("gguf", f"the GGUF header has no {key}")
        return default
    return int(value)


def _shape(fields: dict[str, Any], arch: str, tensors: list) -> ModelShape:
    layers = _int(fields, f"{arch}.block_count")
    hidden = _int(fields, f"{arch}.embedding_length")
    heads = _int(fields, f"{arch}.attention.head_count")
    kv_heads = _int(fields, f"{arch}.attention.head_count_kv", heads)
    head_dim = _int(fields, f"{arch}.attention.key_length", hidden // heads)
    kv_rank = fields.get(f"{arch}.attention.kv_lora_rank")
    experts = _int(fields, f"{arch}.expert_count", 0)
    active = _int(fields, f"{arch}.expert_used_count", 0)
    embedding = sum(int(t.n_elements) for t in tensors if t.name.startswith(_EMBEDDING_TENSORS))
    expert = sum(int(t.n_elements) for t in tensors if "_exps" in t.name)
    # Blocks holding routed experts ("blk.7.ffn_up_exps.weight"): the MoE layers.
    moe_blocks = {t.name.split(".")[1] for t in tensors if "_exps" in t.name}
    total = sum(int(t.n_elements) for t in tensors)
    vocab = _vocab(fields, tensors)
    return ModelShape(
        model_type=arch,
        native_context=_int(fields, f"{arch}.context_length"),
        num_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=_int(fields, f"{arch}.feed_forward_length", 0) or None,
        vocab_size=vocab,
        attention="mla" if kv_rank else "gqa",
        kv_lora_rank=int(kv_rank) if kv_rank else None,
        qk_rope_head_dim=_int(fields, f"{arch}.rope.dimension_count") if kv_rank else None,
        # The header does not say which layers slide; every layer is counted as full.
        sliding_window=None,
        sliding_window_layers=0,
        full_attention_layers=None,
        linear_state_bytes_per_seq=None,
        experts=experts if experts > 1 else 0,
        active_experts=active if experts > 1 else 0,
        embedding_params=embedding,
        expert_params=expert,
        active_expert_params=expert * active // experts if experts > 1 else 0,
        linear_params=total - embedding - expert,
        tied_embeddings=not any(t.name.startswith("output.") for t in tensors),
        moe_layers=len(moe_blocks) if experts > 1 else 0,
    )


def _vocab(fields: dict[str, Any], tensors: list) -> int:
    tokens = fields.get("tokenizer.ggml.tokens")
    if isinstance(tokens, list) and tokens:
        return len(tokens)
    embedding = next((t for t in tensors if t.name.startswith("token_embd.")), None)
    return int(max(embedding.shape)) if embedding is not None else 0
