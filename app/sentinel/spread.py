"""A baseline measured more than once against the same server, and the bands that holds.

One run's repeats come a few seconds apart, so they share whatever state the server and
its machine are in; a run a minute later can sit well away from all of them. Measured on
the real vLLM server the tests start (2026-12-07, sixteen runs in 42 s), decode at one
request read 481-532 tok/s by the run, while each run's three repeats spanned 1-6 % of it:
a band from one run's repeats called an unchanged server slower. So
`servebook sentinel --rebaseline` measures the plan several times (`BASELINE_RUNS`), keeps
the earlier runs' points beside the record (``provenance_detail.baseline_runs``), and a
baseline figure's band is every repeat of every run, widened each way by the factor
between the runs' highest and lowest median: how far a fresh run showed it can move
against the same server. A baseline of one run keeps its repeats' band, and the report
says so.

Why a factor, not a difference: the figures are rates and times, whose noise scales with
them (a machine slowed by a third slows every figure by a third). Widened by the
difference, the band of a gain of x2-x4 reached down to what a server that stops batching
reads (x1); widened by the factor, it stays on the scale the runs moved on.

Why eight runs, one of them left out of each figure's band: against the real vLLM server
on 2 cores (2026-12-07, 40 runs of the unchanged server and 8 of one limited to one
sequence, recorded and replayed), judging every later pair of runs against every baseline
of consecutive runs, three runs gave a confirmed "regressed" in 2 % of the judgements of
the unchanged server (the range of three runs often misses how far a fourth moves), four in
0.3 %, five in none of 595. But a band from the runs' extremes counts a run far from the
rest twice, once as the lowest reading and again in the factor: with one of five baseline
runs slowed by 40 % at four streams (as a neighbour on the cores during that level would
leave it), the limited server's gain fell inside the band in 347 of 420 judgements.
Leaving out, figure by figure, the run farthest from the runs' median answers that one run;
the others must then be enough to show how far a run moves. Of five runs less one, the
unchanged server read regressed in 24 of 595 judgements; of eight less one, in none of 496,
none of 1,408 with such a slowed run in any position, and none of 276 recorded while other
work came and went on the cores. The limited server read regressed in every judgement, with
or without the slowed run (`tests/sentinel/test_replayed_vllm_runs.py`).
"""

import math
import statistics
from dataclasses import replace
from typing import Any

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.records.comparison.effects import Band, sample_band
from app.sentinel.points import Point

BASELINE_RUNS = 8
RUNS_KEPT = "baseline_runs"  # the record's provenance_detail key
RUNS_BAND = register(
    "sentinel.band.runs",
    _l(
        "lowest to highest of %(num)s repeats over %(runs)s runs against the same server, "
        "widened each way by the factor between the runs' highest and lowest medians "
        "(x%(factor)s)"
    ),
)
# A figure the runs measured once each (a ramp level's first token and decode): the runs'
# medians alone.
RUNS_ONLY_BAND = register(
    "sentinel.band.runs_only",
    _l(
        "lowest to highest of %(runs)s runs against the same server, widened each way by the "
        "factor between the highest and the lowest (x%(factor)s)"
    ),
)
# From this many runs on, each figure's band leaves out the run farthest from the runs'
# median: a regression needs two runs to agree, and one run far from the rest does not make
# the band either.
TRIM_FROM = 6
RUNS_TRIMMED_BAND = register(
    "sentinel.band.runs_trimmed",
    _l(
        "lowest to highest of %(num)s repeats over %(runs)s of %(measured)s runs against the "
        "same server (the run farthest from their median left out), widened each way by the "
        "factor between the kept runs' highest and lowest medians (x%(factor)s)"
    ),
)
RUNS_ONLY_TRIMMED_BAND = register(
    "sentinel.band.runs_only_trimmed",
    _l(
        "lowest to highest of %(runs)s of %(measured)s runs against the same server (the one "
        "farthest from their median left out), widened each way by the factor between the "
        "highest and the lowest (x%(factor)s)"
    ),
)
# The points whose figures a band is made for; a needle or a task is judged on its own terms.
BANDED_KINDS = ("single", "ramp")


def kept_run(points: list[Point]) -> list[dict[str, Any]]:
    """One earlier baseline run, as plain JSON kept with the record."""
    return [
        {
            "context_length": point.context_length,
            "concurrency": point.concurrency,
            "kind": point.kind,
            "values": point.values,
            "samples": point.samples,
        }
        for point in points
        if point.kind in BANDED_KINDS
    ]


def read_runs(kept: Any, baseline: list[Point]) -> list[list[Point]]:
    """The earlier runs a record keeps. A run that lacks one of the baseline's points, or
    whose figures are not numbers, did not measure the same plan and is left out, so every
    run kept lines up with the baseline point for point."""
    needed = {point.key for point in baseline if point.kind in BANDED_KINDS}
    runs = []
    for run in kept if isinstance(kept, list) else []:
        points = [read_point(entry) for entry in run] if isinstance(run, list) else [None]
        if any(point is None for point in points):
            continue
        found = {point.key: point for point in points if point is not None}
        if needed <= set(found):
            runs.append([found[key] for key in sorted(needed)])
    return runs


def read_point(entry: Any) -> Point | None:
    if not isinstance(entry, dict) or entry.get("kind") not in BANDED_KINDS:
        return None
    try:
        values = {str(k): number(v) for k, v in dict(entry["values"]).items()}
        samples = {
            str(k): [number(v) for v in list(vs)] for k, vs in dict(entry["samples"]).items()
        }
        length, concurrency = int(entry["context_length"]), int(entry["concurrency"])
    except (KeyError, TypeError, ValueError):
        return None
    return Point(length, concurrency, str(entry["kind"]), values, samples)


def number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(value)
    return float(value)


def with_runs(baseline: list[Point], runs: list[list[Point]]) -> list[Point]:
    """The baseline's points, each with the same point as every other run measured it."""
    by_key = [{point.key: point for point in run} for run in runs]
    return [
        replace(point, runs=tuple(run[point.key] for run in by_key))
        if runs and point.kind in BANDED_KINDS
        else point
        for point in baseline
    ]


def with_kept_runs(baseline: list[Point], kept: Any) -> list[Point]:
    """The baseline's points with the earlier runs its record keeps (``RUNS_KEPT``)."""
    return with_runs(baseline, read_runs(kept, baseline))


def spread_band(runs: list[tuple[float, list[float]]]) -> Band | None:
    """Each run's (median, repeats): every kept repeat and median, widened each way by the
    factor between the kept runs' highest and lowest median. From `TRIM_FROM` runs on, the
    run farthest from the runs' median is left out (`without_farthest`). Only a positive
    median has a factor to it: rates and times are never zero, and a run that read one is
    left out of the band."""
    measured = [(median, repeats) for median, repeats in runs if median > 0]
    if len(measured) < 2:
        return sample_band([v for _, repeats in runs for v in repeats])
    kept = without_farthest(measured) if len(measured) >= TRIM_FROM else measured
    medians = [median for median, _ in kept]
    samples = [v for _, repeats in kept for v in repeats]
    factor = max(medians) / min(medians)
    said = band_basis(len(samples), len(kept), len(measured), factor)
    seen = [*samples, *medians]
    return Band(max(0.0, min(seen)) / factor, max(seen) * factor, said)


def without_farthest(runs: list[tuple[float, list[float]]]) -> list[tuple[float, list[float]]]:
    """The runs less the one whose median is farthest from theirs, by ratio: rates and
    times move in proportion."""
    centre = statistics.median(median for median, _ in runs)
    farthest = max(range(len(runs)), key=lambda i: abs(math.log(runs[i][0] / centre)))
    return [run for i, run in enumerate(runs) if i != farthest]


def band_basis(repeats: int, kept: int, measured: int, factor: float) -> Sentence:
    widened = f"{factor:.2f}"
    if kept < measured:
        return (
            RUNS_TRIMMED_BAND(num=repeats, runs=kept, measured=measured, factor=widened)
            if repeats
            else RUNS_ONLY_TRIMMED_BAND(runs=kept, measured=measured, factor=widened)
        )
    return (
        RUNS_BAND(num=repeats, runs=kept, factor=widened)
        if repeats
        else RUNS_ONLY_BAND(runs=kept, factor=widened)
    )


def baseline_band(point: Point, metric: str) -> Band | None:
    """A baseline figure's band: its repeats' alone for a baseline of one run."""
    measured = [p for p in (point, *point.runs) if p.values.get(metric) is not None]
    if len(measured) < 2:
        return sample_band(point.samples.get(metric, []))
    return spread_band([(p.values[metric], p.samples.get(metric, [])) for p in measured])


def runs_of(baseline: list[Point]) -> int:
    """How many runs the baseline's bands hold."""
    return 1 + max((len(point.runs) for point in baseline), default=0)
