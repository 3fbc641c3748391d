"""The shipped checking measurements at runtime: each class's ratios of measured to point
estimate and its publishers' median ratios (the prior of
`app/estimate/ranges/from_records.py`), and each estimator version's
accuracy per class on them: (version, class key, measurements, median error, share within
30%, share the stated range held). Then the same figures with each publisher left out of
the fit and of the ranges it is scored by, over every server measurement, and how many
publishers each class's measurements come from. Rows of earlier versions are kept.

The figures live in `accuracy_table.json` beside this module, one row a line: every
estimator version adds its rows, and a table that only grows is data, not code. Written by
`python -m tests.accuracy.fit_server --write-ranges` and `python -m
tests.accuracy.leave_one_out --write`: do not edit by hand.
"""

import json
from pathlib import Path

TABLE = Path(__file__).with_suffix(".json")
_FOUND = json.loads(TABLE.read_text())

CHECK_RATIOS: dict[str, tuple[float, ...]] = {
    key: tuple(values) for key, values in _FOUND["check_ratios"].items()
}
# Each class's publishers' median ratios: its range reaches every one (`reach_publishers`).
CHECK_MEDIANS: dict[str, tuple[float, ...]] = {
    key: tuple(values) for key, values in _FOUND["check_publisher_medians"].items()
}
# (version, class key, measurements, median error, share within 30%, share in range)
ACCURACY_HISTORY: tuple[tuple[str, str, int, float, float, float], ...] = tuple(
    tuple(row) for row in _FOUND["accuracy_history"]
)
# The same, each publisher left out, then the class's publishers.
HELD_OUT_HISTORY: tuple[tuple[str, str, int, float, float, float, int], ...] = tuple(
    tuple(row) for row in _FOUND["held_out_history"]
)
