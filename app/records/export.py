"""Records as JSON and CSV. The field names below are the stable, documented export format."""

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from fastapi import Request

from app.models import Measurement, Record
from app.records.schemas import METRICS

RECORD_FIELDS: tuple[str, ...] = (
    "record_id", "review_state", "outcome", "model", "artifact", "artifact_format", "runtime",
    "runtime_version", "hardware", "gpu_count", "profile", "provenance", "submitted_by",
    "submitted_at", "flags", "command",
)
MEASUREMENT_FIELDS: tuple[str, ...] = (
    "context_length", "concurrency", "repetitions", *METRICS, "token_count_source",
    "memory_source",
)
CSV_FIELDS: tuple[str, ...] = RECORD_FIELDS + MEASUREMENT_FIELDS
CSV_DOC = (
    "CSV: one row per measurement (a record without measurements gives one row with empty "
    f"measurement columns). Columns, in order: {', '.join(CSV_FIELDS)}. Units: *_ms "
    "milliseconds, *_tokens_per_s tokens per second, peak_memory_gb_per_gpu decimal GB per "
    "GPU, kv_cache_usage_peak and needle_accuracy fractions 0..1; flags lists flag codes "
    "separated by ';'. Every text field is quoted; a text that a spreadsheet would run as a "
    "formula (=, +, -, @, tab or CR first, after any spaces) starts with an apostrophe."
)
# A spreadsheet runs cells that start with these as formulas, even after leading spaces.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


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


def record_out(request: Request, record: Record) -> dict[str, Any]:
    """The JSON shape of one record (export and detail API)."""
    return {
        **record_fields(record),
        "url": str(request.url_for("records:detail", record_id=record.id)),
        "applied_values": record.applied_values,
        "environment": record.environment,
        "notes": record.notes,
        "provenance_detail": {k: v for k, v in record.provenance_detail.items()
                              if k != "fingerprint"},
        "flag_details": record.flags,
        "measurements": [measurement_out(m) for m in record.measurements],
        "events": [{"action": e.action, "reason": e.reason, "actor": e.actor,
                    "at": iso(e.created_at)} for e in record.events],
    }


def safe_cell(value: Any) -> Any:
    if isinstance(value, list):
        value = ";".join(str(item) for item in value)
    if isinstance(value, str) and value.lstrip(" ").startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_rows(record: Record) -> list[dict[str, Any]]:
    base = record_fields(record)
    points = [measurement_fields(m) for m in record.measurements] or [{}]
    return [{name: safe_cell({**base, **point}.get(name)) for name in CSV_FIELDS}
            for point in points]


def to_csv(records: Sequence[Record]) -> str:
    buffer = io.StringIO()
    # Quoting every text field keeps a bare CR or LF inside its cell for every reader,
    # including those that take CR alone as a line break.
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n",
                            quoting=csv.QUOTE_NONNUMERIC)
    buffer.write(",".join(CSV_FIELDS) + "\n")  # plain names, as the format has always had
    for record in records:
        writer.writerows(csv_rows(record))
    return buffer.getvalue()
