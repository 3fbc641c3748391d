"""Review: the only change a record ever sees, each step appended to its history."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.catalog.revision import Touched, bump_revision
from app.db import utcnow
from app.errors import Conflict
from app.models import Record, RecordEvent
from app.records.repository import RecordRepository
from app.records.schemas import FieldError, ReviewIn
from app.records.service import get_record
from app.records.store import RecordStore
from app.records.validation import RecordInvalid, schema_errors

TRANSITIONS: dict[tuple[str, str], str] = {
    ("pending", "accept"): "accepted",
    ("pending", "reject"): "rejected",
    ("accepted", "retract"): "retracted",
}
REASON_REQUIRED = frozenset({"reject", "retract"})


def allowed_actions(state: str) -> list[str]:
    return [action for (source, action) in TRANSITIONS if source == state]


def parse_review(raw: Mapping[str, Any] | ReviewIn) -> ReviewIn:
    if isinstance(raw, ReviewIn):
        review = raw
    else:
        try:
            review = ReviewIn.model_validate(raw)
        except ValidationError as error:
            raise RecordInvalid(schema_errors(error)) from error
    if review.action in REASON_REQUIRED and not review.reason.strip():
        raise RecordInvalid([FieldError(field="reason",
                                        message=f"say why you {review.action} this record")])
    return review


def needs_confirmation(record: Record) -> bool:
    """A flagged record is accepted only with the flags confirmed and a reason, so a number a
    reviewer should have questioned never changes the catalog by a single click."""
    return record.review_state == "pending" and bool(record.flags)


def check_flags_confirmed(record: Record, review: ReviewIn) -> None:
    """Every missing part at once, so the form can show both errors together."""
    errors = []
    if not review.confirm_flags:
        codes = ", ".join(sorted({flag["code"] for flag in record.flags}))
        errors.append(FieldError(field="confirm_flags",
                                 message=f"the record is flagged ({codes}); confirm that you "
                                         "checked the flags to accept it anyway"))
    if not review.reason.strip():
        errors.append(FieldError(field="reason",
                                 message="say why you accept a flagged record"))
    if errors:
        raise RecordInvalid(errors)


@dataclass(frozen=True)
class PendingReview:
    """A review that passed every check against the record as read; not yet written."""

    record: Record
    review: ReviewIn
    source: str
    target: str


def prepare_review(session: Session, record_id: int,
                   raw: Mapping[str, Any] | ReviewIn) -> PendingReview:
    """Everything that reads: the record, the transition, the flag confirmation."""
    review = parse_review(raw)
    record = get_record(session, record_id)
    source = record.review_state
    target = TRANSITIONS.get((source, review.action))
    if target is None:
        allowed = allowed_actions(source)
        raise Conflict(f"Record {record_id} is {source}; it cannot be {review.action}ed. "
                       + (f"Allowed: {', '.join(allowed)}." if allowed else
                          "No further review is possible."))
    if review.action == "accept" and needs_confirmation(record):
        check_flags_confirmed(record, review)
    return PendingReview(record, review, source, target)


def apply_review(session: Session, pending: PendingReview, actor: str) -> None:
    """The state change, its event and the catalog revision; the record object then shows
    the new state and history as written, without being read again."""
    record = pending.record
    if not RecordRepository(session).move_state(record.id, pending.source, pending.target):
        raise Conflict(f"Record {record.id} was reviewed by someone else just now; reload it.")
    event = {"record_id": record.id, "action": pending.target,
             "reason": pending.review.reason.strip(), "actor": actor, "created_at": utcnow()}
    RecordStore(session).insert_event(event)
    # Accepted evidence changes figures (accepting, retracting); any review changes the list.
    evidence = "accepted" in (pending.source, pending.target)
    bump_revision(session, Touched(record.model_id, record.hardware_id, record.profile_id,
                                   evidence))
    set_committed_value(record, "review_state", pending.target)
    set_committed_value(record, "events", [*record.events, RecordEvent(**event)])


def review_record(session: Session, record_id: int, raw: Mapping[str, Any] | ReviewIn,
                  actor: str) -> Record:
    """Accept, reject or retract inside the caller's unit of work; anything else is a
    conflict with the record's state."""
    pending = prepare_review(session, record_id, raw)
    apply_review(session, pending, actor)
    return pending.record
