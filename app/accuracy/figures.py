"""Per class of runtime and hardware: how right the estimate was with each publisher of the
shipped measurements left out of the fit and of the ranges it was scored by (the headline),
on the shipped checking measurements (in sample: they set the ranges) and on accepted
records, for each estimator version; and the range in effect.

Errors are those of the range's middle against the measured decode speed (|middle -
measured| / measured), as `make accuracy` counts them; "held" is the share of measurements
inside the stated range. Shipped figures come from `app/estimate/ranges/accuracy_table.py`;
records' from the estimate kept when each was accepted (`app/accuracy/snapshot.py`), so an
estimator change never rescores an earlier record. Flagged, rejected and retracted records
never count.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

import msgspec
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accuracy.evidence import range_book
from app.accuracy.labels import class_anchor, class_label
from app.estimate.ranges.accuracy_table import ACCURACY_HISTORY, HELD_OUT_HISTORY
from app.estimate.ranges.classes import STATED, range_of_key
from app.estimate.ranges.from_records import RangeBook
from app.estimate.version import ESTIMATOR_VERSION
from app.models import Record, RecordEstimate

WITHIN = 0.3


class Summary(msgspec.Struct, frozen=True):
    count: int
    median_error: float
    within_30: float
    range_held: float


class HeldOut(Summary, frozen=True):
    """Figures with each publisher left out of the fit and ranges it was scored by."""

    publishers: int  # how many publishers the measurements come from


class VersionFigures(msgspec.Struct, frozen=True):
    version: str
    held_out: HeldOut | None
    shipped: Summary | None
    records: Summary | None


class RangeInEffect(msgspec.Struct, frozen=True):
    low: float
    high: float
    stated: float
    held: float | None
    checks: int
    records: int
    borrowed: bool


class ClassFigures(msgspec.Struct, frozen=True):
    key: str
    label: str
    anchor: str
    range: RangeInEffect
    held_out: HeldOut | None  # this estimator version, each publisher left out
    shipped: Summary | None  # this estimator version, in sample
    records: Summary | None
    history: list[VersionFigures]  # every version with figures, oldest first


class Accuracy(msgspec.Struct, frozen=True):
    estimator_version: str
    stated: float
    classes: list[ClassFigures]


SCORED = (
    select(
        RecordEstimate.estimator_version,
        RecordEstimate.class_key,
        RecordEstimate.decode_low,
        RecordEstimate.decode_high,
        RecordEstimate.measured_decode,
    )
    .join(Record, Record.id == RecordEstimate.record_id)
    .where(RecordEstimate.flagged.is_(False), Record.review_state == "accepted")
    .order_by(RecordEstimate.id)
)


def summary(points: Iterable[tuple[float, float, float]]) -> Summary | None:
    """(low, high, measured) points scored: count, median error, within 30%, range held."""
    found = [(low, high, measured) for low, high, measured in points if measured > 0]
    if not found:
        return None
    errors = [abs((low + high) / 2 - measured) / measured for low, high, measured in found]
    held = sum(low <= measured <= high for low, high, measured in found)
    return Summary(
        len(found),
        round(statistics.median(errors), 3),
        round(sum(e <= WITHIN for e in errors) / len(errors), 3),
        round(held / len(found), 3),
    )


def shipped_by_version() -> dict[str, dict[str, Summary]]:
    """The shipped checks' figures by estimator version and class."""
    found: dict[str, dict[str, Summary]] = defaultdict(dict)
    for version, key, count, median, within, held in ACCURACY_HISTORY:
        found[version][key] = Summary(count, median, within, held)
    return found


def held_out_by_version() -> dict[str, dict[str, HeldOut]]:
    """The leave-one-publisher-out figures by estimator version and class."""
    found: dict[str, dict[str, HeldOut]] = defaultdict(dict)
    for version, key, count, median, within, held, publishers in HELD_OUT_HISTORY:
        found[version][key] = HeldOut(count, median, within, held, publishers)
    return found


def records_by_version(session: Session) -> dict[str, dict[str, Summary]]:
    """The counted records' figures by estimator version and class."""
    points: dict[tuple[str, str], list[tuple[float, float, float]]] = defaultdict(list)
    for version, key, low, high, measured in session.execute(SCORED):
        points[(version, key)].append((low, high, measured))
    found: dict[str, dict[str, Summary]] = defaultdict(dict)
    for (version, key), values in points.items():
        scored = summary(values)
        if scored is not None:
            found[version][key] = scored
    return found


def _versions(*tables: dict[str, dict]) -> list[str]:
    """Versions oldest first: "2026.12.1" < "2026.12.10" (numeric parts compared)."""
    names = {version for table in tables for version in table}
    return sorted(names, key=lambda v: [int(p) if p.isdigit() else p for p in v.split(".")])


def accuracy(session: Session, book: RangeBook | None = None) -> Accuracy:
    """Every class with figures, by runtime family then key (each family's pool first)."""
    shipped, records = shipped_by_version(), records_by_version(session)
    held_out = held_out_by_version()
    book = book or range_book(session)
    versions = _versions(shipped, records, held_out)
    tables = (*shipped.values(), *records.values(), *held_out.values())
    keys = {key for table in tables for key in table}
    classes = []
    for key in sorted(keys, key=lambda k: (k.split("/")[0], "*" not in k, k)):
        held = range_of_key(key, book.classes)
        history = [
            VersionFigures(v, held_out[v].get(key), shipped[v].get(key), records[v].get(key))
            for v in versions
            if key in shipped[v] or key in records[v] or key in held_out[v]
        ]
        classes.append(
            ClassFigures(
                key=key,
                label=class_label(key),
                anchor=class_anchor(key),
                range=RangeInEffect(
                    held.low,
                    held.high,
                    held.stated,
                    held.held,
                    held.checks,
                    held.records,
                    held.borrowed,
                ),
                held_out=held_out[ESTIMATOR_VERSION].get(key),
                shipped=shipped[ESTIMATOR_VERSION].get(key),
                records=records[ESTIMATOR_VERSION].get(key),
                history=history,
            )
        )
    return Accuracy(ESTIMATOR_VERSION, STATED, classes)
