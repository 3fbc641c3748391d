"""The accepted records' side of the accuracy: the ratios the range update takes, and the
range classes in effect at a catalog revision.

A record counts when it is accepted, carried no plausibility flags, and was compared with
this estimator version's figures (another version's point estimate is another model's).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.estimate.ranges.from_records import RangeBook, RecordRatio, updated_book
from app.estimate.version import ESTIMATOR_VERSION
from app.models import Record, RecordEstimate

COUNTED = (
    select(
        RecordEstimate.class_key,
        RecordEstimate.measured_decode,
        RecordEstimate.decode_point,
        Record.submitted_by,
        RecordEstimate.record_id,
    )
    .join(Record, Record.id == RecordEstimate.record_id)
    .where(
        RecordEstimate.estimator_version == ESTIMATOR_VERSION,
        RecordEstimate.flagged.is_(False),
        Record.review_state == "accepted",
    )
    .order_by(RecordEstimate.id)
)


def counted_ratios(session: Session) -> list[RecordRatio]:
    """measured / point estimate of every counted record point, with its submitter."""
    return [
        RecordRatio(key, measured / point, submitter, record_id)
        for key, measured, point, submitter, record_id in session.execute(COUNTED)
        if point > 0
    ]


def range_book(session: Session) -> RangeBook:
    """The range classes in effect: the shipped ones, updated by the counted records."""
    return updated_book(counted_ratios(session))
