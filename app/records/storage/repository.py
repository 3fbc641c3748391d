"""Every record query lives here; relationships load explicitly."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import event, func, inspect, select, update
from sqlalchemy.orm import Session, aliased, joinedload, selectinload
from sqlalchemy.sql import Select

from app.models import Artifact, Hardware, LlmModel, Measurement, Profile, Record, RecordEvent
from app.pagination import Page, keyset_page

FULL = (
    selectinload(Record.model),
    selectinload(Record.artifact),
    selectinload(Record.runtime),
    selectinload(Record.hardware),
    selectinload(Record.profile),
    selectinload(Record.measurements),
    selectinload(Record.events),
)


# A list's rows: the catalog rows each names, in the one query (many-to-one joins); no
# measurements or events, which a list only counts (`measurement_counts`).
LISTED = (
    joinedload(Record.model),
    joinedload(Record.artifact),
    joinedload(Record.runtime),
    joinedload(Record.hardware),
    joinedload(Record.profile),
)


class RecordRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, record_id: int) -> Record | None:
        statement = select(Record).where(Record.id == record_id).options(*FULL)
        return self.session.scalars(statement).one_or_none()

    def get_configuration(self, record_id: int) -> Record | None:
        """A record with its catalog rows only (one joined query), for blocks that show what
        was run rather than what was measured; its measurements and events stay unloaded."""
        statement = (
            select(Record)
            .where(Record.id == record_id)
            .options(
                joinedload(Record.model),
                joinedload(Record.artifact),
                joinedload(Record.runtime),
                joinedload(Record.hardware),
                joinedload(Record.profile),
            )
        )
        return self.session.scalars(statement).unique().one_or_none()

    def get_many(self, record_ids: Sequence[int]) -> dict[int, Record]:
        statement = select(Record).where(Record.id.in_(list(record_ids))).options(*FULL)
        return {record.id: record for record in self.session.scalars(statement)}

    def by_idempotency_key(self, key: str) -> Record | None:
        statement = select(Record).where(Record.idempotency_key == key).options(*FULL)
        return self.session.scalars(statement).one_or_none()

    def imported_file(self, sha256: str) -> tuple[int, str | None] | None:
        """The first record imported from a file with this sha256, and its idempotency key."""
        statement = (
            select(Record.id, Record.idempotency_key)
            .where(
                Record.provenance == "import",
                Record.provenance_detail["sha256"].as_string() == sha256,
            )
            .order_by(Record.id)
            .limit(1)
        )
        row = self.session.execute(statement).first()
        return (row.id, row.idempotency_key) if row else None

    def add(self, record: Record) -> Record:
        self.session.add(record)
        self.session.flush()
        return record

    def add_all(self, rows: Sequence[Measurement | RecordEvent]) -> None:
        self.session.add_all(rows)
        self.session.flush()

    def move_state(self, record_id: int, from_state: str, to_state: str) -> bool:
        """Move the review state only if nobody moved it first."""
        statement = (
            update(Record)
            .where(Record.id == record_id, Record.review_state == from_state)
            .values(review_state=to_state)
            .execution_options(synchronize_session=False)
        )
        return self.session.execute(statement).rowcount == 1

    def search(
        self,
        model: str | None = None,
        hardware: str | None = None,
        state: str | None = None,
        limit: int = 1000,
    ) -> Sequence[Record]:
        """Newest first, optionally narrowed by model slug, hardware slug and review state."""
        statement = select(Record).options(*FULL).order_by(Record.id.desc()).limit(limit)
        statement = self._filtered(statement, model, hardware, state)
        return self.session.scalars(statement).all()

    def page(
        self,
        model: str | None,
        hardware: str | None,
        state: str | None,
        cursor: str | None,
        limit: int,
    ) -> Page[Record]:
        """One page of `search`, newest first by submission, after `cursor`."""
        statement = self._filtered(select(Record).options(*FULL), model, hardware, state)
        return keyset_page(self.session, statement, Record.created_at, Record.id, cursor, limit)

    def listing(
        self,
        model: str | None,
        hardware: str | None,
        state: str | None,
        cursor: str | None,
        limit: int,
    ) -> Page[Record]:
        """`page` for a list that shows each record's catalog rows and counts its points:
        one query for the page (through the newest-first indexes), one for the counts."""
        statement = self._filtered(select(Record).options(*LISTED), model, hardware, state)
        return keyset_page(self.session, statement, Record.created_at, Record.id, cursor, limit)

    def measurement_counts(self, record_ids: Sequence[int]) -> dict[int, int]:
        statement = (
            select(Measurement.record_id, func.count())
            .where(Measurement.record_id.in_(list(record_ids)))
            .group_by(Measurement.record_id)
        )
        return {int(row[0]): int(row[1]) for row in self.session.execute(statement)}

    def _filtered(
        self, statement: Select[Any], model: str | None, hardware: str | None, state: str | None
    ) -> Select[Any]:
        if model:
            statement = statement.join(LlmModel, LlmModel.id == Record.model_id).where(
                LlmModel.slug == model
            )
        if hardware:
            statement = statement.join(Hardware, Hardware.id == Record.hardware_id).where(
                Hardware.slug == hardware
            )
        if state:
            statement = statement.where(Record.review_state == state)
        return statement

    def export_batch(
        self,
        model: str | None,
        hardware: str | None,
        state: str | None,
        before: int | None,
        size: int,
    ) -> Sequence[Record]:
        """The next `size` records, newest first, below id `before` (keyset: every batch
        costs the same however deep the export is)."""
        statement = select(Record).options(*FULL).order_by(Record.id.desc()).limit(size)
        if before is not None:
            statement = statement.where(Record.id < before)
        statement = self._filtered(statement, model, hardware, state)
        return self.session.scalars(statement).all()

    def export_page_end(
        self,
        model: str | None,
        hardware: str | None,
        state: str | None,
        before: int | None,
        limit: int,
    ) -> int | None:
        """The id of the last record of an export page of `limit` records below `before`,
        when more records match beyond it (the next page starts below it); else None."""
        statement = select(Record.id).order_by(Record.id.desc()).offset(limit - 1).limit(2)
        if before is not None:
            statement = statement.where(Record.id < before)
        statement = self._filtered(statement, model, hardware, state)
        ids = self.session.scalars(statement).all()
        return ids[0] if len(ids) == 2 else None

    def for_model_hardware(self, model_id: int, hardware_id: int) -> Sequence[Record]:
        statement = (
            select(Record)
            .where(Record.model_id == model_id, Record.hardware_id == hardware_id)
            .options(*FULL)
            .order_by(Record.id.desc())
        )
        return self.session.scalars(statement).all()

    def last_accepted_ok_id(
        self, model_id: int, hardware_id: int, profile_id: int | None
    ) -> tuple[int, datetime] | None:
        """The configuration's working record accepted last (its id) and when: one query
        through ix_records_configuration, but it joins every accepted working record of the
        configuration to its acceptance, so pages keep the answer per catalog revision
        (app.records.evidence.known_good)."""
        profile = (
            Record.profile_id.is_(None) if profile_id is None else (Record.profile_id == profile_id)
        )
        accepted = (RecordEvent.record_id == Record.id) & (RecordEvent.action == "accepted")
        # The runtime version is part of the key: one a sentinel found regressed on this
        # configuration (its run pending or accepted) never becomes known-good, whichever
        # record ran it.
        sentinel = aliased(Record)
        regressed_version = (
            select(sentinel.id)
            .where(
                sentinel.sentinel_verdict == "regressed",
                sentinel.model_id == model_id,
                sentinel.hardware_id == hardware_id,
                sentinel.profile_id.is_(None)
                if profile_id is None
                else (sentinel.profile_id == profile_id),
                sentinel.review_state.in_(("pending", "accepted")),
                sentinel.runtime_id == Record.runtime_id,
                sentinel.runtime_version == Record.runtime_version,
            )
            .exists()
        )
        statement = (
            select(Record.id, RecordEvent.created_at)
            .join(RecordEvent, accepted)
            .where(
                Record.model_id == model_id,
                Record.hardware_id == hardware_id,
                profile,
                Record.review_state == "accepted",
                Record.outcome == "ok",
                ~regressed_version,
            )
            .order_by(RecordEvent.created_at.desc(), RecordEvent.id.desc())
            .limit(1)
        )
        row = self.session.execute(statement).first()
        return None if row is None else (row[0], row[1])

    def known_good_ids_on(self, hardware_id: int) -> list[int]:
        """The known-good record of every model and profile measured on the hardware."""
        statement = (
            select(Record.model_id, Record.profile_id)
            .where(
                Record.hardware_id == hardware_id,
                Record.review_state == "accepted",
                Record.outcome == "ok",
            )
            .distinct()
        )
        found = [
            self.last_accepted_ok_id(model_id, hardware_id, profile_id)
            for model_id, profile_id in self.session.execute(statement).all()
        ]
        return sorted(good[0] for good in found if good is not None)

    def regressed_sentinels(
        self, model_id: int, hardware_id: int, profile_id: int | None, limit: int = 5
    ) -> list[Record]:
        """Sentinel runs of the configuration that regressed, newest first; a rejected or
        retracted one no longer speaks for the runtime version it ran."""
        profile = (
            Record.profile_id.is_(None) if profile_id is None else (Record.profile_id == profile_id)
        )
        statement = (
            select(Record)
            .where(
                Record.sentinel_verdict == "regressed",
                Record.model_id == model_id,
                Record.hardware_id == hardware_id,
                profile,
                Record.review_state.in_(("pending", "accepted")),
            )
            .options(joinedload(Record.runtime))
            .order_by(Record.created_at.desc(), Record.id.desc())
            .limit(limit)
        )
        return list(self.session.scalars(statement).unique())

    def artifact_owner(self, slug: str) -> Artifact | None:
        statement = (
            select(Artifact).where(Artifact.slug == slug).options(selectinload(Artifact.model))
        )
        return self.session.scalars(statement).one_or_none()

    def profiles(self) -> Sequence[Profile]:
        return self.session.scalars(select(Profile).order_by(Profile.sort, Profile.name)).all()


WRITE_ONCE = frozenset(c.key for c in Record.__table__.columns) - {"review_state"}


@event.listens_for(Record, "before_update")
def _records_are_write_once(_mapper: Any, _connection: Any, record: Record) -> None:
    """Only the review state may move (and it moves through RecordRepository.move_state)."""
    state = inspect(record)
    changed = [key for key in WRITE_ONCE if state.attrs[key].history.has_changes()]
    if changed:
        raise ValueError(f"records are write-once; refusing to change {', '.join(sorted(changed))}")
