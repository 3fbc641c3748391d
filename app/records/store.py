"""The statements of the write path: the catalog rows a submission names, found in one query,
and a record written in as few statements as there are tables.

Records are written with Core inserts, not through the ORM unit of work: the answer is
built from the values written, so nothing is flushed, tracked or loaded back while the
write lock is held. Statements that load no ORM objects run on the session's connection,
in its transaction, without the ORM's per-statement layer.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.models import (
    Artifact,
    Hardware,
    LlmModel,
    Measurement,
    Profile,
    Record,
    RecordEvent,
    Runtime,
)

RECORDS, MEASUREMENTS, EVENTS = Record.__table__, Measurement.__table__, RecordEvent.__table__


@dataclass(frozen=True)
class Found:
    """The rows a submission's slugs name, when every slug names one (and the file is the
    model's); anything less is resolved slug by slug, for the error messages."""

    model: LlmModel
    artifact: Artifact
    runtime: Runtime
    hardware: Hardware
    profile: Profile | None


@dataclass(frozen=True)
class Earlier:
    """What a retry is answered with: the first record stored under its key."""

    id: int
    review_state: str
    flags: list[Any]
    fingerprint: str | None


def _find_statement(with_profile: bool) -> Any:
    # Built once: a statement made per call costs more Python than the query itself.
    statement = (
        select(LlmModel, Artifact, Runtime, Hardware, *([Profile] if with_profile else []))
        .select_from(Artifact)
        .join(LlmModel, (LlmModel.id == Artifact.model_id)
              & (LlmModel.slug == bindparam("model")))
        .join(Runtime, Runtime.slug == bindparam("runtime"))
        .join(Hardware, Hardware.slug == bindparam("hardware"))
        .where(Artifact.slug == bindparam("artifact"))
    )
    if with_profile:
        statement = statement.join(Profile, Profile.slug == bindparam("profile"))
    return statement


FIND = {False: _find_statement(False), True: _find_statement(True)}
EARLIER = select(Record.id, Record.review_state, Record.flags, Record.provenance_detail).where(
    Record.idempotency_key == bindparam("key"))
INSERT_RECORD = insert(RECORDS)
INSERT_MEASUREMENTS = insert(MEASUREMENTS)
INSERT_EVENT = insert(EVENTS)


class RecordStore:
    def __init__(self, session: Session) -> None:
        self.session = session

    def connection(self) -> Connection:
        return self.session.connection()

    def find(self, model: str, artifact: str, runtime: str, hardware: str,
             profile: str | None) -> Found | None:
        """One query for the usual, valid submission."""
        names = {"model": model, "artifact": artifact, "runtime": runtime, "hardware": hardware}
        if profile:
            names["profile"] = profile
        row = self.session.execute(FIND[bool(profile)], names).one_or_none()
        if row is None:
            return None
        return Found(row[0], row[1], row[2], row[3], row[4] if profile else None)

    def earlier(self, key: str) -> Earlier | None:
        row = self.connection().execute(EARLIER, {"key": key}).one_or_none()
        if row is None:
            return None
        return Earlier(row.id, row.review_state, row.flags,
                       row.provenance_detail.get("fingerprint"))

    def insert_record(self, row: dict[str, Any]) -> int:
        result = self.connection().execute(INSERT_RECORD, row)
        return int(result.inserted_primary_key[0])

    def insert_measurements(self, rows: Sequence[dict[str, Any]]) -> None:
        if rows:  # one executemany (one multi-row INSERT where the driver batches)
            self.connection().execute(INSERT_MEASUREMENTS, list(rows))

    def insert_event(self, row: dict[str, Any]) -> None:
        self.connection().execute(INSERT_EVENT, row)
