"""`POST /api/estimate`'s request (and `POST /api/plan`'s model and hardware): a model and
hardware named or described, as the schema states them. Strict: any other field is refused
by name; what the schema states of names, files and configs is what the server reads."""

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.asking.answer import CUSTOM
from app.asking.config_refusal import refuse_unreadable_config
from app.asking.custom import Interconnect, Platform
from app.asking.gpu_table import stated_gpu_names
from app.asking.hub import REPO_ID
from app.asking.model_sources import SAFETENSORS_HEADER_SCHEMA, SAFETENSORS_INDEX_SCHEMA
from app.catalog.openapi import catalog_field
from app.estimate.inputs.hf_config_schema import (
    config_schema,
    declared_quantization,
)
from app.estimate.inputs.quants import ALIASES, lookup_quant, quant_names
from app.estimate.speed.load import DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS, MAX_CONCURRENCY
from app.security.json_input_schema import FREE_FORM_MARK

_STRICT = ConfigDict(extra="forbid")

# The quant names the schema states: the table's and their aliases, as written (a name is
# read without case, spacing or separators, so "q4_k_m" works too; these are the ones
# stated), with the file format each is loaded from.
STATED_QUANTS = sorted({*quant_names(), *ALIASES})
QUANT_FORMATS = {name: lookup_quant(name).format for name in STATED_QUANTS}
QuantName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=40,
        description="a name from the quant table",
        json_schema_extra={"enum": STATED_QUANTS},
    ),
]


# A million parameters, the least a model is described by: a count below it is no language
# model, and 1e-300 billion made a step take no time at all (a division by zero).
MIN_PARAMS_B = 0.001


class ModelByNumbers(BaseModel):
    """Parameter counts and a quant name: weights only, the KV cache unknown."""

    model_config = _STRICT
    params_b: float = Field(ge=MIN_PARAMS_B, le=100_000, description="total parameters, billions")
    active_params_b: float | None = Field(
        default=None,
        ge=MIN_PARAMS_B,
        le=100_000,
        description="parameters per token (MoE), billions; at most params_b (409 otherwise)",
        json_schema_extra={"x-at-most": "params_b"},
    )
    quant: QuantName
    name: str | None = Field(default=None, max_length=100)


def _stated_config(parent: dict[str, Any]) -> None:
    """A model description's JSON schema: `hf_config` as app.estimate.inputs.hf_config_schema
    states it (its other fields bounded as free-form values are), and, where no quant is
    named, the config's declared quantization one the quant table names."""
    config = config_schema({}, {})
    # Fields it does not name are free-form values, one and two levels down.
    config[FREE_FORM_MARK] = 1
    config["properties"]["text_config"][FREE_FORM_MARK] = 2
    properties = parent["properties"]
    field = properties["hf_config"]
    if "anyOf" in field:  # optional: the object branch, beside null
        field["anyOf"] = [config if b.get("type") == "object" else b for b in field["anyOf"]]
    else:
        properties["hf_config"] = {**config, "title": field.get("title")}
    named = {"required": ["quant"], "properties": {"quant": {"type": "string"}}}
    declared = {"properties": {"hf_config": {"properties": declared_quantization()}}}
    parent["allOf"] = [*parent.get("allOf", []), {"anyOf": [named, declared]}]


class ModelByConfig(BaseModel):
    """A Hugging Face config.json; the quant named, else the one it declares."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_stated_config)
    quant: QuantName | None = None
    hf_config: dict[str, Any]
    name: str | None = Field(default=None, max_length=100)

    @field_validator("hf_config")
    @classmethod
    def readable(cls, config: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        refuse_unreadable_config(config, info.data.get("quant"))
        return config


def _stated_safetensors(parent: dict[str, Any]) -> None:
    """One of the two files, each as its reader reads it; and the config as above."""
    files = {
        "safetensors_index": SAFETENSORS_INDEX_SCHEMA,
        "safetensors_header": SAFETENSORS_HEADER_SCHEMA,
    }
    parent["oneOf"] = [
        {
            "required": [name],
            "properties": {
                name: schema,
                **{other: {"type": "null"} for other in files if other != name},
            },
        }
        for name, schema in files.items()
    ]
    _stated_config(parent)


class ModelBySafetensors(BaseModel):
    """A model.safetensors.index.json or a safetensors header (exact bytes), optionally with
    the config.json (shapes, KV cache)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_stated_safetensors)
    safetensors_index: dict[str, Any] | None = None
    safetensors_header: dict[str, Any] | None = None
    quant: QuantName | None = None
    hf_config: dict[str, Any] | None = None
    params_b: float | None = Field(default=None, ge=MIN_PARAMS_B, le=100_000)
    name: str | None = Field(default=None, max_length=100)

    @field_validator("hf_config")
    @classmethod
    def readable(cls, config: dict[str, Any] | None, info: ValidationInfo) -> Any:
        if config is not None:
            refuse_unreadable_config(config, info.data.get("quant"))
        return config

    @model_validator(mode="after")
    def one_file(self) -> "ModelBySafetensors":
        if (self.safetensors_index is None) == (self.safetensors_header is None):
            raise ValueError("give safetensors_index or safetensors_header (one of them)")
        return self


class ModelByRepo(BaseModel):
    """A Hub repository id: config and sizes fetched (and cached) when online."""

    model_config = _STRICT
    repo: str = Field(min_length=3, max_length=193, pattern=REPO_ID.pattern)
    quant: QuantName | None = None


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


_GPU_NAMES = stated_gpu_names()


class GpuByName(BaseModel):
    """A card named as people name it ("RTX 4090", "4090"), times a count. The schema lists
    the names the GPU table writes; other spellings of them are read too."""

    model_config = _STRICT
    gpu: str = Field(min_length=1, max_length=100, json_schema_extra={"enum": sorted(_GPU_NAMES)})
    # One system with unified memory (a Mac) comes one at a time.
    count: int = Field(
        default=1,
        ge=1,
        le=64,
        description="1 for a system with unified memory (409 otherwise)",
        json_schema_extra={
            "x-at-most": {
                "field": "gpu",
                "of": {name: 1 for name, card in _GPU_NAMES.items() if card.unified},
            }
        },
    )
    # A size the named card comes in.
    memory_gb: float | None = Field(
        default=None,
        gt=0,
        le=10_000,
        description="a size the card named comes in (409 otherwise)",
        json_schema_extra={
            "x-one-of": {
                "field": "gpu",
                "of": {name: list(card.sizes) for name, card in _GPU_NAMES.items()},
            }
        },
    )


# How a named runtime relates to the request's hardware (a catalog slug, a card, a list of
# either, or described) and model (its quant's file format; a config's own quantization
# where none is named): the served schema states the catalog's part (app.catalog.openapi).
RUNS_RELATION: dict[str, Any] = {
    "hardware": "hardware",
    "model": "model",
    "gpus": {name: card.platform for name, card in _GPU_NAMES.items()},
    "quants": QUANT_FORMATS,
    # A config that names no quant: an MLX quantization, else safetensors.
    "declared": {"quantization": "mlx", "otherwise": "safetensors"},
    "default_platform": "cuda",
}


class EstimateRequest(BaseModel):
    """A catalog model slug or a described model, on catalog, named or described hardware.

    Described hardware keeps the model page form's flat fields (memory_gb_per_gpu, gpu_count,
    bandwidth_gb_s_per_gpu, usable_memory_gb, platform, interconnect, unified_memory)
    beside `"hardware": "custom"`. Any other field is refused by name.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            # Hardware described ("custom", the default) needs its memory per card.
            "anyOf": [
                {
                    "required": ["hardware"],
                    "properties": {
                        "hardware": {
                            "anyOf": [{"type": "object"}, {"type": "string"}],
                            **catalog_field("hardware"),  # a catalog slug (not "custom")
                        }
                    },
                },
                {
                    "required": ["memory_gb_per_gpu"],
                    "properties": {"memory_gb_per_gpu": {"type": "number"}},
                },
            ]
        },
    )
    model: ModelIn = Field(
        description="catalog slug, or a model description",
        json_schema_extra=catalog_field("model"),
    )
    hardware: HardwareIn = Field(
        default=CUSTOM,
        description="catalog slug, a GPU, or custom",
        json_schema_extra=catalog_field("hardware", also=[CUSTOM]),
    )
    # A runtime runs on the hardware's platform and loads the model's file format; the
    # served schema states both (x-runs, app.catalog.openapi) from the catalog, the GPU
    # table and the quant table.
    runtime: str | None = Field(
        default=None,
        max_length=50,
        description="one that runs on the hardware's platform and loads the model's file "
        "format (409 otherwise)",
        json_schema_extra={**catalog_field("runtime", also=[""]), "x-runs": RUNS_RELATION},
    )
    artifact: str | None = Field(
        default=None,
        max_length=120,
        description="a file of the catalog model (a described model's file is its own); "
        "another model's file is a conflict (409)",
        json_schema_extra=catalog_field("artifact", also=[""]),
    )
    context: int | None = Field(default=None, ge=256, le=10_000_000)
    profile: str = Field(
        default="balanced", max_length=50, json_schema_extra=catalog_field("profile", also=[])
    )
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="concurrent requests the figures are for (1 when not given)",
    )
    prompt_tokens: int | None = Field(
        default=None,
        ge=1,
        le=10_000_000,
        description=f"each request's prompt; {DEFAULT_PROMPT_TOKENS:,} when not given (the "
        "stated default request, cut to fit a smaller context; `request_shape` names it)",
    )
    output_tokens: int | None = Field(
        default=None,
        ge=1,
        le=10_000_000,
        description=f"each request's output; {DEFAULT_OUTPUT_TOKENS:,} when not given",
    )
    evidence: Literal["use", "ignore"] = Field(
        default="use",
        description='"ignore": the estimator\'s figures only, even where records exist',
    )
    memory_gb_per_gpu: float | None = Field(default=None, gt=0, le=10_000)
    # Described hardware has at most the memory of all its cards usable.
    # The bound of a product, as a bound on each factor: 10,000 GB times 64 cards.
    usable_memory_gb: float | None = Field(
        default=None,
        gt=0,
        le=640_000,
        description="at most memory_gb_per_gpu times gpu_count (1 when not given); more is a "
        "conflict (409)",
        json_schema_extra={
            "x-at-most": {"product": ["memory_gb_per_gpu", "gpu_count"], "missing": 1}
        },
    )
    gpu_count: int | None = Field(default=None, ge=1, le=64)
    bandwidth_gb_s_per_gpu: float | None = Field(default=None, ge=1, le=100_000)
    interconnect: Interconnect | None = None
    platform: Platform | None = None
    unified_memory: bool | None = None
    group: Literal["local", "server"] | None = None
