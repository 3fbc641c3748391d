"""Model index and hardware fit table: pages, htmx fragments and JSON."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.catalog.presenters import fit_row_out, model_out
from app.catalog.schemas import FitFilters, FitTableOut, ModelOut
from app.catalog.service import CatalogService
from app.db import SessionDep
from app.estimate import Verdict
from app.web import render

router = APIRouter(tags=["pages"])
api_router = APIRouter(prefix="/api", tags=["catalog"])

FiltersDep = Annotated[FitFilters, Query()]


@router.get("/", name="catalog:index")
def index(request: Request, session: SessionDep) -> Response:
    """The model index."""
    models = CatalogService(session).list_models()
    return render(request, "catalog/index.html", {"models": models})


@router.get("/models/{slug}", name="catalog:model")
def model_page(request: Request, slug: str, session: SessionDep, filters: FiltersDep) -> Response:
    """A model's hardware fit table; htmx filter requests get only the table."""
    service = CatalogService(session)
    model, rows = service.fit_table(slug, filters)
    context = {
        "model": model,
        "rows": rows,
        "filters": filters,
        "platforms": service.platforms(),
        "verdicts": list(Verdict),
        "hardware": service.list_hardware(),
        "runtimes": service.list_runtimes(),
    }
    return render(request, "catalog/model.html", context, block="fit_table")


@api_router.get("/models", name="api:models", response_model=list[ModelOut])
def list_models(request: Request, session: SessionDep) -> list[ModelOut]:
    """Every model in the catalog."""
    return [model_out(request, m) for m in CatalogService(session).list_models()]


@api_router.get("/models/{slug}/fit", name="api:model_fit", response_model=FitTableOut)
def model_fit(request: Request, slug: str, session: SessionDep, filters: FiltersDep) -> FitTableOut:
    """The hardware fit table of a model, one row per hardware configuration."""
    model, rows = CatalogService(session).fit_table(slug, filters)
    return FitTableOut(
        model=model_out(request, model),
        filters=filters.query(),
        rows=[fit_row_out(request, model, row) for row in rows],
    )
