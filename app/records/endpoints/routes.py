"""Reproduction records: pages and htmx fragments (the JSON API is app.records.endpoints.api).

Invalid forms re-render the form block with the errors beside the inputs: status 200 for
htmx (htmx 2 does not swap 4xx responses), 422 for a plain form post.
"""

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData, UploadFile

from app.catalog.revision import current_revisions
from app.db import SessionDep
from app.models import Record
from app.page_cache import serve_at_revision
from app.pagination import DEFAULT_LIMIT, CursorQuery, LimitQuery, next_url
from app.records.comparison.compare import compare_records
from app.records.endpoints.charts import record_charts
from app.records.endpoints.filters import FiltersDep
from app.records.endpoints.forms import (
    DEFAULT_ROWS,
    ROW_FIELDS,
    ROW_LABELS,
    FormState,
    ParsedForm,
    error_label,
    parse_form,
    show_errors,
)
from app.records.endpoints.pages import RecordPages
from app.records.endpoints.sentinel_report import sentinel_report
from app.records.evidence.known_good import known_good_for, record_form_values
from app.records.evidence.quality_gate import quality_drop_for
from app.records.importers import FORMAT_LABELS
from app.records.importers.result_file import AlreadyImported, import_record
from app.records.review.consequences import acceptance_consequences, why_nothing_changes
from app.records.review.steps import allowed_actions, needs_confirmation, review_record
from app.records.schemas import (
    OUTCOME_LABELS,
    OUTCOMES,
)
from app.records.storage.service import IdempotencyConflict, Submission, get_record, submit_record
from app.records.storage.validation import RecordInvalid
from app.security import (
    CsrfDep,
    FormDep,
    MaintainerDep,
    OptionalPrincipal,
    Principal,
    SubmitterDep,
)
from app.web import MAX_ROW_ID, RowIdPath, RowIdQuery, is_htmx, page_responses, redirect, render

router = APIRouter(tags=["pages"], default_response_class=HTMLResponse)


# ---------------------------------------------------------------- pages


@router.get("/records", name="records:index", responses=page_responses(400))
def index(
    request: Request,
    session: SessionDep,
    filters: FiltersDep,
    cursor: CursorQuery = None,
    limit: LimitQuery = DEFAULT_LIMIT,
) -> Response:
    """Records, newest first, a page at a time, with filters and a compare picker; the
    pending filter is the review queue. Each page is kept per catalog and records revision
    and per filter (app.page_cache)."""
    revisions = current_revisions(session)  # first: a record committed after it moves it

    def build() -> Response:
        pages = RecordPages(session)
        page, points = pages.listing(filters.model, filters.hardware, filters.state, cursor, limit)
        where = filters.model_dump(mode="json", exclude_none=True)
        csv_url = request.url_for("api:records_list").include_query_params(**where, format="csv")
        context = {
            "records": page.items,
            "points": points,
            "filters": filters,
            "csv_url": csv_url,
            "older_url": next_url(request, "records:index", page, where, limit),
            "newest_url": request.url_for("records:index").include_query_params(**where)
            if cursor
            else None,
            **pages.choices(),
        }
        return render(request, "records/index.html", context, block="records_table")

    return serve_at_revision(request, revisions.catalog, build, records=revisions.records)


@router.get("/records/new", name="records:new", responses=page_responses(404))
def new_record(
    request: Request,
    session: SessionDep,
    principal: OptionalPrincipal,
    from_record: Annotated[int | None, Query(ge=1, le=MAX_ROW_ID)] = None,
) -> Response:
    """The record form, pre-filled from the query string (model, hardware, artifact, ...),
    or with `from_record` from a stored record's setup (a known-good one, to change a
    single setting)."""
    pages = RecordPages(session)
    values = pages.prefill(request.query_params)
    if from_record is not None:
        values = record_form_values(get_record(session, from_record))
    state = FormState(values=values)
    state.rows = [{} for _ in range(DEFAULT_ROWS)]
    return render(request, "records/new.html", form_context(pages, state, principal))


@router.get("/records/new/row", name="records:new_row")
def new_row(request: Request, index: Annotated[int, Query(ge=0, le=199)]) -> Response:
    """One more empty measurement row (htmx appends it to the table)."""
    context = {
        "index": index,
        "row": {},
        "state": FormState(),
        "row_fields": ROW_FIELDS,
        "row_labels": ROW_LABELS,
    }
    return render(request, "records/_measurement_row.html", context)


@router.post(
    "/records",
    name="records:create",
    dependencies=[CsrfDep],
    responses=page_responses(303, 401, 403, 409, 413, 422),
)
def create(
    request: Request, session: SessionDep, principal: SubmitterDep, form: FormDep
) -> Response:
    """Submit the form (with or without a result file to import)."""
    parsed = parse_form(form)
    key = str(form.get("idempotency_key") or "") or None
    upload = form.get("result_file")
    try:
        submission = submit_form(session, parsed, upload, form, principal.name, key)
    except RecordInvalid as invalid:
        state = show_errors(parsed, invalid.errors)
        return form_response(request, session, state, principal)
    except (IdempotencyConflict, AlreadyImported) as conflict:
        parsed.state.general.append(conflict.text())
        return form_response(request, session, parsed.state, principal, status_code=409)
    url = str(request.url_for("records:detail", record_id=submission.record.id))
    return redirect(request, url)


def submit_form(
    session: Session,
    parsed: ParsedForm,
    upload: object,
    form: FormData,
    submitter: str,
    key: str | None,
) -> Submission:
    if isinstance(upload, UploadFile) and upload.filename:
        content = upload.file.read()
        fmt = str(form.get("result_format") or "") or None
        meta = {k: v for k, v in parsed.raw.items() if k != "measurements"}
        return import_record(
            session,
            content,
            meta,
            submitted_by=submitter,
            fmt=fmt,
            filename=upload.filename,
            idempotency_key=key,
            extra_errors=parsed.errors,
        )
    return submit_record(
        session,
        parsed.raw,
        provenance="form",
        submitted_by=submitter,
        idempotency_key=key,
        extra_errors=parsed.errors,
    )


def form_context(
    pages: RecordPages, state: FormState, principal: Principal | None
) -> dict[str, Any]:
    return {
        "state": state,
        "form_key": state.values.get("idempotency_key") or uuid.uuid4().hex,
        "outcomes": OUTCOMES,
        "outcome_labels": OUTCOME_LABELS,
        "formats": FORMAT_LABELS,
        "row_fields": ROW_FIELDS,
        "row_labels": ROW_LABELS,
        "error_label": error_label,
        "principal": principal,
        **pages.choices(state.values),
    }


def form_response(
    request: Request,
    session: Session,
    state: FormState,
    principal: Principal | None,
    status_code: int = 422,
) -> Response:
    context = form_context(RecordPages(session), state, principal)
    status = 200 if is_htmx(request) else status_code
    return render(request, "records/new.html", context, block="record_form", status_code=status)


@router.get("/records/compare", name="records:compare", responses=page_responses(404))
def compare(request: Request, session: SessionDep, a: RowIdQuery, b: RowIdQuery) -> Response:
    """Two records side by side, with the differences highlighted."""
    comparison = compare_records(get_record(session, a), get_record(session, b))
    return render(request, "records/compare.html", {"comparison": comparison})


@router.get("/records/{record_id}", name="records:detail", responses=page_responses(404))
def detail(
    request: Request, record_id: RowIdPath, session: SessionDep, principal: OptionalPrincipal
) -> Response:
    """A record: provenance, measurements, flags, history, and review for maintainers."""
    record = get_record(session, record_id)
    context = detail_context(session, record, principal, {})
    return render(request, "records/detail.html", context)


def detail_context(
    session: Session,
    record: Record,
    principal: Principal | None,
    errors: dict[str, str],
    typed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    actions = allowed_actions(record.review_state)
    drop = quality_drop_for(session, record)
    return {
        "record": record,
        "principal": principal,
        "actions": actions,
        "review_errors": errors,
        "typed": typed or {},
        "outcome_labels": OUTCOME_LABELS,
        "charts": record_charts(record.measurements),
        "needs_confirmation": needs_confirmation(record, drop),
        "quality_drop": drop,
        "known_good": known_good_for(session, record),
        "sentinel_report": sentinel_report(record),
        **acceptance_preview(session, record, principal, actions),
    }


def acceptance_preview(
    session: Session, record: Record, principal: Principal | None, actions: list[str]
) -> dict[str, Any]:
    """What the Accept button would change; only a maintainer who can accept sees it, and
    only then is it worth resolving every recipe twice."""
    if not (principal and principal.is_maintainer and "accept" in actions):
        return {"consequences": None}
    return {
        "consequences": acceptance_consequences(session, record),
        "why_nothing_changes": why_nothing_changes(record),
    }


@router.post(
    "/records/{record_id}/review",
    name="records:review",
    dependencies=[CsrfDep],
    responses=page_responses(303, 401, 403, 404, 409, 413, 422),
)
def review(
    request: Request,
    record_id: RowIdPath,
    session: SessionDep,
    principal: MaintainerDep,
    form: FormDep,
) -> Response:
    """Accept, reject or retract from the record page."""
    raw = {
        "action": str(form.get("action", "")),
        "reason": str(form.get("reason", "")),
        "confirm_flags": bool(form.get("confirm_flags")),
    }
    try:
        review_record(session, record_id, raw, principal.name)
    except RecordInvalid as invalid:
        record = get_record(session, record_id)
        errors = {e.field: e.text() for e in invalid.errors}
        context = detail_context(session, record, principal, errors, raw)
        status = 200 if is_htmx(request) else 422
        return render(request, "records/detail.html", context, block="review", status_code=status)
    return redirect(request, str(request.url_for("records:detail", record_id=record_id)))
