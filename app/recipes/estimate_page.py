"""The "Estimate a model" page: its query parameters are the request, so a URL reproduces
the answer. A pasted config.json is carried on as the shape fields read from it (a few
hundred characters), not the whole document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any
from urllib.parse import urlencode

from app.asking.described import ModelDescription
from app.estimate import Basis, EstimateError
from app.estimate.inputs.hf_config import ModelShape
from app.estimate.inputs.quants import lookup_quant
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register
from app.i18n.sentences import render as say
from app.security.json_input import loads_strict

NOT_JSON = register("estimate_form.not_json", _l("the pasted config is not JSON (%(detail)s)"))
NO_MODEL = register(
    "estimate_form.no_model",
    _l("choose a catalog model, or give a Hub repository, a parameter count or a config.json"),
)
NO_CARD = register(
    "estimate_form.no_card",
    _l("name a card (for example RTX 4090), or choose catalog hardware or custom numbers"),
)
MODEL_FIELDS = ("model", "repo", "params_b", "config", "attention")

# The request's field names, as the form labels them (the page names the label, not the
# API's field; JSON keeps the field).
FIELD_LABELS: dict[str, Any] = {
    "model": _l("Model (one of these)"),
    "model.repo": _l("Hub repository"),
    "model.params_b": _l("Parameters (B)"),
    "model.active_params_b": _l("Active parameters (B, MoE)"),
    "model.quant": _l("Quant"),
    "model.hf_config": "config.json",
    "hf_config": "config.json",
    "hardware": _l("Hardware"),
    "hardware.gpu": _l("Card"),
    "hardware.count": _l("Cards"),
    "gpu_count": _l("Cards"),
    "memory_gb_per_gpu": _l("Memory per card (GB)"),
    "bandwidth_gb_s_per_gpu": _l("Bandwidth per card (GB/s)"),
    "platform": _l("Platform"),
    "runtime": _l("Runtime"),
    "context": _l("Context (tokens)"),
    "concurrency": _l("Requests at once"),
    "prompt_tokens": _l("Prompt tokens"),
    "output_tokens": _l("Output tokens"),
    "profile": _l("Profile"),
    "usable_memory_gb": _l("Usable memory (GB)"),
    "interconnect": _l("Interconnect"),
    "unified_memory": _l("Unified memory"),
    "body": _l("Request"),
}


def field_label(field: str) -> str:
    """A field as the form labels it; one the form does not show is named as it is."""
    found = FIELD_LABELS.get(field) or FIELD_LABELS.get(field.removeprefix("model."))
    return str(found) if found is not None else field.replace("_", " ")


def form_errors(query: Mapping[str, str], errors: Mapping[str, str]) -> dict[str, str]:
    """What the page says for an incomplete form: a missing model and a card left empty are
    said as what to do, not as the schema's length rule."""
    given = {key for key, value in query.items() if value and value.strip()}
    said = dict(errors)
    if not given & set(MODEL_FIELDS):
        said = {"model": say(NO_MODEL()), **{k: v for k, v in said.items() if k != "model"}}
    if "hardware.gpu" in said and not (query.get("gpu") or "").strip():
        said["hardware.gpu"] = say(NO_CARD())
    return said


NOT_WHOLE = register("estimate_form.not_whole", _l("%(name)s must be a whole number"))
SHAPE_NEEDS = register("estimate_form.shape_needs", _l("the shape needs %(names)s"))


class FormRefused(EstimateError):
    """A field of the page's query the page itself refuses, coded for the reader's words."""

    def __init__(self, field: str, said: Sentence) -> None:
        super().__init__(field, english(said))
        self.said = said


SHAPE_FIELDS = tuple(f.name for f in fields(ModelShape))
_TEXT_FIELDS = {"model_type", "attention"}
_FLAG_FIELDS = {"tied_embeddings"}
# Fields of the request that pass through to the selector as they are.
PASSED = (
    "runtime",
    "context",
    "concurrency",
    "prompt_tokens",
    "output_tokens",
    "profile",
    "gpu_count",
    "memory_gb_per_gpu",
    "usable_memory_gb",
    "bandwidth_gb_s_per_gpu",
    "platform",
    "interconnect",
    "unified_memory",
)


# Every parameter the page reads: the rest of a query string asks nothing, and a page kept in
# the page cache is kept under these alone.
PAGE_FIELDS = frozenset(
    {
        *PASSED,
        *SHAPE_FIELDS,
        "model",
        "name",
        "repo",
        "config",
        "quant",
        "params_b",
        "active_params_b",
        "hardware",
        "gpu",
        "gpu_count",
    }
)


def page_request(query: Mapping[str, str]) -> tuple[dict[str, Any], ModelDescription | None]:
    """The API request body the page's query describes, and a model carried as shape fields
    (which stands in for the body's model). Raises EstimateError naming a field."""
    q = {key: value.strip() for key, value in query.items() if value and value.strip()}
    body: dict[str, Any] = {key: q[key] for key in PASSED if key in q}
    body["hardware"] = _hardware(q)
    description = None
    if "attention" in q:
        description = shape_description(q)
        body["model"] = "shape"
    elif "config" in q:
        body["model"] = {"hf_config": _json(q["config"]), "quant": q.get("quant")}
    elif "repo" in q:
        body["model"] = {"repo": q["repo"], "quant": q.get("quant")}
    elif "params_b" in q:
        body["model"] = {
            "params_b": q["params_b"],
            "active_params_b": q.get("active_params_b"),
            "quant": q.get("quant"),
        }
    else:
        body["model"] = q.get("model", "")
    if isinstance(body["model"], dict):
        body["model"] = {k: v for k, v in body["model"].items() if v is not None}
    return body, description


def _hardware(q: dict[str, str]) -> Any:
    """A named card ("gpu"), a catalog slug, or "custom" with the machine's numbers."""
    if q.get("hardware") == "gpu" or ("gpu" in q and "hardware" not in q):
        return {"gpu": q.get("gpu", ""), "count": q.get("gpu_count", "1")}
    return q.get("hardware", "custom")


def _json(text: str) -> Any:
    try:
        return loads_strict(text)
    except ValueError as error:  # JsonRefused too: NaN, repeated keys, lone surrogates
        raise FormRefused("hf_config", NOT_JSON(detail=str(error))) from error


def shape_description(q: Mapping[str, str]) -> ModelDescription:
    """A model carried in a URL as the shape fields read from its config."""
    values: dict[str, Any] = {}
    for name in SHAPE_FIELDS:
        raw = q.get(name)
        if raw is None or raw == "":
            values[name] = None
        elif name in _TEXT_FIELDS:
            values[name] = raw
        elif name in _FLAG_FIELDS:
            values[name] = raw in ("true", "1", "on")
        else:
            try:
                values[name] = int(raw)
            except ValueError as error:
                raise FormRefused(name, NOT_WHOLE(name=name)) from error
    required = ("num_layers", "embedding_params", "linear_params")
    missing = [name for name in required if values[name] is None]
    if missing:
        raise FormRefused(missing[0], SHAPE_NEEDS(names=missing))
    for name in (
        "experts",
        "active_experts",
        "expert_params",
        "active_expert_params",
        "moe_layers",
        "mtp_layers",
    ):
        values[name] = values[name] or 0
    values["sliding_window_layers"] = values["sliding_window_layers"] or 0
    values["model_type"] = values["model_type"] or ""
    values["tied_embeddings"] = bool(values["tied_embeddings"])
    shape = ModelShape(**values)
    quant = lookup_quant(q.get("quant") or "BF16")
    return ModelDescription(
        name=q.get("name") or f"{shape.model_type or 'model'} {shape.params_total / 1e9:.1f}B",
        source="hf_config",
        quant=quant,
        params_total_b=shape.params_total / 1e9,
        params_active_b=shape.params_active / 1e9,
        shape=shape,
        params_basis=Basis.DERIVED,
    )


def share_query(query: Mapping[str, str], description: ModelDescription | None) -> str:
    """The query string that reproduces this answer; a config becomes its shape fields."""
    kept = {k: v for k, v in query.items() if v not in ("", None)}
    if description is not None and description.shape is not None and "config" in kept:
        kept.pop("config")
        shape = asdict(description.shape)
        kept |= {k: _text(v) for k, v in shape.items() if v not in (None, 0, "")}
        kept["name"] = description.name
        kept["quant"] = description.quant.name
    return urlencode(kept)


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
