"""Submitting records: one function for the form, the API, the importers and the bench client.

The service never commits: the caller's unit of work does. Submitting has two halves:
`prepare_submission` reads (validation, catalog rows, flags, an earlier record under the
same key) and `store_submission` writes, so a unit of work can keep its write transaction
to the inserts alone (`app.records.endpoints.ingest`). Either way the record, its
measurements and its event are written together or not at all.
"""

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.catalog.references import catalog_references
from app.catalog.revision import Touched
from app.db import utcnow
from app.errors import Conflict, NotFound
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.models import Record
from app.records.schemas import FieldError, MeasurementIn, RecordIn
from app.records.storage.plausibility import plausibility_flags
from app.records.storage.repository import RecordRepository
from app.records.storage.store import KEY_SEEN, Earlier, KeyTaken, RecordStore
from app.records.storage.validation import Resolved, validate_at_held_catalog

Provenance = Literal["form", "api", "import", "bench"]


KEY_REUSED = register(
    "record.key_reused",
    _l(
        "This idempotency key was already used for record %(record)s with different content. "
        "Use a new key for a new record."
    ),
)
KEY_TOO_LONG = register(
    "record.key_too_long", _l("at most %(most)s characters (this one has %(length)s)")
)
KEY_NOT_ASCII = register(
    "record.key_not_ascii", _l("use visible ASCII characters only, without spaces")
)
NO_RECORD = register("record.not_found", _l("No record %(record)s."))


class IdempotencyConflict(Conflict):
    def __init__(self, record_id: int) -> None:
        super().__init__(KEY_REUSED(record=str(record_id)))
        self.record_id = record_id


class WrittenRecord(SimpleNamespace):
    """A record's columns as written (for a retry, those it is answered with) as plain
    attributes, with its measurement rows: nothing on the write path loads it back, so no
    ORM object is built."""

    id: int
    review_state: str
    flags: list[Any]


@dataclass(frozen=True)
class Submission:
    """The record as written (or, for a retry, as first written): its columns, not its
    relations, which are never loaded back on the write path."""

    record: WrittenRecord
    created: bool


def fingerprint(data: RecordIn, provenance: str, detail: Mapping[str, Any]) -> str:
    """What a retry must repeat exactly to count as the same submission."""
    # A record without pins hashes as records did before they could carry any, so a retry
    # of one sent then is still the same submission.
    record = data.model_dump(mode="json", exclude={"pinned"} if not data.pinned.stored() else None)
    canonical = json.dumps(
        {"record": record, "provenance": provenance, "detail": dict(detail)},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


MAX_KEY_LENGTH = 200
KEY_PATTERN = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII, as an HTTP header carries it


def key_errors(key: str | None) -> list[FieldError]:
    """A key is compared whole, so one that cannot be stored whole is refused, never cut."""
    if key is None:
        return []
    if len(key) > MAX_KEY_LENGTH:
        said = KEY_TOO_LONG(most=MAX_KEY_LENGTH, length=len(key))
    elif not KEY_PATTERN.match(key):
        said = KEY_NOT_ASCII()
    else:
        return []
    return [FieldError.of("idempotency_key", said)]


def scoped_key(submitted_by: str, key: str) -> str:
    # Keys are per submitter, so two people cannot collide on (or probe) each other's keys;
    # hashed, so every whole key fits the column.
    return hashlib.sha256(f"{submitted_by}\n{key}".encode()).hexdigest()


@dataclass(frozen=True)
class Prepared:
    """A submission checked and turned into rows, ready to write; nothing stored yet.
    `definition`: the catalog definition it was checked against."""

    record: dict[str, Any]
    measurements: list[dict[str, Any]]
    actor: str
    key: str | None
    fingerprint: str
    definition: int


class CatalogMoved(Exception):
    """The catalog changed between checking a record and writing it; nothing was written."""


def prepare_submission(
    session: Session,
    raw: Mapping[str, Any] | RecordIn,
    *,
    provenance: Provenance,
    submitted_by: str,
    idempotency_key: str | None = None,
    provenance_detail: Mapping[str, Any] | None = None,
    extra_errors: list[FieldError] | None = None,
) -> Prepared:
    """Validation against the process's catalog snapshot, the flags and the rows: no query
    while the snapshot is current, and nothing written. Whether the key was seen before is
    left to the write (the unique key), since a key is new far more often than not."""
    errors = [*(extra_errors or []), *key_errors(idempotency_key)]
    key = scoped_key(submitted_by, idempotency_key) if idempotency_key and not errors else None
    data, refs, definition = validate_at_held_catalog(session, raw, errors)
    if provenance != "bench" and data.pinned.server_reported is not None:
        # What the server reported is kept only when the benchmark client read it.
        data = data.model_copy(
            update={"pinned": data.pinned.model_copy(update={"server_reported": None})}
        )
    detail = dict(provenance_detail or {})
    print_ = fingerprint(data, provenance, detail)
    row = record_row(data, refs, provenance, {**detail, "fingerprint": print_}, submitted_by, key)
    return Prepared(
        row,
        [measurement_row(point) for point in data.measurements],
        submitted_by,
        key,
        print_,
        definition,
    )


def store_submission(session: Session, prepared: Prepared) -> Submission | None:
    """The record, its measurements, its first event and the catalog revision (one
    statement on PostgreSQL, one per table on SQLite), or CatalogMoved when the catalog is
    no longer the one the record was checked against; the answer is built from what was
    written. None when its key was stored before (PostgreSQL; nothing written). The
    caller's transaction makes it all or nothing."""
    now = utcnow()
    row = {**prepared.record, "created_at": now}
    event = {"action": "submitted", "reason": "", "actor": prepared.actor, "created_at": now}
    # The record is listed on its recipe page; no accepted figure changes yet.
    touched = Touched(row["model_id"], row["hardware_id"], row["profile_id"], evidence=False)
    record_id = RecordStore(session).write(
        row, prepared.measurements, event, touched, prepared.definition
    )
    if record_id is None:
        raise CatalogMoved
    if record_id is KEY_SEEN:
        return None
    return Submission(
        WrittenRecord(id=record_id, **row, measurements=prepared.measurements), created=True
    )


# A catalog edited faster than a record is checked and written is no catalog a person
# edits; the last attempt's CatalogMoved is then a server error.
MOST_ATTEMPTS = 5


def checked_and_stored(
    session: Session,
    prepare: Callable[[], Prepared],
    transaction: Callable[[], AbstractContextManager[Any]],
) -> Submission:
    """Check (`prepare`), then write in `transaction`, which undoes a failed write whole:
    again when the catalog moved in between, against the catalog as it is now; when the
    unique key refuses the record, the first record stored under it (a retry, or a twin
    sent at the same moment) answers, if this one repeats it."""
    for attempt in range(MOST_ATTEMPTS):
        prepared = prepare()
        try:
            with transaction():
                stored = store_submission(session, prepared)
        except CatalogMoved:
            if attempt == MOST_ATTEMPTS - 1:
                raise
            catalog_references(session)  # read the catalog again for the next check
            continue
        except (IntegrityError, KeyTaken):
            earlier = (
                replayed(session, prepared.key, prepared.fingerprint) if prepared.key else None
            )
            if earlier is None:
                raise
            return earlier
        if stored is None:  # its key was stored before; nothing was written
            stored = replayed(session, prepared.key or "", prepared.fingerprint)
            assert stored is not None, "a key found stored has its record"
        return stored
    raise AssertionError("unreachable")


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
    """Validate, flag and store one record inside the caller's unit of work (a savepoint,
    so a failure leaves the rest of it alone); a retry with the same key returns the first."""

    def prepare() -> Prepared:
        return prepare_submission(
            session,
            raw,
            provenance=provenance,
            submitted_by=submitted_by,
            idempotency_key=idempotency_key,
            provenance_detail=provenance_detail,
            extra_errors=extra_errors,
        )

    return checked_and_stored(session, prepare, session.begin_nested)


def replayed(session: Session, key: str, print_: str) -> Submission | None:
    earlier = RecordStore(session).earlier(key)
    return replay(earlier, print_) if earlier is not None else None


def replay(earlier: Earlier, print_: str) -> Submission:
    """The first record for a retry that repeats it; a conflict for one that does not."""
    if earlier.fingerprint != print_:
        raise IdempotencyConflict(earlier.id)
    record = WrittenRecord(id=earlier.id, review_state=earlier.review_state, flags=earlier.flags)
    return Submission(record, created=False)


def record_row(
    data: RecordIn,
    refs: Resolved,
    provenance: str,
    detail: dict[str, Any],
    submitted_by: str,
    key: str | None,
) -> dict[str, Any]:
    return {
        "model_id": refs.model.id,
        "artifact_id": refs.artifact.id,
        "runtime_id": refs.runtime.id,
        "runtime_version": data.runtime_version,
        "hardware_id": refs.hardware.id,
        "gpu_count": refs.gpu_count,
        "profile_id": refs.profile.id if refs.profile else None,
        "command": data.command,
        "applied_values": data.applied_values,
        "environment": data.environment.model_dump(exclude_none=True),
        "outcome": data.outcome,
        "notes": data.notes,
        "provenance": provenance,
        "provenance_detail": detail,
        "idempotency_key": key,
        "submitted_by": submitted_by,
        "flags": [flag.model_dump() for flag in plausibility_flags(data, refs, provenance)],
        "pinned": data.pinned.stored(),
        "sentinel_verdict": sentinel_verdict(provenance, detail),
        "review_state": "pending",
    }


def sentinel_verdict(provenance: str, detail: Mapping[str, Any]) -> str | None:
    """The verdict of a sentinel run (app/sentinel), which only the benchmark client writes."""
    sentinel = detail.get("sentinel")
    if provenance != "bench" or not isinstance(sentinel, dict):
        return None
    verdict = sentinel.get("verdict")
    return verdict if verdict in ("no_regression", "improved", "regressed") else None


def measurement_row(point: MeasurementIn) -> dict[str, Any]:
    values = point.model_dump(exclude={"samples", "details"})
    details = dict(point.details)
    if point.samples:
        details["samples"] = point.samples
    return {**values, "details": details}


def get_record(session: Session, record_id: int) -> Record:
    record = RecordRepository(session).get(record_id)
    if record is None:
        raise NotFound(NO_RECORD(record=str(record_id)))
    return record
