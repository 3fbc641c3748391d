"""The one resolution: model x hardware x profile (x route, context) -> a resolved recipe.

Pure over `ModelInputs`: the fit table, the detail page and its JSON, the selector,
`POST /api/estimate` and `servebook estimate` all render what this returns, and none of
them computes a figure of its own.
"""

from app.estimate import Assessment, Estimate, EstimateError, Route, Verdict, assess
from app.estimate.messages import Code, Message, message
from app.estimate.speed.load import RequestShape
from app.models import Hardware, Profile
from app.resolve.applied import (
    AppliedValues,
    Specs,
    fit_to_memory,
    held_per_request,
    requested_values,
)
from app.resolve.commands import Command, departures
from app.resolve.contradicted import checked
from app.resolve.figures import (
    Evidence,
    MemoryFigure,
    decode_check,
    estimated_note,
    gb,
    medians_by_context,
    memory_check,
    memory_figure,
    speed_figure,
)
from app.resolve.inputs import ModelInputs, RouteChoice
from app.resolve.loads import recipe_loads
from app.resolve.offloaded import offloaded_recipe
from app.resolve.other_routes import measured_on_other_routes
from app.resolve.profiles import (
    LOWERED_START,
    MIN_USEFUL_CONTEXT,
    aims_for_largest_context,
    raise_steps,
    requested_context,
)
from app.resolve.question import Question
from app.resolve.resolved import (
    PENDING,
    RUNNABLE,
    VERIFIED,
    ContextStep,
    ResolvedRecipe,
    with_speculative_caution,
)
from app.resolve.runtime_defaults import OPTIONAL_KNOBS, not_at_default


def resolve_recipe(inputs: ModelInputs, question: Question) -> ResolvedRecipe:
    """Resolve one question; a named artifact or runtime narrows the routes considered.

    `question.shape` is the requests the speed figures are for, its blank lengths at their
    stated defaults (`RequestShape.filled`, at the context served); without
    `question.evidence` the figures are the estimator's alone, even where records or
    reported figures exist."""
    hardware, profile = question.hardware, inputs.profile(question.profile)
    artifact, runtime, context = question.artifact, question.runtime, question.context
    concurrency, shape, evidence = question.concurrency, question.shape, question.evidence
    model = inputs.model
    pairs = inputs.routes
    if artifact is not None or runtime is not None:
        pairs = [
            (choice, route)
            for choice, route in pairs
            if artifact in (None, choice.key[0]) and runtime in (None, choice.key[1])
        ]
    requested = min(context, model.native_context) if context else None
    requested = requested or requested_context(profile, hardware, model)
    minimum = min(MIN_USEFUL_CONTEXT, requested)
    assessment = _assess(inputs, hardware, pairs, requested, (artifact, runtime))
    chosen = assessment.route
    choice = _choice(pairs, chosen)
    if assessment.verdict == Verdict.FITS_WITH_OFFLOAD and choice is not None:
        return offloaded_recipe(inputs, hardware, profile, assessment, choice, shape)
    if assessment.verdict == Verdict.EXCEEDS_MEMORY or choice is None:
        return _exceeding(inputs, hardware, profile, assessment)
    specs = inputs.specs(choice, hardware)
    served = _serve(inputs, hardware, profile, choice, requested, minimum, concurrency, shape)
    if served is None:
        return _profile_does_not_fit(inputs, specs, profile, assessment, minimum, concurrency)
    applied, command = served
    asked_shape, shape = shape, shape.filled(applied.context)
    one_request = specs.estimate(applied.plan(concurrency=1))
    # At load the pool holds what each request holds, where the runtime pages its cache.
    held = held_per_request(applied, choice.runtime.slug, shape)
    at_load = specs.estimate(applied.plan(context=held))
    single, load = recipe_loads(at_load, applied, shape, concurrency)
    points = inputs.points(hardware, profile, choice) if evidence else ()
    medians = tuple(medians_by_context(points))
    memory = memory_figure(at_load, medians)
    verdict = _verdict(choice, applied, requested)
    alternatives = _alternatives(assessment, choice)
    commands = _commands(
        inputs,
        hardware,
        profile,
        choice,
        alternatives,
        command,
        verdict,
        requested,
        concurrency,
        asked_shape,
    )
    reported = inputs.reported.get(hardware.id) if evidence else None
    speed = speed_figure(reported, single, medians)
    speed = checked(inputs, hardware, choice, applied.tensor_parallel, speed)
    others = measured_on_other_routes(inputs, hardware, profile, choice) if evidence else ()
    return ResolvedRecipe(
        model=model,
        hardware=hardware,
        profile=profile,
        verdict=verdict,
        reason=_reason(verdict, choice, applied, requested, one_request.max_context, held),
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
        status=VERIFIED if medians or others else PENDING,
        commands=commands,
        measured=medians,
        decode_check=decode_check(single, medians, applied.context),
        memory_check=memory_check(memory),
        warnings=with_speculative_caution(at_load.warnings, model, applied),
        single=single,
        load=load,
        other_routes=others,
        shape=shape,
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
        inputs.spec,
        inputs.hardware_spec(hardware),
        [r for _, r in pairs],
        requested,
        min_context=minimum,
        shared=inputs.shared if hardware.id is not None else inputs.described(hardware).shared,
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
    shape: RequestShape,
) -> tuple[AppliedValues, Command | None] | None:
    """The profile's values on this route, fitted to memory, and the command that sets them."""
    specs = inputs.specs(choice, hardware)
    wanted = requested_values(profile, specs, requested, concurrency)
    explicit = departures(wanted, inputs.balanced_values(choice, hardware, specs))
    explicit |= not_at_default(choice.runtime.slug, wanted, hardware, OPTIONAL_KNOBS)
    if concurrency:
        explicit |= {"max_concurrency"}
    probe = inputs.command(choice, wanted, explicit)
    if probe is not None:
        # What the command leaves out is the runtime's default, and the estimate says so.
        wanted = wanted.changed(left_at_default=probe.left_at_default())
    applied = fit_to_memory(wanted, specs, minimum, shape)
    if applied is None:
        return None
    if aims_for_largest_context(profile):
        applied = _lowered_start(applied)
    if applied.context == wanted.context and applied.max_concurrency == wanted.max_concurrency:
        # Fitting to memory changed only the reasons, which no command reads: the probe is it.
        return applied, probe
    # Memory may have lowered a value below the runtime's default: the command says so.
    explicit |= not_at_default(choice.runtime.slug, applied, hardware, OPTIONAL_KNOBS)
    command = inputs.command(choice, applied, explicit)
    return applied, command


def _lowered_start(applied: AppliedValues) -> AppliedValues:
    why = dict(applied.why)
    why["context"] = message(Code.START_LOWERED, tokens=applied.context, most=LOWERED_START)
    return applied.changed(why=why)


def _verdict(choice: RouteChoice, applied: AppliedValues, requested: int) -> Verdict:
    if not choice.verified:
        return Verdict.EXPERIMENTAL
    return Verdict.FITS_REDUCED_CONTEXT if applied.context < requested else Verdict.FITS


def _reason(
    verdict: Verdict,
    choice: RouteChoice,
    applied: AppliedValues,
    requested: int,
    largest: int | None,
    held: int,
) -> tuple[Message, ...]:
    """Why the verdict; the memory figure beside it carries the numbers. Where the runtime
    pages its cache, the requests at once each hold `held` tokens, not the whole context."""
    if applied.context < requested:
        largest = largest or applied.context
        fits = message(Code.FITS_UP_TO_NOT_ASKED, largest=largest, asked=requested)
    elif applied.max_concurrency > 1 and held < applied.context:
        requests = applied.max_concurrency
        fits = message(
            Code.FITS_WITH_PAGED_REQUESTS, tokens=applied.context, requests=requests, held=held
        )
    elif applied.max_concurrency > 1:
        requests = applied.max_concurrency
        fits = message(Code.FITS_WITH_REQUESTS, tokens=applied.context, requests=requests)
    else:
        fits = message(Code.FITS, tokens=applied.context)
    if verdict == Verdict.EXPERIMENTAL:
        official = choice.artifact.is_official
        what = Code.PAIRING_UNVERIFIED if official else Code.COMPRESSED_UNVERIFIED
        return message(what), fits
    return (fits,)


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
    concurrency: int | None,
    shape: RequestShape,
) -> tuple[Command, ...]:
    """Commands only for verified pairs that fit: the route's runtime, then the others, each
    set for the same load (the concurrency asked, or the profile's)."""
    if verdict not in RUNNABLE or primary is None:
        return ()
    commands = [primary]
    minimum = min(MIN_USEFUL_CONTEXT, requested)
    for runtime in inputs.runtimes:
        if runtime.slug not in alternatives:
            continue
        other = RouteChoice(choice.artifact, runtime, True)
        served = _serve(inputs, hardware, profile, other, requested, minimum, concurrency, shape)
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
            memory = specs.size(applied.plan(concurrency=1, context=context)).memory
        except EstimateError:
            continue
        steps.append(ContextStep(context, gb(memory.required), memory.fits))
    return tuple(steps)


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
            (estimated_note(estimate.basis),),
            required,
        )
        reason = (message(Code.NEEDS_MEMORY, needed=required, usable=usable),)
        if assessment.max_context is not None and assessment.verdict == Verdict.EXCEEDS_MEMORY:
            least = min(MIN_USEFUL_CONTEXT, assessment.context)
            tokens = assessment.max_context
            reason += (message(Code.FITS_BELOW_MINIMUM, tokens=tokens, least=least),)
    choice = _choice(inputs.routes, assessment.route)
    return ResolvedRecipe(
        model=inputs.model,
        hardware=hardware,
        profile=profile,
        # Nothing could be estimated is no memory verdict: it keeps its own.
        verdict=Verdict.CANNOT_ESTIMATE
        if assessment.verdict == Verdict.CANNOT_ESTIMATE
        else Verdict.EXCEEDS_MEMORY,
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
