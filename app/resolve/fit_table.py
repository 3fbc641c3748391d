"""One model's fit table: every hardware configuration's recipe for every profile, resolved
together. Kept in a module of its own so the recipe cache (`app.resolve.cache`) and the
service that reads it (`app.resolve.service`) each import it, and not one another."""

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from math import ceil

from msgspec.structs import replace

from app.catalog.schemas import FitFilters
from app.errors import NotFound
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.models import Hardware
from app.resolve.gc_paused import collector_paused
from app.resolve.inputs import UNKNOWN_PROFILE, ModelInputs
from app.resolve.question import Question
from app.resolve.recipe import ResolvedRecipe, resolve_recipe

# A fit table lists at most this many hardware rows per page.
PAGE_SIZE = 100

UNKNOWN_HARDWARE = register(
    "catalog.unknown_hardware",
    _l("No hardware '%(slug)s' in the catalog. Known hardware: %(known)s."),
)


@dataclass(frozen=True)
class FitRow:
    """One hardware configuration of the fit table: the recipe of every profile."""

    hardware: Hardware
    recipes: tuple[ResolvedRecipe, ...]

    @property
    def shown(self) -> ResolvedRecipe:
        """The recipe the row's figures come from: the balanced profile's."""
        return self.recipes[0]


@dataclass(frozen=True)
class FitPage:
    rows: list[FitRow]
    page: int
    pages: int
    total: int


class ResolvedModel:
    """One model's inputs and every fit-table row (each profile's recipe), in catalog order."""

    def __init__(
        self, inputs: ModelInputs, hardware: Sequence[Hardware], rows: list[FitRow] | None = None
    ) -> None:
        self.inputs = inputs
        if rows is None:
            with collector_paused():
                rows = [fit_row(inputs, machine) for machine in hardware]
        self.rows = rows
        self.by_hardware = {row.hardware.slug: row for row in self.rows}

    def refreshed(self, fresh: ModelInputs, touched: Collection[tuple]) -> "ResolvedModel":
        """These recipes once accepted records changed: `fresh` is the model loaded again,
        `touched` the (hardware id, profile id) pairs whose accepted records changed.

        Only those recipes are resolved again (with the estimator's work kept); every
        other recipe is kept, with its pair's evidence (the records that verify it) read
        from `fresh`. A pair whose verified status changed can change the route of any
        recipe of the model: then every one is resolved again.
        """
        inputs = self.inputs.with_evidence_of(fresh)
        if inputs.routes is not self.inputs.routes:
            return ResolvedModel(inputs, [row.hardware for row in self.rows])
        with collector_paused():
            rows = [
                FitRow(
                    row.hardware,
                    tuple(
                        resolve_recipe(inputs, Question(row.hardware, recipe.profile.slug))
                        if (row.hardware.id, recipe.profile.id) in touched
                        else with_pair_evidence(recipe, inputs)
                        for recipe in row.recipes
                    ),
                )
                for row in self.rows
            ]
        return ResolvedModel(inputs, (), rows)

    @property
    def runs_on(self) -> int:
        """How many hardware configurations run the model at the balanced profile (fits,
        at a reduced context, or with offload; experimental and too big do not count):
        the one count every page that says "runs on N of M" shows."""
        return sum(row.shown.runnable for row in self.rows)

    def recipe(self, hardware: str, profile: str) -> ResolvedRecipe:
        row = self.by_hardware.get(hardware)
        if row is None:
            known = ", ".join(self.by_hardware)
            raise NotFound(UNKNOWN_HARDWARE(slug=hardware, known=known))
        found = next((r for r in row.recipes if r.profile.slug == profile), None)
        if found is None:
            known = ", ".join(r.profile.slug for r in row.recipes)
            raise NotFound(UNKNOWN_PROFILE(slug=profile, known=known))
        return found

    def fit_page(self, filters: FitFilters) -> FitPage:
        rows = [
            row
            for row in self.rows
            if passes_hardware_filters(row.hardware, filters)
            and (filters.verdict is None or row.shown.verdict == filters.verdict)
        ]
        pages = max(1, ceil(len(rows) / PAGE_SIZE))
        page = min(filters.page, pages)
        start = (page - 1) * PAGE_SIZE
        return FitPage(rows[start : start + PAGE_SIZE], page, pages, len(rows))


def fit_row(inputs: ModelInputs, hardware: Hardware) -> FitRow:
    """Balanced first: the row shows it, and links every profile with its own status."""
    profiles = [inputs.balanced, *(p for p in inputs.profiles if p is not inputs.balanced)]
    return FitRow(
        hardware, tuple(resolve_recipe(inputs, Question(hardware, p.slug)) for p in profiles)
    )


def with_pair_evidence(recipe: ResolvedRecipe, inputs: ModelInputs) -> ResolvedRecipe:
    """The recipe with its route's evidence as `inputs` have it."""
    if recipe.pair is None or recipe.route is None:
        return recipe
    route = recipe.route
    pair = inputs.verified.evidence(route.artifact.id, route.runtime.id)
    return recipe if pair == recipe.pair else replace(recipe, pair=pair)


def passes_hardware_filters(hardware: Hardware, filters: FitFilters) -> bool:
    if filters.platform and hardware.platform != filters.platform:
        return False
    return filters.min_memory is None or hardware.usable_memory_gb >= filters.min_memory
