"""`POST /api/plan` and the `/plan` page: one plan, its JSON or its page."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import ValidationError

from app.asking.errors import answered_status, dotted_errors, error_body, merged, without_refused
from app.asking.http import DESCRIBED_RESPONSES, RecipesDep, hub_fetch_refused, inline_schema
from app.plan.form import PAGE_FIELDS, field_label, page_body
from app.plan.options import MEETS_RULE
from app.plan.presenters import plan_out
from app.plan.schemas import PlanOut, PlanRequest
from app.plan.service import PlanRefused, plan_load
from app.security.json_input import StrictJsonRoute
from app.web import is_htmx, render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
api_router = APIRouter(prefix="/api", tags=["recipes"], route_class=StrictJsonRoute)


def answer(
    request: Request, service: RecipesDep, body: dict[str, Any]
) -> tuple[dict[str, Any] | None, dict[str, str], int]:
    """The plan's JSON, or the errors by field and the status they answer (422; 403 for a
    Hub fetch this server will not make; the Hub's own answer for a repository)."""
    try:
        parsed = PlanRequest.model_validate(body)
    except ValidationError as error:
        errors = dotted_errors(error)
        return None, merged(errors, also_wrong(request, service, body, errors)), 422
    refused = hub_fetch_refused(request, parsed)  # type: ignore[arg-type]
    if refused:
        return None, refused, 403
    try:
        plan = plan_load(service, parsed, request.app.state.settings)
    except PlanRefused as refusal:
        return None, refusal.errors, refusal.status
    return plan_out(plan), {}, 200


def also_wrong(
    request: Request, service: RecipesDep, body: dict[str, Any], errors: dict[str, str]
) -> dict[str, str]:
    """What else the request gets wrong once its refused fields are left out: every field
    at fault is named in one answer (an unknown GPU beside a negative price)."""
    rest = without_refused(body, errors)
    if rest is None:
        return {}
    try:
        parsed = PlanRequest.model_validate(rest)
    except ValidationError:
        return {}
    if hub_fetch_refused(request, parsed):  # type: ignore[arg-type]
        return {}
    try:
        plan_load(service, parsed, request.app.state.settings)
    except PlanRefused as refusal:
        return refusal.errors
    return {}


@api_router.post(
    "/plan",
    name="api:plan",
    response_model=PlanOut,
    responses=DESCRIBED_RESPONSES,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(PlanRequest)}},
        }
    },
)
def plan_api(
    request: Request, service: RecipesDep, body: Annotated[dict[str, Any], Body()]
) -> Response:
    """The hardware that serves `users` concurrent requests at the speed and first-token
    targets: replicas, profile, figures at that load, cost and command, by cost (by GPUs
    without prices); `cheapest` and `smallest` index the options that meet the load."""
    out, errors, status = answer(request, service, body)
    if errors:
        return JSONResponse(error_body(errors), status_code=answered_status(errors, status))
    return JSONResponse(out)


@router.get("/plan", name="plan:page")
def plan_page(request: Request, service: RecipesDep) -> Response:
    """The plan's form and, once asked, its options; the URL reproduces the answer."""
    query = {k: v for k, v in request.query_params.items() if k in PAGE_FIELDS}
    asked = {k: v for k, v in query.items() if v}
    chosen = request.query_params.getlist("hardware")
    context: dict[str, Any] = {
        "values": query,
        "chosen_hardware": chosen,
        "catalog_models": service.catalog.list_models(),
        "hardware_choices": service.list_hardware(),
        "errors": {},
        "plan": None,
        "field_label": field_label,
        "meets_rule": MEETS_RULE(),
        # The plan's JSON names a profile and a runtime by slug; the page by their names.
        "profiles": {p.slug: p for p in service.catalog.list_profiles()},
        "runtime_names": {r.slug: r.name for r in service.list_runtimes()},
    }
    if asked:
        body, errors = page_body(request.query_params)
        if not errors:
            context["plan"], errors, _ = answer(request, service, body)
        context["errors"] = errors
    # htmx swaps only a 2xx answer: its fragment says what to fix with a 200.
    status = 422 if context["errors"] and not is_htmx(request) else 200
    return render(request, "plan/plan.html", context, block="plan_result", status_code=status)
