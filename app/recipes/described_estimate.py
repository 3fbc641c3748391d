"""`POST /api/estimate`, the estimate page and `servebook estimate` for a model or a card
that is not in the catalog: the description becomes a transient catalog entry and resolves
through the selector, so the answer has the catalog's shape, rules and figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from app.config import Settings
from app.errors import NotFound
from app.estimate import EstimateError
from app.estimate.messages import Code, Message, message
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.messages import english, message_text, messages_json
from app.i18n.sentences import Sentence, json_params, register
from app.i18n.sentences import english as english_sentence
from app.i18n.sentences import render as render_sentence
from app.i18n.validation_words import (
    MAX_MESSAGE,
    MORE_ERRORS,
    clipped,
    first_errors,
    pydantic_text,
    said_by_pydantic,
)
from app.models import Hardware
from app.recipes.estimate_request import (
    EstimateRequest,
    GpuByName,
    ModelByConfig,
    ModelByNumbers,
    ModelByRepo,
    ModelBySafetensors,
)
from app.recipes.presenters import estimate_out
from app.recipes.selector import SelectorResult, run_selector
from app.resolve.custom import HardwareDescription
from app.resolve.described import ModelDescription, described_inputs, described_model
from app.resolve.hub import HubUnavailable, describe_repo
from app.resolve.inputs import ModelInputs
from app.resolve.model_sources import (
    from_hf_config,
    from_numbers,
    from_safetensors,
    safetensors_header_bytes,
    safetensors_index_bytes,
)
from app.resolve.service import RecipeService


class FieldErrors(dict[str, str]):
    """Errors by field, and the HTTP status they answer: 422 (the request is at fault)
    unless the Hub's answer for a repository says otherwise (`HubUnavailable.status`)."""

    def __init__(
        self,
        errors: dict[str, str],
        status: int = 422,
        messages: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(errors)
        self.status = status
        self.messages = messages or {}


def errors_status(errors: dict[str, str]) -> int:
    return errors.status if isinstance(errors, FieldErrors) else 422


@dataclass
class DescribedResult:
    """The selector's answer plus what the model and the card were described as."""

    result: SelectorResult
    description: ModelDescription | None = None
    hardware_name: str | None = None
    # What the answer assumed beyond the recipe's own inputs (a card's common size).
    assumed: tuple[Message, ...] = ()
    card: dict[str, Any] | None = None  # the card a GPU name was read as, and its others
    status: int = 422  # what errors answer (the Hub's part may be 403, 404 or 502)


def answer_out(answer: DescribedResult, concurrency: int | None = None) -> dict[str, Any]:
    """The flat JSON of an answer (`estimate_out`, its speed figures at the concurrency
    asked), with what the request itself made us assume added to its `assumed` list."""
    recipe = answer.result.recipe
    out = estimate_out(recipe, answer.description, answer.hardware_name, concurrency)
    if answer.assumed:
        out["assumed"] = [*out["assumed"], *(english(one) for one in answer.assumed)]
        out["assumed_messages"] = [*out["assumed_messages"], *messages_json(answer.assumed)]
    if answer.card is not None:
        out["gpu"] = answer.card
    return out


def parse_request(body: dict[str, Any]) -> EstimateRequest | CodedErrors:
    """The typed request, or errors by dotted field name."""
    try:
        return EstimateRequest.model_validate(body)
    except ValidationError as error:
        return dotted_errors(error)


class CodedErrors(dict[str, str]):
    """Errors by field in the reader's words, and beside them (`messages`) each one's code,
    params and English text where it has a code: a refusal's `error_messages`."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: dict[str, dict[str, Any]] = {}

    def add(self, name: str, text: str, message: dict[str, Any] | None = None) -> None:
        if name not in self:
            self[name] = text
            if message is not None:
                self.messages[name] = message


def coded(errors: Mapping[str, str | Sentence | Message]) -> CodedErrors:
    """Errors by field as a refusal carries them: each in the reader's words and, where it
    was said as a code (a registered sentence or an estimator message), that code, its
    params and its English text beside it. Errors already coded keep their codes."""
    out = CodedErrors()
    known = getattr(errors, "messages", {})
    for field, said in errors.items():
        if isinstance(said, Sentence):
            english_text = english_sentence(said)
            out.add(field, render_sentence(said), {**said.as_json(), "text": english_text})
        elif isinstance(said, Message):
            out.add(field, message_text(said), {**said.as_json(), "text": english(said)})
        else:
            out.add(field, said, known.get(field))
    if isinstance(errors, FieldErrors):
        return FieldErrors(out, errors.status, out.messages)
    return out


def dotted_errors(error: ValidationError) -> CodedErrors:
    """One message per field, named by its path; union branches reduced to the one meant.
    The first MAX_ERRORS, then `more` saying how many more there were."""
    errors = CodedErrors()
    items, total = first_errors(error)
    for item in items:
        # Union members appear in the path by class name: drop those parts.
        loc = [str(p) for p in item["loc"] if not _is_type_name(str(p))]
        name = clipped(".".join(loc) or "body")
        said = said_by_pydantic(item)
        english_text = english_sentence(said) if said else str(item["msg"])
        message = {
            "code": said.code if said else None,
            "params": json_params(said.params) if said else {},
            "text": clipped(english_text.removeprefix("Value error, "), MAX_MESSAGE),
        }
        errors.add(name, clipped(pydantic_text(item), MAX_MESSAGE), message)
    if total > len(items):
        more = MORE_ERRORS(more=total - len(items), listed=len(items))
        message = {"code": more.code, "params": json_params(more.params)}
        errors.add(MORE_FIELD, render_sentence(more), {**message, "text": english_sentence(more)})
    return errors


# The key of a refusal's errors that says how many more were not listed.
MORE_FIELD = "more"


def error_body(errors: dict[str, str]) -> dict[str, Any]:
    """A refusal's JSON: `errors` (field -> text) and `error_messages` (field -> code,
    params and English text; a null code where the refusal has none of its own)."""
    messages = getattr(errors, "messages", {})
    return {
        "errors": dict(errors),
        "error_messages": {
            field: messages.get(field) or {"code": None, "params": {}, "text": text}
            for field, text in errors.items()
        },
    }


def merged(first: dict[str, str], then: dict[str, str]) -> CodedErrors:
    """Every field's error: `first`'s, then those of `then` on other fields."""
    errors = CodedErrors()
    for found in (first, then):
        messages = getattr(found, "messages", {})
        for field, text in found.items():
            errors.add(field, text, messages.get(field))
    return errors


def without_refused(body: dict[str, Any], errors: dict[str, str]) -> dict[str, Any] | None:
    """The body without the top-level fields refused, to find what else is wrong (a second
    pass: an unknown GPU beside a negative price); None when nothing would be left to ask."""
    refused = {field.split(".")[0] for field in errors}
    if MORE_FIELD in refused or not refused or not refused <= set(body):
        return None
    return {key: value for key, value in body.items() if key not in refused}


def _is_type_name(part: str) -> bool:
    return part.startswith("by_")  # the tags of the model and hardware unions


def describe(model: BaseModel, settings: Settings, context: int | None) -> ModelDescription:
    """The model description a request carries (may raise EstimateError naming a field)."""
    if isinstance(model, ModelByNumbers):
        return from_numbers(model.params_b, model.active_params_b, model.quant, model.name)
    if isinstance(model, ModelByConfig):
        return from_hf_config(model.hf_config, model.quant, model.name)
    if isinstance(model, ModelBySafetensors):
        return _from_safetensors(model)
    assert isinstance(model, ModelByRepo)
    return describe_repo(model.repo, settings, model.quant)


def _from_safetensors(model: ModelBySafetensors) -> ModelDescription:
    if model.safetensors_index is not None:
        size, what, params = safetensors_index_bytes(model.safetensors_index), "index", None
    else:
        assert model.safetensors_header is not None
        size, elements = safetensors_header_bytes(model.safetensors_header)
        what, params = "header", (elements / 1e9 if elements else None)
    return from_safetensors(
        size,
        f"safetensors {what}",
        model.hf_config,
        model.quant,
        model.params_b or params,
        model.name,
    )


def runtime_slug(service: RecipeService, name: str | None) -> str | None:
    """A runtime as people write it ("llama.cpp", "vLLM") to its catalog slug."""
    if not name:
        return name
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    for runtime in service.list_runtimes():
        if key in {
            re.sub(r"[^a-z0-9]", "", runtime.slug),
            re.sub(r"[^a-z0-9]", "", runtime.name.lower()),
        }:
            return runtime.slug
    return name  # the selector refuses it with the choices


def gpu_fields(
    gpu: GpuByName, catalog: Iterable[Hardware] = ()
) -> tuple[dict[str, Any], str, HardwareDescription]:
    """The selector's described-hardware fields for a named card; its usable memory is the
    catalog's figure for the card where the catalog (`catalog`, its hardware) holds it."""
    from app.resolve.gpu_table import lookup_gpu

    described = lookup_gpu(gpu.gpu, gpu.count, gpu.memory_gb, catalog)
    fields = {
        "hardware": "custom",
        "memory_gb_per_gpu": described.memory_gb_per_gpu,
        "gpu_count": described.gpu_count,
        "platform": described.platform,
        "bandwidth_gb_s_per_gpu": described.bandwidth_gb_s_per_gpu,
        "bf16_tflops_per_gpu": described.bf16_tflops_per_gpu,
        "usable_memory_gb": described.usable_memory_gb,
        "interconnect": described.interconnect,
        "unified_memory": described.unified_memory,
        "group": described.group,
    }
    count = f"{gpu.count}x " if gpu.count > 1 else ""
    return fields, f"{count}{gpu.gpu}", described


def card_assumptions(
    gpu: GpuByName, described: HardwareDescription
) -> tuple[tuple[Message, ...], dict[str, Any]]:
    """A name sold in several sizes answered with the common one: the assumption, and the
    card it was read as beside the sizes it could also have meant."""
    card = {"name": gpu.gpu, "card": described.card, "others": list(described.other_sizes)}
    assumed: tuple[Message, ...] = ()
    if described.other_sizes:
        size = message(
            Code.GPU_SIZE_ASSUMED,
            name=gpu.gpu,
            size=described.card,
            others=list(described.other_sizes),
        )
        assumed += (size,)
    if described.usable_from is not None and described.usable_memory_gb is not None:
        per_card = round(described.usable_memory_gb / described.gpu_count, 2)
        usable = message(Code.USABLE_FROM_CATALOG, gb=per_card, hardware=described.usable_from)
        assumed += (usable,)
    return assumed, card


@dataclass
class RequestModel:
    """A request's model, read once: the inputs every resolution of it starts from, what it
    was described as, and a described model's one file."""

    inputs: ModelInputs
    description: ModelDescription | None = None
    artifact: str | None = None


@dataclass
class RequestHardware:
    """A request's hardware as the selector's fields, with what naming a card assumed."""

    fields: dict[str, Any]
    name: str | None = None
    assumed: tuple[Message, ...] = ()
    card: dict[str, Any] | None = None


def request_hardware(
    hardware: Any, catalog: Iterable[Hardware] = ()
) -> RequestHardware | dict[str, str]:
    """A catalog slug, "custom" or a named card, as the selector's fields (or the error); a
    named card takes the usable memory the catalog (`catalog`, its hardware) gives it."""
    if not isinstance(hardware, GpuByName):
        return RequestHardware({"hardware": hardware})
    try:
        fields, name, described_card = gpu_fields(hardware, catalog)
    except ValueError as error:
        return coded({"hardware.gpu": gpu_refusal(error)})
    assumed, card = card_assumptions(hardware, described_card)
    return RequestHardware(fields, name, assumed, card)


CLOSE_MATCHES = register("estimate.close_matches", _l("%(problem)s; close matches: %(close)s"))


def gpu_refusal(error: ValueError) -> Sentence | str:
    """A refused card name or count, with the names it is close to: a sentence where the
    lookup said it as one."""
    said = getattr(error, "said", None)
    problem = said if isinstance(said, Sentence) else str(error)
    close = getattr(error, "close_matches", [])
    return CLOSE_MATCHES(problem=problem, close=close) if close else problem


def estimate_refusal_words(error: EstimateError) -> str:
    """An input the estimator refused, in the reader's language where it says it as a code
    (its English sentence otherwise)."""
    return message_text(error.reason) if error.reason is not None else error.message


def request_model(
    service: RecipeService,
    model: Any,
    settings: Settings,
    context: int | None = None,
    description: ModelDescription | None = None,
) -> RequestModel | dict[str, str]:
    """A catalog slug's inputs, or a described model's (or the error, by field); a
    description read elsewhere (a GGUF file in the CLI) stands in for the request's model."""
    if description is None and isinstance(model, str):
        try:
            return RequestModel(service.inputs(model))
        except NotFound as missing:  # a field of the request, not the URL: 422, not 404
            return coded({"model": missing.said or missing.text()})
    if description is None:
        try:
            description = describe(model, settings, context)
        except HubUnavailable as error:
            return FieldErrors({"model.repo": error.message}, error.status)
        except EstimateError as error:
            return coded({f"model.{error.field}": error.reason or estimate_refusal_words(error)})
    described = described_model(description, context)
    inputs = described_inputs(service.catalog.session, described)
    return RequestModel(inputs, description, described.artifacts[0].slug)


def run_estimate(
    service: RecipeService,
    request: EstimateRequest,
    settings: Settings,
    description: ModelDescription | None = None,
) -> DescribedResult:
    """Resolve a request whose model and hardware may each be named or described; a
    description read elsewhere (a GGUF file in the CLI) stands in for the request's model."""
    raw = request.model_dump(exclude={"model", "hardware"}, exclude_none=True)
    raw["runtime"] = runtime_slug(service, request.runtime)
    hardware = request_hardware(request.hardware, service.list_hardware())
    model = request_model(service, request.model, settings, request.context, description)
    if isinstance(hardware, dict) or isinstance(model, dict):
        # Every field at fault at once: an unknown card beside an unknown model.
        found = [errors for errors in (model, hardware) if isinstance(errors, dict)]
        errors = merged(*found) if len(found) == 2 else coded(found[0])
        status = errors_status(model) if isinstance(model, dict) else 422
        return DescribedResult(SelectorResult(raw, errors), status=status)
    raw.update(hardware.fields)
    if model.artifact is not None:
        raw["artifact"] = model.artifact
    result = run_selector(service, model.inputs, raw)
    return DescribedResult(
        result, model.description, hardware.name, hardware.assumed, hardware.card
    )


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema with its definitions inlined, for an OpenAPI request body."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(definitions[ref.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)
