"""Accepted records narrow (or widen) the ranges: the update rule.

A class's range (`app/estimate/ranges/classes.py`) is the 10th-90th percentile of measured / point
estimate over its shipped checking measurements. Accepted records are more such ratios, so
the updated range is the same interval over the union of both, each ratio weighted:

- every shipped checking measurement weighs 1 (the prior);
- a submitter's points in a class together weigh at most SUBMITTER_CAP (each of n points
  weighs min(1, SUBMITTER_CAP / n)), so a flood counts as a few measurements;
- records move a class only once MIN_SUBMITTERS different submitters have records in it:
  one submitter alone never moves a class;
- only the records the caller passes count: the records service passes accepted records
  without flags, compared with this estimator version's figures; rejected, retracted and
  flagged records never reach this rule;
- a class whose weight (checks and records) stays under MIN_CHECKS keeps borrowing a pool
  of its family (its load's, else the whole family's), which the family's records update in
  the same way.

The interval is the weighted quantile that, with equal weights, is the shipped one (linear
interpolation between sorted ratios), reaching, as the shipped one does, each checking
publisher's median and each counted submitter's median (`reach_publishers`): records that
agree with the estimate put weight near its middle and pull the percentiles in; records
that disagree push them out, and a submitter whose own median lies outside widens it.
`held` is the weighted share of the union inside the range. The rule is pure: the records'
ratios are gathered by a service and passed in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from app.estimate.ranges.accuracy_table import CHECK_MEDIANS, CHECK_RATIOS
from app.estimate.ranges.classes import (
    MIN_CHECKS,
    RANGE_CLASSES,
    STATED,
    RangeClass,
    pool_keys,
    publisher_medians,
    reach_publishers,
)

SUBMITTER_CAP = 3.0
MIN_SUBMITTERS = 2


class RecordRatio(msgspec.Struct, frozen=True):
    """One accepted record's point: its class, measured / point estimate, who submitted it."""

    key: str
    ratio: float
    submitter: str
    record_id: int


class RangeBook:
    """The range classes in effect: the shipped ones, with the classes records updated.
    Two books are equal when they put the same range around every estimate."""

    __slots__ = ("classes", "records", "updated")

    def __init__(
        self,
        classes: Mapping[str, RangeClass],
        records: int = 0,
        updated: frozenset[str] = frozenset(),
    ) -> None:
        self.classes = dict(classes)
        self.records = records  # accepted records counted anywhere
        self.updated = updated  # the class keys records moved

    def same_ranges(self, other: RangeBook | None) -> bool:
        """Whether `other` puts the same range around every estimate."""
        return other is not None and self.classes == other.classes

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RangeBook):
            return NotImplemented
        return self is other or self.same_ranges(other)

    def __hash__(self) -> int:
        return hash(self.updated)


SHIPPED = RangeBook(RANGE_CLASSES)


def weighted_quantile(values: Sequence[tuple[float, float]], q: float) -> float:
    """The q-quantile of (value, weight) pairs; with equal weights, linear interpolation at
    position q x (n - 1) of the sorted values (as the shipped ranges are set). Equal values
    are one value of their summed weight, so how a weight is split never moves the answer."""
    merged: dict[float, float] = defaultdict(float)
    for value, weight in values:
        merged[value] += weight
    ordered = sorted(merged.items())
    if len(ordered) == 1:
        return ordered[0][0]
    first, last = ordered[0][1], ordered[-1][1]
    span = sum(w for _, w in ordered) - first / 2 - last / 2
    positions, total = [], 0.0
    for _, weight in ordered:
        total += weight
        positions.append((total - weight / 2 - first / 2) / span)
    for i in range(1, len(ordered)):
        if positions[i] >= q:
            lo, hi = positions[i - 1], positions[i]
            share = 0.0 if hi == lo else (q - lo) / (hi - lo)
            return ordered[i - 1][0] + (ordered[i][0] - ordered[i - 1][0]) * share
    return ordered[-1][0]


def counted_submitters(ratios: Iterable[RecordRatio]) -> dict[str, list[float]]:
    """A class's record ratios by submitter; none while fewer than MIN_SUBMITTERS submit."""
    by_submitter: dict[str, list[float]] = defaultdict(list)
    for found in ratios:
        by_submitter[found.submitter].append(found.ratio)
    return dict(by_submitter) if len(by_submitter) >= MIN_SUBMITTERS else {}


def submitter_weights(ratios: Iterable[RecordRatio]) -> list[tuple[float, float]]:
    """(ratio, weight) of a class's record points, each submitter's total capped."""
    weighted = []
    for values in counted_submitters(ratios).values():
        weight = min(1.0, SUBMITTER_CAP / len(values))
        weighted += [(value, weight) for value in values]
    return weighted


def updated_class(
    key: str,
    checks: Sequence[float],
    records: Sequence[RecordRatio],
    check_medians: Sequence[float] = (),
) -> RangeClass | None:
    """The class's range over its checks and counted records, reaching each of its
    checks' publishers' medians and each counted submitter's median; None when no record
    counts or the class weighs too little to stand on its own."""
    counted = submitter_weights(records)
    if not counted:
        return None
    union = [(value, 1.0) for value in checks] + counted
    total = sum(weight for _, weight in union)
    if total < MIN_CHECKS:
        return None
    tail = (1 - STATED) / 2
    low, high = reach_publishers(
        key,
        weighted_quantile(union, tail),
        weighted_quantile(union, 1 - tail),
        [*check_medians, *publisher_medians(counted_submitters(records))],
    )
    low, high = round(low, 2), round(high, 2)
    held = sum(weight for value, weight in union if low <= value <= high) / total
    used = len({found.record_id for found in records})
    return RangeClass(key, low, high, len(checks), round(held, 2), records=used)


def updated_book(
    ratios: Iterable[RecordRatio],
    checks: Mapping[str, Sequence[float]] = CHECK_RATIOS,
    shipped: Mapping[str, RangeClass] = RANGE_CLASSES,
    medians: Mapping[str, Sequence[float]] = CHECK_MEDIANS,
) -> RangeBook:
    """The shipped classes with every class (and family pool) the records move replaced."""
    by_key: dict[str, list[RecordRatio]] = defaultdict(list)
    for found in ratios:
        for key in (found.key, *pool_keys(found.key)):
            by_key[key].append(found)
    classes = dict(shipped)
    for key, found in by_key.items():
        updated = updated_class(key, checks.get(key, ()), found, medians.get(key, ()))
        if updated is not None:
            classes[key] = updated
    records = len({found.record_id for values in by_key.values() for found in values})
    moved = frozenset(key for key, value in classes.items() if shipped.get(key) != value)
    return RangeBook(classes, records, moved)
