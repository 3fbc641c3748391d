"""The fit table: catalog rows, the estimator and accepted evidence joined per hardware."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from statistics import median

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.schemas import FitFilters
from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.errors import NotFound
from app.estimate import Assessment, Estimate, ModelSpec, Route, Verdict, assess
from app.models import Artifact, Hardware, LlmModel, Profile, ReportedFigure, Runtime
from app.recipes.profiles import requested_context
from app.recipes.verification import VerifiedPairs

# Below this a serving recipe is not useful: the source recipe's smallest start.
MIN_USEFUL_CONTEXT = 4096

VERDICT_LABELS = {
    Verdict.FITS: "fits",
    Verdict.FITS_REDUCED_CONTEXT: "fits with reduced context",
    Verdict.EXPERIMENTAL: "experimental",
    Verdict.EXCEEDS_MEMORY: "exceeds memory (unsupported)",
}


@dataclass(frozen=True)
class TokenGeneration:
    low: float
    high: float
    basis: str  # measured | reported | estimated
    note: str
    source: str | None = None
    records: int = 0


@dataclass(frozen=True)
class RouteChoice:
    artifact: Artifact
    runtime: Runtime
    verified: bool


@dataclass(frozen=True)
class FitRow:
    hardware: Hardware
    assessment: Assessment
    route: RouteChoice | None
    alternatives: tuple[Runtime, ...]
    profile_statuses: tuple[tuple[Profile, str], ...]
    start_context: int
    token_generation: TokenGeneration | None

    @property
    def verdict(self) -> Verdict:
        return self.assessment.verdict

    @property
    def verdict_label(self) -> str:
        return VERDICT_LABELS[self.verdict]

    @property
    def estimate(self) -> Estimate | None:
        return self.assessment.estimate

    @property
    def profile_status(self) -> str:
        verified = any(status == "verified" for _, status in self.profile_statuses)
        return "verified" if verified else "verification_pending"


@dataclass
class ModelEvidence:
    """Everything about one model that every fit-table row needs, loaded once."""

    model: LlmModel
    runtimes: Sequence[Runtime]
    profiles: Sequence[Profile]
    verified: VerifiedPairs
    measured: dict[int, list]  # hardware id -> accepted single-stream points
    reported: dict[int, ReportedFigure]

    @cached_property
    def spec(self) -> ModelSpec:
        return model_spec(self.model)

    @cached_property
    def routes(self) -> list[tuple[RouteChoice, Route]]:
        """Every loadable (artifact, runtime) pair with its estimator route, preferred first.

        Built once per model: every hardware row of the table assesses the same routes.
        """
        return [
            (c, Route(artifact_spec(c.artifact), runtime_spec(c.runtime), c.verified))
            for c in self.ranked_choices()
        ]

    def ranked_choices(self) -> list[RouteChoice]:
        choices = [
            RouteChoice(artifact, runtime, self.verified.is_verified(artifact.id, runtime.id))
            for artifact in self.model.artifacts
            for runtime in self.runtimes
            if artifact.format in runtime.formats
        ]
        # Official weights first, the model's own repository before sibling ones (it is
        # what official instructions launch), then the runtime's rank, then precision.
        main_repo = self.model.hf_repo
        return sorted(
            choices,
            key=lambda c: (
                not c.artifact.is_official,
                c.artifact.repo != main_repo,
                c.runtime.priority,
                -c.artifact.bits_per_weight,
            ),
        )

    def profile_statuses(self, hardware: Hardware) -> tuple[tuple[Profile, str], ...]:
        measured_profiles = {point.profile_id for point in self.measured.get(hardware.id, [])}
        return tuple(
            (p, "verified" if p.id in measured_profiles else "verification_pending")
            for p in self.profiles
        )


class CatalogService:
    def __init__(self, session: Session) -> None:
        self.repo = CatalogRepository(session)

    def list_models(self) -> Sequence[LlmModel]:
        return self.repo.list_models()

    def get_model(self, slug: str) -> LlmModel:
        model = self.repo.get_model(slug)
        if model is None:
            known = ", ".join(m.slug for m in self.repo.list_models())
            raise NotFound(f"No model '{slug}' in the catalog. Known models: {known}.")
        return model

    def load_evidence(self, model: LlmModel) -> ModelEvidence:
        measured: dict[int, list] = defaultdict(list)
        for point in self.repo.accepted_single_stream_points(model.id):
            measured[point.hardware_id].append(point)
        return ModelEvidence(
            model=model,
            runtimes=self.repo.list_runtimes(),
            profiles=self.repo.list_profiles(),
            verified=VerifiedPairs.load(self.repo, [a.id for a in model.artifacts]),
            measured=dict(measured),
            reported={
                f.hardware_id: f
                for f in model.reported_figures
                if f.metric == "decode_tokens_per_s"
            },
        )

    def fit_table(self, slug: str, filters: FitFilters) -> tuple[LlmModel, list[FitRow]]:
        """One row per hardware configuration that passes the filters."""
        model = self.get_model(slug)
        evidence = self.load_evidence(model)
        balanced = next(
            (p for p in evidence.profiles if p.slug == "balanced"), evidence.profiles[0]
        )
        rows = [
            fit_row(evidence, hardware, balanced)
            for hardware in self.repo.list_hardware()
            if passes_hardware_filters(hardware, filters)
        ]
        if filters.verdict is not None:
            rows = [row for row in rows if row.verdict == filters.verdict]
        return model, rows

    def list_hardware(self) -> Sequence[Hardware]:
        return self.repo.list_hardware()

    def list_runtimes(self) -> Sequence[Runtime]:
        return self.repo.list_runtimes()

    def platforms(self) -> list[str]:
        return sorted({h.platform for h in self.repo.list_hardware()})


def passes_hardware_filters(hardware: Hardware, filters: FitFilters) -> bool:
    if filters.platform and hardware.platform != filters.platform:
        return False
    return filters.min_memory is None or hardware.usable_memory_gb >= filters.min_memory


def fit_row(
    evidence: ModelEvidence,
    hardware: Hardware,
    profile: Profile,
    artifact_slug: str | None = None,
    runtime_slug: str | None = None,
    context: int | None = None,
) -> FitRow:
    """Assess one hardware configuration for the model under the given profile."""
    pairs = [
        (choice, route)
        for choice, route in evidence.routes
        if artifact_slug in (None, choice.artifact.slug)
        and runtime_slug in (None, choice.runtime.slug)
    ]
    by_slug = {(c.artifact.slug, c.runtime.slug): c for c, _ in pairs}
    routes = [route for _, route in pairs]
    start = context or requested_context(profile, hardware, evidence.model)
    start = start or evidence.model.native_context
    assessment = assess(
        evidence.spec,
        hardware_spec(hardware),
        routes,
        start,
        min_context=min(MIN_USEFUL_CONTEXT, start),
    )
    chosen = assessment.route
    route = by_slug[(chosen.artifact.slug, chosen.runtime.slug)] if chosen else None
    context = assessment.context if assessment.verdict == Verdict.FITS_REDUCED_CONTEXT else start
    return FitRow(
        hardware=hardware,
        assessment=assessment,
        route=route,
        alternatives=alternative_runtimes(assessment, route),
        profile_statuses=evidence.profile_statuses(hardware),
        start_context=context,
        token_generation=token_generation(evidence, hardware, assessment),
    )


def alternative_runtimes(assessment: Assessment, route: RouteChoice | None) -> tuple:
    """Other verified runtimes that also fit, e.g. vLLM beside SGLang on a server."""
    if route is None or assessment.verdict in (Verdict.EXCEEDS_MEMORY, Verdict.EXPERIMENTAL):
        return ()
    names: list[str] = []
    for result in assessment.results:
        runtime = result.route.runtime.slug
        if result.route.verified and result.fits_at_context and runtime != route.runtime.slug:
            if runtime not in names:
                names.append(runtime)
    return tuple(names)


def token_generation(
    evidence: ModelEvidence, hardware: Hardware, assessment: Assessment
) -> TokenGeneration | None:
    """Measured beats reported beats estimated; nothing when the model does not fit."""
    points = [p for p in evidence.measured.get(hardware.id, []) if p.decode_tokens_per_s]
    if points:
        return measured_range(points)
    figure = evidence.reported.get(hardware.id)
    if figure is not None:
        return TokenGeneration(figure.low, figure.high, "reported", figure.note, figure.source)
    if assessment.verdict == Verdict.EXCEEDS_MEMORY or assessment.estimate is None:
        return None
    speed = assessment.estimate.decode_tokens_per_s
    if speed is None:
        return None
    return TokenGeneration(speed.low, speed.high, "estimated", speed.note)


def measured_range(points: list) -> TokenGeneration:
    """Median per context length over accepted records; the range spans the lengths."""
    by_context: dict[int, list[float]] = defaultdict(list)
    for point in points:
        by_context[point.context_length].append(point.decode_tokens_per_s)
    medians = [median(values) for values in by_context.values()]
    records = len({p.record_id for p in points})
    lengths = sorted(by_context)
    span = f"{lengths[0]:,}" if len(lengths) == 1 else f"{lengths[0]:,}–{lengths[-1]:,}"
    note = f"median of {records} accepted record{'s' if records != 1 else ''} at {span} tokens"
    return TokenGeneration(
        round(min(medians), 1), round(max(medians), 1), "measured", note, records=records
    )


@dataclass(frozen=True)
class RouteEstimate:
    """The estimate for one model on one hardware, through a chosen or the best route."""

    model: LlmModel
    hardware: Hardware
    row: FitRow

    def as_json(self) -> dict:
        assessment = self.row.assessment
        estimate = assessment.estimate
        speed = estimate.decode_tokens_per_s if estimate else None
        route = self.row.route
        return {
            "model": self.model.slug,
            "hardware": self.hardware.slug,
            "artifact": route.artifact.slug if route else None,
            "runtime": route.runtime.slug if route else None,
            "verified_pair": route.verified if route else False,
            "context": assessment.context,
            "verdict": assessment.verdict.value,
            "reason": assessment.reason,
            "weights_gb": round(estimate.weights_gb.value, 2) if estimate else None,
            "kv_bytes_per_token": estimate.kv_bytes_per_token if estimate else None,
            "tensor_parallel": estimate.tensor_parallel if estimate else None,
            "required_gb_per_gpu": round(estimate.memory.required, 2) if estimate else None,
            "usable_gb_per_gpu": round(self.hardware.usable_gb_per_gpu, 2),
            "max_context": assessment.max_context,
            "decode_tokens_per_s": {"low": speed.low, "high": speed.high} if speed else None,
            "basis": estimate.basis.value if estimate else None,
            "warnings": list(estimate.warnings) if estimate else [],
        }


def estimate_route(
    service: CatalogService,
    model_slug: str,
    hardware_slug: str,
    artifact_slug: str | None = None,
    runtime_slug: str | None = None,
    context: int | None = None,
) -> RouteEstimate:
    """Estimate through the named artifact/runtime, or the best route when none is named."""
    model = service.get_model(model_slug)
    hardware = service.repo.get_hardware(hardware_slug)
    if hardware is None:
        known = ", ".join(h.slug for h in service.repo.list_hardware())
        raise NotFound(f"No hardware '{hardware_slug}'. Known hardware: {known}.")
    evidence = service.load_evidence(model)
    check_slug("artifact", artifact_slug, [a.slug for a in model.artifacts])
    check_slug("runtime", runtime_slug, [r.slug for r in evidence.runtimes])
    profile = next((p for p in evidence.profiles if p.slug == "balanced"), evidence.profiles[0])
    row = fit_row(evidence, hardware, profile, artifact_slug, runtime_slug, context)
    return RouteEstimate(model, hardware, row)


def check_slug(kind: str, slug: str | None, known: list[str]) -> None:
    if slug is not None and slug not in known:
        raise NotFound(f"No {kind} '{slug}' for this model. Choose one of: {', '.join(known)}.")
