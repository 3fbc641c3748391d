"""A model described instead of named: a transient catalog entry that resolves like any other.

A config.json, a safetensors index or header, a GGUF header or bare parameter counts become
an `LlmModel` with one `Artifact`, never added to a session, and `ModelInputs` built around
them with the catalog's runtimes and profiles. The fit, memory, speed and verdict are then
the resolution's own, exactly as for a catalog model (custom hardware works the same way).
A described model has no verified pairs, so it gets estimates and no commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.estimate import Basis, Quantity
from app.estimate.inputs.hf_config import ModelShape
from app.estimate.inputs.quants import QuantType
from app.estimate.inputs.specs import UNKNOWN_ATTENTION
from app.estimate.memory.weights import weights_by_tensor_kind
from app.estimate.messages import Code, Message, message, plain
from app.models import Artifact, LlmModel
from app.resolve.inputs import ModelInputs
from app.resolve.verification import VerifiedPairs

# Without an architecture there is no native context to read: the plan's own context, or this.
WEIGHTS_ONLY_CONTEXT = 4096
# A config that names no native context is answered at the context asked, or at this one
# (the shortest start any profile asks for), and the answer says it was assumed.
CONTEXT_WITHOUT_FIELD = 4096
# Without the architecture, memory and speed count the weights only.
KV_UNKNOWN_WARNING = message(Code.KV_UNKNOWN)


@dataclass(frozen=True)
class ModelDescription:
    """What a person told us about a model, in the estimator's terms."""

    name: str
    source: str  # hf_config | safetensors | gguf | numbers | repo
    quant: QuantType
    params_total_b: float
    params_active_b: float
    shape: ModelShape | None = None  # None: parameter counts alone, KV unknown
    weights: Quantity | None = None  # exact bytes from file headers, when read
    params_basis: Basis = Basis.DERIVED
    is_moe: bool | None = None  # from the shape when there is one
    repo: str | None = None
    # A name built from the figures when none was given: `name` is its English wording.
    name_words: Message | None = None

    @property
    def kv_known(self) -> bool:
        return self.shape is not None

    @property
    def moe(self) -> bool:
        if self.shape is not None:
            return self.shape.is_moe
        if self.is_moe is not None:
            return self.is_moe
        return self.params_active_b < self.params_total_b

    def weights_quantity(self) -> Quantity:
        """The weights' bytes: read from headers, by tensor kind from shapes, or from counts."""
        if self.weights is not None:
            return self.weights
        if self.shape is not None:
            return weights_by_tensor_kind(self.shape, self.quant)
        size = self.params_total_b * 1e9 * self.quant.bits / 8
        note = message(
            Code.WEIGHTS_DESCRIBED,
            params=plain(self.params_total_b),
            bits=plain(self.quant.bits),
            quant=self.quant.name,
        )
        basis = Basis.DERIVED if self.quant.basis != Basis.ASSUMED else Basis.ASSUMED
        return Quantity(size, basis, (note,))


def slug_for(name: str) -> str:
    """A URL-safe name for a described model."""
    slug = re.sub(r"[^a-z0-9._/-]+", "-", name.lower()).strip("-")
    return slug[:100] or "described-model"


def described_model(description: ModelDescription, context: int | None = None) -> LlmModel:
    """A transient model row with its one transient artifact."""
    d, shape = description, description.shape
    fields: dict[str, Any] = {}
    basis: dict[str, dict[str, str]] = {
        "params_total_b": {"basis": d.params_basis.value, "note": f"from the {d.source}"},
        "params_active_b": {"basis": d.params_basis.value, "note": f"from the {d.source}"},
    }
    if shape is not None:
        fields = _shape_fields(shape)
        basis["native_context"] = {"basis": "published", "note": "config.json"}
        if shape.native_context is None:
            fields["native_context"] = context or CONTEXT_WITHOUT_FIELD
            basis["native_context"] = {
                "basis": "assumed",
                "note": "the config names no context: the context asked, or a default",
            }
    else:
        fields = {
            "attention": UNKNOWN_ATTENTION,
            "native_context": context or WEIGHTS_ONLY_CONTEXT,
            "sliding_window_layers": 0,
        }
        basis["native_context"] = {"basis": "assumed", "note": "no architecture given"}
    model = LlmModel(
        slug=slug_for(d.name),
        name=d.name,
        hf_repo=d.repo or d.name,
        publisher="",
        family="described",
        architecture=shape.model_type if shape else None,
        is_moe=d.moe,
        params_total_b=d.params_total_b,
        params_active_b=d.params_active_b if d.moe else d.params_total_b,
        mtp_layers=shape.mtp_layers if shape else 0,
        start_context=None,
        description=f"described by {d.source}",
        notes="",
        basis=basis,
        sources=[],
        **fields,
    )
    # The MoE layout rides on the transient row (the catalog stores no such columns); the
    # estimator's spec reads it from there.
    model.experts, model.active_experts, model.moe_layers = _moe_layout(shape)
    model.artifacts = [_artifact(description, model)]
    model.reported_figures = []
    return model


def _moe_layout(shape: ModelShape | None) -> tuple[int | None, int | None, int | None]:
    """Routed experts, experts per token and MoE layers; unknown without a shape."""
    if shape is None:
        return None, None, None
    if not shape.is_moe:
        return 0, 0, 0
    return shape.experts, shape.active_experts, shape.moe_layers


def _shape_fields(shape: ModelShape) -> dict[str, Any]:
    return {
        "native_context": shape.native_context,
        "num_layers": shape.num_layers,
        "num_attention_heads": shape.num_attention_heads,
        "num_kv_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim,
        "hidden_size": shape.hidden_size,
        "intermediate_size": shape.intermediate_size,
        "vocab_size": shape.vocab_size,
        "attention": shape.attention,
        "kv_lora_rank": shape.kv_lora_rank,
        "qk_rope_head_dim": shape.qk_rope_head_dim,
        "sliding_window": shape.sliding_window,
        "sliding_window_layers": shape.sliding_window_layers,
        "full_attention_layers": shape.full_attention_layers,
        "linear_state_bytes_per_seq": shape.linear_state_bytes_per_seq,
    }


def _artifact(description: ModelDescription, model: LlmModel) -> Artifact:
    quant = description.quant
    weights = description.weights_quantity()
    bits = weights.value * 8 / (description.params_total_b * 1e9)
    return Artifact(
        slug=f"{model.slug}-{quant.name.lower()}",
        name=f"{model.name} {quant.name}",
        kind="described",
        format=quant.format,
        quant=quant.name.lower(),
        bits_per_weight=round(bits, 4),
        size_bytes=int(weights.value),
        repo=description.repo or model.hf_repo,
        revision="main",
        file=None,
        publisher="",
        basis={"size_bytes": {"basis": weights.basis.value, "note": weights.note}},
    )


def described_inputs(session: Session, model: LlmModel) -> ModelInputs:
    """The catalog's runtimes and profiles around a transient model; no evidence."""
    repo = CatalogRepository(session)
    return ModelInputs(
        model=model,
        runtimes=repo.list_runtimes(),
        profiles=repo.list_profiles(),
        verified=VerifiedPairs({}),
        measured=[],
        reported={},
    )
