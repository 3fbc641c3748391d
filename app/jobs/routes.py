"""The "Run a benchmark" page, job status (polled by htmx) and the jobs API."""

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.catalog.choices import form_choices
from app.db import SessionDep
from app.errors import FIELDS_CONFLICT, error_responses
from app.jobs.kinds import kind_of
from app.jobs.schemas import JobIn, JobListOut, JobOut
from app.jobs.service import JobInvalid, enqueue, get_job, job_out, jobs_page, parse_job
from app.pagination import CursorQuery, LimitQuery, next_url
from app.records.endpoints.json_body import BodyDep, as_object, inline_refs
from app.records.schemas import ErrorsOut
from app.security import SubmitterDep, verify_csrf
from app.tasks.service import list_tasks
from app.web import RowIdPath, page_responses, redirect, render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
api_router = APIRouter(prefix="/api", tags=["benchmarks"])

JOBS_PER_PAGE = 20

PREFILL = (
    "model",
    "hardware",
    "artifact",
    "runtime",
    "profile",
    "base_url",
    "served_model",
    "runtime_version",
    "command",
    "task_id",
)


def page_context(
    request: Request,
    session,
    values: dict[str, Any],  # noqa: ANN001
    errors: dict[str, str],
    cursor: str | None = None,
    limit: int = JOBS_PER_PAGE,
) -> dict[str, Any]:
    choices = form_choices(
        session, values.get("model"), values.get("artifact"), values.get("runtime"), keep=True
    )
    jobs = jobs_page(session, cursor, limit)
    return {
        "values": values,
        "errors": errors,
        "jobs": jobs.items,
        "older_url": next_url(request, "benchmarks:index", jobs, {}, limit),
        "newest_url": request.url_for("benchmarks:index") if cursor else None,
        "choices": choices,
        "models": choices.models,
        "hardware": choices.hardware,
        "runtimes": choices.runtimes,
        "profiles": choices.profiles,
        "tasks": list_tasks(session),
        "defaults": JobIn.model_fields,
    }


def remember_key(request: Request, job_id: int, data: JobIn) -> None:
    # The in-process worker reads keys from memory; they are never written anywhere.
    if data.api_key is not None:
        request.app.state.bench_api_keys[job_id] = data.api_key.get_secret_value()


@router.get("/benchmarks", name="benchmarks:index", responses=page_responses(400))
def index(
    request: Request,
    session: SessionDep,
    cursor: CursorQuery = None,
    limit: LimitQuery = JOBS_PER_PAGE,
) -> Response:
    """Run a benchmark: the form, pre-filled from a detail page, and jobs a page at a time."""
    values = {k: v for k, v in request.query_params.items() if k in PREFILL}
    models = form_choices(session).models
    if not values.get("model") and models:  # opened from the menu: start on the first model
        values["model"] = models[0].slug
    context = page_context(request, session, values, {}, cursor, limit)
    return render(request, "benchmarks/index.html", context)


@router.post(
    "/benchmarks",
    name="benchmarks:create",
    dependencies=[Depends(verify_csrf)],
    responses=page_responses(303, 401, 403, 413),
)
async def create(request: Request, session: SessionDep, principal: SubmitterDep) -> Response:
    """Queue a job; invalid input re-renders the form with every error beside its field."""
    submitted = dict(await request.form())
    submitted.pop("csrf_token", None)
    # A blank field means "use the default", as its placeholder shows.
    form: dict[str, Any] = {k: v for k, v in submitted.items() if v != ""}
    form["needle"] = form.get("needle") in ("on", "true", "1")
    form["tool_calls"] = form.get("tool_calls") in ("on", "true", "1")
    # The grid's select says true or false; anything else is refused beside it.
    grid = form.get("needle_grid")
    if grid in ("true", "false"):
        form["needle_grid"] = grid == "true"
    try:
        data = parse_job(form)
        job = enqueue(session, data, request.state.settings, principal.name)
    except JobInvalid as error:
        errors = {e.field.split(".")[0]: e.text() for e in error.errors}
        form.pop("api_key", None)
        context = page_context(request, session, form, errors)
        return render(request, "benchmarks/index.html", context, block="job_form")
    remember_key(request, job.id, data)
    return redirect(request, str(request.url_for("benchmarks:detail", job_id=job.id)))


@router.get("/benchmarks/{job_id}", name="benchmarks:detail", responses=page_responses(404))
def detail(request: Request, job_id: RowIdPath, session: SessionDep) -> Response:
    """A job's live progress; htmx polls the status block until the job is done."""
    job = get_job(session, job_id)
    page = kind_of(job).page  # a kind whose own page gives the job's account
    if page is not None:
        return redirect(request, str(request.url_for(page, job_id=job.id)))
    return render(request, "benchmarks/detail.html", {"job": job}, block="job_status")


JOB_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": inline_refs(JobIn.model_json_schema())}},
    }
}


@api_router.post(
    "/benchmarks",
    name="api:benchmarks_create",
    status_code=202,
    response_model=JobOut,
    openapi_extra=JOB_BODY,
    responses={
        **error_responses(401, 403, 413, 415),
        404: {"model": ErrorsOut, "description": "a valid job whose `task_id` is not stored"},
        409: {"model": ErrorsOut, "description": FIELDS_CONFLICT},
        422: {"model": ErrorsOut, "description": "every field error at once"},
    },
)
def create_api(
    request: Request, session: SessionDep, principal: SubmitterDep, body: BodyDep
) -> Response:
    """Queue a benchmark job; answers 202 with its id and status URL, 404 naming `task_id`
    for a task not stored, or 422 with every error."""
    try:
        data = parse_job(as_object(body))
        job = enqueue(session, data, request.state.settings, principal.name)
    except JobInvalid as error:
        body = {"errors": [e.model_dump(exclude_none=True) for e in error.errors]}
        return JSONResponse(body, status_code=error.status_code)
    remember_key(request, job.id, data)
    return JSONResponse(api_job(request, job), status_code=202)


@api_router.get(
    "/benchmarks",
    name="api:benchmarks_list",
    response_model=JobListOut,
    responses=error_responses(400),
)
def list_api(
    request: Request,
    session: SessionDep,
    cursor: CursorQuery = None,
    limit: LimitQuery = JOBS_PER_PAGE,
) -> dict[str, Any]:
    """Jobs, newest first, a page at a time; follow `next` for older ones."""
    page = jobs_page(session, cursor, limit)
    return {
        "count": len(page.items),
        "limit": limit,
        "next": next_url(request, "api:benchmarks_list", page, {}, limit),
        "jobs": [api_job(request, job) for job in page.items],
    }


@api_router.get(
    "/benchmarks/{job_id}",
    name="api:benchmarks_detail",
    response_model=JobOut,
    responses=error_responses(404),
)
def detail_api(request: Request, job_id: RowIdPath, session: SessionDep) -> dict[str, Any]:
    """A job's status, progress and, once done, its record."""
    return api_job(request, get_job(session, job_id))


def api_job(request: Request, job) -> dict[str, Any]:  # noqa: ANN001
    url = str(request.url_for("api:benchmarks_detail", job_id=job.id))
    record_url = (
        str(request.url_for("records:detail", record_id=job.record_id)) if job.record_id else None
    )
    return job_out(job, url, record_url)
