"""The statements of the write path: a record written in as few statements as there are
tables, and the earlier record a retry is answered with.

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

from app.models import CatalogState, Measurement, Record, RecordEvent

RECORDS, MEASUREMENTS, EVENTS = Record.__table__, Measurement.__table__, RecordEvent.__table__
STATE = CatalogState.__table__


@dataclass(frozen=True)
class Earlier:
    """What a retry is answered with: the first record stored under its key."""

    id: int
    review_state: str
    flags: list[Any]
    fingerprint: str | None


EARLIER = select(Record.id, Record.review_state, Record.flags, Record.provenance_detail).where(
    Record.idempotency_key == bindparam("key"))
# The same lookup with the catalog definition beside it, in one statement: a submission
# with a key needs both before it writes (app.catalog.references keys its snapshot on it).
EARLIER_AND_DEFINITION = (
    select(STATE.c.definition, RECORDS.c.id, RECORDS.c.review_state, RECORDS.c.flags,
           RECORDS.c.provenance_detail)
    .select_from(STATE)
    .outerjoin(RECORDS, RECORDS.c.idempotency_key == bindparam("key"))
    .where(STATE.c.id == 1)
)
INSERT_RECORD = insert(RECORDS)
INSERT_MEASUREMENTS = insert(MEASUREMENTS)
INSERT_EVENT = insert(EVENTS)


def earlier_of(row: Any) -> Earlier | None:
    if row is None:
        return None
    return Earlier(row.id, row.review_state, row.flags, row.provenance_detail.get("fingerprint"))


class RecordStore:
    """Statements of one step (a check, or the writes of one transaction): the session's
    connection is looked up once for them all."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._connection: Connection | None = None

    def connection(self) -> Connection:
        if self._connection is None:
            self._connection = self.session.connection()
        return self._connection

    def earlier(self, key: str) -> Earlier | None:
        return earlier_of(self.connection().execute(EARLIER, {"key": key}).one_or_none())

    def earlier_and_definition(self, key: str) -> tuple[Earlier | None, int]:
        """The first record under `key`, if any, and the catalog definition (0 when unset)."""
        row = self.connection().execute(EARLIER_AND_DEFINITION, {"key": key}).one_or_none()
        if row is None:  # no catalog state row yet
            return self.earlier(key), 0
        return earlier_of(row if row.id is not None else None), row.definition or 0

    def insert_record(self, row: dict[str, Any]) -> int:
        result = self.connection().execute(INSERT_RECORD, row)
        return int(result.inserted_primary_key[0])

    def insert_measurements(self, rows: Sequence[dict[str, Any]]) -> None:
        if rows:  # one executemany (one multi-row INSERT where the driver batches)
            self.connection().execute(INSERT_MEASUREMENTS, list(rows))

    def insert_event(self, row: dict[str, Any]) -> None:
        self.connection().execute(INSERT_EVENT, row)
