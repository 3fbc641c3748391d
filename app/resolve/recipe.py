"""The one resolution: model x hardware x profile (x route, context) -> a resolved recipe.

Pure over `ModelInputs`: the fit table, the detail page and its JSON, the selector,
`POST /api/estimate` and `servebook estimate` all render what this returns, and none of
them computes a figure of its own.
"""

from dataclasses import dataclass, replace

from app.catalog.specs import hardware_spec
from app.estimate import Assessment, Estimate, EstimateError, Route, Verdict, assess
from app.models import Hardware, LlmModel, Profile
from app.resolve.applied import AppliedValues, Specs, fit_to_memory, requested_values
from app.resolve.commands import Command, build_command, departures
from app.resolve.figures import (
    ContextMedian,
    Evidence,
    MemoryFigure,
    SpeedFigure,
    gb,
    measured_peak,
    measured_speed,
    medians_by_context,
)
from app.resolve.inputs import ModelInputs, RouteChoice
from app.resolve.profiles import (
    LOWERED_START,
    MIN_USEFUL_CONTEXT,
    aims_for_largest_context,
    raise_steps,
    requested_context,
)
from app.resolve.verification import PairEvidence

RUNNABLE = (Verdict.FITS, Verdict.FITS_REDUCED_CONTEXT)
VERIFIED = "verified"
PENDING = "verification_pending"
VERDICT_LABELS = {
    Verdict.FITS: "fits",
    Verdict.FITS_REDUCED_CONTEXT: "fits with reduced context",
    Verdict.EXPERIMENTAL: "experimental",
    Verdict.EXCEEDS_MEMORY: "exceeds memory (unsupported)",
}


@dataclass(frozen=True)
class ContextStep:
    """One step of raising the context after the start works."""

    context: int
    required_gb: float
    fits: bool


@dataclass(frozen=True)
class Check:
    """A measured value against the estimate: measured / estimated."""

    measured: float
    estimated: float
    low: float | None = None
    high: float | None = None

    @property
    def ratio(self) -> float:
        return self.measured / self.estimated

    @property
    def verdict(self) -> str:
        if self.low is not None and self.high is not None:
            if self.measured < self.low:
                return "below the estimated range"
            return "above the estimated range" if self.measured > self.high else "within range"
        return "above the estimate" if self.ratio > 1 else "at or below the estimate"

    def as_json(self) -> dict:
        return {
            "measured": self.measured,
            "estimated": self.estimated,
            "low": self.low,
            "high": self.high,
            "ratio": round(self.ratio, 3),
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class ResolvedRecipe:
    """Everything any surface shows about one model on one hardware under one profile."""

    model: LlmModel
    hardware: Hardware
    profile: Profile
    verdict: Verdict
    reason: str
    route: RouteChoice | None
    pair: PairEvidence | None
    alternatives: tuple[str, ...]
    applied: AppliedValues | None
    estimate: Estimate | None  # the served plan's breakdown (the closest route when exceeding)
    memory: MemoryFigure | None
    start_context: int
    max_context: int | None  # the largest context one request fits, at the profile's values
    context_steps: tuple[ContextStep, ...]
    token_generation: SpeedFigure | None
    status: str
    commands: tuple[Command, ...]
    measured: tuple[ContextMedian, ...]
    decode_check: Check | None
    memory_check: Check | None
    warnings: tuple[str, ...]

    @property
    def verdict_label(self) -> str:
        return VERDICT_LABELS[self.verdict]

    @property
    def runnable(self) -> bool:
        return self.verdict in RUNNABLE

    @property
    def estimate_only(self) -> bool:
        return not self.commands

    @property
    def unsupported(self) -> bool:
        """Exceeds memory: the page shows estimated memory and nothing else."""
        return self.verdict == Verdict.EXCEEDS_MEMORY

    @property
    def primary_command(self) -> Command | None:
        return self.commands[0] if self.commands else None


def resolve_recipe(
    inputs: ModelInputs,
    hardware: Hardware,
    profile: Profile,
    *,
    artifact: str | None = None,
    runtime: str | None = None,
    context: int | None = None,
    concurrency: int | None = None,
) -> ResolvedRecipe:
    """Resolve one recipe; a named artifact or runtime narrows the routes considered."""
    model = inputs.model
    pairs = [
        (choice, route)
        for choice, route in inputs.routes
        if artifact in (None, choice.artifact.slug) and runtime in (None, choice.runtime.slug)
    ]
    requested = min(context, model.native_context) if context else None
    requested = requested or requested_context(profile, hardware, model)
    minimum = min(MIN_USEFUL_CONTEXT, requested)
    assessment = _assess(inputs, hardware, pairs, requested, (artifact, runtime))
    chosen = assessment.route
    choice = _choice(pairs, chosen)
    if assessment.verdict == Verdict.EXCEEDS_MEMORY or choice is None:
        return _exceeding(inputs, hardware, profile, assessment)
    specs = inputs.specs(choice, hardware)
    served = _serve(inputs, hardware, profile, choice, requested, minimum, concurrency)
    if served is None:
        return _profile_does_not_fit(inputs, specs, profile, assessment, minimum, concurrency)
    applied, command = served
    one_request = specs.estimate(applied.plan(concurrency=1))
    at_load = specs.estimate(applied.plan())
    medians = tuple(medians_by_context(inputs.points(hardware, profile, choice)))
    memory = _memory(at_load, medians)
    verdict = _verdict(choice, applied, requested)
    alternatives = _alternatives(assessment, choice)
    commands = _commands(
        inputs, hardware, profile, choice, alternatives, command, verdict, requested
    )
    speed = _speed(inputs, hardware, profile, one_request, medians)
    return ResolvedRecipe(
        model=model,
        hardware=hardware,
        profile=profile,
        verdict=verdict,
        reason=_reason(verdict, choice, applied, requested, one_request.max_context),
        route=choice,
        pair=inputs.verified.evidence(choice.artifact.id, choice.runtime.id),
        alternatives=alternatives,
        applied=applied,
        estimate=at_load,
        memory=memory,
        start_context=applied.context,
        max_context=one_request.max_context,
        context_steps=_steps(profile, specs, applied, one_request.max_context),
        token_generation=speed,
        status=VERIFIED if medians else PENDING,
        commands=commands,
        measured=medians,
        decode_check=_decode_check(one_request, medians, applied.context),
        memory_check=_memory_check(memory),
        warnings=at_load.warnings,
    )


def _assess(
    inputs: ModelInputs, hardware: Hardware, pairs: list, requested: int, narrowed: tuple
) -> Assessment:
    """The routes' assessment at the requested context; catalog hardware shares it."""
    key = (hardware.id, requested, narrowed)
    if hardware.id is not None and key in inputs.assessments:
        return inputs.assessments[key]
    minimum = min(MIN_USEFUL_CONTEXT, requested)
    found = assess(
        inputs.spec, hardware_spec(hardware), [r for _, r in pairs], requested, min_context=minimum
    )
    if hardware.id is not None:
        inputs.assessments[key] = found
    return found


def _choice(pairs: list, route: Route | None) -> RouteChoice | None:
    if route is None:
        return None
    key = (route.artifact.slug, route.runtime.slug)
    return next((choice for choice, _ in pairs if choice.key == key), None)


def _serve(
    inputs: ModelInputs,
    hardware: Hardware,
    profile: Profile,
    choice: RouteChoice,
    requested: int,
    minimum: int,
    concurrency: int | None,
) -> tuple[AppliedValues, Command | None] | None:
    """The profile's values on this route, fitted to memory, and the command that sets them."""
    specs = inputs.specs(choice, hardware)
    wanted = requested_values(profile, specs, requested, concurrency)
    explicit = departures(wanted, requested_values(inputs.balanced, specs))
    if concurrency:
        explicit |= {"max_concurrency"}
    probe = build_command(choice.runtime, choice.artifact, inputs.model, wanted, explicit)
    if probe is not None:
        # What the command leaves out is the runtime's default, and the estimate says so.
        wanted = replace(wanted, left_at_default=probe.left_at_default())
    applied = fit_to_memory(wanted, specs, minimum)
    if applied is None:
        return None
    if aims_for_largest_context(profile):
        applied = _lowered_start(applied)
    command = build_command(choice.runtime, choice.artifact, inputs.model, applied, explicit)
    return applied, command


def _lowered_start(applied: AppliedValues) -> AppliedValues:
    why = dict(applied.why)
    why["context"] = (
        f"starts at {applied.context:,} (at most {LOWERED_START:,}); raise it in the steps "
        "below once it loads and answers"
    )
    return replace(applied, why=why)


def _verdict(choice: RouteChoice, applied: AppliedValues, requested: int) -> Verdict:
    if not choice.verified:
        return Verdict.EXPERIMENTAL
    return Verdict.FITS_REDUCED_CONTEXT if applied.context < requested else Verdict.FITS


def _memory(at_load: Estimate, medians: tuple[ContextMedian, ...]) -> MemoryFigure:
    usable = gb(at_load.memory.usable.value)
    estimated = gb(at_load.memory.required)
    peak = measured_peak(medians)
    if peak is not None and peak.peak_memory_gb_per_gpu is not None:
        note = (
            f"largest peak of {peak.records} accepted record{'s' if peak.records != 1 else ''}"
            f" at {peak.context_length:,} tokens, one request"
        )
        return MemoryFigure(peak.peak_memory_gb_per_gpu, usable, Evidence.MEASURED, note, estimated)
    note = f"estimated; basis {at_load.basis.value}"
    return MemoryFigure(estimated, usable, Evidence.ESTIMATED, note, estimated)


def _speed(
    inputs: ModelInputs,
    hardware: Hardware,
    profile: Profile,
    one_request: Estimate,
    medians: tuple[ContextMedian, ...],
) -> SpeedFigure | None:
    """Measured beats reported beats estimated, for one request at the starting context."""
    measured = measured_speed(medians)
    if measured is not None:
        return measured
    figure = inputs.reported.get(hardware.id)
    if figure is not None:
        return SpeedFigure(figure.low, figure.high, Evidence.REPORTED, figure.note, figure.source)
    speed = one_request.decode_tokens_per_s
    if speed is None:
        return None
    note = speed.note
    if profile.settings.get("speculative_decoding"):
        note += "; speculative decoding is not modelled and can raise this"
    low, high = round(speed.low, 1), round(speed.high, 1)
    return SpeedFigure(low, high, Evidence.ESTIMATED, note)


def _reason(
    verdict: Verdict,
    choice: RouteChoice,
    applied: AppliedValues,
    requested: int,
    largest: int | None,
) -> str:
    """Why the verdict; the memory figure beside it carries the numbers."""
    if applied.context < requested:
        fits = f"fits up to {largest or applied.context:,} tokens, not the {requested:,} asked"
    else:
        fits = f"fits {applied.context:,} tokens"
        if applied.max_concurrency > 1:
            fits += f" x {applied.max_concurrency} requests"
    if verdict == Verdict.EXPERIMENTAL:
        what = "runtime pairing" if choice.artifact.is_official else "compressed runtime"
        return f"{what} needs verification; {fits}"
    return fits


def _alternatives(assessment: Assessment, choice: RouteChoice) -> tuple[str, ...]:
    """Other verified runtimes that serve the same model file here, e.g. vLLM beside SGLang."""
    if not choice.verified:
        return ()
    names: list[str] = []
    for result in assessment.results:
        route = result.route
        if (
            route.verified
            and result.fits_at_context
            and route.artifact.slug == choice.artifact.slug
            and route.runtime.slug != choice.runtime.slug
            and route.runtime.slug not in names
        ):
            names.append(route.runtime.slug)
    return tuple(names)


def _commands(
    inputs: ModelInputs,
    hardware: Hardware,
    profile: Profile,
    choice: RouteChoice,
    alternatives: tuple[str, ...],
    primary: Command | None,
    verdict: Verdict,
    requested: int,
) -> tuple[Command, ...]:
    """Commands only for verified pairs that fit: the route's runtime, then the others."""
    if verdict not in RUNNABLE or primary is None:
        return ()
    commands = [primary]
    minimum = min(MIN_USEFUL_CONTEXT, requested)
    for runtime in inputs.runtimes:
        if runtime.slug not in alternatives:
            continue
        other = RouteChoice(choice.artifact, runtime, True)
        served = _serve(inputs, hardware, profile, other, requested, minimum, None)
        if served is not None and served[1] is not None:
            commands.append(served[1])
    return tuple(commands)


def _steps(
    profile: Profile, specs: Specs, applied: AppliedValues, largest: int | None
) -> tuple[ContextStep, ...]:
    """For a largest-context profile: the contexts to raise to, with the memory each needs."""
    if not aims_for_largest_context(profile):
        return ()
    native = specs.model.native_context
    contexts = raise_steps(applied.context, largest, native)
    if not contexts or contexts[-1] < native:
        contexts.append(native)
    steps = []
    for context in contexts:
        try:
            memory = specs.estimate(applied.plan(concurrency=1, context=context)).memory
        except EstimateError:
            continue
        steps.append(ContextStep(context, gb(memory.required), memory.fits))
    return tuple(steps)


def _decode_check(
    one_request: Estimate, medians: tuple[ContextMedian, ...], context: int
) -> Check | None:
    """Measured decode at the measured context nearest the start, against the estimate."""
    speed = one_request.decode_tokens_per_s
    timed = [m for m in medians if m.decode_tokens_per_s is not None]
    if speed is None or speed.high <= 0 or not timed:
        return None
    nearest = min(timed, key=lambda m: abs(m.context_length - context))
    low, high = round(speed.low, 1), round(speed.high, 1)
    return Check(nearest.decode_tokens_per_s, round((low + high) / 2, 1), low, high)  # type: ignore[arg-type]


def _memory_check(memory: MemoryFigure) -> Check | None:
    if memory.basis != Evidence.MEASURED or not memory.estimated_gb:
        return None
    return Check(memory.required_gb, memory.estimated_gb)


def _exceeding(
    inputs: ModelInputs, hardware: Hardware, profile: Profile, assessment: Assessment
) -> ResolvedRecipe:
    """Nothing fits: estimated memory of the closest route, and nothing else."""
    return _unsupported(inputs, hardware, profile, assessment, assessment.estimate)


def _profile_does_not_fit(
    inputs: ModelInputs,
    specs: Specs,
    profile: Profile,
    assessment: Assessment,
    minimum: int,
    concurrency: int | None,
) -> ResolvedRecipe:
    """The route fits one request at its runtime's defaults, but not at the profile's values
    (a smaller memory fraction, say): the profile's own estimate at the minimum context."""
    wanted = requested_values(profile, specs, minimum, concurrency)
    try:
        estimate = specs.estimate(wanted.plan(concurrency=1))
    except EstimateError:
        estimate = None
    return _unsupported(inputs, specs.hardware, profile, assessment, estimate)


def _unsupported(
    inputs: ModelInputs,
    hardware: Hardware,
    profile: Profile,
    assessment: Assessment,
    estimate: Estimate | None,
) -> ResolvedRecipe:
    memory = None
    reason = assessment.reason
    if estimate is not None:
        required, usable = gb(estimate.memory.required), gb(estimate.memory.usable.value)
        memory = MemoryFigure(
            required,
            usable,
            Evidence.ESTIMATED,
            f"estimated; basis {estimate.basis.value}",
            required,
        )
        reason = f"needs {required:.1f} GB per GPU, {usable:.1f} GB usable"
        if assessment.max_context is not None and assessment.verdict == Verdict.EXCEEDS_MEMORY:
            reason += (
                f"; fits only {assessment.max_context:,} tokens, "
                f"below the {min(MIN_USEFUL_CONTEXT, assessment.context):,} minimum"
            )
    choice = _choice(inputs.routes, assessment.route)
    return ResolvedRecipe(
        model=inputs.model,
        hardware=hardware,
        profile=profile,
        verdict=Verdict.EXCEEDS_MEMORY,
        reason=reason,
        route=choice,
        pair=None,
        alternatives=(),
        applied=None,
        estimate=estimate,
        memory=memory,
        start_context=assessment.context,
        max_context=None,
        context_steps=(),
        token_generation=None,
        status=PENDING,
        commands=(),
        measured=(),
        decode_check=None,
        memory_check=None,
        warnings=estimate.warnings if estimate else (),
    )
