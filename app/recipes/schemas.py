"""JSON shapes of the fit table (the HTML templates read the same resolved recipes)."""

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    model_validator,
)

from app.catalog.openapi import catalog_field
from app.catalog.schemas import ModelOut
from app.estimate import Verdict
from app.estimate.load import MAX_CONCURRENCY
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.validation_words import refusal
from app.resolve.custom import Interconnect, Platform

Status = Literal["verified", "verification_pending"]


class RangeOut(BaseModel):
    low: float
    high: float
    basis: Literal["measured", "reported", "calibrated", "estimated"]
    note: str  # English; note_messages carries the same as codes
    note_messages: list["MessageOut"]
    source: str | None = None
    records: int = 0
    contradicted: "MessageOut | None" = Field(
        default=None,
        description="a reported figure that the roofline or a measurement contradicts: why",
    )


class MemoryOut(BaseModel):
    required_gb_per_gpu: float | None
    usable_gb_per_gpu: float
    headroom_gb_per_gpu: float | None
    basis: Literal["measured", "estimated"] | None


class BandOut(BaseModel):
    low: float
    high: float
    basis: Literal["measured", "reported", "calibrated", "estimated"]


class LoadLineOut(BaseModel):
    """A profile's figures at its own concurrency: each request's decode, the total output
    and the first token (estimated, except one request's decode where it was measured)."""

    concurrency: int
    decode_tokens_per_s: BandOut  # per request
    throughput_tokens_per_s: BandOut  # all requests together
    ttft_ms: BandOut


class ProfileStatusOut(BaseModel):
    slug: str
    name: str
    status: Status
    url: str
    token_generation: RangeOut | None  # one request
    at_profile_concurrency: LoadLineOut | None = None


class MessageOut(BaseModel):
    """A reason's clause or a warning: its code and figures, and its English wording."""

    code: str
    params: dict[str, Any]
    text: str


class RowLoadOut(BaseModel):
    """With the fit table's load filter: whether this configuration, as one replica, carries
    every user at the speed asked; if not, what stops it and how many replicas would."""

    users: int
    carries: bool
    limited_by: Literal["memory", "decode", "ttft"] | None
    replicas: int | None  # replicas that carry the load; None where no number would
    limited_at_any_count: Literal["memory", "decode", "ttft"] | None
    concurrency_per_replica: int
    decode_tokens_per_s: BandOut | None  # each request's, at those replicas


class FitRowOut(BaseModel):
    hardware: str
    hardware_name: str
    platform: str
    usable_memory_gb: float
    gpu_count: int
    profile: str  # the profile the row's figures come from (balanced)
    verdict: Verdict
    verdict_label: str
    reason: str  # English; reason_messages carries the same as codes
    reason_messages: list[MessageOut]
    recommended_runtime: str | None
    recommended_artifact: str | None
    verified_pair: bool
    alternative_runtimes: list[str]
    profile_status: Status
    profiles: list[ProfileStatusOut]
    start_context: int
    max_context: int | None
    token_generation: RangeOut | None
    at_profile_concurrency: LoadLineOut | None = None
    memory: MemoryOut
    load: RowLoadOut | None = None  # with the load filter (users, min_decode_tokens_per_s)


class FitTableOut(BaseModel):
    model: ModelOut
    filters: dict[str, str]
    page: int
    pages: int
    total: int  # rows that pass the filters, over every page
    rows: list[FitRowOut]


# --- POST /api/estimate: a model and hardware named or described ------------------------

_STRICT = ConfigDict(extra="forbid")


class ModelByNumbers(BaseModel):
    """Parameter counts and a quant name: weights only, the KV cache unknown."""

    model_config = _STRICT
    params_b: float = Field(gt=0, le=100_000, description="total parameters, billions")
    active_params_b: float | None = Field(
        default=None, gt=0, le=100_000, description="parameters per token (MoE), billions"
    )
    quant: str = Field(min_length=1, max_length=40, description="a name from the quant table")
    name: str | None = Field(default=None, max_length=100)


# A config.json's numbers are layer counts, widths, head counts, vocabularies, contexts and
# small floats; the largest real one is below 2^31. Bounded here, before the estimator
# multiplies them: 1e308 layers overflowed a float and 2^62 a formatted figure (500s).
MAX_CONFIG_NUMBER = 2**31 - 1
CONFIG_NUMBER_TOO_LARGE = register(
    "estimate.config_number_too_large",
    _l("%(key)s is %(value)s; config numbers are at most %(most)s"),
)


def bounded_config(config: dict[str, Any]) -> dict[str, Any]:
    """Every number in the config, at any depth, within +-MAX_CONFIG_NUMBER."""
    stack: list[tuple[str, Any]] = [("", config)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}.{i}", v) for i, v in enumerate(value))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if abs(value) > MAX_CONFIG_NUMBER:
                shown = f"{value:.3g}" if isinstance(value, float) else f"{value:.3e}"
                raise refusal(
                    CONFIG_NUMBER_TOO_LARGE, key=path, value=shown, most=MAX_CONFIG_NUMBER
                )
    return config


HfConfig = Annotated[dict[str, Any], AfterValidator(bounded_config)]


class ModelByConfig(BaseModel):
    """A Hugging Face config.json; the quant named, else the one it declares."""

    model_config = _STRICT
    hf_config: HfConfig
    quant: str | None = Field(default=None, min_length=1, max_length=40)
    name: str | None = Field(default=None, max_length=100)


class ModelBySafetensors(BaseModel):
    """A model.safetensors.index.json or a safetensors header (exact bytes), optionally with
    the config.json (shapes, KV cache)."""

    # One of the two files, as `one_file` checks.
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"type": "object"}}}
                for name in ("safetensors_index", "safetensors_header")
            ]
        },
    )
    safetensors_index: dict[str, Any] | None = None
    safetensors_header: dict[str, Any] | None = None
    hf_config: HfConfig | None = None
    quant: str | None = Field(default=None, min_length=1, max_length=40)
    params_b: float | None = Field(default=None, gt=0, le=100_000)
    name: str | None = Field(default=None, max_length=100)

    @model_validator(mode="after")
    def one_file(self) -> "ModelBySafetensors":
        if (self.safetensors_index is None) == (self.safetensors_header is None):
            raise ValueError("give safetensors_index or safetensors_header (one of them)")
        return self


class ModelByRepo(BaseModel):
    """A Hub repository id: config and sizes fetched (and cached) when online."""

    model_config = _STRICT
    repo: str = Field(min_length=3, max_length=200, pattern=r"^[\w.-]+/[\w.-]+$")
    quant: str | None = Field(default=None, min_length=1, max_length=40)


def _model_kind(value: Any) -> str | None:
    """Which description a request's model is, by the keys it carries."""
    if isinstance(value, str):
        return "by_slug"
    if not isinstance(value, dict):
        return None
    if "safetensors_index" in value or "safetensors_header" in value:
        return "by_safetensors"
    for key, kind in (("repo", "by_repo"), ("hf_config", "by_config"), ("params_b", "by_numbers")):
        if key in value:
            return kind
    return None


ModelIn = Annotated[
    Annotated[str, Tag("by_slug")]
    | Annotated[ModelByNumbers, Tag("by_numbers")]
    | Annotated[ModelByConfig, Tag("by_config")]
    | Annotated[ModelBySafetensors, Tag("by_safetensors")]
    | Annotated[ModelByRepo, Tag("by_repo")],
    Discriminator(
        _model_kind,
        custom_error_type="model_kind",
        custom_error_message=(
            "give a catalog slug, or an object with params_b, hf_config, "
            "safetensors_index / safetensors_header, or repo"
        ),
    ),
]


def _hardware_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "by_slug"
    return "by_gpu" if isinstance(value, dict) else None


HardwareIn = Annotated[
    Annotated[str, Tag("by_slug")] | Annotated["GpuByName", Tag("by_gpu")],
    Discriminator(
        _hardware_kind,
        custom_error_type="hardware_kind",
        custom_error_message='give a catalog slug, "custom", or {"gpu": NAME, "count": N}',
    ),
]


class GpuByName(BaseModel):
    """A card named as people name it ("RTX 4090", "4090"), times a count."""

    model_config = _STRICT
    gpu: str = Field(min_length=1, max_length=100)
    count: int = Field(default=1, ge=1, le=64)
    memory_gb: float | None = Field(default=None, gt=0, le=10_000)


class EstimateRequest(BaseModel):
    """A catalog model slug or a described model, on catalog, named or described hardware.

    Described hardware keeps the selector's flat fields (memory_gb_per_gpu, gpu_count,
    bandwidth_gb_s_per_gpu, usable_memory_gb, platform, interconnect, unified_memory)
    beside `"hardware": "custom"`. Any other field is refused by name.
    """

    model_config = _STRICT
    model: ModelIn = Field(
        description="catalog slug, or a model description",
        json_schema_extra=catalog_field("model"),
    )
    hardware: HardwareIn = Field(default="custom", description="catalog slug, a GPU, or custom")
    runtime: str | None = Field(default=None, max_length=50)
    artifact: str | None = Field(default=None, max_length=120)
    context: int | None = Field(default=None, ge=256, le=10_000_000)
    profile: str = Field(default="balanced", max_length=50)
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="concurrent requests the figures are for (1 when not given)",
    )
    prompt_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    output_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    evidence: Literal["use", "ignore"] = Field(
        default="use",
        description='"ignore": the estimator\'s figures only, even where records exist',
    )
    memory_gb_per_gpu: float | None = Field(default=None, gt=0, le=10_000)
    usable_memory_gb: float | None = Field(default=None, gt=0, le=1_000_000)
    gpu_count: int | None = Field(default=None, ge=1, le=64)
    bandwidth_gb_s_per_gpu: float | None = Field(default=None, gt=0, le=100_000)
    interconnect: Interconnect | None = None
    platform: Platform | None = None
    unified_memory: bool | None = None
    group: Literal["local", "server"] | None = None


class SpeedOut(BaseModel):
    low: float
    high: float
    basis: str
    note: str  # English; note_messages carries the same as codes
    note_messages: list[MessageOut]


class EstimateOut(BaseModel):
    """The recipe's flat shape (a few of its fields; every field is in the answer)."""

    model_config = ConfigDict(extra="allow")
    model: str
    hardware: str
    verdict: Verdict
    reason: str  # English; reason_messages carries the same as codes
    reason_messages: list[MessageOut]
    required_gb_per_gpu: float | None
    usable_gb_per_gpu: float
    max_context: int | None
    decode_tokens_per_s: SpeedOut | None
    kv_cache: Literal["estimated", "unknown"]
    assumed: list[str]  # English; assumed_messages carries the same as codes
    assumed_messages: list[MessageOut]
    described: dict[str, Any] | None
