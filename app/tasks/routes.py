"""Tasks: create one, list them, read one with its prompts and checks, and every record
that ran it (a page and its JSON), with two of them compared."""

import math
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.db import SessionDep
from app.errors import error_responses
from app.models import Task
from app.records.endpoints.json_body import BodyDep, as_object, inline_refs
from app.records.schemas import ErrorsOut
from app.security import SubmitterDep
from app.tasks.results import as_json, parse_compare, task_results
from app.tasks.schemas import TaskIn, TaskOut, TaskSummary
from app.tasks.service import get_task, list_tasks, parse_task, save_task, task_out, task_summary
from app.web import PRICE_COOKIE, RowIdPath, page_responses, render

api_router = APIRouter(prefix="/api", tags=["tasks"])
router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)

PriceQuery = Annotated[
    float | None,
    Query(gt=0, le=1e6, description="a price per GPU-hour, to cost each solved task"),
]
CompareQuery = Annotated[
    list[str] | None,
    Query(description="two record ids that ran the task, e.g. 12,15", max_length=2),
]

TASK_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": inline_refs(TaskIn.model_json_schema())}},
    }
}


@api_router.post(
    "/tasks",
    name="api:tasks_create",
    status_code=201,
    response_model=TaskOut,
    openapi_extra=TASK_BODY,
    responses={
        200: {"model": TaskOut, "description": "the same prompts are stored: that task"},
        **error_responses(401, 403, 409, 413, 415),
        422: {"model": ErrorsOut, "description": "every field error at once"},
    },
)
def create_api(
    request: Request, session: SessionDep, principal: SubmitterDep, body: BodyDep
) -> Response:
    """Store a task (201), or answer the stored one with the same prompts (200)."""
    data = parse_task(as_object(body))
    task, created = save_task(session, data, principal.name)
    payload = TaskOut.model_validate(task_out(task, task_url(request, task)))
    body = payload.model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=201 if created else 200)


@api_router.get("/tasks", name="api:tasks_list", response_model=list[TaskSummary])
def list_api(request: Request, session: SessionDep) -> list[dict[str, Any]]:
    """Every task, newest version of each name first."""
    return [task_summary(task, task_url(request, task)) for task in list_tasks(session)]


@api_router.get(
    "/tasks/{task_id}",
    name="api:tasks_detail",
    response_model=TaskOut,
    response_model_exclude_none=True,
    responses=error_responses(404),
)
def detail_api(request: Request, task_id: RowIdPath, session: SessionDep) -> dict[str, Any]:
    """One task with its prompts and checks."""
    task = get_task(session, task_id)
    return task_out(task, task_url(request, task))


def task_url(request: Request, task: Task) -> str:
    return str(request.url_for("api:tasks_detail", task_id=task.id))


@api_router.get(
    "/tasks/{task_id}/results",
    name="api:task_results",
    response_model=dict[str, Any],
    responses={**error_responses(404), 422: {"model": ErrorsOut, "description": "bad compare"}},
)
def results_api(
    task_id: RowIdPath,
    session: SessionDep,
    price_per_gpu_hour: PriceQuery = None,
    compare: CompareQuery = None,
) -> dict[str, Any]:
    """Every record that ran the task: pass rate with its 95 % Wilson band, speed, time and
    date, and the cost per solved task at `price_per_gpu_hour`. `compare=A,B` adds Fisher's
    exact test of the two pass rates and the prompts each would need to tell them apart."""
    task = get_task(session, task_id)
    pair = parse_compare(compare)
    return as_json(task_results(session, task, price_per_gpu_hour, pair))


def cookie_price(request: Request) -> float | None:
    """The price kept in the reader's cookie, when it is a positive number."""
    try:
        price = float(request.cookies.get(PRICE_COOKIE, ""))
    except ValueError:
        return None
    return price if math.isfinite(price) and 0 < price <= 1e6 else None


@router.get("/tasks/{task_id}", name="tasks:results", responses=page_responses(404, 422))
def results_page(
    request: Request, task_id: RowIdPath, session: SessionDep, compare: CompareQuery = None
) -> Response:
    """A task's results across models and hardware; pick two records to compare them."""
    task = get_task(session, task_id)
    pair = parse_compare(compare)
    price = cookie_price(request)
    context = {
        "task": task,
        "results": task_results(session, task, price, pair, higher_first=True),
        "compare": pair,
        "price": price,
    }
    return render(request, "tasks/results.html", context)
