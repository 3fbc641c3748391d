"""The statements of the write path: a record with its measurements, first event and
records revision bump, and the earlier record a retry is answered with (read only once the
unique key has refused the retry's copy).

Records are written with Core inserts, not through the ORM unit of work: the answer is
built from the values written, so nothing is flushed, tracked or loaded back while the
write lock is held. Statements that load no ORM objects run on the session's connection,
in its transaction, without the ORM's per-statement layer. On PostgreSQL the whole write is
one statement (data-modifying WITH clauses), one round trip; SQLite has no INSERT inside
WITH, and its statements cost no round trip, so there it is one statement per table.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from sqlalchemy import (
    JSON,
    Integer,
    Select,
    bindparam,
    column,
    exists,
    func,
    insert,
    select,
    true,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.catalog.revision import BUMP_RECORDS_AT_DEFINITION, Touched, bump_revision
from app.models import Measurement, Record, RecordEvent

RECORDS, MEASUREMENTS, EVENTS = Record.__table__, Measurement.__table__, RecordEvent.__table__


class KeyTaken(Exception):
    """The record's idempotency key was stored by a twin while this write ran (PostgreSQL
    says so without an error; on SQLite the unique key raises IntegrityError): the
    transaction must be undone."""


class KeySeen(Enum):
    """The answer of a write that found its key stored before it began: nothing written,
    so the transaction may end as it is (on PostgreSQL a rollback also drops the
    connection's prepared statements)."""

    KEY_SEEN = "key seen"


KEY_SEEN = KeySeen.KEY_SEEN


@dataclass(frozen=True)
class Earlier:
    """What a retry is answered with: the first record stored under its key."""

    id: int
    review_state: str
    flags: list[Any]
    fingerprint: str | None


EARLIER = select(Record.id, Record.review_state, Record.flags, Record.provenance_detail).where(
    Record.idempotency_key == bindparam("key")
)
INSERT_RECORD = insert(RECORDS)
INSERT_MEASUREMENTS = insert(MEASUREMENTS)
INSERT_EVENT = insert(EVENTS)

RECORD_COLUMNS = [c for c in RECORDS.c if c.name != "id"]
POINT_COLUMNS = [c for c in MEASUREMENTS.c if c.name not in ("id", "record_id")]
EVENT_COLUMNS = ("action", "reason", "actor", "created_at")


def _write_on_postgresql() -> Select:
    """The records revision bump (a new record changes no figure, so the catalog revision
    stays), only at the catalog definition the record was checked against (bound as
    `checked_definition`); then the record (its columns bound as record_<name>), its
    points (one JSON array, bound as `points`, read back into rows in their order by
    json_to_recordset) and its first event (event_<name>), all only if the bump was made
    and the key is new. One statement; it answers the new records revision and the
    record's id (both None when the catalog has moved or the key was seen before, which
    `key_seen` tells apart; the id alone None for a key stored while it ran)."""
    # A key stored before the statement began: no bump and no record (a twin committed
    # while it runs is left to ON CONFLICT below).
    key_seen = exists().where(RECORDS.c.idempotency_key == bindparam("record_idempotency_key"))
    bumped = BUMP_RECORDS_AT_DEFINITION.where(~key_seen).cte("bumped")
    written = (
        postgresql_insert(RECORDS)
        .from_select(
            [c.name for c in RECORD_COLUMNS],
            select(
                *(bindparam(f"record_{c.name}", type_=c.type) for c in RECORD_COLUMNS)
            ).select_from(bumped),
        )
        # A key seen before: no record, and no error for the server to log per retry.
        .on_conflict_do_nothing(index_elements=[RECORDS.c.idempotency_key])
        .returning(RECORDS.c.id)
        .cte("written")
    )
    points = (
        func.json_to_recordset(bindparam("points", type_=JSON))
        .table_valued(*(column(c.name, c.type) for c in POINT_COLUMNS), column("position", Integer))
        .render_derived("point", with_types=True)
    )
    points_written = (
        insert(MEASUREMENTS)
        .from_select(
            ["record_id", *(c.name for c in POINT_COLUMNS)],
            select(written.c.id, *(points.c[c.name] for c in POINT_COLUMNS))
            .select_from(written)
            .join(points, true())
            .order_by(points.c.position),  # ids in the order the points were sent
        )
        .cte("points_written")
    )
    event_written = (
        insert(EVENTS)
        .from_select(
            ["record_id", *EVENT_COLUMNS],
            select(
                written.c.id,
                *(bindparam(f"event_{name}", type_=EVENTS.c[name].type) for name in EVENT_COLUMNS),
            ),
        )
        .cte("event_written")
    )
    return select(
        select(bumped.c.records_revision).scalar_subquery().label("revision"),
        select(written.c.id).scalar_subquery().label("id"),
        key_seen.label("key_seen"),
    ).add_cte(points_written, event_written)


WRITE_ON_POSTGRESQL = _write_on_postgresql()


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

    def write(
        self,
        row: dict[str, Any],
        points: Sequence[dict[str, Any]],
        event: dict[str, Any],
        touched: Touched,
        definition: int,
    ) -> int | KeySeen | None:
        """A record, its points (in order, without their record id) and its first event,
        and the revision bump for what it touched (a new record: the records revision),
        while the catalog is at `definition` (the one the record was checked against): the
        new record's id, or, with nothing written, None when the catalog has moved since
        and KEY_SEEN (on PostgreSQL) when the record's key was stored before."""
        connection = self.connection()
        if connection.dialect.name == "postgresql":
            values = {f"record_{name}": value for name, value in row.items()}
            values.update({f"event_{name}": event[name] for name in EVENT_COLUMNS})
            values["points"] = [{**point, "position": n} for n, point in enumerate(points)]
            assert not touched.evidence, "a new record is pending: it changes no figure"
            values["checked_definition"] = definition
            written = connection.execute(WRITE_ON_POSTGRESQL, values).one()
            if written.key_seen:
                return KEY_SEEN
            if written.id is None and written.revision is not None:
                raise KeyTaken  # the bump made is undone with the transaction
            if written.revision is None:
                return None
            return int(written.id)
        # The bump first: it checks the definition, and nothing is written when it moved.
        if not bump_revision(self.session, touched, definition):
            return None
        record_id = self.insert_record(row)
        self.insert_measurements([{**point, "record_id": record_id} for point in points])
        self.insert_event({**event, "record_id": record_id})
        return record_id

    def insert_record(self, row: dict[str, Any]) -> int:
        result = self.connection().execute(INSERT_RECORD, row)
        return int(result.inserted_primary_key[0])

    def insert_measurements(self, rows: Sequence[dict[str, Any]]) -> None:
        if rows:  # one executemany (one multi-row INSERT where the driver batches)
            self.connection().execute(INSERT_MEASUREMENTS, list(rows))

    def insert_event(self, row: dict[str, Any]) -> None:
        self.connection().execute(INSERT_EVENT, row)
