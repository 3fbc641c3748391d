"""The queries behind a detail page's evidence section. Each is bounded: counts, medians
and ranges come back aggregated from the database and at most a handful of records are
loaded, so the page costs the same with no records or a hundred thousand."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, func, select
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.sql import Subquery

from app.models import Measurement, Record
from app.records.storage.medians import distinct_count, median, ranked
from app.records.storage.per_revision import database_of

# A list row shows these; each is one row per record, so they join in the same query.
LISTED = (joinedload(Record.artifact), joinedload(Record.runtime), joinedload(Record.profile))

CONTEXT_METRICS = ("decode_tokens_per_s", "ttft_ms")
CONCURRENCY_METRICS = ("throughput_tokens_per_s", "decode_tokens_per_s", "ttft_ms")


@dataclass(frozen=True)
class EvidenceScope:
    """Accepted, working records of one route and profile of a model on one hardware.

    Without a route (no model file and runtime pair serves here), every route counts."""

    model_id: int
    hardware_id: int
    profile_id: int | None
    artifact_id: int | None = None
    runtime_id: int | None = None


def newest_first(statement: Any) -> Any:
    return statement.order_by(Record.created_at.desc(), Record.id.desc())


class EvidenceQueries:
    def __init__(self, session: Session) -> None:
        self.session = session

    def state_counts(self, model_id: int, hardware_id: int) -> dict[str, int]:
        statement = (
            select(Record.review_state, func.count())
            .where(Record.model_id == model_id, Record.hardware_id == hardware_id)
            .group_by(Record.review_state)
        )
        return {row[0]: row[1] for row in self.session.execute(statement)}

    @property
    def database(self) -> str:
        """Which database these queries read, so figures of one are never taken for another's."""
        return database_of(self.session)

    def accepted_stamp(self, model_id: int, hardware_id: int) -> tuple[int, int, int]:
        """Count, largest and sum of the accepted record ids of a model on a hardware: read
        from one index alone, and different whenever a record is accepted or leaves the
        accepted state, so a summary computed at one stamp holds until it moves."""
        statement = select(
            func.count(Record.id),
            func.coalesce(func.max(Record.id), 0),
            func.coalesce(func.sum(Record.id), 0),
        ).where(
            Record.model_id == model_id,
            Record.hardware_id == hardware_id,
            Record.review_state == "accepted",
        )
        count, largest, total = self.session.execute(statement).one()
        return int(count), int(largest), int(total)

    def latest_accepted(self, model_id: int, hardware_id: int, limit: int) -> Sequence[Record]:
        statement = newest_first(
            select(Record)
            .where(
                Record.model_id == model_id,
                Record.hardware_id == hardware_id,
                Record.review_state == "accepted",
            )
            .options(*LISTED)
            .limit(limit)
        )
        return self.session.scalars(statement).all()

    def last_known_good(self, model_id: int, hardware_id: int, profile_id: int) -> Record | None:
        """The newest accepted working record, this profile's before any other's. Each
        query walks the configuration's index newest first and stops at the first match."""
        statement = newest_first(
            select(Record)
            .where(
                Record.model_id == model_id,
                Record.hardware_id == hardware_id,
                Record.review_state == "accepted",
                Record.outcome == "ok",
                Record.sentinel_verdict.is_distinct_from("regressed"),
            )
            .options(*LISTED)
            .limit(1)
        )
        same = self.session.scalars(statement.where(Record.profile_id == profile_id)).first()
        return same or self.session.scalars(statement).first()

    def points(self, scope: EvidenceScope) -> Subquery:
        statement = (
            select(
                Measurement.record_id,
                Measurement.context_length,
                Measurement.concurrency,
                Measurement.decode_tokens_per_s,
                Measurement.ttft_ms,
                Measurement.throughput_tokens_per_s,
                Measurement.peak_memory_gb_per_gpu,
            )
            .join(Record, Record.id == Measurement.record_id)
            .where(
                Record.model_id == scope.model_id,
                Record.hardware_id == scope.hardware_id,
                Record.profile_id == scope.profile_id,
                Record.review_state == "accepted",
                Record.outcome == "ok",
            )
        )
        if scope.artifact_id is not None and scope.runtime_id is not None:
            statement = statement.where(
                Record.artifact_id == scope.artifact_id, Record.runtime_id == scope.runtime_id
            )
        return statement.subquery("points")

    def by_context(self, scope: EvidenceScope) -> Sequence[Row[Any]]:
        """One request at a time, per context length: medians, ranges, largest peak."""
        points = self.points(scope)
        single = select(points).where(points.c.concurrency == 1).subquery("single")
        rows = ranked(single, ["context_length"], CONTEXT_METRICS)
        statement = (
            select(
                rows.c.context_length,
                *self._spread(rows, CONTEXT_METRICS),
                func.max(rows.c.peak_memory_gb_per_gpu).label("peak_memory_gb_per_gpu"),
                distinct_count(rows, "record_id").label("records"),
            )
            .group_by(rows.c.context_length)
            .order_by(rows.c.context_length)
        )
        return self.session.execute(statement).all()

    def by_concurrency(self, scope: EvidenceScope) -> Sequence[Row[Any]]:
        """Per number of requests at once: medians and ranges, over any context length."""
        rows = ranked(self.points(scope), ["concurrency"], CONCURRENCY_METRICS)
        statement = (
            select(
                rows.c.concurrency,
                func.min(rows.c.context_length).label("context_low"),
                func.max(rows.c.context_length).label("context_high"),
                *self._spread(rows, CONCURRENCY_METRICS),
                distinct_count(rows, "record_id").label("records"),
            )
            .group_by(rows.c.concurrency)
            .order_by(rows.c.concurrency)
        )
        return self.session.execute(statement).all()

    @staticmethod
    def _spread(rows: Subquery, metrics: Sequence[str]) -> list[Any]:
        columns = []
        for metric in metrics:
            columns += [
                median(rows, metric).label(f"{metric}_median"),
                func.min(rows.c[metric]).label(f"{metric}_low"),
                func.max(rows.c[metric]).label(f"{metric}_high"),
            ]
        return columns
