"""The device selector: "what if" for catalog hardware or a machine described by numbers.

It resolves through the same path as the fit table, with a transient hardware entry for a
described machine, so its verdict, memory, speed and command are the table's own.
"""

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.estimate.load import MAX_CONCURRENCY, RequestShape
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.sentences import render as say
from app.i18n.validation_words import first_errors, pydantic_text, refusal
from app.models import Hardware
from app.resolve import ModelInputs, ResolvedRecipe, resolve_recipe
from app.resolve.custom import HardwareDescription, Interconnect, Platform, custom_hardware
from app.resolve.service import RecipeService

CUSTOM = "custom"
# Form fields that describe the machine; a catalog card fills them in.
HARDWARE_FIELDS = (
    "memory_gb_per_gpu",
    "usable_memory_gb",
    "gpu_count",
    "bandwidth_gb_s_per_gpu",
    "interconnect",
    "platform",
    "unified_memory",
)
OPTIONAL_FIELDS = frozenset(
    {
        "memory_gb_per_gpu",
        "usable_memory_gb",
        "bandwidth_gb_s_per_gpu",
        "bf16_tflops_per_gpu",
        "artifact",
        "runtime",
        "context",
        "concurrency",
        "prompt_tokens",
        "output_tokens",
        "group",
    }
)
MEMORY_NEEDED = register("selector.memory_needed", _l("describe the memory per card (GB)"))
USABLE_OVER_TOTAL = register(
    "selector.usable_over_total", _l("more than the %(total)s GB the cards have in all")
)
CHOOSE_ONE = register("selector.choose_one", _l("choose one of: %(choices)s"))
CUSTOM_OR_ONE = register("selector.custom_or_one", _l("choose 'custom' or one of: %(choices)s"))
WRONG_PLATFORM = register(
    "selector.wrong_platform",
    _l("%(runtime)s does not run on %(platform)s (runs on %(platforms)s)"),
)
CANNOT_LOAD = register(
    "selector.cannot_load", _l("%(runtime)s cannot load %(format)s files (loads %(formats)s)")
)


class SelectorInput(BaseModel):
    """What the person asks about; blank form fields arrive as empty strings."""

    model_config = ConfigDict(extra="ignore")

    hardware: str = Field(default=CUSTOM, max_length=100)
    memory_gb_per_gpu: float | None = Field(default=None, gt=0, le=10_000)
    usable_memory_gb: float | None = Field(default=None, gt=0, le=1_000_000)
    gpu_count: int = Field(default=1, ge=1, le=64)
    bandwidth_gb_s_per_gpu: float | None = Field(default=None, ge=1, le=100_000)
    bf16_tflops_per_gpu: float | None = Field(default=None, gt=0, le=100_000)
    interconnect: Interconnect = "none"
    platform: Platform = "cuda"
    unified_memory: bool = False
    group: str | None = Field(default=None, pattern="^(local|server)$")
    profile: str = Field(default="balanced", max_length=50)
    artifact: str | None = Field(default=None, max_length=120)
    runtime: str | None = Field(default=None, max_length=50)
    context: int | None = Field(default=None, ge=256, le=10_000_000)
    concurrency: int | None = Field(default=None, ge=1, le=MAX_CONCURRENCY)
    prompt_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    output_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    evidence: Literal["use", "ignore"] = "use"

    @field_validator("*", mode="before")
    @classmethod
    def blank_is_none(cls, value: object, info: Any) -> object:
        if value == "" and info.field_name in OPTIONAL_FIELDS:
            return None
        return value

    @model_validator(mode="after")
    def describes_the_machine(self) -> "SelectorInput":
        if self.hardware != CUSTOM:
            return self
        if self.memory_gb_per_gpu is None:
            raise refusal(MEMORY_NEEDED, field="memory_gb_per_gpu")
        total = self.memory_gb_per_gpu * self.gpu_count
        if self.usable_memory_gb is not None and self.usable_memory_gb > total:
            raise refusal(USABLE_OVER_TOTAL, field="usable_memory_gb", total=total)
        return self

    def description(self) -> HardwareDescription:
        assert self.memory_gb_per_gpu is not None
        return HardwareDescription(
            memory_gb_per_gpu=self.memory_gb_per_gpu,
            gpu_count=self.gpu_count,
            platform=self.platform,
            bandwidth_gb_s_per_gpu=self.bandwidth_gb_s_per_gpu,
            bf16_tflops_per_gpu=self.bf16_tflops_per_gpu,
            usable_memory_gb=self.usable_memory_gb,
            interconnect=self.interconnect,
            unified_memory=self.unified_memory,
            group=self.group,
        )


@dataclass
class SelectorResult:
    values: dict[str, Any]  # what the form shows, catalog figures filled in
    errors: dict[str, str] = field(default_factory=dict)
    recipe: ResolvedRecipe | None = None
    catalog_hardware: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors and self.recipe is not None


def field_errors(error: ValidationError) -> dict[str, str]:
    """By field, in the reader's words (a check of the whole machine names its field)."""
    errors: dict[str, str] = {}
    items, _total = first_errors(error)  # the form has a few fields: none lost but noise
    for item in items:
        named = str((item.get("ctx") or {}).get("field", ""))
        name = str(item["loc"][0]) if item["loc"] else named
        errors.setdefault(name or "form", pydantic_text(item))
    return errors


def catalog_values(hardware: Hardware) -> dict[str, Any]:
    """The form fields as the catalog states them for a hardware configuration."""
    return {
        "memory_gb_per_gpu": hardware.memory_gb_per_gpu,
        "usable_memory_gb": hardware.usable_memory_gb,
        "gpu_count": hardware.gpu_count,
        "bandwidth_gb_s_per_gpu": hardware.bandwidth_gb_s_per_gpu,
        "interconnect": hardware.interconnect,
        "platform": hardware.platform,
        "unified_memory": hardware.unified_memory,
    }


def route_errors(inputs: ModelInputs, data: SelectorInput, hardware: Hardware) -> dict[str, str]:
    """A named model file and runtime must exist, load each other and run here."""
    errors: dict[str, str] = {}
    artifacts = {a.slug: a for a in inputs.model.artifacts}
    runtimes = {r.slug: r for r in inputs.runtimes}
    artifact = artifacts.get(data.artifact) if data.artifact else None
    runtime = runtimes.get(data.runtime) if data.runtime else None
    if data.artifact and artifact is None:
        errors["artifact"] = say(CHOOSE_ONE(choices=list(artifacts)))
    if data.runtime and runtime is None:
        errors["runtime"] = say(CHOOSE_ONE(choices=list(runtimes)))
    if data.profile not in {p.slug for p in inputs.profiles}:
        errors["profile"] = say(CHOOSE_ONE(choices=[p.slug for p in inputs.profiles]))
    if runtime is not None and hardware.platform not in runtime.platforms:
        errors["runtime"] = say(
            WRONG_PLATFORM(
                runtime=runtime.name, platform=hardware.platform, platforms=list(runtime.platforms)
            )
        )
    elif runtime is not None and artifact is not None and artifact.format not in runtime.formats:
        errors["runtime"] = say(
            CANNOT_LOAD(runtime=runtime.name, format=artifact.format, formats=list(runtime.formats))
        )
    return errors


def run_selector(
    service: RecipeService, inputs: ModelInputs, raw: dict[str, Any], *, fill: bool = False
) -> SelectorResult:
    """Validate, resolve, and say what to fix field by field.

    With `fill`, a catalog card's own figures and the table's recommended route for it
    replace what the form held, so the person starts from the table's answer.
    """
    values = {k: v for k, v in raw.items() if k != "model"}
    try:
        data = SelectorInput.model_validate(values)
    except ValidationError as error:
        return SelectorResult(values, field_errors(error))
    hardware = custom_hardware(data.description()) if data.hardware == CUSTOM else None
    if hardware is None:
        hardware = service.catalog.get_hardware(data.hardware)
        if hardware is None:
            known = [h.slug for h in service.list_hardware()]
            return SelectorResult(values, {"hardware": say(CUSTOM_OR_ONE(choices=known))})
        values.update(catalog_values(hardware))
        if fill:
            data = data.model_copy(update={"artifact": None, "runtime": None})
    return resolve_selection(inputs, data, hardware, values)


def resolve_selection(
    inputs: ModelInputs, data: SelectorInput, hardware: Hardware, values: dict[str, Any]
) -> SelectorResult:
    """The recipe of a validated question on its machine: what `run_selector` answers once
    the form is read, and what a plan asks again at each concurrency."""
    errors = route_errors(inputs, data, hardware)
    if errors:
        return SelectorResult(values, errors)
    recipe = resolve_recipe(
        inputs,
        hardware,
        inputs.profile(data.profile),
        artifact=data.artifact,
        runtime=data.runtime,
        context=data.context,
        concurrency=data.concurrency,
        shape=RequestShape(data.prompt_tokens, data.output_tokens),
        evidence=data.evidence == "use",
    )
    if recipe.route is not None:
        values.update(artifact=recipe.route.artifact.slug, runtime=recipe.route.runtime.slug)
    return SelectorResult(values, {}, recipe, catalog_hardware=data.hardware != CUSTOM)
