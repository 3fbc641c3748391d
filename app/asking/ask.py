"""`POST /api/estimate`, the estimate page and `servebook estimate`: the request read into
the one `Question`, its model and card named or described. A description becomes a
transient catalog entry, so the answer has the catalog's shape, rules and figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from app.asking.answer import CUSTOM, FOREIGN_ARTIFACT, Answer, ask
from app.asking.custom import HardwareDescription, custom_hardware
from app.asking.described import ModelDescription, described_inputs, described_model
from app.asking.errors import (
    CodedErrors,
    FieldErrors,
    coded,
    dotted_errors,
    errors_status,
    estimate_refusal_words,
    gpu_refusal,
    merged,
)
from app.asking.form import CUSTOM_OR_ONE, machine_faults
from app.asking.hub import HubUnavailable, describe_repo
from app.asking.model_sources import (
    DescriptionConflict,
    from_hf_config,
    from_numbers,
    from_safetensors,
    safetensors_header_bytes,
    safetensors_index_bytes,
)
from app.asking.request import (
    EstimateRequest,
    GpuByName,
    ModelByConfig,
    ModelByNumbers,
    ModelByRepo,
    ModelBySafetensors,
)
from app.catalog.references import held_references
from app.config import Settings
from app.errors import NotFound
from app.estimate import EstimateError
from app.estimate.messages import Code, Message, message
from app.estimate.speed.load import RequestShape
from app.models import Hardware
from app.resolve import Question
from app.resolve.inputs import ModelInputs
from app.resolve.service import RecipeService


@dataclass
class DescribedResult:
    """The question's answer plus what the model and the card were described as."""

    result: Answer
    description: ModelDescription | None = None
    hardware_name: str | None = None
    # What the answer assumed beyond the recipe's own inputs (a card's common size).
    assumed: tuple[Message, ...] = ()
    card: dict[str, Any] | None = None  # the card a GPU name was read as, and its others
    status: int = 422  # what errors answer (the Hub's part may be 403, 404 or 502)
    shape: RequestShape | None = None  # the request lengths as asked (None: left blank)


def parse_request(body: dict[str, Any]) -> EstimateRequest | CodedErrors:
    """The typed request, or errors by dotted field name."""
    try:
        return EstimateRequest.model_validate(body)
    except ValidationError as error:
        return dotted_errors(error)


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
    return name  # asking refuses it with the choices


def gpu_description(gpu: GpuByName, catalog: Iterable[Hardware] = ()) -> HardwareDescription:
    """A named card as the GPU table describes it; its usable memory is the catalog's figure
    for the card where the catalog (`catalog`, its hardware) holds it."""
    from app.asking.gpu_table import lookup_gpu

    return lookup_gpu(gpu.gpu, gpu.count, gpu.memory_gb, catalog)


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
    """A request's hardware, read once: a catalog slug or "custom" (the request's own
    figures describe the machine) as `slug`, or a card by name read as its `machine`, with
    what naming the card assumed."""

    slug: str | None = None
    machine: Hardware | None = None
    name: str | None = None
    assumed: tuple[Message, ...] = ()
    card: dict[str, Any] | None = None


def request_hardware(
    hardware: Any, catalog: Iterable[Hardware] = ()
) -> RequestHardware | dict[str, str]:
    """A catalog slug, "custom" or a named card (or the error); a named card takes the
    usable memory the catalog (`catalog`, its hardware) gives it."""
    if not isinstance(hardware, GpuByName):
        return RequestHardware(slug=hardware)
    try:
        described = gpu_description(hardware, catalog)
    except ValueError as error:
        return coded({"hardware.gpu": gpu_refusal(error)})
    assumed, card = card_assumptions(hardware, described)
    count = f"{hardware.count}x " if hardware.count > 1 else ""
    machine = custom_hardware(described)
    return RequestHardware(None, machine, f"{count}{hardware.gpu}", assumed, card)


def request_machine(
    service: RecipeService, request: EstimateRequest, hardware: RequestHardware
) -> Hardware | CodedErrors:
    """The machine the question is asked on: a named card's, the catalog row, or one
    built from the request's own figures (or what they lack, by field)."""
    if hardware.machine is not None:
        return hardware.machine
    if hardware.slug != CUSTOM:
        found = service.catalog.get_hardware(hardware.slug or "")
        if found is None:
            known = [h.slug for h in service.list_hardware()]
            return coded({"hardware": CUSTOM_OR_ONE(choices=known)})
        return found
    count = request.gpu_count or 1
    faults = machine_faults(request.memory_gb_per_gpu, count, request.usable_memory_gb)
    if faults:
        return coded(faults)
    assert request.memory_gb_per_gpu is not None
    described = HardwareDescription(
        memory_gb_per_gpu=request.memory_gb_per_gpu,
        gpu_count=count,
        platform=request.platform or "cuda",
        bandwidth_gb_s_per_gpu=request.bandwidth_gb_s_per_gpu,
        usable_memory_gb=request.usable_memory_gb,
        interconnect=request.interconnect or "none",
        unified_memory=bool(request.unified_memory),
        group=request.group,
    )
    return custom_hardware(described)


def request_question(
    service: RecipeService, request: EstimateRequest, model: RequestModel, machine: Hardware
) -> Question:
    """The estimate request as the one question; a described model asks of its own file."""
    return Question(
        machine,
        request.profile,
        artifact=model.artifact or request.artifact,
        runtime=runtime_slug(service, request.runtime),
        context=request.context,
        concurrency=request.concurrency,
        shape=RequestShape(request.prompt_tokens, request.output_tokens),
        evidence=request.evidence == "use",
    )


def foreign_artifact(
    service: RecipeService, model: RequestModel, slug: str | None
) -> dict[str, str]:
    """A catalog file of another model than the one named: the fields conflict (a slug no
    catalog file has is refused by the route's own check, as the schema refuses it)."""
    if not slug or model.description is not None:  # a described model's file is its own
        return {}
    own = [a.slug for a in model.inputs.model.artifacts]
    file = held_references(service.catalog.session).artifacts.get(slug)
    if slug in own or file is None:
        return {}
    said = FOREIGN_ARTIFACT(
        slug=slug, owner=file.model.slug, model=model.inputs.model.slug, choices=own
    )
    return coded({"artifact": said})


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
        except DescriptionConflict as error:  # before EstimateError, which it is
            return coded({f"model.{error.field}": error.said})
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
    """Ask a request whose model and hardware may each be named or described; a
    description read elsewhere (a GGUF file in the CLI) stands in for the request's model."""
    hardware = request_hardware(request.hardware, service.list_hardware())
    model = request_model(service, request.model, settings, request.context, description)
    machine = (
        request_machine(service, request, hardware)
        if isinstance(hardware, RequestHardware)
        else hardware
    )
    if isinstance(machine, dict) or isinstance(model, dict):
        # Every field at fault at once: an unknown card beside an unknown model.
        found = [errors for errors in (model, machine) if isinstance(errors, dict)]
        errors = merged(*found) if len(found) == 2 else coded(found[0])
        status = errors_status(model) if isinstance(model, dict) else 422
        return DescribedResult(Answer({}, errors), status=status)
    assert isinstance(hardware, RequestHardware)
    question = request_question(service, request, model, machine)
    answer = ask(model.inputs, question)
    foreign = foreign_artifact(service, model, request.artifact)
    if foreign:  # said as the conflict it is, beside the route's other faults
        answer = Answer({}, merged(foreign, answer.errors))
    return DescribedResult(
        answer,
        model.description,
        hardware.name,
        hardware.assumed,
        hardware.card,
        shape=question.shape,
    )
