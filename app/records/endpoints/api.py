"""Reproduction records: the JSON API (submit, list, export, compare, read, review)."""

from typing import Annotated, Any, Literal

from anyio import to_thread
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from app.db import SessionDep, request_unit_of_work
from app.errors import FIELDS_CONFLICT, error_responses
from app.i18n.catalogs import current_locale
from app.models import Record
from app.pagination import DEFAULT_LIMIT, CursorQuery, LimitQuery, next_url
from app.records.comparison.compare import compare_records, comparison_out
from app.records.endpoints.filters import FiltersDep
from app.records.endpoints.ingest import ingest_record, review_committed
from app.records.endpoints.json_body import BodyDep, as_object, inline_refs, parse_json_body
from app.records.endpoints.pages import RecordPages
from app.records.endpoints.responses import (
    AcceptanceOut,
    ConflictOut,
    RecordExportOut,
    RecordListOut,
    RecordOut,
)
from app.records.endpoints.submission_process import SubmissionProcess, submitted
from app.records.evidence.quality_gate import quality_drop_for
from app.records.export import CSV_DOC, EXPORT_LIMIT, export_response, record_out, record_url
from app.records.review.consequences import Consequence, acceptance_consequences
from app.records.review.steps import needs_confirmation
from app.records.schemas import (
    ErrorsOut,
    RecordCreated,
    RecordIn,
    ReviewIn,
)
from app.records.storage.service import IdempotencyConflict, get_record
from app.records.storage.validation import RecordInvalid
from app.security import MaintainerDep
from app.security.exposure import app_is_exposed
from app.security.principal import require_submitter
from app.web import RowIdPath, RowIdQuery

api_router = APIRouter(prefix="/api", tags=["records"])


def errors_response(invalid: RecordInvalid) -> JSONResponse:
    """Every field at fault: 422, or 409 where they only contradict each other or the
    catalog."""
    body = {"errors": [e.model_dump(exclude_none=True) for e in invalid.errors]}
    return JSONResponse(body, status_code=invalid.status_code)


RECORD_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": inline_refs(RecordIn.model_json_schema())}},
    }
}


@api_router.post(
    "/records",
    name="api:records_create",
    status_code=201,
    response_model=RecordCreated,
    openapi_extra=RECORD_BODY,
    responses={
        200: {
            "model": RecordCreated,
            "description": "a retry with the same "
            "Idempotency-Key: the first record, nothing new stored",
        },
        409: {
            "model": ConflictOut | ErrorsOut,
            "description": "the Idempotency-Key was used with a different body (`detail`, "
            f"`record_id`); or {FIELDS_CONFLICT}",
        },
        **error_responses(401, 403, 413, 415),
        422: {"model": ErrorsOut, "description": "every field error at once"},
    },
)
async def create_api(request: Request) -> Response:
    """Submit a record as JSON. Send an `Idempotency-Key` header to make retries safe."""
    # The whole unit of work (who asks, the body, the write) in one trip to a worker thread:
    # a trip costs more CPU than reading the record, and dependencies would take three.
    # A few at a time (app.main): the rest wait here, in the event loop, at no cost.
    body = await request.body()
    elsewhere: SubmissionProcess | None = request.state.submission_process
    if elsewhere is not None:
        asked = submitted(request, body, app_is_exposed(request.app), current_locale())
        answered = await elsewhere.answer(asked)
        if answered is not None:
            status, headers, content = answered
            response = Response(content, status_code=status)
            response.raw_headers = headers
            return response
    return await to_thread.run_sync(
        submit_api, request, body, limiter=request.state.submissions_at_once
    )


def submit_api(request: Request, body: bytes) -> Response:
    """As the dependencies would: the caller is checked before the body is parsed."""
    with request_unit_of_work(request, writes=True) as session:
        principal = require_submitter(request, session)
        raw = as_object(parse_json_body(request, body))
        key = request.headers.get("idempotency-key") or None
        try:
            submission = ingest_record(
                session, raw, provenance="api", submitted_by=principal.name, idempotency_key=key
            )
        except RecordInvalid as invalid:
            return errors_response(invalid)
        except IdempotencyConflict as conflict:
            return JSONResponse(
                {"detail": conflict.message, "record_id": conflict.record_id}, status_code=409
            )
    record = submission.record
    out = RecordCreated(
        id=record.id,
        review_state=record.review_state,  # type: ignore[arg-type]
        url=record_url(request, record.id),
        flags=record.flags,
    )
    # pydantic-core writes the JSON itself, rather than a dict for json.dumps to walk.
    return Response(
        out.model_dump_json(),
        status_code=201 if submission.created else 200,
        media_type="application/json",
    )


@api_router.get(
    "/records",
    name="api:records_list",
    description=CSV_DOC,
    response_model=RecordListOut,
    responses={
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        **error_responses(400),
    },
)
def list_api(
    request: Request,
    session: SessionDep,
    filters: FiltersDep,
    format: Literal["json", "csv"] | None = None,
    cursor: CursorQuery = None,
    limit: LimitQuery = DEFAULT_LIMIT,
) -> Response:
    """Records filtered by model, hardware and review state: JSON a page at a time, newest
    first (follow `next`), or CSV of every match, streamed."""
    wants_csv = format == "csv" or (
        format is None and "text/csv" in request.headers.get("accept", "")
    )
    if wants_csv:
        return export_response(request, "csv", filters.model, filters.hardware, filters.state)
    page = RecordPages(session).page(filters.model, filters.hardware, filters.state, cursor, limit)
    where = filters.model_dump(mode="json", exclude_none=True)
    return JSONResponse(
        {
            "count": len(page.items),
            "limit": limit,
            "next": next_url(request, "api:records_list", page, where, limit),
            "records": [record_out(request, r) for r in page.items],
        }
    )


@api_router.get(
    "/records/export",
    name="api:records_export",
    description=CSV_DOC,
    response_model=RecordExportOut,
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
)
def export_api(
    request: Request,
    filters: FiltersDep,
    format: Literal["json", "csv"] = "json",
    before: Annotated[
        int | None,
        Query(ge=1, le=2**63 - 1, description="the records older than this id (from `next`)"),
    ] = None,
    limit: Annotated[
        int,
        Query(ge=1, le=EXPORT_LIMIT, description=f"records per page, at most {EXPORT_LIMIT:,}"),
    ] = EXPORT_LIMIT,
) -> Response:
    """The records that match the filters, newest first, streamed as JSON or CSV, at most
    10,000 a response: when more match, the `Link` header (rel="next") and JSON's `next`
    give the next page."""
    return export_response(
        request, format, filters.model, filters.hardware, filters.state, before, limit
    )


@api_router.get("/records/compare", name="api:records_compare", responses=error_responses(404))
def compare_api(
    request: Request, session: SessionDep, a: RowIdQuery, b: RowIdQuery
) -> dict[str, Any]:
    """What differs from record `a` to record `b`: each setting changed (command flags read
    per runtime, applied values, runtime version, environment), counted once, and what the
    figures did, each change with its noise band."""
    comparison = compare_records(get_record(session, a), get_record(session, b))
    urls = {
        r.id: str(request.url_for("records:detail", record_id=r.id))
        for r in (comparison.a, comparison.b)
    }
    return comparison_out(comparison, urls)


@api_router.get(
    "/records/{record_id}",
    name="api:records_get",
    response_model=RecordOut,
    responses=error_responses(404),
)
def get_api(request: Request, record_id: RowIdPath, session: SessionDep) -> dict[str, Any]:
    """One record with its measurements, flags and history."""
    return record_out(request, get_record(session, record_id))


@api_router.get(
    "/records/{record_id}/acceptance",
    name="api:records_acceptance",
    response_model=AcceptanceOut,
    responses=error_responses(404),
)
def acceptance_api(request: Request, record_id: RowIdPath, session: SessionDep) -> dict[str, Any]:
    """What accepting the record would change on the recipe pages, before anyone accepts it;
    no changes once the record is no longer pending."""
    record = get_record(session, record_id)
    drop = quality_drop_for(session, record)
    return {
        "record": record.id,
        "review_state": record.review_state,
        "flags": record.flags,
        "needs_confirmation": needs_confirmation(record, drop),
        "quality_drop": (
            {"baseline": drop.baseline.id, **drop.verdict.as_json()} if drop else None
        ),
        "changes": [
            change_out(request, record, change)
            for change in acceptance_consequences(session, record)
        ],
    }


def change_out(request: Request, record: Record, change: Consequence) -> dict[str, Any]:
    url = request.url_for(
        "recipes:detail",
        model=record.model.slug,
        hardware=change.hardware.slug,
        profile=change.profile.slug,
    )
    return {
        "hardware": change.hardware.slug,
        "hardware_name": change.hardware.name,
        "profile": change.profile.slug,
        "what": change.what,
        "before": change.before,
        "after": change.after,
        "url": str(url),
    }


REVIEW_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": inline_refs(ReviewIn.model_json_schema())}},
    }
}


@api_router.post(
    "/records/{record_id}/review",
    name="api:records_review",
    response_model=RecordOut,
    openapi_extra=REVIEW_BODY,
    responses={
        **error_responses(401, 403, 404, 409, 413, 415),
        422: {"model": ErrorsOut, "description": "every field error"},
    },
)
def review_api(
    request: Request,
    record_id: RowIdPath,
    session: SessionDep,
    principal: MaintainerDep,
    body: BodyDep,
) -> Response:
    """Accept, reject or retract a record (`{"action": ..., "reason": ...}`); accepting a
    flagged record also takes `"confirm_flags": true` and a reason."""
    try:
        return review_committed(
            session,
            record_id,
            as_object(body),
            principal.name,
            lambda record: JSONResponse(record_out(request, record)),
        )
    except RecordInvalid as invalid:
        return errors_response(invalid)
