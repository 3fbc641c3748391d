"""The estimate an accepted record is compared with, kept as it was: written in the
transaction that accepts the record, one row per measured point with a decode speed, and
never changed after (a retracted record keeps its rows; the figures read the state)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from app.accuracy.evidence import range_book
from app.catalog.revision import current_revision
from app.catalog.specs import artifact_spec, hardware_spec, model_spec, runtime_spec
from app.db import utcnow
from app.estimate import ESTIMATOR_VERSION, EstimateError, Plan, estimate
from app.estimate.ranges.from_records import RangeBook
from app.estimate.speed.load import with_ranges
from app.estimate.speed.scored import point_estimate
from app.models import Measurement, Record, RecordEstimate

INSERT_ESTIMATES = insert(RecordEstimate.__table__)


def point_rows(record: Record, book: RangeBook, revision: int) -> list[dict[str, Any]]:
    """The rows to keep for a record: the estimate at each timed point's context and
    concurrency, on the GPUs it ran on, with the ranges in effect."""
    specs = (
        model_spec(record.model),
        artifact_spec(record.artifact),
        runtime_spec(record.runtime),
        hardware_spec(record.hardware),
    )
    gpus = max(1, min(record.gpu_count, record.hardware.gpu_count))
    kv_dtype = record.applied_values.get("kv_cache_dtype")
    if kv_dtype not in specs[2].kv_dtypes:
        kv_dtype = "auto"
    now = utcnow()
    rows = []
    for point in record.measurements:
        if not point.decode_tokens_per_s:
            continue
        found = _estimated(specs, point, gpus, kv_dtype, book)
        if found is None:
            continue
        rows.append(
            {
                "record_id": record.id,
                "measurement_id": point.id,
                "estimator_version": ESTIMATOR_VERSION,
                "catalog_revision": revision,
                "context_length": point.context_length,
                "measured_decode": point.decode_tokens_per_s,
                "flagged": bool(record.flags),
                "created_at": now,
                "class_key": found.class_key,
                "concurrency": found.concurrency,
                "gpus": found.gpus,
                "decode_low": found.decode_low,
                "decode_high": found.decode_high,
                "decode_point": found.decode_point,
                "ttft_ms_low": found.ttft_ms_low,
                "ttft_ms_high": found.ttft_ms_high,
                "range_records": found.range_records,
                "basis": found.basis,
            }
        )
    return rows


def _estimated(specs: tuple, point: Measurement, gpus: int, kv_dtype: str, book: RangeBook):
    plan = Plan(context=point.context_length, tensor_parallel=gpus, kv_dtype=kv_dtype)
    try:
        speed = estimate(*specs, plan).speed_model
    except EstimateError:  # a point the estimator refuses has nothing to compare with
        return None
    if speed is None:  # no bandwidth figure: no speed estimate
        return None
    return point_estimate(with_ranges(speed, book), point.concurrency)


def keep_estimate(session: Session, record: Record) -> int:
    """Write the record's estimate rows at the current catalog revision; how many."""
    rows = point_rows(record, range_book(session), current_revision(session))
    if rows:
        session.connection().execute(INSERT_ESTIMATES, rows)
    return len(rows)
