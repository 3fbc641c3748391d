"""Fit verdict: the best route (model file + runtime) for a model on a hardware configuration."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import msgspec

from app.estimate.catalog_pass import SharedEstimates
from app.estimate.errors import EstimateError
from app.estimate.estimator import Estimate, Sizing, offload, size
from app.estimate.inputs.checked_plan import check_runtime_runs
from app.estimate.inputs.specs import (
    ArtifactSpec,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    shared_plan,
)
from app.estimate.messages import Code, Message, message
from app.estimate.speed.offload import OFFLOAD_RUNTIMES, OffloadPlan


class Verdict(StrEnum):
    """Whether and how a model can be served on a hardware configuration."""

    FITS = "fits"
    FITS_REDUCED_CONTEXT = "fits_reduced_context"
    EXPERIMENTAL = "experimental"
    # Runs with part of the weights in system memory (llama.cpp / Ollama), slower.
    FITS_WITH_OFFLOAD = "fits_with_offload"
    EXCEEDS_MEMORY = "exceeds_memory"
    # No runtime runs the model here, or one does but what is known of the model or the
    # hardware cannot support an estimate: not a memory verdict, and the reason says which.
    CANNOT_ESTIMATE = "cannot_estimate"


class Route(msgspec.Struct, frozen=True):
    """A model file served by a runtime; verified when the pair is known to load and answer."""

    artifact: ArtifactSpec
    runtime: RuntimeSpec
    verified: bool


class RouteResult(msgspec.Struct, frozen=True):
    """One route at the assessed context: its sizing, or why it could not be estimated.

    Choosing among routes reads only the sizing; the full estimate (speed, warnings, basis)
    is worked out from it when first read, which is for the chosen route alone.
    """

    route: Route
    sizing: Sizing | None
    error: EstimateError | None
    fits_at_context: bool

    @property
    def max_context(self) -> int | None:
        return None if self.sizing is None else self.sizing.max_context

    @property
    def estimate(self) -> Estimate | None:
        return None if self.sizing is None else self.sizing.full_estimate


class _ChosenEstimate:
    """The assessment's `estimate` field, given as the chosen route's result and worked out
    from it when first read: recipes read it only when nothing fits on the GPU or the route
    runs offloaded, and for every other verdict the full estimate (speed, warnings, basis)
    would be work no page shows. Reading it gives the same value a computed field would, so
    the assessment compares, copies and prints as before."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.stored = f"_{name}"

    def __get__(self, assessment: Assessment | None, owner: type | None = None):
        if assessment is None:
            raise AttributeError(self.stored)  # no default: the field stays required
        found = assessment.__dict__[self.stored]
        return found.estimate if isinstance(found, RouteResult) else found

    def __set__(self, assessment: Assessment, value: Estimate | RouteResult | None) -> None:
        assessment.__dict__[self.stored] = value


@dataclass(frozen=True)
class Assessment:
    """The verdict, the route it rests on, and every route's result.

    route and estimate are None only when no route could be estimated at all; the verdict is
    then EXCEEDS_MEMORY when no runtime runs the format on the platform, or CANNOT_ESTIMATE
    when one does but the model data cannot support an estimate, and the reason says why.
    With FITS_WITH_OFFLOAD, `estimate` is the all-on-GPU estimate that did not fit and
    `offload` the split that runs. The reason is one message per clause, worded where it is
    shown.
    """

    verdict: Verdict
    route: Route | None
    # Given as an estimate, or as the chosen route's result to estimate when first read.
    estimate: Estimate | None = _ChosenEstimate()  # type: ignore[assignment]
    context: int
    max_context: int | None
    reason: tuple[Message, ...]
    results: tuple[RouteResult, ...]
    offload: OffloadPlan | None = None


class _Request(msgspec.Struct, frozen=True):
    """What is being assessed: a model on hardware at a context and concurrency."""

    model: ModelSpec
    hardware: HardwareSpec
    context: int
    concurrency: int
    min_context: int
    shared: SharedEstimates | None = None


def assess(
    model: ModelSpec,
    hardware: HardwareSpec,
    routes: Sequence[Route],
    context: int,
    concurrency: int = 1,
    min_context: int = 4096,
    shared: SharedEstimates | None = None,
) -> Assessment:
    """Choose a verdict from routes listed in the caller's order of preference.

    `shared`, when given, lets assessments of one model at several contexts share the
    estimator's work; the answer is the same.
    """
    _check_request(context, concurrency, min_context)
    target = min(context, model.native_context)
    request = _Request(model, hardware, target, concurrency, min(min_context, target), shared)
    results = tuple(_try_route(request, route) for route in routes)
    estimated = [result for result in results if result.sizing is not None]
    if not estimated:
        return _unestimated(request, routes, results)
    for choose in _CHOOSERS:
        chosen = choose(request, estimated, results)
        if chosen is not None:
            return chosen
    return _exceeds(request, estimated, results)


def _check_request(context: int, concurrency: int, min_context: int) -> None:
    """Refuse counts below one."""
    for name, value in (
        ("context", context),
        ("concurrency", concurrency),
        ("min_context", min_context),
    ):
        if value < 1:
            raise EstimateError(name, f"{name} must be at least 1, got {value}")


def _plan_for(runtime: RuntimeSpec, request: _Request, context: int) -> Plan:
    """The runtime's default plan; its first accepted KV dtype when it has no 'auto'."""
    accepted = runtime.kv_dtypes
    kv_dtype = "auto" if "auto" in accepted or not accepted else accepted[0]
    return shared_plan(context, request.concurrency, kv_dtype, None, None, None, None)


def _size_route(request: _Request, route: Route, context: int) -> Sizing:
    """Size one route at a context: the memory part of its estimate."""
    plan = _plan_for(route.runtime, request, context)
    work = size if request.shared is None else request.shared.size
    return work(request.model, route.artifact, route.runtime, request.hardware, plan)


def _try_route(request: _Request, route: Route) -> RouteResult:
    """Size a route at the requested context, recording why it failed if it did."""
    try:
        found = _size_route(request, route, request.context)
    except EstimateError as error:
        return RouteResult(route, None, error, False)
    return RouteResult(route, found, None, found.fits)


def _choose_fits(
    request: _Request,
    estimated: list[RouteResult],
    results: tuple[RouteResult, ...],
) -> Assessment | None:
    """The first verified route that fits at the requested context."""
    fitting = [r for r in estimated if r.route.verified and r.fits_at_context]
    if not fitting:
        return None
    best = fitting[0]
    spare = round(best.sizing.memory.headroom, 1)
    reason = (message(Code.FITS_WITH_SPARE, tokens=request.context, spare=spare),)
    return _assessment(Verdict.FITS, best, request.context, reason, results)


def _choose_reduced(
    request: _Request,
    estimated: list[RouteResult],
    results: tuple[RouteResult, ...],
) -> Assessment | None:
    """The verified route with the longest context that still reaches the minimum."""
    best = _longest_context([r for r in estimated if r.route.verified], request.min_context)
    if best is None:
        return None
    reason = (message(Code.FITS_UP_TO_NOT_ASKED, largest=best.max_context, asked=request.context),)
    return _reduced_assessment(request, Verdict.FITS_REDUCED_CONTEXT, best, reason, results)


def _choose_experimental(
    request: _Request,
    estimated: list[RouteResult],
    results: tuple[RouteResult, ...],
) -> Assessment | None:
    """An unverified route: the first that fits at context, else the longest-context one."""
    unverified = [r for r in estimated if not r.route.verified]
    fitting = [r for r in unverified if r.fits_at_context]
    if fitting:
        best = fitting[0]
        return _assessment(
            Verdict.EXPERIMENTAL, best, request.context, (_unverified_reason(best),), results
        )
    best = _longest_context(unverified, request.min_context)
    if best is None:
        return None
    reason = (_unverified_reason(best), message(Code.FITS_UP_TO, tokens=best.max_context))
    return _reduced_assessment(request, Verdict.EXPERIMENTAL, best, reason, results)


def _choose_offload(
    request: _Request,
    estimated: list[RouteResult],
    results: tuple[RouteResult, ...],
) -> Assessment | None:
    """Nothing fits on the GPU: the route (verified first) that runs with part of its weights
    in system memory, at the requested context or else at the minimum; of several, the one
    that leaves the CPU the least to read. On several cards only a route that splits the
    layers over all of them can (see `plan_offload`)."""
    if request.hardware.unified_memory:
        return None  # one memory pool: nothing to offload to
    can_offload = [r for r in estimated if r.route.runtime.slug in OFFLOAD_RUNTIMES]
    verified = [r for r in can_offload if r.route.verified]
    unverified = [r for r in can_offload if not r.route.verified]
    for context in dict.fromkeys((request.context, request.min_context)):
        for group in (verified, unverified):
            splits = [(r.route, _split_of(request, r.route, context)) for r in group]
            runs = [(route, split) for route, split in splits if split is not None]
            if not runs:
                continue
            # The model file that leaves the least for the CPU to read decodes the fastest;
            # of its routes, the first in the caller's order.
            least = min(runs, key=lambda found: found[1].host_read_bytes)[0].artifact
            route, split = next(found for found in runs if found[0].artifact == least)
            at_context = _size_route(request, route, context)
            chosen = RouteResult(route, at_context, None, False)
            reason = (message(Code.RUNS_WITH_OFFLOAD, tokens=context, split=split.summary),)
            found = _assessment(Verdict.FITS_WITH_OFFLOAD, chosen, context, reason, results)
            return replace(found, offload=split)
    return None


def _split_of(request: _Request, route: Route, context: int) -> OffloadPlan | None:
    """The route's offload split at a context; None where it cannot offload."""
    plan = _plan_for(route.runtime, request, context)
    work = offload if request.shared is None else request.shared.offload
    try:
        return work(request.model, route.artifact, route.runtime, request.hardware, plan)
    except EstimateError:
        return None


_CHOOSERS: tuple[Callable[..., Assessment | None], ...] = (
    _choose_fits,
    _choose_reduced,
    _choose_experimental,
    _choose_offload,
)


def _longest_context(candidates: list[RouteResult], min_context: int) -> RouteResult | None:
    """The candidate with the longest fitting context at or above the minimum; first on ties."""
    reaching = [r for r in candidates if r.max_context is not None and r.max_context >= min_context]
    return max(reaching, key=lambda r: r.max_context, default=None)


def _unverified_reason(result: RouteResult) -> Message:
    """Why an unverified route is only experimental."""
    if result.route.artifact.official:
        return message(Code.PAIRING_UNVERIFIED)
    return message(Code.COMPRESSED_UNVERIFIED)


def _exceeds(
    request: _Request,
    estimated: list[RouteResult],
    results: tuple[RouteResult, ...],
) -> Assessment:
    """Nothing fits: report the route that came closest."""
    closest = max(estimated, key=lambda r: r.sizing.headroom)
    memory = closest.sizing.memory
    needs = message(
        Code.NEEDS_MEMORY, needed=round(memory.required), usable=round(memory.usable.value)
    )
    reason: tuple[Message, ...] = (needs,)
    if closest.max_context is not None:
        least = request.min_context
        reason += (message(Code.FITS_BELOW_MINIMUM, tokens=closest.max_context, least=least),)
    return _assessment(Verdict.EXCEEDS_MEMORY, closest, request.context, reason, results)


def _unestimated(
    request: _Request,
    routes: Sequence[Route],
    results: tuple[RouteResult, ...],
) -> Assessment:
    """No route could be estimated: none runs here, or the model data falls short."""
    compatible = [r for r in results if _runs_here(r.route, request.hardware)]
    platform = request.hardware.platform
    formats = sorted({route.artifact.format for route in routes})
    if compatible:
        why = message(Code.CANNOT_ESTIMATE, why=compatible[0].error.as_message())
        reason = (why,)
        return Assessment(
            Verdict.CANNOT_ESTIMATE, None, None, request.context, None, reason, results
        )
    if formats:
        why = message(Code.NO_RUNTIME_RUNS_FORMATS, formats=formats, platform=platform)
    else:
        why = message(Code.NO_RUNTIME_RUNS_MODEL, platform=platform)
    reason = (why,)
    # No runtime runs it here: nothing was sized, so this is no memory verdict either.
    return Assessment(Verdict.CANNOT_ESTIMATE, None, None, request.context, None, reason, results)


def _runs_here(route: Route, hardware: HardwareSpec) -> bool:
    """Whether the route's runtime runs on the hardware and loads its file."""
    try:
        check_runtime_runs(route.runtime, hardware, route.artifact)
    except EstimateError:
        return False
    return True


def _reduced_assessment(
    request: _Request,
    verdict: Verdict,
    best: RouteResult,
    reason: tuple[Message, ...],
    results: tuple[RouteResult, ...],
) -> Assessment:
    """An assessment at the route's largest fitting context, estimated again at that context."""
    at_reduced = _size_route(request, best.route, best.max_context)
    reduced = RouteResult(best.route, at_reduced, None, True)
    return _assessment(verdict, reduced, best.max_context, reason, results)


def _assessment(
    verdict: Verdict,
    chosen: RouteResult,
    context: int,
    reason: tuple[Message, ...],
    results: tuple[RouteResult, ...],
) -> Assessment:
    """Build the assessment for a chosen route."""
    return Assessment(verdict, chosen.route, chosen, context, chosen.max_context, reason, results)
