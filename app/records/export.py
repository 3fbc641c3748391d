"""Records as JSON and CSV. The field names below are the stable, documented export format.

An export streams the matching records a page at a time: at most EXPORT_LIMIT (10,000)
records per response, newest first, read in keyset-ordered batches, each in its own short
session, and written out before the next is read, so memory stays that of one batch. When
more match, the response's `Link` header (rel="next") and, in JSON, its `next` field give
the address of the next page (`before`: the records older than this page's last).
"""

import csv
import io
import json
import unicodedata
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import Request
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session, sessionmaker
from starlette.datastructures import URLPath

from app.models import Measurement, Record
from app.records.schemas import METRICS
from app.records.storage.repository import RecordRepository

ExportFormat = Literal["json", "csv"]
BATCH_SIZE = 500  # records per query and per chunk written
EXPORT_LIMIT = 10_000  # records per export response; `next` gives the rest
MOST_URL_PREFIXES = 64

RECORD_FIELDS: tuple[str, ...] = (
    "record_id",
    "review_state",
    "outcome",
    "model",
    "artifact",
    "artifact_format",
    "runtime",
    "runtime_version",
    "hardware",
    "gpu_count",
    "profile",
    "provenance",
    "submitted_by",
    "submitted_at",
    "flags",
    "command",
)
MEASUREMENT_FIELDS: tuple[str, ...] = (
    "context_length",
    "concurrency",
    "repetitions",
    *METRICS,
    "token_count_source",
    "memory_source",
)
CSV_FIELDS: tuple[str, ...] = RECORD_FIELDS + MEASUREMENT_FIELDS
CSV_DOC = (
    "CSV: one row per measurement (a record without measurements gives one row with empty "
    f"measurement columns). Columns, in order: {', '.join(CSV_FIELDS)}. Units: *_ms "
    "milliseconds, *_tokens_per_s tokens per second, peak_memory_gb_per_gpu decimal GB per "
    "GPU, kv_cache_usage_peak and needle_accuracy fractions 0..1; flags lists flag codes "
    "separated by ';'. Every text field is quoted; a text that a spreadsheet would run as a "
    "formula (=, +, -, @, | or their fullwidth forms, or any other blank or invisible "
    "character first, after any spaces) starts with an apostrophe."
)
# A spreadsheet runs cells that start with these as formulas, even after leading spaces;
# some also skip other leading blanks (LF, NBSP, U+3000, VT, FF, NEL) and invisible
# characters (zero-width space, BOM), and read the fullwidth forms as the ASCII ones.
FORMULA_PREFIXES = ("=", "+", "-", "@", "|", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def starts_like_a_formula(text: str) -> bool:
    rest = text.lstrip(" ")
    if not rest:
        return False
    first = rest[0]
    return (
        first in FORMULA_PREFIXES or first.isspace() or unicodedata.category(first) in ("Cc", "Cf")
    )


def iso(moment: datetime) -> str:
    """UTC with its offset; SQLite hands back naive datetimes."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def record_fields(record: Record) -> dict[str, Any]:
    return {
        "record_id": record.id,
        "review_state": record.review_state,
        "outcome": record.outcome,
        "model": record.model.slug,
        "artifact": record.artifact.slug,
        "artifact_format": record.artifact.format,
        "runtime": record.runtime.slug,
        "runtime_version": record.runtime_version,
        "hardware": record.hardware.slug,
        "gpu_count": record.gpu_count,
        "profile": record.profile.slug if record.profile else None,
        "provenance": record.provenance,
        "submitted_by": record.submitted_by,
        "submitted_at": iso(record.created_at),
        "flags": [flag["code"] for flag in record.flags],
        "command": record.command,
    }


def measurement_fields(point: Measurement) -> dict[str, Any]:
    return {name: getattr(point, name) for name in MEASUREMENT_FIELDS}


def measurement_out(point: Measurement) -> dict[str, Any]:
    return {**measurement_fields(point), "details": point.details}


def record_url(request: Request, record_id: int) -> str:
    """What `request.url_for("records:detail", record_id=...)` gives, without its search:
    url_for tries every route in turn (an exception per miss) on each call, while record
    pages differ only in the id, so the absolute address up to it is built once per base
    address the requests name (scheme, server, root path and Host header, as base_url reads
    them) and the id appended."""
    state = request.app.state
    scope = request.scope
    server = scope.get("server")  # a tuple from uvicorn, a list from some test clients
    key = (
        scope["scheme"],
        tuple(server) if server else None,
        scope.get("app_root_path", scope.get("root_path", "")),
        request.headers.get("host"),
    )
    prefixes: dict[tuple[Any, ...], str] | None = getattr(state, "record_url_prefixes", None)
    if prefixes is None:
        prefixes = state.record_url_prefixes = {}
    prefix = prefixes.get(key)
    if prefix is None:
        path = request.app.url_path_for("records:detail", record_id=0).removesuffix("0")
        prefix = str(URLPath(path).make_absolute_url(request.base_url))
        if len(prefixes) >= MOST_URL_PREFIXES:  # Host headers vary only as far as allowed
            prefixes.clear()
        prefixes[key] = prefix
    return f"{prefix}{record_id}"


def record_out(request: Request, record: Record) -> dict[str, Any]:
    """The JSON shape of one record (export and detail API)."""
    return {
        **record_fields(record),
        "url": record_url(request, record.id),
        "applied_values": record.applied_values,
        "environment": record.environment,
        "notes": record.notes,
        "provenance_detail": {
            k: v for k, v in record.provenance_detail.items() if k != "fingerprint"
        },
        "pinned": record.pinned,
        "sentinel_verdict": record.sentinel_verdict,
        "flag_details": record.flags,
        "measurements": [measurement_out(m) for m in record.measurements],
        "events": [
            {"action": e.action, "reason": e.reason, "actor": e.actor, "at": iso(e.created_at)}
            for e in record.events
        ],
    }


def safe_cell(value: Any) -> Any:
    if isinstance(value, list):
        value = ";".join(str(item) for item in value)
    if isinstance(value, str) and starts_like_a_formula(value):
        return "'" + value
    return value


def csv_rows(record: Record) -> list[dict[str, Any]]:
    base = record_fields(record)
    points = [measurement_fields(m) for m in record.measurements] or [{}]
    return [
        {name: safe_cell({**base, **point}.get(name)) for name in CSV_FIELDS} for point in points
    ]


CSV_HEADER = ",".join(CSV_FIELDS) + "\n"  # plain names, as the format has always had


def csv_chunk(records: Sequence[Record]) -> str:
    buffer = io.StringIO()
    # Quoting every text field keeps a bare CR or LF inside its cell for every reader,
    # including those that take CR alone as a line break.
    writer = csv.DictWriter(
        buffer, fieldnames=CSV_FIELDS, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC
    )
    for record in records:
        writer.writerows(csv_rows(record))
    return buffer.getvalue()


def to_csv(records: Sequence[Record]) -> str:
    return CSV_HEADER + csv_chunk(records)


def batches(
    sessions: sessionmaker[Session],
    model: str | None,
    hardware: str | None,
    state: str | None,
    size: int = BATCH_SIZE,
    before: int | None = None,
    last: int | None = None,
) -> Iterator[Sequence[Record]]:
    """Every matching record below id `before`, newest first, down to id `last` (None:
    to the end), `size` at a time; no session stays open between batches, so a slow reader
    holds no connection."""
    while True:
        with sessions() as session:
            batch = RecordRepository(session).export_batch(model, hardware, state, before, size)
        if last is not None:
            batch = [record for record in batch if record.id >= last]
        if not batch:
            return
        yield batch
        before = batch[-1].id
        if last is not None and before <= last:
            return


def csv_stream(records: Iterator[Sequence[Record]]) -> Iterator[str]:
    yield CSV_HEADER
    for batch in records:
        yield csv_chunk(batch)


def json_stream(
    request: Request, records: Iterator[Sequence[Record]], next_url: str | None = None
) -> Iterator[str]:
    """`{"records": [...], "count": n, "next": url}`: the count once it is known, and the
    next page's address (null on the last)."""
    yield '{"records":['
    count = 0
    for batch in records:
        parts = [json.dumps(record_out(request, record), allow_nan=False) for record in batch]
        yield ("," if count else "") + ",".join(parts)
        count += len(batch)
    yield f'],"count":{count},"next":{json.dumps(next_url)}}}'


def export_response(
    request: Request,
    fmt: ExportFormat,
    model: str | None,
    hardware: str | None,
    state: str | None,
    before: int | None = None,
    limit: int = EXPORT_LIMIT,
    route: str = "api:records_export",
) -> StreamingResponse:
    """One page of the export (at most `limit` records below id `before`), streamed as it
    is read, with the next page's address in its `Link` header when more match."""
    sessions = request.state.sessionmaker
    with sessions() as session:
        last = RecordRepository(session).export_page_end(model, hardware, state, before, limit)
    next_url = None
    headers: dict[str, str] = {}
    if last is not None:
        query = {"model": model, "hardware": hardware, "state": state}
        asked = {k: v for k, v in query.items() if v is not None}
        asked.update(format=fmt, before=str(last), limit=str(limit))
        next_url = str(request.url_for(route).include_query_params(**asked))
        headers["Link"] = f'<{next_url}>; rel="next"'
    records = batches(sessions, model, hardware, state, before=before, last=last)
    if fmt == "csv":
        return StreamingResponse(
            csv_stream(records),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="records.csv"', **headers},
        )
    return StreamingResponse(
        json_stream(request, records, next_url), media_type="application/json", headers=headers
    )
