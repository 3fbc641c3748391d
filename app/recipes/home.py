"""The home page: every model with its one-line answer, "runs on N of M configurations",
read from the resolved fit tables (the recipe cache), never estimated again here. The
model list is filtered in the browser (static/js/home.js); each count loads on its own."""

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.catalog.revision import current_revision
from app.catalog.service import CatalogService
from app.db import SessionDep
from app.i18n import lazy_gettext as _l
from app.models import LlmModel
from app.page_cache import serve_at_revision
from app.resolve import RecipeService
from app.web import page_responses, render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
HUGGING_FACE = "https://huggingface.co/"
# Size bands of the home page's filter, in billions of total parameters: (slug, label, below).
SIZE_BANDS = (
    ("small", _l("under 30B"), 30.0),
    ("medium", _l("30B to 150B"), 150.0),
    ("large", _l("150B and up"), float("inf")),
)


@dataclass(frozen=True)
class ModelLine:
    model: LlmModel

    @property
    def hf_url(self) -> str:
        return HUGGING_FACE + self.model.hf_repo

    @property
    def size_band(self) -> str:
        return next(slug for slug, _, below in SIZE_BANDS if self.model.params_total_b < below)


@router.get("/", name="catalog:index")
def index(request: Request, session: SessionDep) -> Response:
    """The model index; it changes only with the catalog revision. Each row's "runs on"
    count comes from its own URL (below), so the list shows before every model is resolved."""

    def build() -> Response:
        models = list(CatalogService(session).list_models())
        context = {
            "lines": [ModelLine(m) for m in models],
            "publishers": sorted({m.publisher for m in models}),
            "size_bands": SIZE_BANDS,
        }
        return render(request, "catalog/index.html", context)

    return serve_at_revision(request, current_revision(session), build)


@router.get("/models/{slug}/runs-on", name="catalog:runs_on", responses=page_responses(404))
def runs_on(request: Request, slug: str, session: SessionDep) -> Response:
    """ "runs on N of M configurations": the model's resolved fit table, counted (the recipe
    cache resolves each model once per catalog revision)."""
    revision, resolved = RecipeService(session, request.state.recipe_cache).resolved(slug)

    def build() -> Response:
        context = {
            "model": resolved.inputs.model,
            "runs_on": resolved.runs_on,
            "configurations": len(resolved.rows),
        }
        return render(request, "catalog/_runs_on.html", context)

    return serve_at_revision(request, revision, build)
