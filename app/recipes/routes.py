"""Pages and JSON that render resolved recipes: a model's fit table, profile detail pages,
the device selector and the estimate API."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response

from app.catalog.presenters import model_out
from app.catalog.schemas import FitFilters
from app.db import SessionDep
from app.estimate import Verdict
from app.recipes.knobs import knob_rows
from app.recipes.presenters import (
    benchmark_prefill,
    detail_out,
    estimate_out,
    exposure_note,
    fit_row_out,
    memory_check,
    record_prefill,
    smoke_test,
)
from app.recipes.schemas import FitTableOut
from app.recipes.selector import CUSTOM, SelectorResult, run_selector
from app.records.evidence import evidence_out, load_detail_evidence
from app.resolve import ModelInputs, RecipeService
from app.security.signin import FormDep
from app.web import render, serve_at_revision

router = APIRouter(tags=["pages"])
api_router = APIRouter(prefix="/api", tags=["recipes"])

DETAIL_PATH = "/models/{model}/hardware/{hardware}/profiles/{profile}"
FiltersDep = Annotated[FitFilters, Query()]


def recipe_service(request: Request, session: SessionDep) -> RecipeService:
    """Recipes read from the app's cache, at the revision this request's session sees."""
    return RecipeService(session, request.state.recipe_cache)


RecipesDep = Annotated[RecipeService, Depends(recipe_service)]


@router.get("/models/{slug}", name="catalog:model")
def model_page(request: Request, slug: str, recipes: RecipesDep, filters: FiltersDep) -> Response:
    """A model's hardware fit table; htmx filter requests get only the table."""
    revision, resolved = recipes.resolved(slug)

    def build() -> Response:
        inputs = resolved.inputs
        context = {
            "model": inputs.model,
            "balanced": inputs.balanced,
            "fit": resolved.fit_page(filters),
            "filters": filters,
            "platforms": recipes.platforms(),
            "verdicts": list(Verdict),
            **selector_context(recipes, inputs, {}, None),
        }
        return render(request, "recipes/model.html", context, block="fit_table")

    return serve_at_revision(request, revision, build)


@api_router.get("/models/{slug}/fit", name="api:model_fit", response_model=FitTableOut)
def model_fit(request: Request, slug: str, recipes: RecipesDep, filters: FiltersDep) -> Response:
    """The hardware fit table of a model, one row per hardware configuration (balanced),
    100 rows a page."""
    revision, resolved = recipes.resolved(slug)

    def build() -> Response:
        fit = resolved.fit_page(filters)
        table = FitTableOut(
            model=model_out(request, resolved.inputs.model),
            filters=filters.query(),
            page=fit.page,
            pages=fit.pages,
            total=fit.total,
            rows=[fit_row_out(request, row) for row in fit.rows],
        )
        return JSONResponse(jsonable_encoder(table))

    return serve_at_revision(request, revision, build)


@router.get(DETAIL_PATH, name="recipes:detail")
def detail_page(
    request: Request,
    model: str,
    hardware: str,
    profile: str,
    session: SessionDep,
    recipes: RecipesDep,
) -> Response:
    """One model on one hardware configuration under one profile."""
    revision, resolved = recipes.resolved(model)
    recipe = resolved.recipe(hardware, profile)

    def build() -> Response:
        context = {
            "recipe": recipe,
            "profiles": resolved.inputs.profiles,
            "knobs": knob_rows(recipe),
            "smoke_test": smoke_test(recipe),
            "memory_check": memory_check(recipe),
            "exposure_note": exposure_note(recipe),
            "records": load_detail_evidence(
                session, recipe.model, recipe.hardware, recipe.profile
            ),
            "record_prefill": record_prefill(recipe),
            "benchmark_prefill": benchmark_prefill(recipe),
        }
        return render(request, "recipes/detail.html", context)

    return serve_at_revision(request, revision, build)


@api_router.get(DETAIL_PATH, name="api:profile_detail")
def detail_api(
    request: Request,
    model: str,
    hardware: str,
    profile: str,
    session: SessionDep,
    recipes: RecipesDep,
) -> Response:
    """The detail page's content: verdict, memory, applied values, commands, records."""
    revision, resolved = recipes.resolved(model)
    recipe = resolved.recipe(hardware, profile)

    def build() -> Response:
        records = load_detail_evidence(session, recipe.model, recipe.hardware, recipe.profile)
        return JSONResponse(detail_out(request, recipe, evidence_out(request, records)))

    return serve_at_revision(request, revision, build)


@router.api_route(
    "/models/{model}/selector",
    methods=["GET", "POST"],
    name="recipes:selector",
    include_in_schema=False,
)
def selector(
    request: Request, model: str, service: RecipesDep, form: FormDep, fill: bool = False
) -> Response:
    """The selector's live answer; `fill` (a new hardware pick) re-renders the whole form."""
    inputs = service.inputs(model)
    raw = {k: v for k, v in (form or request.query_params).items() if k != "fill"}
    result = run_selector(service, inputs, raw, fill=fill) if raw else None
    context = {"model": inputs.model, **selector_context(service, inputs, raw, result)}
    block = "device_selector" if fill else "selector_result"
    return render(request, "recipes/selector.html", context, block=block)


def selector_context(
    service: RecipeService, inputs: ModelInputs, raw: dict[str, Any], result: SelectorResult | None
) -> dict[str, Any]:
    return {
        "selector_values": result.values if result else raw,
        "selector_answer": result,
        "hardware_choices": service.list_hardware(),
        "runtimes": service.list_runtimes(),
        "profiles": inputs.profiles,
        "custom": CUSTOM,
    }


@api_router.post("/estimate", name="api:estimate")
def estimate_api(service: RecipesDep, body: Annotated[dict[str, Any], Body()]) -> Response:
    """Estimate a model on catalog or described hardware (the selector's JSON twin)."""
    inputs = service.inputs(str(body.get("model", "")))
    result = run_selector(service, inputs, body)
    if not result.ok:
        return JSONResponse({"errors": result.errors}, status_code=422)
    assert result.recipe is not None
    return JSONResponse(estimate_out(result.recipe))
