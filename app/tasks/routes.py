"""The tasks API: create one, list them, read one with its prompts and checks."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from app.db import SessionDep
from app.errors import error_responses
from app.models import Task
from app.records.json_body import BodyDep, as_object, inline_refs
from app.records.schemas import ErrorsOut
from app.security import SubmitterDep
from app.tasks.schemas import TaskIn, TaskOut, TaskSummary
from app.tasks.service import get_task, list_tasks, parse_task, save_task, task_out, task_summary
from app.web import RowIdPath

api_router = APIRouter(prefix="/api", tags=["tasks"])

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
