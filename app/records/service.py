"""Submitting records: one function for the form, the API, the importers and the bench client.

The service never commits: the caller's unit of work does. A record and its measurements
are written inside one savepoint, so a failure half-way leaves nothing behind.
"""

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.catalog.revision import bump_revision
from app.db import utcnow
from app.errors import Conflict, NotFound
from app.models import Measurement, Record, RecordEvent
from app.records.plausibility import plausibility_flags
from app.records.repository import RecordRepository
from app.records.schemas import FieldError, MeasurementIn, RecordIn
from app.records.validation import Resolved, validate_record

Provenance = Literal["form", "api", "import", "bench"]


class IdempotencyConflict(Conflict):
    def __init__(self, record_id: int) -> None:
        super().__init__(f"This idempotency key was already used for record {record_id} with "
                         "different content. Use a new key for a new record.")
        self.record_id = record_id


@dataclass(frozen=True)
class Submission:
    record: Record
    created: bool


def fingerprint(data: RecordIn, provenance: str, detail: Mapping[str, Any]) -> str:
    """What a retry must repeat exactly to count as the same submission."""
    canonical = json.dumps({"record": data.model_dump(mode="json"), "provenance": provenance,
                            "detail": dict(detail)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


MAX_KEY_LENGTH = 200
KEY_PATTERN = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII, as an HTTP header carries it


def key_errors(key: str | None) -> list[FieldError]:
    """A key is compared whole, so one that cannot be stored whole is refused, never cut."""
    if key is None:
        return []
    if len(key) > MAX_KEY_LENGTH:
        message = f"at most {MAX_KEY_LENGTH} characters (this one has {len(key)})"
    elif not KEY_PATTERN.match(key):
        message = "use visible ASCII characters only, without spaces"
    else:
        return []
    return [FieldError(field="idempotency_key", message=message)]


def scoped_key(submitted_by: str, key: str) -> str:
    # Keys are per submitter, so two people cannot collide on (or probe) each other's keys;
    # hashed, so every whole key fits the column.
    return hashlib.sha256(f"{submitted_by}\n{key}".encode()).hexdigest()


def submit_record(
    session: Session,
    raw: Mapping[str, Any] | RecordIn,
    *,
    provenance: Provenance,
    submitted_by: str,
    idempotency_key: str | None = None,
    provenance_detail: Mapping[str, Any] | None = None,
    extra_errors: list[FieldError] | None = None,
) -> Submission:
    """Validate, flag and store one record; a retry with the same key returns the first."""
    records = RecordRepository(session)
    errors = [*(extra_errors or []), *key_errors(idempotency_key)]
    data, refs = validate_record(CatalogRepository(session), records, raw, errors)
    detail = dict(provenance_detail or {})
    print_ = fingerprint(data, provenance, detail)
    key = scoped_key(submitted_by, idempotency_key) if idempotency_key else None
    if key is not None:
        earlier = replayed(records, key, print_)
        if earlier is not None:
            return Submission(earlier, created=False)
    record = new_record(data, refs, provenance, {**detail, "fingerprint": print_},
                        submitted_by, key)
    try:
        write_record(session, records, record, data.measurements, submitted_by)
    except IntegrityError:
        # Another request with the same key won the race; answer as its retry would be.
        earlier = replayed(records, key, print_) if key else None
        if earlier is None:
            raise
        return Submission(earlier, created=False)
    return Submission(records.get(record.id) or record, created=True)


def replayed(records: RecordRepository, key: str, print_: str) -> Record | None:
    earlier = records.by_idempotency_key(key)
    if earlier is None:
        return None
    if earlier.provenance_detail.get("fingerprint") != print_:
        raise IdempotencyConflict(earlier.id)
    return earlier


def new_record(data: RecordIn, refs: Resolved, provenance: str, detail: dict[str, Any],
               submitted_by: str, key: str | None) -> Record:
    return Record(
        model=refs.model,
        artifact=refs.artifact,
        runtime=refs.runtime,
        runtime_version=data.runtime_version,
        hardware=refs.hardware,
        gpu_count=refs.gpu_count,
        profile=refs.profile,
        command=data.command,
        applied_values=data.applied_values,
        environment=data.environment.model_dump(exclude_none=True),
        outcome=data.outcome,
        notes=data.notes,
        provenance=provenance,
        provenance_detail=detail,
        idempotency_key=key,
        submitted_by=submitted_by,
        flags=[flag.model_dump() for flag in plausibility_flags(data, refs)],
        review_state="pending",
    )


def write_record(session: Session, records: RecordRepository, record: Record,
                 points: list[MeasurementIn], actor: str) -> None:
    """The record, its measurements and its first event: all stored, or none."""
    with session.begin_nested():
        records.add(record)
        rows: list[Measurement | RecordEvent] = [build_measurement(record, p) for p in points]
        rows.append(RecordEvent(record_id=record.id, action="submitted", actor=actor,
                                created_at=utcnow()))
        records.add_all(rows)
        bump_revision(session)  # the record is listed on its recipe page


def build_measurement(record: Record, point: MeasurementIn) -> Measurement:
    values = point.model_dump(exclude={"samples", "details"})
    details = dict(point.details)
    if point.samples:
        details["samples"] = point.samples
    return Measurement(record_id=record.id, details=details, **values)


def get_record(session: Session, record_id: int) -> Record:
    record = RecordRepository(session).get(record_id)
    if record is None:
        raise NotFound(f"No record {record_id}.")
    return record
