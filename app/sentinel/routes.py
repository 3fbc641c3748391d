"""Queue a re-check of a known-good record on a new runtime version: from the known-good
block (a form) or the API."""

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.db import SessionDep
from app.errors import FIELDS_CONFLICT, error_responses
from app.jobs.routes import api_job
from app.jobs.service import JobInvalid
from app.records.endpoints.json_body import BodyDep, as_object, inline_refs
from app.records.schemas import ErrorsOut
from app.security import SubmitterDep, verify_csrf
from app.sentinel.jobs import RecheckIn, enqueue_recheck
from app.web import RowIdPath, page_responses, redirect

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)
api_router = APIRouter(prefix="/api", tags=["benchmarks"])


@router.post(
    "/records/{record_id}/recheck",
    name="sentinel:recheck",
    dependencies=[Depends(verify_csrf)],
    responses=page_responses(303, 401, 403, 404, 409, 413, 422),
)
async def recheck(
    request: Request, record_id: RowIdPath, session: SessionDep, principal: SubmitterDep
) -> Response:
    """Queue the record's plan against the server named in the form; on to the job's page."""
    form = {k: v for k, v in (await request.form()).items() if k != "csrf_token" and v != ""}
    job = enqueue_recheck(session, record_id, form, request.state.settings, principal.name)
    return redirect(request, str(request.url_for("benchmarks:detail", job_id=job.id)))


RECHECK_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": inline_refs(RecheckIn.model_json_schema())}},
    }
}


@api_router.post(
    "/records/{record_id}/recheck",
    name="api:records_recheck",
    status_code=202,
    openapi_extra=RECHECK_BODY,
    responses={
        **error_responses(401, 403, 404, 413, 415),
        409: {
            "model": ErrorsOut,
            "description": "the record keeps no plan, or no served model's name and none "
            f"given; or {FIELDS_CONFLICT}",
        },
        422: {"model": ErrorsOut, "description": "every field error at once"},
    },
)
def recheck_api(
    request: Request,
    record_id: RowIdPath,
    session: SessionDep,
    principal: SubmitterDep,
    body: BodyDep,
) -> Response:
    """Queue a sentinel run of the record's plan against `base_url`; answers 202 with the job."""
    try:
        job = enqueue_recheck(
            session, record_id, as_object(body), request.state.settings, principal.name
        )
    except JobInvalid as error:
        errors: dict[str, Any] = {"errors": [e.model_dump(exclude_none=True) for e in error.errors]}
        return JSONResponse(errors, status_code=error.status_code)
    return JSONResponse(api_job(request, job), status_code=202)
