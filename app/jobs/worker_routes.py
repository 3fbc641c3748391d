"""The API remote benchmark workers use: claim a job, renew its lease (with progress),
post its result or its failure. Only worker tokens may call it (anyone, on loopback)."""

from datetime import timedelta
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from app.db import SessionDep
from app.errors import ERROR_DESCRIPTIONS, FIELDS_CONFLICT, ErrorOut, error_responses
from app.jobs.leases import claim_job, fail_job, finish_job, lost, renew_lease
from app.jobs.worker_schemas import (
    ClaimIn,
    ClaimOut,
    FailIn,
    FailOut,
    RenewIn,
    RenewOut,
    ResultIn,
    ResultOut,
)
from app.records.endpoints.json_body import BodyDep, as_object, inline_refs
from app.records.schemas import ErrorsOut
from app.records.storage.validation import RecordInvalid, schema_errors
from app.security import WorkerDep
from app.security.json_input_schema import state_integer_range
from app.web import RowIdPath

api_router = APIRouter(prefix="/api/worker", tags=["workers"])
Body = TypeVar("Body", bound=BaseModel)
REFUSALS = {
    **error_responses(401, 403, 413, 415),
    422: {"model": ErrorsOut, "description": "every field error at once"},
}
HELD_REFUSALS = {
    **REFUSALS,
    **error_responses(404),
    409: {
        "model": ErrorOut | ErrorsOut,
        "description": f"{ERROR_DESCRIPTIONS[409]} (the job's lease, server or model); or "
        f"{FIELDS_CONFLICT}",
    },
}


def parse(model: type[Body], body: Any) -> Body:
    """The body as `model`, every object in it holding only the fields its model names: a
    worker's result is one this server reads in full, or a 422 naming the field it lacks
    (a result file read elsewhere keeps ignoring fields it does not know)."""
    try:
        return model.model_validate(as_object(body), extra="forbid")
    except ValidationError as error:
        raise RecordInvalid(schema_errors(error)) from error


def body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """The request body as `parse` reads it: objects closed, integers 64-bit."""
    schema = inline_refs(model.model_json_schema())
    close_objects(schema)
    state_integer_range(schema)
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def close_objects(node: Any) -> None:
    """Every object schema under `node` that names its fields allows no others."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            node.setdefault("additionalProperties", False)
        for value in node.values():
            close_objects(value)
    elif isinstance(node, list):
        for value in node:
            close_objects(value)


@api_router.post(
    "/claim",
    name="api:worker_claim",
    response_model=ClaimOut,
    openapi_extra=body_doc(ClaimIn),
    responses={204: {"description": "no job for this worker now"}, **REFUSALS},
)
def claim(session: SessionDep, _principal: WorkerDep, body: BodyDep) -> Response:
    """Claim the oldest queued (or abandoned) job this worker may take, under a lease."""
    data = parse(ClaimIn, body)
    lease = timedelta(seconds=data.lease_s)
    held = claim_job(session, data.worker, data.label, lease)
    if held is None:
        return Response(status_code=204)
    out = ClaimOut(lease_s=data.lease_s, **held.__dict__)
    return JSONResponse(out.model_dump(mode="json"))


@api_router.post(
    "/jobs/{job_id}/lease",
    name="api:worker_renew",
    response_model=RenewOut,
    openapi_extra=body_doc(RenewIn),
    responses=HELD_REFUSALS,
)
def renew(job_id: RowIdPath, session: SessionDep, _principal: WorkerDep, body: BodyDep) -> Any:
    """Extend the lease, noting progress for the job page; 409 once the job was taken over."""
    data = parse(RenewIn, body)
    progress = data.progress.model_dump() if data.progress else None
    lease = timedelta(seconds=data.lease_s)
    expires = renew_lease(session, job_id, data.lease_token, lease, progress)
    if expires is None:
        raise lost(session, job_id)
    return RenewOut(job_id=job_id, lease_expires_at=expires)


@api_router.post(
    "/jobs/{job_id}/result",
    name="api:worker_result",
    status_code=201,
    response_model=ResultOut,
    openapi_extra=body_doc(ResultIn),
    responses={
        200: {"model": ResultOut, "description": "already stored"},
        202: {"model": ResultOut, "description": "a regression to confirm: queued again"},
        **HELD_REFUSALS,
    },
)
def result(
    request: Request, job_id: RowIdPath, session: SessionDep, _principal: WorkerDep, body: BodyDep
) -> Response:
    """Store the result as a pending record and mark the job succeeded. Posting the same
    claim's result again answers 200 with the record already stored. A re-check whose first
    run found a regression answers 202: the job is queued for a second run, which stores
    the record, as `servebook sentinel` confirms one."""
    data = parse(ResultIn, body)
    finished = finish_job(session, job_id, data.lease_token, data.result, outcome_path="result")
    if finished.record_id is None:
        queued = ResultOut(
            job_id=job_id, record_id=None, record_url=None, created=False, confirming=True
        )
        return JSONResponse(queued.model_dump(mode="json"), status_code=202)
    url = str(request.url_for("records:detail", record_id=finished.record_id))
    out = ResultOut(
        job_id=job_id, record_id=finished.record_id, record_url=url, created=finished.created
    )
    return JSONResponse(out.model_dump(mode="json"), status_code=201 if finished.created else 200)


@api_router.post(
    "/jobs/{job_id}/fail",
    name="api:worker_fail",
    response_model=FailOut,
    openapi_extra=body_doc(FailIn),
    responses=HELD_REFUSALS,
)
def fail(job_id: RowIdPath, session: SessionDep, _principal: WorkerDep, body: BodyDep) -> Any:
    """Mark the job failed with the worker's reason; no record is stored."""
    data = parse(FailIn, body)
    if not fail_job(session, job_id, data.lease_token, data.error):
        raise lost(session, job_id)
    return FailOut(job_id=job_id, status="failed")
