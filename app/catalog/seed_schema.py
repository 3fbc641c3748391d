"""Schema of the curated catalog in ``seed_data/*.yaml``, and its loader.

Five files make the catalog: ``models.yaml`` (models with their artifacts and the
figures other people reported), ``hardware.yaml``, ``runtimes.yaml``,
``profiles.yaml`` and ``verified_pairs.yaml``.

Every number that can be looked up or worked out carries its basis. In YAML a plain
scalar means the number was read in a source (basis ``published``); a mapping
``{value: X, basis: exact|published|derived|assumed, note: "..."}`` states the basis
explicitly. Both forms load as a :class:`Sourced` value.

:func:`load_catalog` reads the files, validates every entry, then checks the
references between files. The first problem found is raised as a :class:`SeedError`
that names the file, the entry (index and slug) and the field.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    StringConstraints,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "DEFAULT_SEED_DIR",
    "SEED_FILES",
    "Basis",
    "Sourced",
    "SeedArtifact",
    "SeedBudget",
    "SeedByGroup",
    "SeedCatalog",
    "SeedError",
    "SeedHardware",
    "SeedModel",
    "SeedProfile",
    "SeedReported",
    "SeedRuntime",
    "SeedVerifiedPair",
    "load_catalog",
]

DEFAULT_SEED_DIR = Path(__file__).resolve().parents[2] / "seed_data"

# file name -> the top-level key that holds its list of entries
SEED_FILES: dict[str, str] = {
    "models.yaml": "models",
    "hardware.yaml": "hardware",
    "runtimes.yaml": "runtimes",
    "profiles.yaml": "profiles",
    "verified_pairs.yaml": "verified_pairs",
}

REQUIRED_PROFILES = ("balanced", "speed", "long-context")

# ---------------------------------------------------------------------------- basics

Basis = Literal["exact", "published", "derived", "assumed"]
"""exact: exact bytes or a definitional value; published: read in a source;
derived: arithmetic on sourced numbers; assumed: a placeholder or projection."""

Slug = Annotated[StrictStr, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]*$", max_length=100)]
Text = Annotated[StrictStr, StringConstraints(min_length=1)]
Url = Annotated[StrictStr, StringConstraints(pattern=r"^https?://\S+$")]
Version = Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+\-_]*$")]
HfRepo = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")

Platform = Literal["cuda", "rocm", "metal", "vulkan", "cpu"]
Format = Literal["safetensors", "gguf", "mlx"]
Quant = Literal["bf16", "fp8", "mxfp4", "q4_k_m", "q8_0", "mlx-4bit", "mlx-8bit"]
Attention = Literal["gqa", "mla", "hybrid_linear"]
Interconnect = Literal["none", "nvlink", "nvswitch", "pcie", "xgmi"]
Metric = Literal[
    "decode_tokens_per_s", "prefill_tokens_per_s", "ttft_s", "peak_memory_gb_per_gpu"
]

# which quant schemes each file format can carry
FORMAT_QUANTS: dict[str, frozenset[str]] = {
    "safetensors": frozenset({"bf16", "fp8", "mxfp4"}),
    "gguf": frozenset({"bf16", "q4_k_m", "q8_0", "mxfp4"}),
    "mlx": frozenset({"bf16", "mlx-4bit", "mlx-8bit", "mxfp4"}),
}
VENDOR_PLATFORMS: dict[str, frozenset[str]] = {
    "apple": frozenset({"metal"}),
    "nvidia": frozenset({"cuda"}),
    "amd": frozenset({"rocm", "vulkan"}),
}


def _fail(field: str, message: str) -> PydanticCustomError:
    """An error that names the field it is about, for validators that see several fields."""
    return PydanticCustomError("seed_field", "{field}: {message}",
                               {"field": field, "message": message})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


T = TypeVar("T")


class Sourced(BaseModel, Generic[T]):
    """A value with its basis: ``exact``, ``published``, ``derived`` or ``assumed``.

    Accepts a plain value (basis ``published``) or a mapping
    ``{value, basis, note}`` in which ``basis`` is required.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: T
    basis: Basis
    note: StrictStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_plain_value(cls, data: Any) -> Any:
        if isinstance(data, (dict, Sourced)):
            return data
        return {"value": data, "basis": "published"}

    @property
    def estimated(self) -> bool:
        """True when the value was worked out or assumed rather than read."""
        return self.basis in ("derived", "assumed")

    def __str__(self) -> str:
        return str(self.value)


SFloat = Sourced[StrictFloat]
SInt = Sourced[StrictInt]
SStr = Sourced[StrictStr]


def _value(sourced: Sourced[Any] | None) -> Any:
    return None if sourced is None else sourced.value


def _check_range(sourced: Sourced[Any] | None, field: str, *, low: float, high: float | None = None,
                 low_inclusive: bool = False) -> None:
    if sourced is None:
        return
    value = sourced.value
    if value < low or (value == low and not low_inclusive):
        bound = f">= {low:g}" if low_inclusive else f"> {low:g}"
        raise _fail(field, f"must be {bound}, got {value:g}")
    if high is not None and value > high:
        raise _fail(field, f"must be <= {high:g}, got {value:g}")


# ---------------------------------------------------------------------------- models


class SeedArtifact(_Strict):
    """One set of weights of a model: official checkpoint or community quantization."""

    slug: Slug
    name: Text
    kind: Literal["official", "community"]
    format: Format
    quant: Quant
    bits_per_weight: SFloat  # effective whole-file bits per weight
    size_bytes: SInt | None = None  # exact bytes when known
    repo: SStr  # Hugging Face repository; a mapping with basis assumed when unconfirmed
    revision: Text = "main"
    file: SStr | None = None  # file name or glob inside the repository (GGUF)
    publisher: Text

    @model_validator(mode="after")
    def _check(self) -> SeedArtifact:
        if self.quant not in FORMAT_QUANTS[self.format]:
            allowed = ", ".join(sorted(FORMAT_QUANTS[self.format]))
            raise _fail("quant", f"{self.quant!r} is not a {self.format} scheme "
                                 f"(allowed: {allowed})")
        _check_range(self.bits_per_weight, "bits_per_weight", low=1.0, high=32.0)
        _check_range(self.size_bytes, "size_bytes", low=0)
        if not HfRepo.match(self.repo.value):
            raise _fail("repo", f"{self.repo.value!r} is not an owner/name repository")
        return self


class SeedReported(_Strict):
    """A figure someone else published for a model on a hardware configuration.

    Not a measurement of ours: it is shown as reported, with its source.
    """

    hardware: Slug
    metric: Metric
    low: StrictFloat
    high: StrictFloat
    source: Text
    note: StrictStr = ""
    source_url: Url | None = None
    artifact: Slug | None = None  # the model file the report used, when known
    runtime: Slug | None = None

    @model_validator(mode="after")
    def _check(self) -> SeedReported:
        if self.low <= 0:
            raise _fail("low", f"must be > 0, got {self.low:g}")
        if self.high < self.low:
            raise _fail("high", f"must be >= low ({self.low:g}), got {self.high:g}")
        return self


# fields that size the KV cache, by attention kind
_ATTENTION_FIELDS: dict[str, tuple[str, ...]] = {
    "gqa": ("num_layers", "num_kv_heads", "head_dim"),
    "mla": ("num_layers", "kv_lora_rank", "qk_rope_head_dim"),
    "hybrid_linear": ("num_layers", "num_kv_heads", "head_dim", "full_attention_layers",
                      "linear_state_bytes_per_seq"),
}
_SHAPE_FIELDS = ("num_layers", "num_attention_heads", "num_kv_heads", "head_dim", "hidden_size",
                 "intermediate_size", "vocab_size", "kv_lora_rank", "sliding_window",
                 "full_attention_layers", "linear_state_bytes_per_seq")


class SeedModel(_Strict):
    """A model as published, with the architecture facts that drive its KV cache.

    ``attention``:
      * ``gqa`` (incl. MHA): per layer and token 2 x num_kv_heads x head_dim values.
      * ``mla``: per layer and token kv_lora_rank + qk_rope_head_dim values, the same on
        every GPU under tensor parallelism.
      * ``hybrid_linear``: only ``full_attention_layers`` keep a per-token cache, sized like
        GQA from num_kv_heads x head_dim; the other layers keep a fixed
        ``linear_state_bytes_per_seq`` per sequence. When the full-attention layers are
        MLA, kv_lora_rank / qk_rope_head_dim state the latent, and num_kv_heads x head_dim
        must express the same number of cached values (2 x heads x dim = rank + rope).
    """

    slug: Slug
    name: Text
    hf_repo: SStr
    publisher: Text
    family: Text
    architecture: SStr | None = None
    moe: StrictBool
    params_total_b: SFloat
    params_active_b: SFloat
    native_context: SInt
    num_layers: SInt | None = None
    num_attention_heads: SInt | None = None
    num_kv_heads: SInt | None = None
    head_dim: SInt | None = None
    hidden_size: SInt | None = None
    intermediate_size: SInt | None = None
    vocab_size: SInt | None = None
    attention: Attention
    kv_lora_rank: SInt | None = None
    qk_rope_head_dim: SInt | None = None
    sliding_window: SInt | None = None
    sliding_window_layers: SInt = Sourced[int](value=0, basis="exact")
    full_attention_layers: SInt | None = None
    linear_state_bytes_per_seq: SInt | None = None
    start_context: StrictInt | None = None  # starting context a recipe recommends locally
    description: Text
    sources: list[Url] = Field(min_length=1)
    notes: StrictStr = ""
    artifacts: list[SeedArtifact] = Field(min_length=1)
    reported: list[SeedReported] = Field(default_factory=list)

    @field_validator("hf_repo")
    @classmethod
    def _repo_shape(cls, repo: Sourced[str]) -> Sourced[str]:
        if not HfRepo.match(repo.value):
            raise ValueError(f"{repo.value!r} is not an owner/name repository")
        return repo

    @model_validator(mode="after")
    def _check(self) -> SeedModel:
        _check_range(self.params_total_b, "params_total_b", low=0)
        _check_range(self.params_active_b, "params_active_b", low=0)
        if self.params_active_b.value > self.params_total_b.value:
            raise _fail("params_active_b", "exceeds params_total_b")
        if not self.moe and self.params_active_b.value != self.params_total_b.value:
            raise _fail("params_active_b", "a dense model activates all its parameters "
                                           "(set moe: true or make the two equal)")
        _check_range(self.native_context, "native_context", low=0)
        for name in _SHAPE_FIELDS:
            _check_range(getattr(self, name), name, low=0)
        _check_range(self.qk_rope_head_dim, "qk_rope_head_dim", low=0, low_inclusive=True)
        _check_range(self.sliding_window_layers, "sliding_window_layers", low=0,
                     low_inclusive=True)
        for name in _ATTENTION_FIELDS[self.attention]:
            if getattr(self, name) is None:
                raise _fail(name, f"required when attention is {self.attention}")
        self._check_attention_kinds()
        self._check_layers()
        if self.start_context is not None and not (
            0 < self.start_context <= self.native_context.value
        ):
            raise _fail("start_context", "must be between 1 and native_context")
        self._check_children()
        return self

    def _check_attention_kinds(self) -> None:
        mla_fields = ("kv_lora_rank", "qk_rope_head_dim")
        hybrid_fields = ("full_attention_layers", "linear_state_bytes_per_seq")
        if self.attention == "gqa":
            for name in mla_fields + hybrid_fields:
                if getattr(self, name) is not None:
                    raise _fail(name, "only for attention mla (latent) or hybrid_linear")
        if self.attention == "mla":
            for name in hybrid_fields:
                if getattr(self, name) is not None:
                    raise _fail(name, "only for attention hybrid_linear")
        if self.attention == "hybrid_linear":
            given = [getattr(self, name) is not None for name in mla_fields]
            if any(given) and not all(given):
                raise _fail("qk_rope_head_dim" if given[0] else "kv_lora_rank",
                            "MLA full-attention layers need both kv_lora_rank and "
                            "qk_rope_head_dim")
            if all(given):
                latent = self.kv_lora_rank.value + self.qk_rope_head_dim.value
                cached = 2 * self.num_kv_heads.value * self.head_dim.value
                if latent != cached:
                    raise _fail("head_dim", f"2 x num_kv_heads x head_dim = {cached} must equal "
                                            f"kv_lora_rank + qk_rope_head_dim = {latent}")

    def _check_layers(self) -> None:
        layers = _value(self.num_layers)
        full = _value(self.full_attention_layers)
        if full is not None and full > layers:
            raise _fail("full_attention_layers", f"exceeds num_layers ({layers})")
        sliding = self.sliding_window_layers.value
        if (self.sliding_window is None) != (sliding == 0):
            raise _fail("sliding_window_layers" if sliding == 0 else "sliding_window",
                        "sliding_window and sliding_window_layers go together")
        cached = full if self.attention == "hybrid_linear" else layers
        if sliding and sliding > cached:
            raise _fail("sliding_window_layers", f"exceeds the layers with a KV cache ({cached})")
        heads, kv_heads = _value(self.num_attention_heads), _value(self.num_kv_heads)
        if (self.attention == "gqa" and heads is not None and kv_heads is not None
                and (kv_heads > heads or heads % kv_heads)):
            raise _fail("num_kv_heads", f"must divide num_attention_heads ({heads})")

    def _check_children(self) -> None:
        prefix = self.slug + "-"
        for index, artifact in enumerate(self.artifacts):
            if not artifact.slug.startswith(prefix):
                raise _fail(f"artifacts[{index}].slug",
                            f"{artifact.slug!r} must start with the model slug {prefix!r}")
        if not any(a.kind == "official" for a in self.artifacts):
            raise _fail("artifacts", "no official artifact (kind: official)")
        seen: set[tuple[str, str]] = set()
        for index, report in enumerate(self.reported):
            key = (report.hardware, report.metric)
            if key in seen:
                raise _fail(f"reported[{index}]",
                            f"a second {report.metric} figure for {report.hardware}; "
                            "give one range per hardware and metric")
            seen.add(key)
            if report.artifact is not None and report.artifact not in {
                a.slug for a in self.artifacts
            }:
                raise _fail(f"reported[{index}].artifact",
                            f"{report.artifact!r} is not an artifact of {self.slug}")


# ---------------------------------------------------------------------------- hardware


class SeedHardware(_Strict):
    """A hardware configuration: one device times a count, with the link between the cards.

    Figures are per GPU except ``usable_memory_gb``, which is the total over all GPUs.
    """

    slug: Slug
    name: Text
    group: Literal["local", "server"]
    vendor: Literal["apple", "nvidia", "amd"]
    platform: Platform
    unified_memory: StrictBool
    device: Text
    gpu_count: StrictInt = Field(ge=1)
    memory_gb_per_gpu: SFloat
    usable_memory_gb: SFloat
    bandwidth_gb_s_per_gpu: SFloat | None = None
    bf16_tflops_per_gpu: SFloat | None = None
    interconnect: Interconnect
    source_row: StrictBool = False
    sort: StrictInt
    sources: list[Url] = Field(min_length=1)
    notes: StrictStr = ""

    @model_validator(mode="after")
    def _check(self) -> SeedHardware:
        for name in ("memory_gb_per_gpu", "usable_memory_gb", "bandwidth_gb_s_per_gpu",
                     "bf16_tflops_per_gpu"):
            _check_range(getattr(self, name), name, low=0)
        total = self.gpu_count * self.memory_gb_per_gpu.value
        if self.usable_memory_gb.value > total:
            raise _fail("usable_memory_gb", f"{self.usable_memory_gb.value:g} exceeds "
                                            f"gpu_count x memory_gb_per_gpu = {total:g}")
        if self.platform not in VENDOR_PLATFORMS[self.vendor]:
            raise _fail("platform", f"{self.platform!r} is not a {self.vendor} platform")
        if self.unified_memory and self.gpu_count != 1:
            raise _fail("gpu_count", "a unified-memory machine has one GPU")
        if self.gpu_count == 1 and self.interconnect != "none":
            raise _fail("interconnect", "a single GPU has no interconnect (use none)")
        if self.gpu_count > 1 and self.interconnect == "none":
            raise _fail("interconnect", "several GPUs need an interconnect "
                                        "(nvlink, nvswitch, xgmi or pcie)")
        return self


# ---------------------------------------------------------------------------- runtimes


class SeedBudget(_Strict):
    """How a runtime decides how much memory it takes.

    * ``vllm_fraction``: the runtime takes ``fraction`` of each GPU's memory.
    * ``sglang_static``: the runtime computes its static fraction from its own reserve.
    * ``fixed_margin``: the runtime leaves ``margin_gb`` per GPU free.
    """

    kind: Literal["vllm_fraction", "sglang_static", "fixed_margin"]
    fraction: StrictFloat | None = None
    margin_gb: StrictFloat | None = None

    @model_validator(mode="after")
    def _check(self) -> SeedBudget:
        if self.kind == "vllm_fraction":
            if self.fraction is None:
                raise _fail("fraction", "required for kind vllm_fraction")
            if not 0 < self.fraction <= 1:
                raise _fail("fraction", f"must be in (0, 1], got {self.fraction:g}")
        elif self.fraction is not None:
            raise _fail("fraction", f"only for kind vllm_fraction, not {self.kind}")
        if self.kind == "fixed_margin":
            if self.margin_gb is None:
                raise _fail("margin_gb", "required for kind fixed_margin")
            if self.margin_gb < 0:
                raise _fail("margin_gb", f"must be >= 0, got {self.margin_gb:g}")
        elif self.margin_gb is not None:
            raise _fail("margin_gb", f"only for kind fixed_margin, not {self.kind}")
        return self


class SeedRuntime(_Strict):
    """A serving runtime: where it runs, what it loads, how it spreads and budgets memory."""

    slug: Slug
    name: Text
    platforms: list[Platform] = Field(min_length=1)
    formats: list[Format] = Field(min_length=1)
    tensor_parallel: StrictBool
    split: Literal["tensor", "layer", "none"]
    budget: SeedBudget
    kv_dtypes: list[Text] = Field(min_length=1)
    caps_sliding_window: StrictBool
    cuda_graphs: StrictBool
    default_prefill_tokens: StrictInt = Field(gt=0)
    priority: StrictInt
    homepage: Url
    min_version: Version
    sources: list[Url] = Field(min_length=1)
    notes: StrictStr = ""

    @model_validator(mode="after")
    def _check(self) -> SeedRuntime:
        if self.tensor_parallel != (self.split == "tensor"):
            raise _fail("split", "split is tensor exactly when tensor_parallel is true")
        if "auto" not in self.kv_dtypes:
            raise _fail("kv_dtypes", "must include auto (the runtime's default)")
        for name in ("platforms", "formats", "kv_dtypes"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise _fail(name, "lists a value twice")
        if self.cuda_graphs and not {"cuda", "rocm"} & set(self.platforms):
            raise _fail("cuda_graphs", "CUDA graphs need a cuda or rocm platform")
        return self


# ---------------------------------------------------------------------------- profiles


class SeedByGroup(_Strict):
    """A knob that differs between local machines and servers."""

    server: StrictInt = Field(gt=0)
    local: StrictInt = Field(gt=0)


def _start_context_kind(value: Any) -> str:
    return "max" if value == "max" else "by_group"


StartContext = Annotated[
    Annotated[Literal["max"], Tag("max")] | Annotated[SeedByGroup, Tag("by_group")],
    Discriminator(_start_context_kind),
]


class SeedProfile(_Strict):
    """A serving profile; its knobs are resolved per hardware by the recipes.

    ``start_context: max`` means "the largest context that fits".
    """

    slug: Slug
    name: Text
    summary: Text
    sort: StrictInt
    start_context: StartContext
    concurrency: SeedByGroup
    kv_cache_dtype: Literal["auto", "fp8"]
    prefill_tokens: SeedByGroup
    memory_fraction: StrictFloat
    speculative_decoding: StrictBool
    cuda_graphs: StrictBool
    stop_conditions: list[Text] = Field(min_length=1)
    measurement_order: list[Text] = Field(min_length=1)

    @field_validator("memory_fraction")
    @classmethod
    def _fraction(cls, value: float) -> float:
        if not 0 < value <= 0.90:
            raise ValueError(f"must be in (0, 0.90] (keep memory limits below the maximum), "
                             f"got {value:g}")
        return value


# ---------------------------------------------------------------------------- pairs


class SeedVerifiedPair(_Strict):
    """An official artifact and a runtime version range that an official source says works.

    Community quantizations are verified by accepted records, not here.
    """

    artifact: Slug
    runtime: Slug
    min_version: Version | None  # null when the source states no release; the note says why
    max_version: Version | None = None
    source: Literal["official"] = "official"
    source_url: Url
    note: StrictStr = ""


# ---------------------------------------------------------------------------- errors


class SeedError(Exception):
    """A problem in the seed files, located by file, entry and field.

    ``str()`` reads ``seed_data/models.yaml: models[3] (slug qwen3-32b): params_total_b:
    Input should be a valid number``; YAML syntax errors read
    ``seed_data/models.yaml: line 12, column 5: <problem>``.
    ``errors`` lists every problem found (this one first).
    """

    def __init__(self, file: str, entry: str | None, field: str | None, message: str, *,
                 line: int | None = None, column: int | None = None) -> None:
        self.file = file
        self.entry = entry
        self.field = field
        self.message = message
        self.line = line
        self.column = column
        self.errors: list[SeedError] = [self]
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.file]
        if self.entry:
            parts.append(self.entry)
        elif self.line is not None:
            where = f"line {self.line}"
            parts.append(where if self.column is None else f"{where}, column {self.column}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)

    def __repr__(self) -> str:
        return f"SeedError({str(self)!r})"


# ---------------------------------------------------------------------------- catalog


class SeedCatalog(_Strict):
    """All five seed files together, with the references between them checked."""

    models: list[SeedModel]
    hardware: list[SeedHardware]
    runtimes: list[SeedRuntime]
    profiles: list[SeedProfile]
    verified_pairs: list[SeedVerifiedPair]

    @model_validator(mode="after")
    def _check_references(self) -> SeedCatalog:
        problems = self.problems()
        if problems:
            raise ValueError(str(problems[0]))
        return self

    # lookups
    def model(self, slug: str) -> SeedModel:
        return self._index("models")[slug]

    def hardware_entry(self, slug: str) -> SeedHardware:
        return self._index("hardware")[slug]

    def runtime(self, slug: str) -> SeedRuntime:
        return self._index("runtimes")[slug]

    def profile(self, slug: str) -> SeedProfile:
        return self._index("profiles")[slug]

    def artifact(self, slug: str) -> SeedArtifact:
        return self.artifacts()[slug][1]

    def artifacts(self) -> dict[str, tuple[SeedModel, SeedArtifact]]:
        """Every artifact by slug, with the model it belongs to."""
        return {a.slug: (m, a) for m in self.models for a in m.artifacts}

    def _index(self, key: str) -> dict[str, Any]:
        return {entry.slug: entry for entry in getattr(self, key)}

    def problems(self, files: dict[str, str] | None = None) -> list[SeedError]:
        """Problems between entries: duplicates, dangling references, unloadable files.

        ``files`` maps a top-level key (``models``...) to the file name shown in errors.
        """
        label = {key: f"seed_data/{name}" for name, key in SEED_FILES.items()}
        label.update(files or {})
        found: list[SeedError] = []
        found += _duplicates(label["models"], "models", self.models)
        found += _duplicates(label["hardware"], "hardware", self.hardware)
        found += _duplicates(label["runtimes"], "runtimes", self.runtimes)
        found += _duplicates(label["profiles"], "profiles", self.profiles)
        found += self._artifact_problems(label["models"])
        found += self._reported_problems(label["models"])
        found += self._hardware_problems(label["hardware"])
        found += self._profile_problems(label["profiles"])
        found += self._pair_problems(label["verified_pairs"])
        return found

    def _artifact_problems(self, file: str) -> Iterator[SeedError]:
        seen: set[str] = set()
        loadable = {fmt for runtime in self.runtimes for fmt in runtime.formats}
        for m_index, model in enumerate(self.models):
            entry = _entry_label("models", m_index, model.slug)
            for a_index, artifact in enumerate(model.artifacts):
                where = f"artifacts[{a_index}]"
                if artifact.slug in seen:
                    yield SeedError(file, entry, f"{where}.slug",
                                    f"duplicate artifact slug {artifact.slug!r}")
                seen.add(artifact.slug)
                if artifact.format not in loadable:
                    yield SeedError(file, entry, f"{where}.format",
                                    f"no runtime loads {artifact.format} files")

    def _reported_problems(self, file: str) -> Iterator[SeedError]:
        hardware = self._index("hardware")
        runtimes = self._index("runtimes")
        for m_index, model in enumerate(self.models):
            entry = _entry_label("models", m_index, model.slug)
            for r_index, report in enumerate(model.reported):
                where = f"reported[{r_index}]"
                if report.hardware not in hardware:
                    yield SeedError(file, entry, f"{where}.hardware",
                                    f"unknown hardware {report.hardware!r}")
                if report.runtime is not None and report.runtime not in runtimes:
                    yield SeedError(file, entry, f"{where}.runtime",
                                    f"unknown runtime {report.runtime!r}")

    def _hardware_problems(self, file: str) -> Iterator[SeedError]:
        served = {p for runtime in self.runtimes for p in runtime.platforms}
        for index, entry in enumerate(self.hardware):
            if entry.platform not in served:
                yield SeedError(file, _entry_label("hardware", index, entry.slug), "platform",
                                f"no runtime runs on {entry.platform}")

    def _profile_problems(self, file: str) -> Iterator[SeedError]:
        missing = [slug for slug in REQUIRED_PROFILES if slug not in self._index("profiles")]
        if missing:
            yield SeedError(file, None, "profiles", f"missing profile(s): {', '.join(missing)}")

    def _pair_problems(self, file: str) -> Iterator[SeedError]:
        artifacts = self.artifacts()
        runtimes = self._index("runtimes")
        seen: set[tuple[str, str]] = set()
        for index, pair in enumerate(self.verified_pairs):
            entry = _pair_label(index, pair.artifact, pair.runtime)
            found = artifacts.get(pair.artifact)
            if found is None:
                yield SeedError(file, entry, "artifact", f"unknown artifact {pair.artifact!r}")
            elif found[1].kind != "official":
                yield SeedError(file, entry, "artifact",
                                f"{pair.artifact!r} is a community artifact; only official "
                                "artifacts are verified in the seed")
            runtime = runtimes.get(pair.runtime)
            if runtime is None:
                yield SeedError(file, entry, "runtime", f"unknown runtime {pair.runtime!r}")
            elif found is not None and found[1].format not in runtime.formats:
                yield SeedError(file, entry, "runtime",
                                f"{pair.runtime} does not load {found[1].format} files")
            key = (pair.artifact, pair.runtime)
            if key in seen:
                yield SeedError(file, entry, "runtime", "duplicate pair")
            seen.add(key)


def _duplicates(file: str, key: str, entries: Iterable[Any]) -> Iterator[SeedError]:
    entries = list(entries)
    counts = Counter(entry.slug for entry in entries)
    reported: set[str] = set()
    for index, entry in enumerate(entries):
        if counts[entry.slug] > 1 and entry.slug in reported:
            yield SeedError(file, _entry_label(key, index, entry.slug), "slug",
                            f"duplicate slug {entry.slug!r}")
        reported.add(entry.slug)


def _entry_label(key: str, index: int, slug: Any) -> str:
    if isinstance(slug, str) and slug:
        return f"{key}[{index}] (slug {slug})"
    return f"{key}[{index}]"


def _pair_label(index: int, artifact: Any, runtime: Any) -> str:
    known = [f"{name} {value}" for name, value in (("artifact", artifact), ("runtime", runtime))
             if isinstance(value, str) and value]
    return f"verified_pairs[{index}]" + (f" ({', '.join(known)})" if known else "")


# ---------------------------------------------------------------------------- loading

_ENTRY_CLASSES: dict[str, type[BaseModel]] = {
    "models": SeedModel,
    "hardware": SeedHardware,
    "runtimes": SeedRuntime,
    "profiles": SeedProfile,
    "verified_pairs": SeedVerifiedPair,
}


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"found duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _read_yaml(path: Path, shown: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SeedError(shown, None, None, "file not found") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise SeedError(shown, None, None, problem, line=line, column=column) from None
    except yaml.YAMLError as error:
        raise SeedError(shown, None, None, f"invalid YAML: {error}") from None


def _entry_lines(text_path: Path, key: str) -> list[int]:
    """Line (1-based) where each entry of the top-level list starts."""
    try:
        root = yaml.compose(text_path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key_node, value_node in root.value:
        if key_node.value == key and isinstance(value_node, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value_node.value]
    return []


def _format_loc(raw: Any, loc: tuple[Any, ...]) -> str:
    """Render a validation location against the raw data.

    Parts that do not exist in the raw data are internal (a union tag, or the ``value``
    slot of a number written as a plain scalar) and are left out.
    """
    parts: list[str] = []
    current = raw
    for position, part in enumerate(loc):
        last = position == len(loc) - 1
        if isinstance(current, dict) and part in current:
            parts.append(str(part))
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            parts.append(f"[{part}]")
            current = current[part]
        elif last and isinstance(current, dict):
            parts.append(str(part))  # a missing or unknown key
        # otherwise: an internal part, skipped
    text = ""
    for part in parts:
        text += part if part.startswith("[") or not text else f".{part}"
    return text


def _validation_errors(error: ValidationError, raw: Any, file: str, entry: str,
                       line: int | None) -> list[SeedError]:
    found: list[SeedError] = []
    for item in error.errors(include_url=False):
        field = _format_loc(raw, tuple(item["loc"]))
        message = item["msg"]
        if item["type"] == "seed_field":
            inner = item["ctx"]["field"]
            field = f"{field}.{inner}" if field and not inner.startswith("[") else field + inner
            message = item["ctx"]["message"]
        elif message.startswith("Value error, "):
            message = message[len("Value error, "):]
        seed_error = SeedError(file, entry, field or None, message, line=line)
        if str(seed_error) not in {str(e) for e in found}:
            found.append(seed_error)
    return found


def _entry_name(key: str, index: int, raw: Any) -> str:
    if key == "verified_pairs":
        if isinstance(raw, dict):
            return _pair_label(index, raw.get("artifact"), raw.get("runtime"))
        return f"verified_pairs[{index}]"
    return _entry_label(key, index, raw.get("slug") if isinstance(raw, dict) else None)


def _load_file(directory: Path, name: str, key: str,
               errors: list[SeedError]) -> list[BaseModel]:
    shown = f"{directory.name}/{name}"
    path = directory / name
    try:
        data = _read_yaml(path, shown)
    except SeedError as error:
        errors.append(error)
        return []
    if not isinstance(data, dict) or key not in data:
        errors.append(SeedError(shown, None, key, f"the file must be a mapping with a "
                                                  f"top-level '{key}' list"))
        return []
    extra = sorted(set(data) - {key, "schema_version"}, key=str)
    if extra:
        errors.append(SeedError(shown, None, str(extra[0]), "unknown top-level key"))
    entries = data[key]
    if not isinstance(entries, list):
        errors.append(SeedError(shown, None, key, "must be a list of entries"))
        return []
    lines = _entry_lines(path, key)
    cls = _ENTRY_CLASSES[key]
    loaded: list[BaseModel] = []
    for index, raw in enumerate(entries):
        entry = _entry_name(key, index, raw)
        line = lines[index] if index < len(lines) else None
        try:
            loaded.append(cls.model_validate(raw))
        except ValidationError as error:
            errors.extend(_validation_errors(error, raw, shown, entry, line))
    return loaded


def load_catalog(directory: Path) -> SeedCatalog:
    """Read and check the five seed files in ``directory``.

    Raises :class:`SeedError` (the first problem; ``.errors`` holds all of them).
    """
    directory = Path(directory)
    errors: list[SeedError] = []
    loaded = {key: _load_file(directory, name, key, errors) for name, key in SEED_FILES.items()}
    if not errors:
        catalog = SeedCatalog.model_construct(**loaded)
        files = {key: f"{directory.name}/{name}" for name, key in SEED_FILES.items()}
        errors = catalog.problems(files)
        for error in errors:
            if error.entry and error.line is None:
                error.line = _line_of(directory, error)
    if errors:
        first = errors[0]
        first.errors = errors
        raise first
    return SeedCatalog.model_validate(loaded)


def _line_of(directory: Path, error: SeedError) -> int | None:
    match = re.match(r"^(\w+)\[(\d+)\]", error.entry or "")
    if not match:
        return None
    name = error.file.rsplit("/", 1)[-1]
    lines = _entry_lines(directory / name, match.group(1))
    index = int(match.group(2))
    return lines[index] if index < len(lines) else None
