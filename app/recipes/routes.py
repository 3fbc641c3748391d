"""Pages and JSON that render resolved recipes: a model's fit table, profile detail pages,
the device selector and the estimate API."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.accuracy.answer import class_answer
from app.asking.answer import CUSTOM, Answer
from app.asking.ask import parse_request, run_estimate
from app.asking.errors import (
    answered_status,
    error_body,
    estimate_refusal_words,
    merged,
    without_refused,
)
from app.asking.form import run_selector
from app.asking.http import DESCRIBED_RESPONSES, RecipesDep, hub_fetch_refused, inline_schema
from app.asking.load_out import profile_line
from app.asking.request import EstimateRequest
from app.catalog.presenters import model_out
from app.catalog.revision import Revisions, current_records_revision, current_revision
from app.catalog.schemas import FitFilters
from app.db import SessionDep
from app.errors import error_responses
from app.estimate import EstimateError, Verdict
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import render as say
from app.page_cache import serve_at_revision
from app.plan.fit_load import row_load_out, rows_for_load
from app.plan.options import PlanOption
from app.recipes.detail_page import TEMPLATE as DETAIL_TEMPLATE
from app.recipes.detail_page import detail_context
from app.recipes.estimate_answer import answer_out
from app.recipes.estimate_page import (
    PAGE_FIELDS,
    FormRefused,
    field_label,
    form_errors,
    page_request,
    share_query,
)
from app.recipes.load_curve import load_curve
from app.recipes.presenters import (
    detail_out,
    fit_row_out,
)
from app.recipes.schemas import EstimateOut, FitTableOut, RowLoadOut
from app.records.evidence.known_good import find_known_good, known_good_out
from app.records.evidence.safe_ceiling import load_safe_ceiling
from app.records.evidence.summary import evidence_out, load_detail_evidence
from app.resolve import FitRow, ModelInputs, RecipeService
from app.security.json_input import StrictJsonRoute
from app.security.signin import FormDep
from app.web import page_responses, render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
api_router = APIRouter(prefix="/api", tags=["recipes"], route_class=StrictJsonRoute)

DETAIL_PATH = "/models/{model}/hardware/{hardware}/profiles/{profile}"
FiltersDep = Annotated[FitFilters, Query()]


@router.get("/models/{slug}", name="catalog:model", responses=page_responses(404))
def model_page(request: Request, slug: str, recipes: RecipesDep, filters: FiltersDep) -> Response:
    """A model's hardware fit table; htmx filter requests get only the table."""
    revision, resolved = recipes.resolved(slug)

    def build() -> Response:
        inputs = resolved.inputs
        fit = resolved.fit_page(filters)
        context = {
            "model": inputs.model,
            "balanced": inputs.balanced,
            "fit": fit,
            "row_loads": row_loads(request, recipes, slug, fit.rows, filters),
            "limit_words": LIMIT_WORDS,
            "filters": filters,
            "platforms": recipes.platforms(),
            "verdicts": list(Verdict),
            "profile_line": profile_line,
            **selector_context(recipes, inputs, {}, None),
        }
        return render(request, "recipes/model.html", context, block="fit_table")

    return serve_at_revision(request, revision, build)


@api_router.get(
    "/models/{slug}/fit",
    name="api:model_fit",
    response_model=FitTableOut,
    responses=error_responses(404),
)
def model_fit(request: Request, slug: str, recipes: RecipesDep, filters: FiltersDep) -> Response:
    """The hardware fit table of a model, one row per hardware configuration (balanced),
    100 rows a page."""
    revision, resolved = recipes.resolved(slug)

    def build() -> Response:
        fit = resolved.fit_page(filters)
        loads = row_loads(request, recipes, slug, fit.rows, filters)
        rows = [fit_row_out(request, row) for row in fit.rows]
        for row in rows:
            found = loads.get(row.hardware)
            row.load = RowLoadOut.model_validate(row_load_out(found)) if found else None
        table = FitTableOut(
            model=model_out(request, resolved.inputs.model),
            filters=filters.query(),
            page=fit.page,
            pages=fit.pages,
            total=fit.total,
            rows=rows,
        )
        return JSONResponse(jsonable_encoder(table))

    return serve_at_revision(request, revision, build)


LIMIT_WORDS = {
    "memory": _l("memory"),
    "decode": _l("decode speed"),
    "ttft": _l("first token"),
}


def row_loads(
    request: Request, recipes: RecipeService, slug: str, rows: list[FitRow], filters: FitFilters
) -> dict[str, PlanOption]:
    """With the load filter, each listed row's plan for that load, by hardware slug."""
    if filters.load is None:
        return {}
    hardware = [row.hardware.slug for row in rows]
    settings = request.app.state.settings
    return rows_for_load(recipes, settings, slug, hardware, filters.load)


@router.get(DETAIL_PATH, name="recipes:detail", responses=page_responses(404))
def detail_page(
    request: Request,
    model: str,
    hardware: str,
    profile: str,
    session: SessionDep,
    recipes: RecipesDep,
) -> Response:
    """One model on one hardware configuration under one profile."""
    records_at = current_records_revision(session)  # first: the page lists records
    revision, resolved = recipes.resolved(model)
    recipe = resolved.recipe(hardware, profile)

    def build() -> Response:
        context = detail_context(session, resolved, recipe, Revisions(revision, records_at))
        return render(request, DETAIL_TEMPLATE, context)

    return serve_at_revision(request, revision, build, records=records_at)


@api_router.get(
    DETAIL_PATH,
    name="api:profile_detail",
    response_model=dict[str, Any],
    responses=error_responses(404),
)
def detail_api(
    request: Request,
    model: str,
    hardware: str,
    profile: str,
    session: SessionDep,
    recipes: RecipesDep,
    price_per_gpu_hour: Annotated[
        float | None,
        Query(gt=0, le=1e6, description="a price per GPU-hour, to cost the curve's points"),
    ] = None,
) -> Response:
    """The detail page's content: verdict, memory, applied values, commands, records, the
    known-good configuration (the working record accepted last, or null) and the load
    curve (each request's decode against the total throughput, estimated and measured)."""
    records_at = current_records_revision(session)  # first: the answer lists records
    revision, resolved = recipes.resolved(model)
    recipe = resolved.recipe(hardware, profile)

    def build() -> Response:
        records = load_detail_evidence(session, recipe, Revisions(revision, records_at))
        good = find_known_good(session, recipe.model, recipe.hardware, recipe.profile, revision)
        out = detail_out(request, recipe, evidence_out(request, recipe, records))
        curve = load_curve(recipe, records.summary, price_per_gpu_hour)
        ceiling = load_safe_ceiling(session, recipe.model.id, recipe.hardware.id, recipe.profile.id)
        safe = ceiling.as_json(recipe.max_context) if ceiling else None
        return JSONResponse(
            {
                **out,
                "known_good": known_good_out(request, good),
                "load_curve": curve,
                "safe_context": safe,
            }
        )

    return serve_at_revision(request, revision, build, records=records_at)


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
    service: RecipeService, inputs: ModelInputs, raw: dict[str, Any], result: Answer | None
) -> dict[str, Any]:
    return {
        "selector_values": result.values if result else raw,
        "selector_answer": result,
        "hardware_choices": service.list_hardware(),
        "runtimes": service.list_runtimes(),
        "profiles": inputs.profiles,
        "custom": CUSTOM,
    }


@api_router.post(
    "/estimate",
    name="api:estimate",
    response_model=EstimateOut,
    responses=DESCRIBED_RESPONSES,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(EstimateRequest)}},
        }
    },
)
def estimate_api(
    request: Request, service: RecipesDep, body: Annotated[dict[str, Any], Body()]
) -> Response:
    """Estimate a catalog or described model on catalog, named or described hardware: the
    recipe's shape (verdict, memory per GPU, largest context, decode speed, assumptions)."""
    parsed = parse_request(body)
    if isinstance(parsed, dict):
        errors = merged(parsed, also_wrong(request, service, body, parsed))
        return JSONResponse(error_body(errors), status_code=answered_status(errors))
    refused = hub_fetch_refused(request, parsed)
    if refused:  # a well-formed request this server will not carry out for a remote caller
        return JSONResponse(error_body(refused), status_code=403)
    answer = run_estimate(service, parsed, request.app.state.settings)
    result = answer.result
    if not result.ok:
        status = answered_status(result.errors, answer.status)
        return JSONResponse(error_body(result.errors), status_code=status)
    assert result.recipe is not None
    return JSONResponse(answer_out(answer, parsed.concurrency))


def also_wrong(
    request: Request, service: RecipeService, body: dict[str, Any], errors: dict[str, str]
) -> dict[str, str]:
    """What else the request gets wrong once its refused fields are left out: every field
    at fault is named in one answer."""
    rest = without_refused(body, errors)
    if rest is None:
        return {}
    parsed = parse_request(rest)
    if isinstance(parsed, dict) or hub_fetch_refused(request, parsed):
        return {}
    result = run_estimate(service, parsed, request.app.state.settings).result
    return result.errors if not result.ok else {}


@router.get("/estimate", name="recipes:estimate")
def estimate_page(request: Request, service: RecipesDep) -> Response:
    """Estimate a model that may not be in the catalog; the URL reproduces the answer. The
    empty form changes only with the catalog, and is kept like a recipe page."""
    # Only the form's fields ask: the language switch (?lang=) or a stray parameter alone
    # asks nothing.
    query = {k: v for k, v in request.query_params.items() if k in PAGE_FIELDS}
    if any(query.values()):
        return estimate_response(request, service, query)
    revision = current_revision(service.catalog.session)  # first: the form lists the catalog
    return serve_at_revision(
        request, revision, lambda: estimate_response(request, service, query), reads=PAGE_FIELDS
    )


def estimate_response(request: Request, service: RecipeService, query: dict[str, str]) -> Response:
    """The page with its answer (or errors) for `query`, or the empty form."""
    context: dict[str, Any] = {
        "values": query,
        "hardware_choices": service.list_hardware(),
        "runtimes": service.list_runtimes(),
        "catalog_models": service.catalog.list_models(),
        "errors": {},
        "answer": None,
        "share_url": None,
        "field_label": field_label,
    }
    if any(query.values()):
        context |= estimate_page_answer(request, service, query)
        if context["errors"]:
            context["errors"] = form_errors(query, context["errors"])
    status = 422 if context["errors"] else 200
    return render(request, "recipes/estimate.html", context, status_code=status)


def estimate_page_answer(
    request: Request, service: RecipesDep, query: dict[str, str]
) -> dict[str, Any]:
    """The page's answer: the API's own shape, or its errors by field."""
    try:
        body, description = page_request(query)
    except EstimateError as error:
        words = say(error.said) if isinstance(error, FormRefused) else estimate_refusal_words(error)
        return {"errors": {f"model.{error.field}": words}}
    parsed = parse_request(body)
    if isinstance(parsed, dict):
        return {"errors": parsed}
    refused = hub_fetch_refused(request, parsed)
    if refused:
        return {"errors": refused}
    answer = run_estimate(service, parsed, request.app.state.settings, description)
    if not answer.result.ok:
        return {"errors": answer.result.errors}
    assert answer.result.recipe is not None
    out = answer_out(answer, parsed.concurrency)
    share = share_query(query, answer.description)
    coverage = out.get("coverage") or {}
    said = class_answer(service.catalog.session, coverage["segment"]) if coverage else None
    return {
        "answer": out,
        "share_url": f"{request.url_for('recipes:estimate')}?{share}",
        "accuracy_answer": said,
        "accuracy_class": coverage.get("segment"),
    }
