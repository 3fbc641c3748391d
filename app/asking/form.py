"""The model page's device selector: "what if" for catalog hardware or a machine described
by numbers, read from its form into the one `Question` and asked as every surface asks it,
so its verdict, memory, speed and command are the fit table's own.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.asking.answer import CUSTOM, Answer, ask
from app.asking.custom import HardwareDescription, Interconnect, Platform, custom_hardware
from app.estimate.speed.load import MAX_CONCURRENCY, RequestShape
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Kind, Sentence, register
from app.i18n.sentences import render as say
from app.i18n.validation_words import first_errors, pydantic_text, refusal
from app.models import Hardware
from app.resolve import ModelInputs, Question
from app.resolve.service import RecipeService

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
CUSTOM_OR_ONE = register("selector.custom_or_one", _l("choose 'custom' or one of: %(choices)s"))


def machine_faults(
    memory_gb_per_gpu: float | None, gpu_count: int, usable_memory_gb: float | None
) -> dict[str, Sentence]:
    """What a machine described by numbers lacks or contradicts, by field (the form's and
    the estimate request's flat fields alike)."""
    if memory_gb_per_gpu is None:
        return {"memory_gb_per_gpu": MEMORY_NEEDED()}
    total = memory_gb_per_gpu * gpu_count
    if usable_memory_gb is not None and usable_memory_gb > total:
        return {"usable_memory_gb": USABLE_OVER_TOTAL(total=total)}
    return {}


class QuestionForm(BaseModel):
    """The selector's fields as the form sends them; blank fields arrive as empty strings."""

    model_config = ConfigDict(extra="ignore")

    hardware: str = Field(default=CUSTOM, max_length=100)
    memory_gb_per_gpu: float | None = Field(default=None, gt=0, le=10_000)
    usable_memory_gb: float | None = Field(
        default=None, gt=0, le=640_000
    )  # at most 10,000 GB times 64 cards
    gpu_count: int = Field(default=1, ge=1, le=64)
    bandwidth_gb_s_per_gpu: float | None = Field(default=None, ge=1, le=100_000)
    bf16_tflops_per_gpu: float | None = Field(default=None, gt=0, le=100_000)
    interconnect: Interconnect = "none"
    platform: Platform = "cuda"
    unified_memory: bool = False
    group: Literal["local", "server"] | None = None
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
    def describes_the_machine(self) -> "QuestionForm":
        if self.hardware != CUSTOM:
            return self
        faults = machine_faults(self.memory_gb_per_gpu, self.gpu_count, self.usable_memory_gb)
        for name, said in faults.items():
            raise refusal(Kind(said.code), field=name, **said.params)
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

    def question(self, hardware: Hardware) -> Question:
        return Question(
            hardware,
            self.profile,
            artifact=self.artifact,
            runtime=self.runtime,
            context=self.context,
            concurrency=self.concurrency,
            shape=RequestShape(self.prompt_tokens, self.output_tokens),
            evidence=self.evidence == "use",
        )


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


def run_selector(
    service: RecipeService, inputs: ModelInputs, raw: dict[str, Any], *, fill: bool = False
) -> Answer:
    """Read the form into the question, ask it, and say what to fix field by field.

    With `fill`, a catalog card's own figures and the table's recommended route for it
    replace what the form held, so the person starts from the table's answer.
    """
    values = {k: v for k, v in raw.items() if k != "model"}
    try:
        form = QuestionForm.model_validate(values)
    except ValidationError as error:
        return Answer(values, field_errors(error))
    if form.hardware == CUSTOM:
        hardware = custom_hardware(form.description())
    else:
        found = service.catalog.get_hardware(form.hardware)
        if found is None:
            known = [h.slug for h in service.list_hardware()]
            return Answer(values, {"hardware": say(CUSTOM_OR_ONE(choices=known))})
        hardware = found
        values.update(catalog_values(hardware))
        if fill:
            form = form.model_copy(update={"artifact": None, "runtime": None})
    answer = ask(inputs, form.question(hardware), values)
    if answer.recipe is not None and answer.recipe.route is not None:
        route = answer.recipe.route
        values.update(artifact=route.artifact.slug, runtime=route.runtime.slug)
    return answer
