"""A recipe that runs with part of the weights in system memory (llama.cpp, Ollama).

The assessment chose the split (`app/estimate/speed/offload.py`); this turns it into the recipe
every surface shows: one request at the assessed context, the GPU's share of the memory,
the decode range read from GPU and system memory, and for a verified pair the command
with the offload flags.
"""

from msgspec.structs import replace

from app.estimate import Assessment, Estimate, Verdict
from app.estimate.messages import Code, message
from app.estimate.speed.load import RequestShape, load_estimate
from app.estimate.speed.model import decode_notes, split_speed
from app.models import Hardware, Profile
from app.resolve.applied import requested_values
from app.resolve.commands import build_command, departures, with_offload
from app.resolve.figures import Evidence, MemoryFigure, SpeedFigure, gb
from app.resolve.inputs import ModelInputs, RouteChoice
from app.resolve.resolved import PENDING, ResolvedRecipe, with_speculative_caution
from app.resolve.runtime_defaults import OPTIONAL_KNOBS, not_at_default

# Part of the weights are read by the CPU each token: decode is bound by system memory.
SLOWER = message(Code.OFFLOAD_SLOWER)


def offloaded_recipe(
    inputs: ModelInputs,
    hardware: Hardware,
    profile: Profile,
    assessment: Assessment,
    choice: RouteChoice,
    shape: RequestShape,
) -> ResolvedRecipe:
    split, estimate = assessment.offload, assessment.estimate
    specs = inputs.specs(choice, hardware)
    why = {
        "context": message(Code.ONE_REQUEST_OFFLOAD, split=split.summary),
        "max_concurrency": message(Code.ONE_REQUEST_NO_MORE_KV),
    }
    applied = replace(requested_values(profile, specs, assessment.context, 1), why=why)
    explicit = departures(applied, inputs.balanced_values(choice, hardware, specs))
    explicit |= not_at_default(choice.runtime.slug, applied, hardware, OPTIONAL_KNOBS)
    commands = ()
    if choice.verified:
        command = build_command(choice.runtime, choice.artifact, inputs.model, applied, explicit)
        if command is not None:
            commands = (with_offload(command, split.flags),)
    estimate = _on_gpu(estimate, split.gpu_weights_gb_per_card, split.host_weights_gb)
    on_gpu = gb(estimate.memory.required)
    memory = MemoryFigure(
        on_gpu,
        gb(estimate.memory.usable.value),
        Evidence.ESTIMATED,
        (message(Code.ESTIMATED_ON_GPU, gb=round(split.host_weights_gb, 1)),),
        on_gpu,
    )
    speed, single = None, None
    shape = shape.filled(assessment.context)
    if estimate.speed_model is not None:
        model = split_speed(estimate.speed_model, split)
        single = load_estimate(model, 1, shape)
        # The recipe's speed model is the offloaded one, so every line drawn from it (the
        # load curve, its cost) reads the weights from system memory as this one does.
        estimate = replace(estimate, speed_model=model)
        low, high = single.decode.low, single.decode.high
        speed = SpeedFigure(low, high, Evidence.ESTIMATED, decode_notes(single))
    return ResolvedRecipe(
        model=inputs.model,
        hardware=hardware,
        profile=profile,
        verdict=Verdict.FITS_WITH_OFFLOAD,
        reason=assessment.reason,
        route=choice,
        pair=inputs.verified.evidence(choice.artifact.id, choice.runtime.id),
        alternatives=(),
        applied=applied,
        estimate=estimate,
        memory=memory,
        start_context=assessment.context,
        max_context=None,
        context_steps=(),
        token_generation=speed,
        status=PENDING,
        commands=commands,
        measured=(),
        decode_check=None,
        memory_check=None,
        warnings=(*with_speculative_caution(estimate.warnings, inputs.model, applied), SLOWER),
        single=single,
        load=single,
        shape=shape,
    )


def _on_gpu(estimate: Estimate, gpu_weights_gb: float, host_weights_gb: float) -> Estimate:
    """The estimate with only each card's share of the weights in its memory breakdown, so
    the parts add up to the memory each card needs."""
    weights = estimate.memory.weights
    note = (*weights.note, message(Code.WEIGHTS_IN_SYSTEM_MEMORY, gb=round(host_weights_gb, 1)))
    on_gpu = replace(weights, value=gpu_weights_gb, note=note)
    return replace(estimate, memory=replace(estimate.memory, weights=on_gpu))
