"""The records behind a detail page: every record of the model on the hardware, and the
last known-good configuration. The figures they measured reach the page through the
resolved recipe (`app.resolve`), so they read the same everywhere."""

from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import Request
from sqlalchemy.orm import Session

from app.models import Hardware, LlmModel, Profile, Record
from app.records.repository import RecordRepository


@dataclass
class DetailEvidence:
    records: list[Record]
    last_known_good: Record | None
    last_known_good_same_profile: bool

    @property
    def accepted(self) -> list[Record]:
        return [r for r in self.records if r.review_state == "accepted"]


def accepted_ok(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.review_state == "accepted" and r.outcome == "ok"]


def last_known_good(records: Sequence[Record], profile: Profile) -> tuple[Record | None, bool]:
    """The newest accepted working record, preferring this profile's."""
    good = accepted_ok(records)
    same = [r for r in good if r.profile_id == profile.id]
    if same:
        return same[0], True
    return (good[0], False) if good else (None, False)


def load_detail_evidence(
    session: Session, model: LlmModel, hardware: Hardware, profile: Profile
) -> DetailEvidence:
    records = list(RecordRepository(session).for_model_hardware(model.id, hardware.id))
    good, same_profile = last_known_good(records, profile)
    return DetailEvidence(records, good, same_profile)


def record_summary(request: Request, record: Record) -> dict:
    return {
        "id": record.id,
        "url": str(request.url_for("records:detail", record_id=record.id)),
        "review_state": record.review_state,
        "outcome": record.outcome,
        "artifact": record.artifact.slug,
        "runtime": record.runtime.slug,
        "runtime_version": record.runtime_version,
        "profile": record.profile.slug if record.profile else None,
        "flags": [flag["code"] for flag in record.flags],
    }


def evidence_out(request: Request, evidence: DetailEvidence | None) -> dict | None:
    """The JSON twin of the detail page's records section."""
    if evidence is None:
        return None
    good = evidence.last_known_good
    return {
        "records": [record_summary(request, r) for r in evidence.records],
        "last_known_good": None if good is None else {
            **record_summary(request, good),
            "command": good.command,
            "applied_values": good.applied_values,
            "same_profile": evidence.last_known_good_same_profile,
        },
    }
