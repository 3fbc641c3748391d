"""Write `app/estimate/ranges/accuracy_table.json`: each class's checking ratios (measured /
point estimate) and its publishers' median ratios, which the records' update rule takes as
its prior, the per-class accuracy of this estimator version on the shipped checking
measurements (in sample: they set the ranges), and its per-class accuracy with each
publisher left out of the fit (`leave_one_out.py`), each appended to the rows of earlier
versions so the accuracy page can show how the figures moved.

Called by `python -m tests.accuracy.fit_server --write-ranges` and `python -m
tests.accuracy.leave_one_out --write`; the app reads the table, never this directory.
"""

from __future__ import annotations

import json
import statistics

from app.estimate.ranges import accuracy_table
from app.estimate.ranges.classes import RangeClass, range_of_key
from app.estimate.version import ESTIMATOR_VERSION

TABLE = accuracy_table.TABLE


def class_accuracy(ratios: list[float], held_in: RangeClass) -> tuple[int, float, float, float]:
    """Count, median error of the range's middle, share within 30%, share inside the range."""
    middle = (held_in.low + held_in.high) / 2
    errors = [abs(middle - r) / r for r in ratios]
    covered = sum(held_in.low <= r <= held_in.high for r in ratios)
    return (
        len(ratios),
        round(statistics.median(errors), 3),
        round(sum(e <= 0.3 for e in errors) / len(errors), 3),
        round(covered / len(ratios), 3),
    )


def history_rows(
    ratios: dict[str, list[float]], ranges: dict[str, tuple[float, float, int, float, int]]
) -> list[tuple]:
    """The earlier versions' rows, then this version's (replacing any of its own)."""
    classes = {
        key: RangeClass(key, low, high, n, held, publishers=publishers)
        for key, (low, high, n, held, publishers) in ranges.items()
    }
    kept = [row for row in accuracy_table.ACCURACY_HISTORY if row[0] != ESTIMATOR_VERSION]
    new = [
        (ESTIMATOR_VERSION, key, *class_accuracy(values, range_of_key(key, classes)))
        for key, values in sorted(ratios.items())
    ]
    return kept + new


MEDIANS = "check_publisher_medians"


def _ratios_block(ratios: dict[str, list[float]], name: str = "check_ratios") -> str:
    lines = [
        f"    {json.dumps(key)}: {json.dumps([round(v, 4) for v in sorted(values)])}"
        for key, values in sorted(ratios.items())
    ]
    return f'  "{name}": {{\n' + ",\n".join(lines) + "\n  }"


def _rows_block(name: str, rows: list[tuple]) -> str:
    lines = [f"    {json.dumps(list(row))}" for row in rows]
    return f'  "{name}": [\n' + ",\n".join(lines) + "\n  ]"


def _history_block(rows: list[tuple]) -> str:
    return _rows_block("accuracy_history", rows)


HeldOutRow = tuple[str, str, int, float, float, float, int]


def held_out_rows(current: list[HeldOutRow]) -> list[HeldOutRow]:
    """The earlier versions' leave-one-publisher-out rows, then this version's."""
    kept = [row for row in accuracy_table.HELD_OUT_HISTORY if row[0] != ESTIMATOR_VERSION]
    return kept + sorted(current, key=lambda row: row[1])


def _held_out_block(rows: list[HeldOutRow]) -> str:
    return _rows_block("held_out_history", rows)


def _write(ratios: str, medians: str, history: str, held_out: str) -> None:
    TABLE.write_text("{\n" + ",\n".join((ratios, medians, history, held_out)) + "\n}\n")


def write_accuracy(
    ratios: dict[str, list[float]],
    ranges: dict[str, tuple[float, float, int, float, int]],
    medians: dict[str, list[float]],
) -> None:
    """The checking ratios, their publishers' medians and the in-sample history; the
    held-out rows kept as they are."""
    held_out = _held_out_block(list(accuracy_table.HELD_OUT_HISTORY))
    history = _history_block(history_rows(ratios, ranges))
    _write(_ratios_block(ratios), _ratios_block(medians, MEDIANS), history, held_out)


def write_held_out(current: list[HeldOutRow]) -> None:
    """This version's leave-one-publisher-out rows; the rest of the table kept."""
    ratios = {key: list(values) for key, values in accuracy_table.CHECK_RATIOS.items()}
    medians = {key: list(values) for key, values in accuracy_table.CHECK_MEDIANS.items()}
    history = _history_block(list(accuracy_table.ACCURACY_HISTORY))
    _write(
        _ratios_block(ratios),
        _ratios_block(medians, MEDIANS),
        history,
        _held_out_block(held_out_rows(current)),
    )
