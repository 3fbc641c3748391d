"""Weight bytes: exact file size when recorded, else parameters x effective bits per weight."""

from __future__ import annotations

from app.estimate.basis import Basis, Quantity, weakest
from app.estimate.errors import EstimateError
from app.estimate.inputs.hf_config import ModelShape
from app.estimate.inputs.quants import QuantType
from app.estimate.inputs.specs import ArtifactSpec, ModelSpec
from app.estimate.messages import Code, message, plain


def weights_bytes(model: ModelSpec, artifact: ArtifactSpec) -> Quantity:
    """Bytes of the whole model in memory; an MoE model loads all its experts."""
    if artifact.size_bytes is not None:
        return _recorded_size(artifact)
    size = params_bytes(model.params_total_b, artifact)
    basis = weakest(Basis.DERIVED, model.basis_of("params_total_b"))
    note = message(
        Code.WEIGHTS_FROM_PARAMS,
        params=plain(model.params_total_b),
        bits=plain(artifact.bits_per_weight),
    )
    return Quantity(size, basis, (note,))


def _recorded_size(artifact: ArtifactSpec) -> Quantity:
    """The artifact's recorded file size."""
    if artifact.size_bytes <= 0:
        raise EstimateError("artifact", f"{artifact.slug}: size_bytes must be positive")
    return Quantity(float(artifact.size_bytes), artifact.size_basis, artifact.size_note)


def params_bytes(params_b: float, artifact: ArtifactSpec) -> float:
    """Bytes of a number of parameters (billions) stored at the artifact's bits per weight."""
    if artifact.bits_per_weight <= 0:
        raise EstimateError("artifact", f"{artifact.slug}: bits_per_weight must be positive")
    return params_b * 1e9 * artifact.bits_per_weight / 8


def active_weight_bytes(model: ModelSpec, artifact: ArtifactSpec, weights: Quantity) -> float:
    """Weight bytes read per decoded token: the active experts of an MoE, all of a dense model."""
    if model.is_moe:
        return params_bytes(model.params_active_b, artifact)
    return weights.value


def active_params(model: ModelSpec) -> float:
    """Parameters (not billions) that take part in each token's forward pass."""
    return (model.params_active_b if model.is_moe else model.params_total_b) * 1e9


def weights_by_tensor_kind(shape: ModelShape, quant: QuantType) -> Quantity:
    """Bytes of a model whose shapes are known, each tensor kind at the quant's bits for it:
    routed experts, other linear layers, embeddings and output head."""
    moe = shape.is_moe
    parts = [
        (Code.TENSOR_KIND_EXPERTS, shape.expert_params, quant.bits_for("expert", moe)),
        (Code.TENSOR_KIND_LINEAR, shape.linear_params, quant.bits_for("linear", moe)),
        (Code.TENSOR_KIND_EMBEDDINGS, shape.embedding_params, quant.bits_for("embedding", moe)),
    ]
    size = sum(params * bits / 8 for _, params, bits in parts)
    note = tuple(
        message(what, params=round(params / 1e9, 2), bits=plain(bits))
        for what, params, bits in parts
        if params
    )
    basis = weakest(Basis.DERIVED, quant.basis)
    return Quantity(size, basis, (message(Code.WEIGHTS_BY_TENSOR_KIND, quant=quant.name), *note))
