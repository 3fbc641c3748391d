"""Applied values: a profile's knobs resolved for one model, runtime and hardware."""

from dataclasses import dataclass, field, replace

from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.estimate import EstimateError, Plan, estimate
from app.models import Artifact, Hardware, LlmModel, Profile, Runtime
from app.recipes.profiles import by_group, requested_context

# Never hand a runtime more than this share of the card by default.
MAX_MEMORY_FRACTION = 0.90
# Profile-level names mapped to each runtime's own KV cache dtype spelling.
KV_DTYPE_CHOICES = {"fp8": ("fp8", "fp8_e4m3", "q8_0"), "auto": ("auto",)}


@dataclass(frozen=True)
class AppliedValues:
    tensor_parallel: int
    split: str
    context: int
    kv_cache_dtype: str
    prefill_tokens: int
    max_concurrency: int
    memory_fraction: float | None
    speculative_decoding: bool
    cuda_graphs: bool
    why: dict[str, str] = field(default_factory=dict)

    def plan(self) -> Plan:
        return Plan(
            context=self.context,
            concurrency=self.max_concurrency,
            kv_dtype=self.kv_cache_dtype,
            prefill_tokens=self.prefill_tokens,
            tensor_parallel=self.tensor_parallel,
            cuda_graphs=self.cuda_graphs,
        )

    def as_json(self) -> dict:
        values = {k: v for k, v in self.__dict__.items() if k != "why"}
        return {**values, "why": dict(self.why)}


def tensor_parallel_size(model: LlmModel, runtime: Runtime, hardware: Hardware) -> tuple[int, str]:
    """The TP size that uses every card the heads allow."""
    if not runtime.tensor_parallel or hardware.gpu_count == 1:
        split = runtime.split if hardware.gpu_count > 1 else "none"
        return (
            1,
            f"{runtime.name} splits across cards by {split}"
            if hardware.gpu_count > 1
            else "one card",
        )
    heads = model.num_attention_heads or hardware.gpu_count
    size = max(n for n in range(1, hardware.gpu_count + 1) if heads % n == 0)
    if size == hardware.gpu_count:
        return size, f"{size} cards; {heads} attention heads divide evenly"
    return (
        size,
        f"{heads} attention heads do not split over {hardware.gpu_count} cards; using {size}",
    )


def kv_dtype_for(profile_dtype: str, runtime: Runtime) -> str:
    for candidate in KV_DTYPE_CHOICES.get(profile_dtype, (profile_dtype,)):
        if candidate in runtime.kv_dtypes:
            return candidate
    return "auto"


def resolve(
    profile: Profile, model: LlmModel, artifact: Artifact, runtime: Runtime, hardware: Hardware
) -> AppliedValues:
    """Resolve the profile for this hardware; context and concurrency shrink to what fits."""
    settings = profile.settings
    tp, tp_why = tensor_parallel_size(model, runtime, hardware)
    fraction = settings.get("memory_fraction")
    base = AppliedValues(
        tensor_parallel=tp,
        split="tensor" if tp > 1 else (runtime.split if hardware.gpu_count > 1 else "none"),
        context=requested_context(profile, hardware, model) or model.native_context,
        kv_cache_dtype=kv_dtype_for(str(settings.get("kv_cache_dtype", "auto")), runtime),
        prefill_tokens=int(
            by_group(settings.get("prefill_tokens"), hardware) or runtime.default_prefill_tokens
        ),
        max_concurrency=int(by_group(settings.get("concurrency"), hardware) or 1),
        memory_fraction=min(float(fraction), MAX_MEMORY_FRACTION)
        if fraction and runtime.budget.get("kind") != "fixed_margin"
        else None,
        speculative_decoding=bool(settings.get("speculative_decoding")),
        cuda_graphs=bool(settings.get("cuda_graphs", True)) and runtime.cuda_graphs,
        why={"tensor_parallel": tp_why},
    )
    return fit_to_memory(base, model, artifact, runtime, hardware)


def fit_to_memory(
    values: AppliedValues, model: LlmModel, artifact: Artifact, runtime: Runtime, hardware: Hardware
) -> AppliedValues:
    """Lower context (then concurrency) to what the estimate says fits, saying why."""
    specs = (
        model_spec(model),
        artifact_spec(artifact),
        runtime_spec(runtime),
        hardware_spec(hardware),
    )
    why = dict(values.why)
    try:
        single = estimate(*specs, replace(values.plan(), concurrency=1))
    except EstimateError as error:
        why["context"] = error.message
        return replace(values, why=why)
    largest = single.max_context
    if largest is not None and largest < values.context:
        why["context"] = f"lowered to {largest:,}, the largest that fits"
        values = replace(values, context=largest)
    elif largest is not None and values.context == model.native_context:
        why["context"] = "largest context that fits"
    concurrency = values.max_concurrency
    while (
        concurrency > 1
        and not estimate(*specs, replace(values.plan(), concurrency=concurrency)).memory.fits
    ):
        concurrency //= 2
    if concurrency != values.max_concurrency:
        why["max_concurrency"] = f"lowered to {concurrency} so the KV cache fits"
    return replace(values, max_concurrency=concurrency, why=why)
