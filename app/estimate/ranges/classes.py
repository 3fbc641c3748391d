"""Ranges that say what they held: per class of runtime and hardware, the spread of
measured / estimated over that class's checking measurements.

`RANGE_CLASSES` is written by `python -m tests.accuracy.fit_server --write-ranges` from the
checking measurements (publishers the fit does not use). A class's range is the 10th and
90th percentile of measured / estimate over its checks (so it is meant to hold 80%),
stretched to reach each of its publishers' median ratios (`reach_publishers`), and `held` is
the share of those checks that the range, as rounded, holds. A class with fewer than
MIN_CHECKS measurements, or measurements from fewer than MIN_PUBLISHERS publishers,
borrows a pooled range, widened, and says so: its family's at
the same load ("vllm/*/*/c1") where that pool has enough checks; for vLLM and SGLang at one
request, next both servers at one request ("servers/*/*/c1"); else the family's whole pool
("vllm/*/*/*"). One request and many behave differently enough that a load's pool says more
of a thin class than the whole family does. At one request both servers read the weights once
per token and their errors agree (each publisher left out: a median 12% for vLLM's, 15% for
SGLang's), where under load their schedulers part ways.

Why publishers as well as checks: one publisher's sweep is one setup measured many times
(its driver, its build, its way of timing), so its errors move together and its range says
little of the next reader's server. Each publisher of the server checks left out in turn
(tests/accuracy/leave_one_out.py, 2026-12-07), ranges that needed three publishers held
83.5 % of the left-out runs where ranges that needed only eight checks held 79.2 % (88.1 %
and 83.1 % above one request), and the median error of their middles fell from 18.8 % to
18.2 %.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

import msgspec

STATED = 0.8
MIN_CHECKS = 8
MIN_PUBLISHERS = 3
WIDEN = 1.2  # a borrowed range is widened by this factor on each side


class RangeClass(msgspec.Struct, frozen=True):
    """A class of estimates and what its range held on its checking measurements."""

    key: str  # "<family>/<platform>/<gpus>/<load>", e.g. "sglang/cuda/multi/c1"
    low: float  # ratio to the point estimate
    high: float
    checks: int
    held: float | None  # share of the checks inside the range
    stated: float = STATED
    borrowed: bool = False  # too few checks or publishers: a pool of its family, widened
    family: str | None = None  # the pooled class it borrowed from
    records: int = 0  # accepted records that moved the range (`app/estimate/record_ranges`)
    publishers: int = 0  # who published its checks

    @property
    def too_few_publishers(self) -> bool:
        """Checks enough by count, but from too few publishers to stand on."""
        return self.checks >= MIN_CHECKS and self.publishers < MIN_PUBLISHERS

    @property
    def stands_alone(self) -> bool:
        """Enough checks from enough publishers, or accepted records, to keep its own range."""
        return bool(self.records) or (
            self.checks >= MIN_CHECKS and self.publishers >= MIN_PUBLISHERS
        )


# Written by tests/accuracy/fit_server.py --write-ranges: do not edit by hand.
# fmt: off
RANGE_TABLE: dict[str, tuple[float, float, int, float, int]] = {
    "llama.cpp/*/*/*": (0.96, 1.2, 20, 0.8, 9),
    "llama.cpp/*/*/c1": (0.96, 1.2, 20, 0.8, 9),
    "llama.cpp/cuda-unified/single/c1": (0.96, 1.18, 12, 0.75, 1),
    "llama.cpp/cuda/single/c1": (1.11, 1.43, 3, 0.33, 3),
    "llama.cpp/metal/single/c1": (1.04, 1.16, 2, 0.0, 2),
    "llama.cpp/rocm+vulkan/single/c1": (0.87, 1.02, 3, 0.33, 3),
    "mlx/*/*/*": (0.88, 1.06, 3, 0.33, 3),
    "mlx/*/*/c1": (0.88, 1.06, 3, 0.33, 3),
    "mlx/metal/single/c1": (0.88, 1.06, 3, 0.33, 3),
    "servers/*/*/c1": (0.47, 1.14, 48, 0.88, 9),
    "servers/*/multi/c1": (0.66, 1.14, 22, 0.91, 7),
    "servers/*/single/c1": (0.42, 1.14, 26, 0.85, 4),
    "sglang/*/*/*": (0.48, 1.42, 249, 0.83, 4),
    "sglang/*/*/c1": (0.4, 0.97, 13, 0.69, 2),
    "sglang/*/*/cN": (0.58, 1.43, 236, 0.81, 2),
    "sglang/cuda/multi/c1": (0.9, 1.07, 4, 0.5, 1),
    "sglang/cuda/multi/cN": (0.56, 1.49, 156, 0.87, 2),
    "sglang/cuda/single/c1": (0.39, 0.59, 9, 0.78, 1),
    "sglang/rocm+vulkan/multi/cN": (0.49, 1.36, 80, 0.79, 2),
    "vllm/*/*/*": (0.66, 1.35, 68, 0.87, 11),
    "vllm/*/*/c1": (0.66, 1.14, 35, 0.89, 8),
    "vllm/*/*/cN": (0.54, 1.35, 33, 0.82, 5),
    "vllm/cuda-unified/single/c1": (0.72, 0.72, 1, 0.0, 1),
    "vllm/cuda/multi/c1": (0.66, 1.0, 17, 0.76, 5),
    "vllm/cuda/multi/cN": (0.61, 1.28, 18, 0.72, 2),
    "vllm/cuda/single/c1": (0.73, 1.14, 16, 0.81, 3),
    "vllm/cuda/single/cN": (1.13, 1.18, 4, 0.75, 1),
    "vllm/rocm+vulkan/multi/c1": (1.14, 1.14, 1, 0.0, 1),
    "vllm/rocm+vulkan/multi/cN": (0.5, 1.55, 11, 0.82, 3),
}
# fmt: on
RANGE_CLASSES: dict[str, RangeClass] = {
    key: RangeClass(key, low, high, checks, held, publishers=publishers)
    for key, (low, high, checks, held, publishers) in RANGE_TABLE.items()
}

# The first token's spread, measured / estimated over the checking measurements that report
# one, by load only ("ttft/c1", "ttft/cN"): too few for classes of hardware. Under load the
# published first tokens wait far longer than a roofline prefill (schedulers, admission,
# clients that send faster than the server admits), and the range says so.
# Written by tests/accuracy/fit_server.py --write-ranges: do not edit by hand.
# fmt: off
TTFT_TABLE: dict[str, tuple[float, float, int, float]] = {
    "ttft/c1": (0.39, 0.88, 6, 0.67),
    "ttft/cN": (0.35, 4.83, 244, 0.79),
}
# fmt: on


SERVER_FAMILIES = frozenset({"vllm", "sglang"})
SERVERS = "servers"  # the pool of vLLM and SGLang together


def reach_publishers(
    key: str, low: float, high: float, medians: Iterable[float]
) -> tuple[float, float]:
    """A class's 10th-90th percentile range, stretched to reach every one of its publishers'
    median ratios. A publisher's median is one setup's level (its build, its driver, its
    way of timing), and a reader's server is one more setup: a range that leaves a whole
    publisher's level outside is sure to miss readers like it, however many of its runs the
    percentiles saw. The percentiles weigh runs; this weighs setups. Each publisher of the
    server checks left out in turn (tests/accuracy/leave_one_out.py, 2026-12-07), ranges that
    reach their publishers' medians held 70.9% of the left-out runs at one request where the
    percentiles alone held 56.4% (89.1% and 88.1% above one request), and the median error
    of their middles stayed at 18.2%.

    vLLM's and SGLang's classes only: each server publisher times decode with its own
    client and its own definition (TPOT, inter-token latency, generated tokens over the
    whole time), where the llama.cpp family's sources all run llama-bench, one run each, its
    tg figure timed one way. There a source's median is its one run, the percentiles weigh
    it already, and reaching every one would only stretch the range to the extremes."""
    found = list(medians)
    if not found or key.split("/")[0] not in (*SERVER_FAMILIES, SERVERS):
        return low, high
    return min(low, *found), max(high, *found)


def publisher_medians(ratios_by_publisher: Mapping[str, Sequence[float]]) -> list[float]:
    """Each publisher's median ratio in a class."""
    return [statistics.median(values) for values in ratios_by_publisher.values() if values]


def class_key(family: str, platform: str, gpus: int, concurrency: int) -> str:
    """`<family>/<platform>/<single|multi>/<c1|cN>`, e.g. "sglang/cuda/multi/c1"."""
    gpus_part = "multi" if gpus > 1 else "single"
    load = "cN" if concurrency > 1 else "c1"
    return f"{family}/{platform.replace('/', '+')}/{gpus_part}/{load}"


def pool_keys(key: str) -> tuple[str, ...]:
    """The pools a thin class may borrow from, in order. For vLLM and SGLang at one request:
    both servers on as many GPUs ("servers/*/multi/c1"), its family at one request
    ("vllm/*/*/c1"), both servers at one request ("servers/*/*/c1"). Otherwise its family at
    its load ("vllm/*/*/cN"). Then its whole family ("vllm/*/*/*"), always last.

    At one request the GPU count parts the errors more than the server does: one card's
    checks are mostly dense models in 4- and 8-bit integer formats and a card the fit never
    saw (x0.42-1.14 of the estimate over both servers), several cards' mostly larger models
    split by tensor parallelism (x0.66-1.14), while vLLM's and SGLang's checks on several
    cards agree (tests/accuracy/servers.yaml, 2026-12-07)."""
    parts = key.split("/")  # family/platform/gpus/load
    family, gpus, load = parts[0], parts[-2], parts[-1]
    if family == SERVERS:
        return ()
    if family in SERVER_FAMILIES and load == "c1":
        return (
            f"{SERVERS}/*/{gpus}/c1",
            f"{family}/*/*/c1",
            f"{SERVERS}/*/*/c1",
            f"{family}/*/*/*",
        )
    return (f"{family}/*/*/{load}", f"{family}/*/*/*")


def range_class(
    family: str,
    platform: str,
    gpus: int,
    concurrency: int,
    classes: dict[str, RangeClass] | None = None,
) -> RangeClass:
    """The class of an estimate, with the range its checks set (the shipped ones, or
    `classes` as accepted records updated them). A class with too few checks, or checks from
    too few publishers, takes a pool of its family (`pool_keys`), widened, and keeps its own
    count to say so."""
    return range_of_key(class_key(family, platform, gpus, concurrency), classes)


def range_of_key(key: str, classes: dict[str, RangeClass] | None = None) -> RangeClass:
    """`range_class` of a class key."""
    classes = RANGE_CLASSES if classes is None else classes
    found = classes.get(key)
    if found is not None and found.stands_alone:
        return found
    *loads, whole = pool_keys(key) or ("vllm/*/*/*",)
    enough = (
        pool for pool in (classes.get(k) for k in loads) if pool is not None and pool.stands_alone
    )
    pooled = next(enough, None) or classes.get(whole) or RANGE_CLASSES["vllm/*/*/*"]
    checks = found.checks if found is not None else 0
    low, high = round(pooled.low / WIDEN, 2), round(pooled.high * WIDEN, 2)
    held = pooled.held
    return RangeClass(
        key,
        low,
        high,
        checks,
        held,
        pooled.stated,
        True,
        pooled.key,
        pooled.records,
        found.publishers if found is not None else 0,
    )


def ttft_range(concurrency: int) -> RangeClass:
    """The first token's range at a load, with what it held on its checks."""
    key = "ttft/cN" if concurrency > 1 else "ttft/c1"
    low, high, checks, held = TTFT_TABLE.get(key, (1.0, 1.0, 0, 0.0))
    return RangeClass(key, low, high, checks, held)


# The calibrated range: twice the fit's error each side, within these bounds.
MIN_SPREAD, MAX_SPREAD = 0.1, 0.5


def calibrated_range(
    family: str, platform: str, gpus: int, concurrency: int, error: float
) -> RangeClass:
    """The range of figures from coefficients fitted on this hardware: twice the fit's own
    error each side (within MIN_SPREAD and MAX_SPREAD), held on no checking measurements."""
    spread = min(MAX_SPREAD, max(MIN_SPREAD, 2 * error))
    key = f"calibrated/{class_key(family, platform, gpus, concurrency)}"
    return RangeClass(key, round(1 - spread, 2), round(1 + spread, 2), 0, None)
