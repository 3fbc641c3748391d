"""Entries of ``models.yaml``: a model, its artifacts, and figures other people reported."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from app.catalog.seed_schema.fields import (
    NO_PROSE,
    Format,
    Prose,
    ProseText,
    SFloat,
    SInt,
    Slug,
    Sourced,
    SStr,
    StrictModel,
    Text,
    Url,
    check_range,
    field_error,
    repo_problem,
    value_of,
)

Quant = Literal["bf16", "fp8", "mxfp4", "q4_k_m", "q8_0", "mlx-4bit", "mlx-8bit"]
Attention = Literal["gqa", "mla", "hybrid_linear"]
Metric = Literal["decode_tokens_per_s", "prefill_tokens_per_s", "ttft_s", "peak_memory_gb_per_gpu"]

# which quant schemes each file format can carry
FORMAT_QUANTS: dict[str, frozenset[str]] = {
    "safetensors": frozenset({"bf16", "fp8", "mxfp4"}),
    "gguf": frozenset({"bf16", "q4_k_m", "q8_0", "mxfp4"}),
    "mlx": frozenset({"bf16", "mlx-4bit", "mlx-8bit", "mxfp4"}),
}


class SeedArtifact(StrictModel):
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
            raise field_error(
                "quant", f"{self.quant!r} is not a {self.format} scheme (allowed: {allowed})"
            )
        check_range(self.bits_per_weight, "bits_per_weight", low=1.0, high=32.0)
        check_range(self.size_bytes, "size_bytes", low=0)
        problem = repo_problem(self.repo.value)
        if problem:
            raise field_error("repo", problem)
        return self


class SeedReported(StrictModel):
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
            raise field_error("low", f"must be > 0, got {self.low:g}")
        if self.high < self.low:
            raise field_error("high", f"must be >= low ({self.low:g}), got {self.high:g}")
        return self


# fields that size the KV cache, by attention kind
ATTENTION_FIELDS: dict[str, tuple[str, ...]] = {
    "gqa": ("num_layers", "num_kv_heads", "head_dim"),
    "mla": ("num_layers", "kv_lora_rank", "qk_rope_head_dim"),
    "hybrid_linear": (
        "num_layers",
        "num_kv_heads",
        "head_dim",
        "full_attention_layers",
        "linear_state_bytes_per_seq",
    ),
}
SHAPE_FIELDS = (
    "num_layers",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "hidden_size",
    "intermediate_size",
    "vocab_size",
    "kv_lora_rank",
    "sliding_window",
    "full_attention_layers",
    "linear_state_bytes_per_seq",
)


class SeedModel(StrictModel):
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
    # Multi-token-prediction layers shipped with the weights: speculative decoding without a
    # separate draft model (vLLM "mtp", SGLang EAGLE over the model's own layers).
    mtp_layers: SInt = Sourced[int](value=0, basis="exact")
    # An MoE's layout: routed experts per MoE layer, how many each token goes to, and how
    # many layers are MoE (the rest dense). They set how much of the weights a batch reads.
    experts: SInt | None = None
    active_experts: SInt | None = None
    moe_layers: SInt | None = None
    start_context: StrictInt | None = None  # starting context a recipe recommends locally
    description: ProseText
    sources: list[Url] = Field(min_length=1)
    notes: Prose = NO_PROSE
    artifacts: list[SeedArtifact] = Field(min_length=1)
    reported: list[SeedReported] = Field(default_factory=list)

    @field_validator("hf_repo")
    @classmethod
    def _repo_shape(cls, repo: Sourced[str]) -> Sourced[str]:
        problem = repo_problem(repo.value)
        if problem:
            raise ValueError(problem)
        return repo

    @model_validator(mode="after")
    def _check(self) -> SeedModel:
        # The order matters: the first problem found is the one reported.
        self._check_parameters()
        self._check_shape()
        self._check_attention_kinds()
        self._check_layers()
        self._check_experts()
        self._check_start_context()
        self._check_artifacts()
        self._check_reported()
        return self

    def _check_parameters(self) -> None:
        check_range(self.params_total_b, "params_total_b", low=0)
        check_range(self.params_active_b, "params_active_b", low=0)
        if self.params_active_b.value > self.params_total_b.value:
            raise field_error("params_active_b", "exceeds params_total_b")
        if not self.moe and self.params_active_b.value != self.params_total_b.value:
            raise field_error(
                "params_active_b",
                "a dense model activates all its parameters (set moe: true or make the two equal)",
            )

    def _check_shape(self) -> None:
        check_range(self.native_context, "native_context", low=0)
        for name in SHAPE_FIELDS:
            check_range(getattr(self, name), name, low=0)
        check_range(self.qk_rope_head_dim, "qk_rope_head_dim", low=0, low_inclusive=True)
        check_range(self.sliding_window_layers, "sliding_window_layers", low=0, low_inclusive=True)
        check_range(self.mtp_layers, "mtp_layers", low=0, low_inclusive=True)
        for name in ATTENTION_FIELDS[self.attention]:
            if getattr(self, name) is None:
                raise field_error(name, f"required when attention is {self.attention}")

    def _check_experts(self) -> None:
        layout = {
            "experts": self.experts,
            "active_experts": self.active_experts,
            "moe_layers": self.moe_layers,
        }
        for name, value in layout.items():
            if not self.moe and value is not None:
                raise field_error(name, "only for an MoE model (moe: true)")
            check_range(value, name, low=0)
        if (self.experts is None) != (self.active_experts is None):
            raise field_error("active_experts", "experts and active_experts go together")
        if self.experts is not None and self.active_experts.value > self.experts.value:
            raise field_error("active_experts", "exceeds experts")
        layers = self.num_layers.value if self.num_layers is not None else None
        if self.moe_layers is not None and layers is not None and self.moe_layers.value > layers:
            raise field_error("moe_layers", f"exceeds num_layers ({layers})")

    def _check_attention_kinds(self) -> None:
        mla_fields = ("kv_lora_rank", "qk_rope_head_dim")
        hybrid_fields = ("full_attention_layers", "linear_state_bytes_per_seq")
        if self.attention == "gqa":
            for name in mla_fields + hybrid_fields:
                if getattr(self, name) is not None:
                    raise field_error(name, "only for attention mla (latent) or hybrid_linear")
        if self.attention == "mla":
            for name in hybrid_fields:
                if getattr(self, name) is not None:
                    raise field_error(name, "only for attention hybrid_linear")
        if self.attention == "hybrid_linear":
            self._check_hybrid_latent()

    def _check_hybrid_latent(self) -> None:
        """MLA full-attention layers in a hybrid model: the latent must match heads x dim."""
        given = [getattr(self, name) is not None for name in ("kv_lora_rank", "qk_rope_head_dim")]
        if any(given) and not all(given):
            raise field_error(
                "qk_rope_head_dim" if given[0] else "kv_lora_rank",
                "MLA full-attention layers need both kv_lora_rank and qk_rope_head_dim",
            )
        if all(given):
            latent = self.kv_lora_rank.value + self.qk_rope_head_dim.value
            cached = 2 * self.num_kv_heads.value * self.head_dim.value
            if latent != cached:
                raise field_error(
                    "head_dim",
                    f"2 x num_kv_heads x head_dim = {cached} must "
                    f"equal kv_lora_rank + qk_rope_head_dim = {latent}",
                )

    def _check_layers(self) -> None:
        layers = value_of(self.num_layers)
        full = value_of(self.full_attention_layers)
        if full is not None and full > layers:
            raise field_error("full_attention_layers", f"exceeds num_layers ({layers})")
        sliding = self.sliding_window_layers.value
        if (self.sliding_window is None) != (sliding == 0):
            raise field_error(
                "sliding_window_layers" if sliding == 0 else "sliding_window",
                "sliding_window and sliding_window_layers go together",
            )
        cached = full if self.attention == "hybrid_linear" else layers
        if sliding and sliding > cached:
            raise field_error(
                "sliding_window_layers", f"exceeds the layers with a KV cache ({cached})"
            )
        heads, kv_heads = value_of(self.num_attention_heads), value_of(self.num_kv_heads)
        if (
            self.attention == "gqa"
            and heads is not None
            and kv_heads is not None
            and (kv_heads > heads or heads % kv_heads)
        ):
            raise field_error("num_kv_heads", f"must divide num_attention_heads ({heads})")

    def _check_start_context(self) -> None:
        if self.start_context is not None and not (
            0 < self.start_context <= self.native_context.value
        ):
            raise field_error("start_context", "must be between 1 and native_context")

    def _check_artifacts(self) -> None:
        prefix = self.slug + "-"
        for index, artifact in enumerate(self.artifacts):
            if not artifact.slug.startswith(prefix):
                raise field_error(
                    f"artifacts[{index}].slug",
                    f"{artifact.slug!r} must start with the model slug {prefix!r}",
                )
        if not any(a.kind == "official" for a in self.artifacts):
            raise field_error("artifacts", "no official artifact (kind: official)")

    def _check_reported(self) -> None:
        artifact_slugs = {a.slug for a in self.artifacts}
        seen: set[tuple[str, str]] = set()
        for index, report in enumerate(self.reported):
            key = (report.hardware, report.metric)
            if key in seen:
                raise field_error(
                    f"reported[{index}]",
                    f"a second {report.metric} figure for {report.hardware}; "
                    "give one range per hardware and metric",
                )
            seen.add(key)
            if report.artifact is not None and report.artifact not in artifact_slugs:
                raise field_error(
                    f"reported[{index}].artifact",
                    f"{report.artifact!r} is not an artifact of {self.slug}",
                )
