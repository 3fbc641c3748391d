"""Ranges that say what they held: per class of runtime and hardware, the spread of
measured / estimated over that class's checking measurements.

`RANGE_CLASSES` is written by `python -m tests.accuracy.fit_server --write-ranges` from the
checking measurements (publishers the fit does not use). A class's range is the 10th and
90th percentile of measured / estimate over its checks (so it is meant to hold 80%), and
`held` is the share of those checks that the range, as rounded, holds. A class with fewer
than MIN_CHECKS measurements borrows the pooled range of its runtime family, widened, and
says so.
"""

from __future__ import annotations

import msgspec

STATED = 0.8
MIN_CHECKS = 8
WIDEN = 1.25  # a borrowed range is widened by this factor on each side


class RangeClass(msgspec.Struct, frozen=True):
    """A class of estimates and what its range held on its checking measurements."""

    key: str  # "<family>/<platform>/<gpus>/<load>", e.g. "sglang/cuda/multi/c1"
    low: float  # ratio to the point estimate
    high: float
    checks: int
    held: float | None  # share of the checks inside the range
    stated: float = STATED
    borrowed: bool = False  # too few checks: the family's pooled range, widened


# Written by tests/accuracy/fit_server.py --write-ranges: do not edit by hand.
# fmt: off
RANGE_CLASSES: dict[str, RangeClass] = {
    "llama.cpp/*/*/*": RangeClass("llama.cpp/*/*/*", 0.91, 1.22, 29, 0.79),
    "mlx/*/*/*": RangeClass("mlx/*/*/*", 0.91, 1.22, 29, 0.79),
    "vllm/*/*/*": RangeClass("vllm/*/*/*", 0.7, 1.35, 0, None),
    "sglang/*/*/*": RangeClass("sglang/*/*/*", 0.7, 1.35, 0, None),
}
# fmt: on


def class_key(family: str, platform: str, gpus: int, concurrency: int) -> str:
    return f"{family}/{platform}/{'multi' if gpus > 1 else 'single'}/{'cN' if concurrency > 1 else 'c1'}"


def range_class(family: str, platform: str, gpus: int, concurrency: int) -> RangeClass:
    """The class of an estimate, with the range its checks set. A class with too few checks
    takes its family's pooled range; a pooled range itself resting on too few is widened."""
    key = class_key(family, platform, gpus, concurrency)
    found = RANGE_CLASSES.get(key)
    if found is not None and found.checks >= MIN_CHECKS:
        return found
    pooled = RANGE_CLASSES.get(f"{family}/*/*/*") or RANGE_CLASSES["vllm/*/*/*"]
    checks = found.checks if found is not None else 0
    held = found.held if found is not None else None
    if pooled.checks >= MIN_CHECKS:
        return RangeClass(key, pooled.low, pooled.high, checks, held, pooled.stated, borrowed=True)
    low, high = pooled.low / WIDEN, pooled.high * WIDEN
    return RangeClass(key, low, high, checks, held, pooled.stated, borrowed=True)
