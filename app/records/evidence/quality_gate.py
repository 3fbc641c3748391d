"""A quality drop against the known-good configuration: what stops a record from becoming
known-good by a single click. The record is compared, prompt by prompt, with the
configuration's known-good record (``app.records.comparison.paired``); a significant loss
is a drop."""

from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.models import Record
from app.records.comparison.paired import PairedVerdict, quality_drop
from app.records.evidence.known_good import known_good_for
from app.records.storage.repository import RecordRepository


@dataclass(frozen=True)
class QualityDrop:
    baseline: Record
    verdict: PairedVerdict


def quality_drop_for(session: Session, record: Record) -> QualityDrop | None:
    """Only for a pending record that would become known-good (a working one)."""
    if record.review_state != "pending" or record.outcome != "ok":
        return None
    good = known_good_for(session, record)
    if good is None or good.record.id == record.id:
        return None
    baseline = RecordRepository(session).get(good.record.id)  # with its measurements
    if baseline is None:
        return None
    verdict = quality_drop(baseline, record)
    return QualityDrop(baseline, verdict) if verdict is not None else None
