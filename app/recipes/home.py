"""The home page: every model with its one-line answer, "runs on N of M configurations",
read from the resolved fit tables (the recipe cache), never estimated again here. The
model list is filtered in the browser (static/js/home.js)."""

from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.catalog.revision import current_revision
from app.catalog.service import CatalogService
from app.db import SessionDep
from app.models import LlmModel
from app.resolve import RecipeService
from app.web import render, serve_at_revision

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
HUGGING_FACE = "https://huggingface.co/"
# Size bands of the home page's filter, in billions of total parameters: (slug, label, below).
SIZE_BANDS = (("small", "under 30B", 30.0), ("medium", "30B to 150B", 150.0),
              ("large", "150B and up", float("inf")))


@dataclass(frozen=True)
class ModelLine:
    model: LlmModel
    runs_on: int
    configurations: int

    @property
    def hf_url(self) -> str:
        return HUGGING_FACE + self.model.hf_repo

    @property
    def size_band(self) -> str:
        return next(slug for slug, _, below in SIZE_BANDS if self.model.params_total_b < below)


def model_lines(recipes: RecipeService, models: list[LlmModel]) -> list[ModelLine]:
    lines = []
    for model in models:
        resolved = recipes.resolved(model.slug)[1]
        lines.append(ModelLine(model, resolved.runs_on, len(resolved.rows)))
    return lines


@router.get("/", name="catalog:index")
def index(request: Request, session: SessionDep) -> Response:
    """The model index; it changes only with the catalog revision."""

    def build() -> Response:
        models = list(CatalogService(session).list_models())
        lines = model_lines(RecipeService(session, request.state.recipe_cache), models)
        context = {"lines": lines, "publishers": sorted({m.publisher for m in models}),
                   "size_bands": SIZE_BANDS}
        return render(request, "catalog/index.html", context)

    return serve_at_revision(request, current_revision(session), build)
