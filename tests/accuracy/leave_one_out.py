"""Leave-one-publisher-out accuracy of the server speeds: the headline of `make accuracy`.

The estimator as it ships, scored on each publisher of `servers.yaml` as if it had never
seen it. A publisher among the fitting publishers is refitted out: its runtime family's
coefficients are fitted (`fit_server.fit_rows`, as the shipped fit is) on the other fitting
publishers' rows, and its rows are scored at that point estimate. A checking publisher was
never fitted on, so the shipped coefficients score it. Each held-out row's range is then set
the way the app sets it (`ranges.range_of_key`: the class's 10th-90th percentile reaching its
publishers' medians, a thin class borrowing its family's pool, widened), from the other
publishers' held-out ratios only, so neither the point nor the range has seen the
publisher it is judged on.

A second reading (`FIT_ON_ALL`) refits on every other publisher, checking ones included:
how far the fit moves when publishers who disagree with the rest (one measures half what
every other does on the same hardware) enter it.

A publisher is a person or an organisation, not a page: the InferenceX bot's runs posted in
its repository's pull requests are InferenceX's, and one GitHub user's comments on several
issues are one publisher.

What it does not refit: the shipped coefficients are the fit's starting point, and the
single-GPU llama.cpp constants (`fit.py`) keep their checking/fitting split.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from dataclasses import dataclass
from functools import cache

from app.estimate.ranges.classes import (
    STATED,
    RangeClass,
    class_key,
    pool_keys,
    publisher_medians,
    range_of_key,
    reach_publishers,
)
from app.estimate.speed.coefficients import SERVER
from app.estimate.version import ESTIMATOR_VERSION
from tests.accuracy.accuracy_history import HeldOutRow, write_held_out
from tests.accuracy.fit_server import FITTED, fit_rows, quantile
from tests.accuracy.server_cases import ServerCase, publisher_of, server_cases, server_outcome

FEW_PUBLISHERS = 3  # a segment checked by fewer says little beyond them


@dataclass(frozen=True)
class HeldOut:
    """One row scored by coefficients fitted without its publisher."""

    case: ServerCase
    publisher: str
    decode_ratio: float | None  # measured / point estimate
    throughput_ratio: float | None  # measured / point estimate, all replicas


@dataclass(frozen=True)
class Scored:
    """A held-out row with the range the other publishers' held-out ratios give it."""

    held: HeldOut
    range: RangeClass

    @property
    def middle(self) -> float:
        return (self.range.low + self.range.high) / 2

    def error(self, ratio: float | None) -> float | None:
        """|range middle - measured| / measured; the estimate is the point x the middle."""
        return None if ratio is None else abs(self.middle - ratio) / ratio

    @property
    def decode_error(self) -> float | None:
        return self.error(self.held.decode_ratio)

    @property
    def throughput_error(self) -> float | None:
        return self.error(self.held.throughput_ratio)

    @property
    def covered(self) -> bool | None:
        ratio = self.held.decode_ratio
        return None if ratio is None else self.range.low <= ratio <= self.range.high


FIT_ON_FITTING = "fitting"  # the shipped fit's publishers, less the one scored
FIT_ON_ALL = "all"  # every other publisher, checking ones included


@cache
def held_out(fit_on: str = FIT_ON_FITTING) -> tuple[HeldOut, ...]:
    """Every row at the point estimate of coefficients fitted without its publisher."""
    every = server_cases()
    found = []
    for publisher in sorted({publisher_of(c) for c in every}):
        own = [c for c in every if publisher_of(c) == publisher]
        for family in sorted({c.runtime for c in own} & set(FITTED)):
            mine = [c for c in own if c.runtime == family]
            if fit_on == FIT_ON_FITTING and not any(c.fitting for c in mine):
                # Never fitted on: the shipped coefficients have not seen it.
                cuda, rocm = SERVER[(family, "cuda")], SERVER[(family, "rocm/vulkan")]
            else:
                others = [
                    c
                    for c in every
                    if c.runtime == family
                    and publisher_of(c) != publisher
                    and (c.fitting or fit_on == FIT_ON_ALL)
                ]
                cuda, rocm = fit_rows(family, others, quiet=True)
            for case in mine:
                coefficients = rocm if case.platform == "rocm/vulkan" else cuda
                outcome = server_outcome(case, coefficients, point=True)
                throughput = outcome.load.throughput.middle * case.replicas
                found.append(
                    HeldOut(
                        case,
                        publisher,
                        case.decode / outcome.load.decode_point if case.decode else None,
                        case.throughput / throughput if case.throughput else None,
                    )
                )
    return tuple(found)


def _classes(rows: list[HeldOut]) -> dict[str, RangeClass]:
    """Range classes as the app builds them, from these rows' decode ratios."""
    ratios: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.decode_ratio is None:
            continue
        c = row.case
        key = class_key(c.runtime, c.platform, c.gpus, c.concurrency)
        for k in (key, *pool_keys(key)):
            ratios[k][row.publisher].append(row.decode_ratio)
    tail = (1 - STATED) / 2
    out = {}
    for key, by_publisher in ratios.items():
        values = [v for found in by_publisher.values() for v in found]
        low, high = reach_publishers(
            key,
            quantile(values, tail),
            quantile(values, 1 - tail),
            publisher_medians(by_publisher),
        )
        out[key] = RangeClass(key, low, high, len(values), None, publishers=len(by_publisher))
    return out


@cache
def scored(fit_on: str = FIT_ON_FITTING) -> tuple[Scored, ...]:
    """Each held-out row with its range from the other publishers' held-out ratios."""
    return score(held_out(fit_on))


def score(rows: tuple[HeldOut, ...]) -> tuple[Scored, ...]:
    """`scored` of the given held-out rows."""
    out = []
    for publisher in sorted({r.publisher for r in rows}):
        classes = _classes([r for r in rows if r.publisher != publisher])
        for row in (r for r in rows if r.publisher == publisher):
            c = row.case
            key = class_key(c.runtime, c.platform, c.gpus, c.concurrency)
            out.append(Scored(row, range_of_key(key, classes)))
    return tuple(out)


@dataclass(frozen=True)
class Figures:
    rows: int
    publishers: int
    decode_count: int
    decode_median: float | None
    decode_within_30: float | None
    coverage: float | None
    throughput_count: int
    throughput_median: float | None


def figures(rows: list[Scored]) -> Figures:
    decode = [e for r in rows if (e := r.decode_error) is not None]
    throughput = [e for r in rows if (e := r.throughput_error) is not None]
    covered = [c for r in rows if (c := r.covered) is not None]
    return Figures(
        rows=len(rows),
        publishers=len({r.held.publisher for r in rows}),
        decode_count=len(decode),
        decode_median=statistics.median(decode) if decode else None,
        decode_within_30=sum(e <= 0.3 for e in decode) / len(decode) if decode else None,
        coverage=sum(covered) / len(covered) if covered else None,
        throughput_count=len(throughput),
        throughput_median=statistics.median(throughput) if throughput else None,
    )


SEGMENTS = {
    "GPUs": lambda c: "multi-GPU" if c.gpus > 1 else "single GPU",
    "load": lambda c: "concurrency >1" if c.concurrency > 1 else "concurrency 1",
    "runtime": lambda c: c.runtime,
    "platform": lambda c: c.platform,
    "weights": lambda c: c.quant,
    "interconnect": lambda c: c.interconnect if c.gpus > 1 else "none (one GPU)",
}


def _percent(value: float | None) -> str:
    return "     -" if value is None else f"{value:6.1%}"


def line(label: str, rows: list[Scored], segment: bool = True) -> str:
    """A segment's figures; one checked by fewer than FEW_PUBLISHERS says so."""
    f = figures(rows)
    few = segment and f.publishers < FEW_PUBLISHERS
    return (
        f"  {label:<40} runs {f.rows:>3} publishers {f.publishers:>2} | decode "
        f"n={f.decode_count:>3} median error {_percent(f.decode_median)} within 30% "
        f"{_percent(f.decode_within_30)} in range {_percent(f.coverage)} | throughput "
        f"n={f.throughput_count:>3} median error {_percent(f.throughput_median)}"
        + ("  (fewer than 3 publishers: says little beyond them)" if few else "")
    )


def publisher_weighted(rows: list[Scored]) -> str:
    """Each publisher counted once: the median of the publishers' median decode errors,
    and the mean of their shares within 30% and in range. One publisher's sweep of many
    runs weighs as much as one blog post's."""
    by_publisher = [
        figures([r for r in rows if r.held.publisher == p])
        for p in sorted({r.held.publisher for r in rows})
    ]
    found = [f for f in by_publisher if f.decode_count]
    median = statistics.median(f.decode_median for f in found)
    within = statistics.fmean(f.decode_within_30 for f in found)
    held = statistics.fmean(f.coverage for f in found)
    return (
        f"  {'all, each publisher once':<40} publishers {len(found):>2} | decode median error "
        f"{median:6.1%} within 30% {within:6.1%} in range {held:6.1%}"
    )


def report() -> None:
    """The headline figures of `make accuracy`, then the refit on every other publisher."""
    rows = list(scored())
    print(
        "server speeds, each publisher left out: the shipped estimator, refitted without "
        "the publisher where it was among the fitting ones, with ranges set from the other "
        f"publishers' errors alone (ranges are meant to hold {STATED:.0%})"
    )
    print(line("all", rows))
    print(publisher_weighted(rows))
    for name, key in SEGMENTS.items():
        for value in sorted({key(r.held.case) for r in rows}):
            chosen = [r for r in rows if key(r.held.case) == value]
            print(line(f"{name}: {value}", chosen))
    print("  by publisher:")
    for publisher in sorted({r.held.publisher for r in rows}):
        chosen = [r for r in rows if r.held.publisher == publisher]
        print(line(publisher[:40], chosen, segment=False))
    print()
    everyone = list(scored(FIT_ON_ALL))
    print(
        "the same, refitted on every other publisher, checking ones included (a fit that "
        "takes in publishers who disagree)"
    )
    print(line("all", everyone))
    print(publisher_weighted(everyone))
    for publisher in sorted({r.held.publisher for r in everyone}):
        chosen = [r for r in everyone if r.held.publisher == publisher]
        if len(chosen) >= 10:
            print(line(publisher[:40], chosen, segment=False))
    print()


def class_rows() -> list[HeldOutRow]:
    """Per range class (and each family's pools), this version's held-out figures as the
    accuracy page shows them: (version, key, measurements, median error, share within
    30%, share in range, publishers), decode only."""
    members: dict[str, list[Scored]] = defaultdict(list)
    for row in scored():
        if row.held.decode_ratio is None:
            continue
        c = row.held.case
        key = class_key(c.runtime, c.platform, c.gpus, c.concurrency)
        for k in (key, *pool_keys(key)):
            members[k].append(row)
    out = []
    for key, rows in members.items():
        f = figures(rows)
        assert f.decode_median is not None and f.decode_within_30 is not None
        assert f.coverage is not None
        out.append(
            (
                ESTIMATOR_VERSION,
                key,
                f.decode_count,
                round(f.decode_median, 3),
                round(f.decode_within_30, 3),
                round(f.coverage, 3),
                f.publishers,
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--write", action="store_true", help="write the per-class rows into accuracy_table.py"
    )
    args = parser.parse_args()
    report()
    if args.write:
        write_held_out(class_rows())


if __name__ == "__main__":
    main()
