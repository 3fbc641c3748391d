"""Everything the resolution of one model's recipes reads, loaded once per model.

This is the resolution's only database access; `resolve_recipe` is pure over these inputs.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy.orm import Session

from app.accuracy.evidence import range_book
from app.catalog.repository import CatalogRepository
from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.errors import NotFound
from app.estimate import Assessment, HardwareSpec, ModelSpec, Route, SharedEstimates
from app.estimate.ranges.from_records import RangeBook
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.models import Artifact, Hardware, LlmModel, Profile, Record, ReportedFigure, Runtime
from app.resolve.applied import AppliedValues, Specs, requested_values
from app.resolve.commands import Command, build_command
from app.resolve.figures import MeasuredPoint
from app.resolve.verification import VerifiedPairs

UNKNOWN_MODEL = register(
    "catalog.unknown_model", _l("No model '%(slug)s' in the catalog. Known models: %(known)s.")
)
UNKNOWN_PROFILE = register(
    "catalog.unknown_profile", _l("No profile '%(slug)s'. Profiles: %(known)s.")
)

BALANCED = "balanced"


@dataclass(frozen=True)
class RouteChoice:
    """A model file served by a runtime, and whether that pair is verified."""

    artifact: Artifact
    runtime: Runtime
    verified: bool

    @cached_property
    def key(self) -> tuple[str, str]:
        """(artifact, runtime) slugs; read for every recipe, so worked out once."""
        return self.artifact.slug, self.runtime.slug


@dataclass
class Described:
    """What the recipes of one hardware described by numbers share, like a catalog row's."""

    spec: HardwareSpec
    shared: SharedEstimates = field(default_factory=SharedEstimates)
    estimates: dict[tuple, dict] = field(default_factory=dict)  # by (artifact, runtime)


@dataclass(frozen=True)
class ModelInputs:
    """One model with the catalog rows and accepted evidence its recipes depend on."""

    model: LlmModel
    runtimes: Sequence[Runtime]
    profiles: Sequence[Profile]
    verified: VerifiedPairs
    measured: Sequence[MeasuredPoint]
    reported: dict[int, ReportedFigure]  # hardware id -> token generation reported by others
    # Route assessments by (hardware, context, artifact, runtime): profiles that start at the
    # same context on the same hardware share one. Never carried over by `replace`.
    assessments: dict[tuple, Assessment] = field(init=False, default_factory=dict, repr=False)
    # Each catalog card's spec by hardware id; it reads no model, so the models of one pass
    # may share one dict.
    hardware_specs: dict[int, HardwareSpec] = field(default_factory=dict, repr=False)
    # Estimates by (artifact, runtime, hardware) and the estimator's shared work (see
    # `Specs`): catalog hardware only, so custom hardware asked on demand adds nothing.
    estimates: dict[tuple, dict] = field(init=False, default_factory=dict, repr=False)
    # Each route's specs on each catalog card, built once: every recipe reads them.
    route_specs: dict[tuple, Specs] = field(init=False, default_factory=dict, repr=False)
    shared: SharedEstimates = field(init=False, default_factory=SharedEstimates, repr=False)
    # The same for hardware described by numbers, while its request holds it: a custom
    # estimate shares the work of its own routes and nothing outlives it.
    transient: WeakKeyDictionary[Hardware, "Described"] = field(
        init=False, default_factory=WeakKeyDictionary, repr=False
    )
    # The balanced profile's requested values by (artifact, runtime, hardware): every other
    # profile's command departs from them.
    balanced_by_route: dict[tuple, AppliedValues] = field(
        init=False, default_factory=dict, repr=False
    )
    # The speed ranges in effect, as accepted records updated them (None: the shipped ones).
    ranges: RangeBook | None = field(default=None, repr=False)
    # Launch commands by route and the values they set: recipes on cards alike (the same
    # split, the same context fitted) ask for the same command.
    commands: dict[tuple, Command | None] = field(init=False, default_factory=dict, repr=False)
    # A plan's resolutions at a load on catalog cards, by (hardware, question, concurrency):
    # plans for one model ask the same loads again. They read evidence, so like the
    # assessments they are never carried over to inputs with other evidence.
    at_load: dict[tuple, Any] = field(init=False, default_factory=dict, repr=False)

    @cached_property
    def spec(self) -> ModelSpec:
        return model_spec(self.model)

    @cached_property
    def balanced(self) -> Profile:
        """The profile the fit table shows, and the one other profiles depart from."""
        return next((p for p in self.profiles if p.slug == BALANCED), self.profiles[0])

    def profile(self, slug: str) -> Profile:
        found = next((p for p in self.profiles if p.slug == slug), None)
        if found is None:
            known = ", ".join(p.slug for p in self.profiles)
            raise NotFound(UNKNOWN_PROFILE(slug=slug, known=known))
        return found

    @cached_property
    def routes(self) -> list[tuple[RouteChoice, Route]]:
        """Every loadable (artifact, runtime) pair with its estimator route, preferred first.

        Official weights first, the model's own repository before sibling ones (it is what
        official instructions launch), then the runtime's rank, then precision.
        """
        choices = [
            RouteChoice(artifact, runtime, self.verified.is_verified(artifact.id, runtime.id))
            for artifact in self.model.artifacts
            for runtime in self.runtimes
            if artifact.format in runtime.formats
        ]
        main_repo = self.model.hf_repo
        choices.sort(
            key=lambda c: (
                not c.artifact.is_official,
                c.artifact.repo != main_repo,
                c.runtime.priority,
                -c.artifact.bits_per_weight,
            )
        )
        return [
            (c, Route(artifact_spec(c.artifact), runtime_spec(c.runtime), c.verified))
            for c in choices
        ]

    @cached_property
    def route_by_key(self) -> dict[tuple[str, str], Route]:
        """Each route's estimator specs by (artifact, runtime) slug: looked up per recipe."""
        return {choice.key: route for choice, route in self.routes}

    def hardware_spec(self, hardware: Hardware) -> HardwareSpec:
        """The estimator's view of a hardware configuration, built once per catalog row."""
        if hardware.id is None:
            return self.described(hardware).spec
        machine = self.hardware_specs.get(hardware.id)
        if machine is None:
            machine = self.hardware_specs[hardware.id] = hardware_spec(hardware)
        return machine

    def specs(self, choice: RouteChoice, hardware: Hardware) -> Specs:
        """The estimator's specs for a route here, built once per model, route and card."""
        key = (*choice.key, hardware.id)
        found = self.route_specs.get(key) if hardware.id is not None else None
        if found is None:
            found = self._specs(choice, hardware)
            if hardware.id is not None:
                self.route_specs[key] = found
        return found

    def _specs(self, choice: RouteChoice, hardware: Hardware) -> Specs:
        route = self.route_by_key[choice.key]
        prebuilt = (self.spec, route.artifact, route.runtime, self.hardware_spec(hardware))
        if hardware.id is None:
            described = self.described(hardware)
            shared, memo = described.shared, described.estimates.setdefault(choice.key, {})
        else:
            shared = self.shared
            memo = self.estimates.setdefault((*choice.key, hardware.id), {})
        return Specs(
            self.model,
            choice.artifact,
            choice.runtime,
            hardware,
            prebuilt,
            memo,
            shared,
            self.ranges,
        )

    def described(self, hardware: Hardware) -> "Described":
        """The estimator's view and shared work of hardware described by numbers (not a
        catalog row), kept while the hardware object lives."""
        found = self.transient.get(hardware)
        if found is None:
            found = Described(hardware_spec(hardware), SharedEstimates(self.shared))
            self.transient[hardware] = found
        return found

    def balanced_values(
        self, choice: RouteChoice, hardware: Hardware, specs: Specs
    ) -> AppliedValues:
        """The balanced profile's requested values on this route and hardware."""
        if hardware.id is None:
            return requested_values(self.balanced, specs)
        key = (*choice.key, hardware.id)
        found = self.balanced_by_route.get(key)
        if found is None:
            found = self.balanced_by_route[key] = requested_values(self.balanced, specs)
        return found

    def command(
        self, choice: RouteChoice, values: AppliedValues, explicit: frozenset[str]
    ) -> Command | None:
        """The route's command for these values (`build_command`), built once for each
        distinct set: a command reads the values' knobs alone, not why they have them."""
        key = (choice.key, values.knobs(), explicit)
        if key not in self.commands:
            runtime, artifact = choice.runtime, choice.artifact
            self.commands[key] = build_command(runtime, artifact, self.model, values, explicit)
        return self.commands[key]

    def points(self, hardware: Hardware, profile: Profile, route: RouteChoice) -> list:
        """Accepted single-request points of this route and profile on this hardware."""
        return [
            p
            for p in self.measured
            if p.hardware_id == hardware.id
            and p.profile_id == profile.id
            and p.artifact_id == route.artifact.id
            and p.runtime_id == route.runtime.id
        ]

    def with_evidence_of(self, fresh: "ModelInputs") -> "ModelInputs":
        """These inputs with the accepted evidence of `fresh` (the same model loaded again
        after records were reviewed), keeping every piece of work that reads no evidence:
        the specs, the estimates, the balanced values, and, when no pair's verified status
        changed, the routes and their assessments."""
        found = replace(self, measured=fresh.measured, verified=fresh.verified)
        same_routes = _verified_routes(fresh) == _verified_routes(self)
        kept = [
            "hardware_specs",
            "estimates",
            "route_specs",
            "shared",
            "balanced_by_route",
            "commands",
            "transient",
        ]
        cached = ["spec", "balanced"]
        if same_routes:
            kept.append("assessments")
            cached += ["routes", "route_by_key"]
        for name in kept:
            object.__setattr__(found, name, getattr(self, name))
        for name in cached:
            if name in self.__dict__:
                found.__dict__[name] = self.__dict__[name]
        return found

    def with_accepted(self, record: Record) -> "ModelInputs":
        """These inputs as they would be once `record` is accepted (nothing is written)."""
        if record.outcome != "ok":
            return self
        points = [
            MeasuredPoint(
                record_id=record.id,
                hardware_id=record.hardware_id,
                profile_id=record.profile_id,
                artifact_id=record.artifact_id,
                runtime_id=record.runtime_id,
                context_length=m.context_length,
                decode_tokens_per_s=m.decode_tokens_per_s,
                ttft_ms=m.ttft_ms,
                peak_memory_gb_per_gpu=m.peak_memory_gb_per_gpu,
            )
            for m in record.measurements
            if m.concurrency == 1
        ]
        verified = self.verified.with_record(
            record.artifact_id, record.runtime_id, record.runtime_version, record.id
        )
        return replace(self, measured=[*self.measured, *points], verified=verified)


def load_model_inputs(session: Session, model_slug: str) -> ModelInputs:
    repo = CatalogRepository(session)
    model = repo.get_model(model_slug)
    if model is None:
        known = ", ".join(m.slug for m in repo.list_models())
        raise NotFound(UNKNOWN_MODEL(slug=model_slug, known=known))
    return ModelInputs(
        model=model,
        runtimes=repo.list_runtimes(),
        profiles=repo.list_profiles(),
        verified=VerifiedPairs.load(repo, [a.id for a in model.artifacts]),
        measured=[
            MeasuredPoint(**row._asdict()) for row in repo.accepted_single_stream_points(model.id)
        ],
        reported=_reported(model),
        ranges=range_book(session),
    )


def load_catalog_inputs(session: Session) -> list[ModelInputs]:
    """`load_model_inputs` of every model, in catalog order, in a handful of queries: the
    rows every model reads (runtimes, profiles) are loaded once and shared."""
    repo = CatalogRepository(session)
    models = repo.list_models_with_rows()
    runtimes, profiles = repo.list_runtimes(), repo.list_profiles()
    owner = {a.id: m.id for m in models for a in m.artifacts}
    pairings: dict[int, list] = defaultdict(list)
    ok_pairs: dict[int, list] = defaultdict(list)
    for row in repo.official_pairing_rows(owner):
        pairings[owner[row.artifact_id]].append(row)
    for row in repo.accepted_ok_pairs(owner):
        ok_pairs[owner[row.artifact_id]].append(row)
    measured: dict[int, list[MeasuredPoint]] = defaultdict(list)
    for *point, model_id in repo.all_accepted_single_stream_points():
        measured[model_id].append(MeasuredPoint(*point))
    hardware_specs: dict[int, HardwareSpec] = {}
    ranges = range_book(session)
    return [
        ModelInputs(
            model=model,
            runtimes=runtimes,
            profiles=profiles,
            verified=VerifiedPairs.from_rows(pairings[model.id], ok_pairs[model.id]),
            measured=measured[model.id],
            reported=_reported(model),
            hardware_specs=hardware_specs,
            ranges=ranges,
        )
        for model in models
    ]


def _verified_routes(inputs: ModelInputs) -> list[tuple[tuple[str, str], bool]]:
    return [(choice.key, choice.verified) for choice, _ in inputs.routes]


def _reported(model: LlmModel) -> dict[int, ReportedFigure]:
    """Token generation reported by others, by hardware id."""
    return {f.hardware_id: f for f in model.reported_figures if f.metric == "decode_tokens_per_s"}
