"""Review: the only change a record ever sees, each step appended to its history."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.accuracy.snapshot import keep_estimate
from app.catalog.revision import Touched, bump_revision
from app.db import utcnow
from app.errors import Conflict
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.labels import REVIEW_ACTIONS, REVIEW_STATES
from app.i18n.sentences import register
from app.models import Record, RecordEvent
from app.records.evidence.quality_gate import QualityDrop, quality_drop_for
from app.records.schemas import REASON_REQUIRED, FieldError, ReviewIn, blank
from app.records.storage.repository import RecordRepository
from app.records.storage.service import get_record
from app.records.storage.store import RecordStore
from app.records.storage.validation import RecordInvalid, schema_errors

TRANSITIONS: dict[tuple[str, str], str] = {
    ("pending", "accept"): "accepted",
    ("pending", "reject"): "rejected",
    ("accepted", "retract"): "retracted",
}

# The states and actions a sentence names, in the words the pages use for them.
STATE_WORDS = {
    state: register(f"review.state.{state}", words) for state, words in REVIEW_STATES.items()
}
ACTION_WORDS = {
    action: register(f"review.action.{action}", words) for action, words in REVIEW_ACTIONS.items()
}
SAY_WHY = {
    "accept": register("review.say_why.accept", _l("say why you accept this record")),
    "reject": register("review.say_why.reject", _l("say why you reject this record")),
    "retract": register("review.say_why.retract", _l("say why you retract this record")),
}
CONFIRM_FLAGS = register(
    "review.confirm_flags",
    _l("the record is flagged (%(codes)s); confirm that you checked the flags to accept it anyway"),
)
CONFIRM_QUALITY = register(
    "review.confirm_quality",
    _l(
        "quality dropped against the known-good record %(record)s (%(verdict)s); confirm that "
        "you checked it to make this record the known-good configuration anyway"
    ),
)
SAY_WHY_FLAGGED = register("review.say_why_flagged", _l("say why you accept a flagged record"))
NOT_ALLOWED = register(
    "review.not_allowed",
    _l("Record %(record)s is %(state)s; it cannot be %(action)sed. Allowed: %(allowed)s."),
)
NO_FURTHER_REVIEW = register(
    "review.no_further_review",
    _l("Record %(record)s is %(state)s; it cannot be %(action)sed. No further review is possible."),
)
REVIEWED_MEANWHILE = register(
    "review.reviewed_meanwhile",
    _l("Record %(record)s was reviewed by someone else just now; reload it."),
)


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
    if review.action in REASON_REQUIRED and blank(review.reason):
        raise RecordInvalid([FieldError.of("reason", SAY_WHY[review.action]())])
    return review


def needs_confirmation(record: Record, drop: QualityDrop | None = None) -> bool:
    """A flagged record, or one whose quality dropped against the known-good configuration,
    is accepted only with that confirmed and a reason, so a number a reviewer should have
    questioned never changes the catalog by a single click."""
    return record.review_state == "pending" and (bool(record.flags) or drop is not None)


def check_flags_confirmed(record: Record, review: ReviewIn, drop: QualityDrop | None) -> None:
    """Every missing part at once, so the form can show both errors together."""
    errors = []
    if not review.confirm_flags:
        if record.flags:
            codes = ", ".join(sorted({flag["code"] for flag in record.flags}))
            errors.append(FieldError.of("confirm_flags", CONFIRM_FLAGS(codes=codes)))
        else:
            assert drop is not None
            said = CONFIRM_QUALITY(record=str(drop.baseline.id), verdict=drop.verdict.said)
            errors.append(FieldError.of("confirm_flags", said))
    if blank(review.reason):
        errors.append(FieldError.of("reason", SAY_WHY_FLAGGED()))
    if errors:
        raise RecordInvalid(errors)


@dataclass(frozen=True)
class PendingReview:
    """A review that passed every check against the record as read; not yet written."""

    record: Record
    review: ReviewIn
    source: str
    target: str


def prepare_review(
    session: Session, record_id: int, raw: Mapping[str, Any] | ReviewIn
) -> PendingReview:
    """Everything that reads: the record, the transition, the flag confirmation."""
    review = parse_review(raw)
    record = get_record(session, record_id)
    source = record.review_state
    target = TRANSITIONS.get((source, review.action))
    if target is None:
        allowed = allowed_actions(source)
        said = NOT_ALLOWED if allowed else NO_FURTHER_REVIEW
        raise Conflict(
            said(
                record=str(record_id),
                state=STATE_WORDS[source](),
                action=ACTION_WORDS[review.action](),
                allowed=[ACTION_WORDS[action]() for action in allowed],
            )
        )
    if review.action == "accept":
        drop = quality_drop_for(session, record)
        if needs_confirmation(record, drop):
            check_flags_confirmed(record, review, drop)
    return PendingReview(record, review, source, target)


def apply_review(session: Session, pending: PendingReview, actor: str) -> None:
    """The state change, its event and the catalog revision; the record object then shows
    the new state and history as written, without being read again."""
    record = pending.record
    if not RecordRepository(session).move_state(record.id, pending.source, pending.target):
        raise Conflict(REVIEWED_MEANWHILE(record=str(record.id)))
    event = {
        "record_id": record.id,
        "action": pending.target,
        "reason": pending.review.reason.strip(),
        "actor": actor,
        "created_at": utcnow(),
    }
    RecordStore(session).insert_event(event)
    if pending.target == "accepted":
        keep_estimate(session, record)  # before the bump: the revision it was compared at
    # Accepted evidence changes figures (accepting, retracting); any review changes the list.
    evidence = "accepted" in (pending.source, pending.target)
    bump_revision(
        session, Touched(record.model_id, record.hardware_id, record.profile_id, evidence)
    )
    set_committed_value(record, "review_state", pending.target)
    set_committed_value(record, "events", [*record.events, RecordEvent(**event)])


def review_record(
    session: Session, record_id: int, raw: Mapping[str, Any] | ReviewIn, actor: str
) -> Record:
    """Accept, reject or retract inside the caller's unit of work; anything else is a
    conflict with the record's state."""
    pending = prepare_review(session, record_id, raw)
    apply_review(session, pending, actor)
    return pending.record
