"""Resolved recipes for the pages, the API and the CLI: the catalog rows they need, loaded
once per model, handed to the one pure resolution."""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.schemas import FitFilters
from app.errors import NotFound
from app.models import Hardware, Runtime
from app.resolve.inputs import ModelInputs, load_model_inputs
from app.resolve.recipe import ResolvedRecipe, resolve_recipe


@dataclass(frozen=True)
class FitRow:
    """One hardware configuration of the fit table: the recipe of every profile."""

    hardware: Hardware
    recipes: tuple[ResolvedRecipe, ...]

    @property
    def shown(self) -> ResolvedRecipe:
        """The recipe the row's figures come from: the balanced profile's."""
        return self.recipes[0]


class RecipeService:
    def __init__(self, session: Session) -> None:
        self.catalog = CatalogRepository(session)

    def inputs(self, model_slug: str) -> ModelInputs:
        return load_model_inputs(self.catalog.session, model_slug)

    def hardware(self, slug: str) -> Hardware:
        found = self.catalog.get_hardware(slug)
        if found is None:
            known = ", ".join(h.slug for h in self.catalog.list_hardware())
            raise NotFound(f"No hardware '{slug}' in the catalog. Known hardware: {known}.")
        return found

    def list_hardware(self) -> Sequence[Hardware]:
        return self.catalog.list_hardware()

    def list_runtimes(self) -> Sequence[Runtime]:
        return self.catalog.list_runtimes()

    def platforms(self) -> list[str]:
        return sorted({h.platform for h in self.catalog.list_hardware()})

    def recipe(
        self,
        model_slug: str,
        hardware_slug: str,
        profile_slug: str,
        *,
        artifact: str | None = None,
        runtime: str | None = None,
        context: int | None = None,
    ) -> ResolvedRecipe:
        inputs = self.inputs(model_slug)
        check_route_slugs(inputs, artifact, runtime)
        return resolve_recipe(
            inputs,
            self.hardware(hardware_slug),
            inputs.profile(profile_slug),
            artifact=artifact,
            runtime=runtime,
            context=context,
        )

    def fit_table(self, model_slug: str, filters: FitFilters) -> tuple[ModelInputs, list[FitRow]]:
        """One row per hardware configuration that passes the filters."""
        inputs = self.inputs(model_slug)
        rows = [
            fit_row(inputs, hardware)
            for hardware in self.catalog.list_hardware()
            if passes_hardware_filters(hardware, filters)
        ]
        if filters.verdict is not None:
            rows = [row for row in rows if row.shown.verdict == filters.verdict]
        return inputs, rows


def fit_row(inputs: ModelInputs, hardware: Hardware) -> FitRow:
    """Balanced first: the row shows it, and links every profile with its own status."""
    profiles = [inputs.balanced, *(p for p in inputs.profiles if p is not inputs.balanced)]
    return FitRow(hardware, tuple(resolve_recipe(inputs, hardware, p) for p in profiles))


def passes_hardware_filters(hardware: Hardware, filters: FitFilters) -> bool:
    if filters.platform and hardware.platform != filters.platform:
        return False
    return filters.min_memory is None or hardware.usable_memory_gb >= filters.min_memory


def check_route_slugs(inputs: ModelInputs, artifact: str | None, runtime: str | None) -> None:
    check_slug("artifact", artifact, [a.slug for a in inputs.model.artifacts])
    check_slug("runtime", runtime, [r.slug for r in inputs.runtimes])


def check_slug(kind: str, slug: str | None, known: list[str]) -> None:
    if slug is not None and slug not in known:
        raise NotFound(f"No {kind} '{slug}' for this model. Choose one of: {', '.join(known)}.")
