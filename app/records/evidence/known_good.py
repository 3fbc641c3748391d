"""The known-good configuration of a model on a hardware under a profile: the working
(`ok`) record a maintainer accepted last. It is what to start from, and what to compare a
new run with; the record form and the benchmark form can be filled from it."""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi import Request
from sqlalchemy.orm import Session

from app.models import Hardware, LlmModel, Profile, Record
from app.records.storage.configuration import Configuration
from app.records.storage.per_revision import KeptPerRevision, database_of
from app.records.storage.repository import RecordRepository


@dataclass(frozen=True)
class KnownGood:
    record: Record
    accepted_at: datetime
    # Sentinel runs that found this configuration regressed on another runtime version.
    regressions: tuple[Record, ...] = ()

    @property
    def record_query(self) -> dict[str, str]:
        """Query parameters of the record form, filled from this record."""
        return {"from_record": str(self.record.id)}

    @property
    def benchmark_query(self) -> dict[str, str]:
        """Query parameters of the benchmark form: what the job's record will be about."""
        ran = Configuration.of(self.record)
        query = {
            "model": ran.model,
            "artifact": ran.artifact,
            "runtime": ran.runtime,
            "runtime_version": ran.runtime_version,
            "hardware": ran.hardware,
            "command": ran.command,
            "profile": ran.profile,
        }
        return {key: value for key, value in query.items() if value}

    def benchmark_query_over(self, page_query: dict[str, str]) -> dict[str, str]:
        """The page's own pre-fill (the server's address) with this record's run on top."""
        return {**page_query, **self.benchmark_query}


# Which record is known-good, per configuration: only a review changes the answer, and
# every review moves the revision, so a page built again at the same revision loads the
# record by its id instead of joining every accepted record of the configuration to its
# acceptance again.
KNOWN_GOOD_IDS: KeptPerRevision[tuple[int, datetime] | None] = KeptPerRevision(1024)


def known_good_id(
    records: RecordRepository, key: tuple[int, int, int | None], revision: int
) -> tuple[int, datetime] | None:
    cache_key = (database_of(records.session), key)
    kept = KNOWN_GOOD_IDS.get(cache_key)
    if kept is not None and kept[0] == revision:
        return kept[1]
    found = records.last_accepted_ok_id(*key)
    KNOWN_GOOD_IDS.put(cache_key, revision, found)
    return found


def find_known_good(
    session: Session,
    model: LlmModel,
    hardware: Hardware,
    profile: Profile | None,
    revision: int | None = None,
) -> KnownGood | None:
    """`revision`: the catalog revision the caller reads at, to use the answer kept for it."""
    records = RecordRepository(session)
    key = (model.id, hardware.id, profile.id if profile else None)
    found = (
        records.last_accepted_ok_id(*key)
        if revision is None
        else known_good_id(records, key, revision)
    )
    record = records.get_configuration(found[0]) if found else None
    if found is None or record is None:
        return None
    accepted_at = found[1]
    regressions = tuple(records.regressed_sentinels(*key))
    # SQLite hands back naive datetimes; every stored time is UTC.
    return KnownGood(record, accepted_at.replace(tzinfo=accepted_at.tzinfo or UTC), regressions)


def known_good_for(session: Session, record: Record) -> KnownGood | None:
    """The known-good configuration of the record's own model, hardware and profile."""
    return find_known_good(session, record.model, record.hardware, record.profile)


def record_form_values(record: Record) -> dict[str, str]:
    """The record form's fields as this record filled them (not its measurements: a new
    run measures its own)."""
    ran = Configuration.of(record)
    values = {
        "model": ran.model,
        "artifact": ran.artifact,
        "runtime": ran.runtime,
        "runtime_version": ran.runtime_version,
        "hardware": ran.hardware,
        "gpu_count": str(ran.gpu_count),
        "profile": ran.profile or "",
        "command": ran.command,
        "outcome": "ok",
        "applied_values": json.dumps(ran.applied_values) if ran.applied_values else "",
    }
    for key, value in ran.environment.items():
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            values[f"environment.{key}"] = str(value)
    return {key: value for key, value in values.items() if value}


def known_good_out(request: Request, good: KnownGood | None) -> dict[str, Any] | None:
    """The JSON twin of the known-good block."""
    if good is None:
        return None
    record = good.record
    return {
        "id": record.id,
        "url": str(request.url_for("records:detail", record_id=record.id)),
        "accepted_at": good.accepted_at.isoformat(),
        **Configuration.of(record).as_json(),
        "pinned": record.pinned,
        "regressed_by": [
            {
                "id": bad.id,
                "runtime_version": bad.runtime_version,
                "url": str(request.url_for("records:detail", record_id=bad.id)),
            }
            for bad in good.regressions
        ],
        "new_record_url": str(
            request.url_for("records:new").include_query_params(**good.record_query)
        ),
        "benchmark_url": str(
            request.url_for("benchmarks:index").include_query_params(**good.benchmark_query)
        ),
    }
