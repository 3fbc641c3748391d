"""The model list as JSON, and the record and benchmark forms' narrowed choices. The
home page (it counts what runs where) and a model's fit table live with the recipes."""

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from app.catalog.choices import form_choices
from app.catalog.presenters import model_out
from app.catalog.schemas import ModelOut
from app.catalog.service import CatalogService
from app.db import SessionDep
from app.web import render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
api_router = APIRouter(prefix="/api", tags=["catalog"])


Slug = Annotated[str | None, Query(max_length=120, description="a catalog slug")]


@router.get("/choices/{field}", name="catalog:choices")
def choices(
    request: Request,
    session: SessionDep,
    field: Literal["artifact", "runtime"],
    model: Slug = None,
    artifact: Slug = None,
    runtime: Slug = None,
) -> Response:
    """The <option>s of the record and benchmark forms' model file or runtime select,
    narrowed to the chosen model (and model file); the current choice stays if offered."""
    context = {
        "field": field,
        "choices": form_choices(session, model, artifact),
        "selected": artifact if field == "artifact" else runtime,
    }
    return render(request, "_partials/choice_options.html", context)


@api_router.get("/models", name="api:models", response_model=list[ModelOut])
def list_models(request: Request, session: SessionDep) -> list[ModelOut]:
    """Every model in the catalog."""
    return [model_out(request, m) for m in CatalogService(session).list_models()]
