"""The unit of work of one API submission or review: read and check first, then one short
write transaction that commits.

Everything that reads (validation, catalog rows, plausibility flags, an earlier record under
the same key, the record under review) happens before the write transaction opens; inside
it are only the inserts, the review's state change and the catalog revision bump, so on
SQLite the one write lock is held for a few statements.
"""

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from app.db import write_transaction
from app.models import Record
from app.records.review.steps import apply_review, prepare_review
from app.records.storage.service import (
    Prepared,
    Provenance,
    Submission,
    checked_and_stored,
    prepare_submission,
)


def ingest_record(
    session: Session,
    raw: Mapping[str, Any],
    *,
    provenance: Provenance,
    submitted_by: str,
    idempotency_key: str | None = None,
) -> Submission:
    """Store one record and commit; a retry with the same key gets the first record, even
    when both copies arrive at once (the unique key lets one in, the other replays it)."""

    def prepare() -> Prepared:
        return prepare_submission(
            session,
            raw,
            provenance=provenance,
            submitted_by=submitted_by,
            idempotency_key=idempotency_key,
        )

    return checked_and_stored(session, prepare, lambda: write_transaction(session))


Answer = TypeVar("Answer")


def review_committed(
    session: Session,
    record_id: int,
    raw: Mapping[str, Any],
    actor: str,
    answer: Callable[[Record], Answer],
) -> Answer:
    """Accept, reject or retract, and commit with the answer already rendered from the
    record in its new state: when rendering fails, the review rolls back and nothing is
    written (a caller told 500 must not find the record accepted)."""
    pending = prepare_review(session, record_id, raw)
    with write_transaction(session):
        apply_review(session, pending, actor)
        rendered = answer(pending.record)
    return rendered
