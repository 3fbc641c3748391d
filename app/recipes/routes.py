"""Profile detail pages, the device selector and their JSON API."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse, Response

from app.catalog.service import CatalogService
from app.db import SessionDep
from app.recipes.presenters import benchmark_prefill, detail_out, record_prefill
from app.recipes.selector import run_selector
from app.recipes.service import DetailService
from app.web import render

router = APIRouter(tags=["pages"])
api_router = APIRouter(prefix="/api", tags=["recipes"])

DETAIL_PATH = "/models/{model}/hardware/{hardware}/profiles/{profile}"


@router.get(DETAIL_PATH, name="recipes:detail")
def detail_page(
    request: Request, model: str, hardware: str, profile: str, session: SessionDep
) -> Response:
    """One model on one hardware configuration under one profile."""
    detail = DetailService(session).load(model, hardware, profile)
    context = {
        "detail": detail,
        "record_prefill": record_prefill(detail),
        "benchmark_prefill": benchmark_prefill(detail),
    }
    return render(request, "recipes/detail.html", context)


@router.api_route(
    "/models/{model}/selector",
    methods=["GET", "POST"],
    name="recipes:selector",
    include_in_schema=False,
)
async def selector(request: Request, model: str, session: SessionDep) -> Response:
    """The device selector's live result (an htmx fragment, or the page on first load)."""
    form = await request.form() if request.method == "POST" else request.query_params
    catalog = CatalogService(session)
    llm = catalog.get_model(model)
    raw = dict(form)
    result = run_selector(catalog, llm, raw) if raw else None
    context = {
        "model": llm,
        "result": result,
        "raw": raw,
        "hardware": catalog.repo.list_hardware(),
        "runtimes": catalog.repo.list_runtimes(),
    }
    return render(request, "recipes/selector.html", context, block="selector_result")


@api_router.get(DETAIL_PATH, name="api:profile_detail")
def detail_api(
    request: Request, model: str, hardware: str, profile: str, session: SessionDep
) -> dict[str, Any]:
    """The detail page's content: verdict, memory, applied values, commands."""
    return detail_out(request, DetailService(session).load(model, hardware, profile))


@api_router.post("/estimate", name="api:estimate")
def estimate_api(session: SessionDep, body: Annotated[dict[str, Any], Body()]) -> Response:
    """Estimate a model on catalog or custom hardware (the device selector's JSON twin)."""
    catalog = CatalogService(session)
    llm = catalog.get_model(str(body.get("model", "")))
    result = run_selector(catalog, llm, body)
    status = 200 if result.ok else 422
    return JSONResponse(result.as_json(), status_code=status)
