"""Resolved recipes for the pages, the API and the CLI: every recipe of a model is resolved
together (once per catalog revision when a cache is given) and read from there."""

from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.revision import current_revision
from app.errors import NotFound
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.models import Hardware, Runtime
from app.resolve.cache import RecipeCache
from app.resolve.fit_table import UNKNOWN_HARDWARE, ResolvedModel
from app.resolve.inputs import ModelInputs, load_model_inputs
from app.resolve.question import Question
from app.resolve.recipe import ResolvedRecipe, resolve_recipe

UNKNOWN_FOR_MODEL = register(
    "catalog.unknown_for_model",
    _l("No %(kind)s '%(slug)s' for this model. Choose one of: %(known)s."),
)


class RecipeService:
    def __init__(self, session: Session, cache: RecipeCache | None = None) -> None:
        self.catalog = CatalogRepository(session)
        self.cache = cache

    def inputs(self, model_slug: str) -> ModelInputs:
        if self.cache is not None:
            return self.resolved(model_slug)[1].inputs
        return load_model_inputs(self.catalog.session, model_slug)

    def resolved(self, model_slug: str) -> tuple[int, ResolvedModel]:
        """The revision the answer belongs to, and every recipe of the model."""
        if self.cache is not None:
            return self.cache.model(self.catalog.session, model_slug)
        revision = current_revision(self.catalog.session)
        inputs = load_model_inputs(self.catalog.session, model_slug)
        return revision, ResolvedModel(inputs, self.catalog.list_hardware())

    def hardware(self, slug: str) -> Hardware:
        found = self.catalog.get_hardware(slug)
        if found is None:
            known = ", ".join(h.slug for h in self.catalog.list_hardware())
            raise NotFound(UNKNOWN_HARDWARE(slug=slug, known=known))
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
        """A named route or context is resolved on demand; otherwise the table's own recipe."""
        if artifact is None and runtime is None and context is None:
            return self.resolved(model_slug)[1].recipe(hardware_slug, profile_slug)
        inputs = self.inputs(model_slug)
        check_route_slugs(inputs, artifact, runtime)
        question = Question(
            self.hardware(hardware_slug),
            profile_slug,
            artifact=artifact,
            runtime=runtime,
            context=context,
        )
        return resolve_recipe(inputs, question)


def check_route_slugs(inputs: ModelInputs, artifact: str | None, runtime: str | None) -> None:
    check_slug("artifact", artifact, [a.slug for a in inputs.model.artifacts])
    check_slug("runtime", runtime, [r.slug for r in inputs.runtimes])


def check_slug(kind: str, slug: str | None, known: list[str]) -> None:
    if slug is not None and slug not in known:
        raise NotFound(UNKNOWN_FOR_MODEL(kind=kind, slug=slug, known=", ".join(known)))
