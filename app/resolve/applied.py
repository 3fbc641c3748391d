"""Applied values: a profile's knobs resolved for one model, model file, runtime and hardware."""

from dataclasses import dataclass, field
from functools import cached_property

import msgspec

from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.estimate import (
    ArtifactSpec,
    Estimate,
    EstimateError,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    SharedEstimates,
    Sizing,
    estimate,
    shared_plan,
    size,
)
from app.estimate.estimator import with_ranges_of
from app.estimate.inputs.checked_plan import assumed_tensor_parallel
from app.estimate.memory.capacity import held_tokens
from app.estimate.messages import Code, Message, message
from app.estimate.ranges.from_records import RangeBook
from app.estimate.speed.load import RequestShape
from app.i18n.messages import english
from app.models import Artifact, Hardware, LlmModel, Profile, Runtime
from app.resolve.profiles import by_group, requested_context

# Never hand a runtime more than this share of the card by default.
MAX_MEMORY_FRACTION = 0.90
# Profile-level names mapped to each runtime's own KV cache dtype spelling.
KV_DTYPE_CHOICES = {"fp8": ("fp8", "fp8_e4m3", "q8_0"), "auto": ("auto",)}


class AppliedValues(msgspec.Struct, frozen=True):
    tensor_parallel: int
    split: str
    context: int
    kv_cache_dtype: str
    prefill_tokens: int
    max_concurrency: int
    memory_fraction: float | None
    speculative_decoding: bool
    cuda_graphs: bool
    why: dict[str, Message] = msgspec.field(default_factory=dict)  # knob -> why it has its value
    # Knobs the command leaves to the runtime: the estimate then uses the runtime's own rule
    # (SGLang's reserve, the runtime's prefill chunk), not the profile's wish.
    left_at_default: frozenset[str] = frozenset()
    # Cards a layer split spreads the model over (split "layer"); 1 otherwise.
    layer_split: int = 1

    def changed(self, **changes: object) -> "AppliedValues":
        """These values with some changed."""
        return msgspec.structs.replace(self, **changes)

    def knobs(self) -> tuple:
        """The values a command sets, without why they have them."""
        return (
            self.tensor_parallel,
            self.split,
            self.context,
            self.kv_cache_dtype,
            self.prefill_tokens,
            self.max_concurrency,
            self.memory_fraction,
            self.speculative_decoding,
            self.cuda_graphs,
        )

    def plan(self, concurrency: int | None = None, context: int | None = None) -> Plan:
        """The estimator's plan at the served load, or at one request or another context."""
        default = self.left_at_default
        return shared_plan(
            context or self.context,
            concurrency or self.max_concurrency,
            self.kv_cache_dtype,
            None if "prefill_tokens" in default else self.prefill_tokens,
            self.tensor_parallel,
            self.cuda_graphs,
            None if "memory_fraction" in default else self.memory_fraction,
        )

    def as_json(self) -> dict:
        values = msgspec.structs.asdict(self)
        del values["why"], values["left_at_default"]
        return {
            **values,
            "why": {name: english(why) for name, why in self.why.items()},
            "why_messages": {name: why.as_json() for name, why in self.why.items()},
            "left_at_default": sorted(self.left_at_default),
        }


@dataclass(frozen=True)
class Specs:
    """The estimator's view of one route on one hardware configuration."""

    model: LlmModel
    artifact: Artifact
    runtime: Runtime
    hardware: Hardware
    # Specs built once per model, route and hardware by the caller, when it has them.
    prebuilt: tuple[ModelSpec, ArtifactSpec, RuntimeSpec, HardwareSpec] | None = None
    # Answers already worked out for this route and hardware, by plan: the estimator is pure,
    # so the recipes of one model share them (the fit, one request, the served load).
    memo: dict[tuple[str, Plan], Estimate | Sizing | bool] | None = field(
        default=None, repr=False, compare=False
    )
    # The estimator's work shared by every recipe of the model (see `SharedEstimates`).
    shared: SharedEstimates | None = field(default=None, repr=False, compare=False)
    # The speed ranges accepted records updated (None: the shipped ones).
    ranges: RangeBook | None = field(default=None, repr=False, compare=False)

    @cached_property
    def _specs(self) -> tuple[ModelSpec, ArtifactSpec, RuntimeSpec, HardwareSpec]:
        return self.prebuilt or (
            model_spec(self.model),
            artifact_spec(self.artifact),
            runtime_spec(self.runtime),
            hardware_spec(self.hardware),
        )

    def estimate(self, plan: Plan) -> Estimate:
        work = estimate if self.shared is None else self.shared.estimate
        book = self.ranges
        if book is not None and book.updated:
            unranged = work

            def work(*specs: object) -> Estimate:
                return with_ranges_of(unranged(*specs), book)

        return self._memoised("estimate", work, plan)

    def size(self, plan: Plan) -> Sizing:
        """The memory and largest context of `estimate`, without the rest."""
        work = size if self.shared is None else self.shared.size
        return self._memoised("size", work, plan)

    def fits(self, plan: Plan) -> bool:
        """Whether the plan fits in memory: `size(plan).memory.fits`, worked out for less."""
        if self.shared is None:
            return self.size(plan).fits
        return self._memoised("fits", self.shared.fits, plan)

    def _memoised(self, kind: str, work, plan: Plan):
        if self.memo is None:
            return work(*self._specs, plan)
        key = (kind, plan)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = work(*self._specs, plan)
        return found


def tensor_parallel_size(
    model: LlmModel, runtime: Runtime, hardware: Hardware
) -> tuple[int, Message]:
    """The TP size that uses every card the heads allow."""
    if hardware.gpu_count == 1:
        return 1, message(Code.TP_ONE_CARD)
    if not runtime.tensor_parallel:
        by_layer = runtime.split == "layer"
        return 1, message(
            Code.TP_SPLIT_BY_LAYER if by_layer else Code.TP_NO_SPLIT, runtime=runtime.name
        )
    if model.num_attention_heads is None:  # described by its counts: the split is assumed
        size = assumed_tensor_parallel(hardware.gpu_count)
        return size, message(Code.TP_HEADS_ASSUMED, size=size)
    heads = model.num_attention_heads
    size = max(n for n in range(1, hardware.gpu_count + 1) if heads % n == 0)
    if size == hardware.gpu_count:
        return size, message(Code.TP_HEADS_DIVIDE, size=size, heads=heads)
    count = hardware.gpu_count
    return size, message(Code.TP_HEADS_DO_NOT_SPLIT, heads=heads, count=count, size=size)


def kv_dtype_for(profile_dtype: str, runtime: Runtime) -> str:
    for candidate in KV_DTYPE_CHOICES.get(profile_dtype, (profile_dtype,)):
        if candidate in runtime.kv_dtypes:
            return candidate
    return "auto"


def requested_values(
    profile: Profile,
    specs: Specs,
    context: int | None = None,
    concurrency: int | None = None,
) -> AppliedValues:
    """The profile's knobs for this hardware, before memory has a say."""
    settings = profile.settings
    model, runtime, hardware = specs.model, specs.runtime, specs.hardware
    tp, tp_why = tensor_parallel_size(model, runtime, hardware)
    fraction = settings.get("memory_fraction")
    split = "tensor" if tp > 1 else (runtime.split if hardware.gpu_count > 1 else "none")
    return AppliedValues(
        tensor_parallel=tp,
        split=split,
        context=min(context, model.native_context)
        if context
        else requested_context(profile, hardware, model),
        kv_cache_dtype=kv_dtype_for(str(settings.get("kv_cache_dtype", "auto")), runtime),
        prefill_tokens=int(
            by_group(settings.get("prefill_tokens"), hardware) or runtime.default_prefill_tokens
        ),
        max_concurrency=concurrency or int(by_group(settings.get("concurrency"), hardware) or 1),
        memory_fraction=min(float(fraction), MAX_MEMORY_FRACTION)
        if fraction and runtime.budget.get("kind") != "fixed_margin"
        else None,
        speculative_decoding=bool(settings.get("speculative_decoding")),
        cuda_graphs=bool(settings.get("cuda_graphs", True)) and runtime.cuda_graphs,
        why={"tensor_parallel": tp_why},
        layer_split=hardware.gpu_count if split == "layer" else 1,
    )


def held_per_request(values: AppliedValues, runtime: str, shape: RequestShape) -> int:
    """Tokens of KV one request of the shape holds on this runtime (see
    `app/estimate/memory/capacity.py`), its blank lengths at their stated defaults."""
    filled = shape.filled(values.context)
    prompt, output = filled.prompt_tokens or 0, filled.output_tokens or 0
    return held_tokens(runtime, prompt, output, values.context)


def fit_to_memory(
    values: AppliedValues,
    specs: Specs,
    min_context: int,
    shape: RequestShape,
) -> AppliedValues | None:
    """Lower the context (then concurrency) to what the estimate says fits, saying why.

    One request must fit at the whole context (the runtime refuses to start otherwise).
    The requests at once are as many as the KV pool holds at the tokens each request of
    the shape holds (`held_per_request`).
    None when even one request at the minimum context does not fit: the route cannot serve.
    """
    why = dict(values.why)
    try:
        largest = specs.size(values.plan(concurrency=1)).max_context
    except EstimateError:
        return None
    if largest is None or largest < min(min_context, values.context):
        return None
    if largest < values.context:
        why["context"] = message(Code.CONTEXT_LOWERED, tokens=largest)
        values = values.changed(context=largest)
    concurrency = _most_held(values, specs, held_per_request(values, specs.runtime.slug, shape))
    if concurrency != values.max_concurrency:
        why["max_concurrency"] = message(Code.CONCURRENCY_LOWERED, requests=concurrency)
    return values.changed(max_concurrency=concurrency, why=why)


def _most_held(values: AppliedValues, specs: Specs, held: int) -> int:
    """The most requests (up to the values' own) whose `held` tokens each the pool holds
    together: the least that does not fit is found by halving the range."""
    fits_below, asked = 1, values.max_concurrency
    if specs.fits(values.plan(concurrency=asked, context=held)):
        return asked
    above = asked  # does not fit
    while above - fits_below > 1:
        middle = (fits_below + above) // 2
        if specs.fits(values.plan(concurrency=middle, context=held)):
            fits_below = middle
        else:
            above = middle
    return fits_below
