"""A sentinel run against its baseline: each figure's change with its noise band, and the
verdict.

The bands are the record comparison's own (app/records/comparison/effects.py): the spread of the
repeats for TTFT and decode speed, the 95 % Wilson interval for a task's pass rate. A
baseline measured in several runs against the same server bands its figures by every run's
repeats, widened each way by the factor the runs' medians moved by (app/sentinel/spread.py). A
change is significant when the two bands do not overlap and it moves the figure by at least
`MIN_RELATIVE_CHANGE`: three repeats on a quiet server can give bands a few tenths of a
percent wide, and a change that small is no regression anyone serving would notice. The
memory peak is one reading, but of a figure a fixed configuration repeats to within the
allocator's rounding: its band is the reading ± `MEMORY_RESOLUTION_GB`, so a peak that grows
by more than a gigabyte per GPU (and 5 %) is a regression, as a runtime upgrade's memory
jumps are. A ramp level's throughput counts too, as its gain over the same run's
one-stream level (``scaling_of``: a machine slowed by other work for a while slows both, a
server that stops batching loses the gain), banded by the spread of that gain as each of
its streams saw it (``ConcurrencyLevel.stream_output_tps``). Where a ramp level held under
90 % of the requests it asked at once in either run, a change counts only where the
difference in load cannot explain it (``unexplained``, ``scaling_change``): a lighter load
makes a request's first token and decode better and the gain smaller, never the gain per
request held; the report says what each run held. A record made before that kept
one number, with no band, whose change is reported and never called significant. A decode
that was not measurable (answers that arrived in bursts) at either end is not judged: the
report says so, and a baseline of that kind is re-made with ``--rebaseline``. A regression
counts only when a second run finds the same change beyond both bands (``confirmed``). A
needle found at the baseline and missed now is significant: the needle is asked at
temperature 0, so a found needle is found again on the same build.
"""

from dataclasses import replace
from typing import Any

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.records.comparison.effects import Band, sample_band, wilson_band
from app.sentinel.points import Point
from app.sentinel.report import Change, SentinelReport, verdict_of
from app.sentinel.spread import baseline_band, runs_of, spread_band

MIN_RELATIVE_CHANGE = 0.05
MEMORY_RESOLUTION_GB = 0.5
MEMORY_BAND = register(
    "sentinel.band.memory",
    _l("the peak read once, ± %(gb)s GB per GPU (the allocator's rounding)"),
)

# metric -> (unit, True when higher is better)
POINT_METRICS: dict[str, tuple[str, bool]] = {
    "ttft_ms": ("ms", False),
    "decode_tokens_per_s": ("tok/s", True),
    "throughput_tokens_per_s": ("tok/s", True),
    "peak_memory_gb_per_gpu": ("GB/GPU", False),
}


def overlap(a: Band, b: Band) -> bool:
    return a.low <= b.high and b.low <= a.high


def banded_change(
    metric: str,
    where: str,
    unit: str,
    higher_is_better: bool,
    before: float,
    after: float,
    bands: tuple[Band | None, Band | None],
) -> Change:
    band_a, band_b = bands
    relative = abs(after - before) / abs(before) if before else (1.0 if after else 0.0)
    significant = (
        band_a is not None
        and band_b is not None
        and not overlap(band_a, band_b)
        and relative >= MIN_RELATIVE_CHANGE
    )
    direction = None
    if significant:
        direction = "better" if (after > before) == higher_is_better else "worse"
    return Change(metric, where, unit, before, after, band_a, band_b, significant, direction)


def where_of(point: Point) -> str:
    if point.kind == "task":
        return "task prompts"
    suffix = " (ramp)" if point.kind == "ramp" else ""
    return f"{point.context_length:,} tokens x {point.concurrency}{suffix}"


# No hardware decodes one request faster (app/records/storage/plausibility.py): a baseline's decode
# above it was read from bursts, before the client said so.
MAX_DECODE_ONE_REQUEST = 20_000.0


def decode_unjudged(point: Point) -> bool:
    """The point's decode was not measurable (answers that arrived in bursts)."""
    decode = point.values.get("decode_tokens_per_s")
    return point.decode_measurable is False or (
        decode is not None and decode > MAX_DECODE_ONE_REQUEST
    )


# What a request's figures do under a lighter load: the first token comes sooner and each
# request decodes faster (a server shares its steps among fewer requests).
LIGHTER_LOAD_GIVES = {"ttft_ms": "better", "decode_tokens_per_s": "better"}


def held(point: Point) -> float:
    """Requests the point held at once: what it asked, unless it held short of that."""
    if point.kind == "ramp" and point.held_short and point.held_mean:
        return point.held_mean
    return float(point.concurrency)


def held_short_note(before: Point, after: Point) -> str | None:
    """What a ramp level held, where either run held under 90 % of the requests it asked
    at once: its figures then count only where the difference in load cannot explain them."""
    for point, whose in ((before, "the baseline"), (after, "this run")):
        if point.kind == "ramp" and point.held_short:
            return (
                f"first token, decode and throughput at {where_of(before)}: {whose} held "
                f"{held(point):.1f} of {point.concurrency} requests at once, so a change "
                "counts only where that difference in load cannot explain it"
            )
    return None


def unexplained(change: Change, load_ratio: float) -> Change:
    """The change, no longer significant where the runs' difference in load explains its
    direction: this run's lighter load (``load_ratio`` below 1) makes a request's figures
    better, a heavier one worse."""
    lighter = LIGHTER_LOAD_GIVES.get(change.metric)
    if not change.significant or lighter is None or load_ratio == 1:
        return change
    explained = lighter if load_ratio < 1 else {"better": "worse", "worse": "better"}[lighter]
    if change.direction != explained:
        return change
    return replace(change, significant=False, direction=None)


def point_changes(
    before: Point, after: Point, scaled: bool = False, load_ratio: float = 1.0
) -> list[Change]:
    """``scaled``: the point's throughput is judged as its gain over one stream
    (``scaling_change``), and its own change is listed, never counted. ``load_ratio``: the
    requests this run held at once over the baseline's (``unexplained``)."""
    changes = []
    for metric, (unit, higher) in POINT_METRICS.items():
        a, b = before.values.get(metric), after.values.get(metric)
        if metric == "decode_tokens_per_s" and (decode_unjudged(before) or decode_unjudged(after)):
            continue
        if a is None or b is None:
            continue
        bands = (baseline_band(before, metric), sample_band(after.samples.get(metric, [])))
        if metric == "peak_memory_gb_per_gpu" and bands == (None, None):
            bands = (_memory_band(a), _memory_band(b))
        if metric == "throughput_tokens_per_s" and scaled:
            bands = (None, None)
        change = banded_change(metric, where_of(before), unit, higher, a, b, bands)
        changes.append(unexplained(change, load_ratio))
    return changes


def scaling_of(point: Point, single: Point | None) -> tuple[float, list[float]] | None:
    """A ramp level's throughput over the same run's one-stream level, with each stream's
    view of it: what the server gains from the load. A machine that is slower for a while
    (other work on its cores) slows both levels, so this holds where the throughput
    itself swings by half between runs; a server that stops batching loses it."""
    if single is None:
        return None
    alone = single.values.get("throughput_tokens_per_s")
    at_load = point.values.get("throughput_tokens_per_s")
    if not alone or at_load is None:
        return None
    return at_load / alone, [v / alone for v in point.samples.get("throughput_tokens_per_s", [])]


def baseline_scaling(point: Point, single: Point | None) -> tuple[float, Band | None] | None:
    """The baseline's gain and its band: the stream views of every run it was measured in,
    widened by how far the runs' gains moved (app/sentinel/spread.py)."""
    own = scaling_of(point, single)
    if own is None or single is None:
        return None
    # Runs line up point for point (read_runs keeps no run that lacks one).
    runs = [scaling_of(p, s) for p, s in zip(point.runs, single.runs, strict=True)]
    every = [own, *[found for found in runs if found is not None]]
    return own[0], spread_band(every)


def scaling_change(
    before: Point, after: Point, single_before: Point | None, single_after: Point | None
) -> Change | None:
    """The gain's change. Where the runs held different loads, it counts only when the
    gain and the gain per request held change the same way: a server's throughput grows
    with its load, but never faster than the load, so a run that held fewer requests may
    gain less, though not less per request, and one that held more may gain more, though
    not more per request."""
    a, b = baseline_scaling(before, single_before), scaling_of(after, single_after)
    if a is None or b is None:
        return None
    bands = (a[1], sample_band(b[1]))
    change = banded_change("throughput_scaling", where_of(before), "x", True, a[0], b[0], bands)
    if held(before) == held(after):
        return change
    per_held = banded_change(
        "throughput_scaling",
        where_of(before),
        "x",
        True,
        a[0] / held(before),
        b[0] / held(after),
        (per_request(bands[0], held(before)), per_request(bands[1], held(after))),
    )
    if per_held.significant and per_held.direction == change.direction:
        return change
    return replace(change, significant=False, direction=None)


def per_request(band: Band | None, requests: float) -> Band | None:
    if band is None:
        return None
    return replace(band, low=band.low / requests, high=band.high / requests)


def needle_change(before: Point, after: Point) -> Change | None:
    a, b = before.values.get("needle_accuracy"), after.values.get("needle_accuracy")
    if a is None or b is None:
        return None
    found_before = {cell.get("depth") for cell in before.needle if cell.get("found")}
    missed_now = {cell.get("depth") for cell in after.needle if not cell.get("found")}
    band_a = wilson_band(round(a * len(before.needle)), len(before.needle))
    band_b = wilson_band(round(b * len(after.needle)), len(after.needle))
    change = banded_change(
        "needle_accuracy", where_of(before), "share", True, a, b, (band_a, band_b)
    )
    if found_before & missed_now:  # lost where it was found: no noise explains it
        return Change(change.metric, change.point, "share", a, b, band_a, band_b, True, "worse")
    return change


def task_change(before: Point, after: Point) -> Change | None:
    left, right = before.task, after.task
    if left is None or right is None or left.get("pass_rate") is None:
        return None
    if right.get("pass_rate") is None:
        return None
    if (left.get("name"), left.get("version")) != (right.get("name"), right.get("version")):
        return None
    bands = (
        wilson_band(int(left.get("passed") or 0), int(left.get("total") or 0)),
        wilson_band(int(right.get("passed") or 0), int(right.get("total") or 0)),
    )
    where = f"task {left.get('name')} v{left.get('version')}"
    return banded_change(
        "task_pass_rate",
        where,
        "share",
        True,
        float(left["pass_rate"]),
        float(right["pass_rate"]),
        bands,
    )


def compare_runs(
    baseline_id: int,
    baseline_outcome: str,
    baseline: list[Point],
    outcome: str,
    now: list[Point],
) -> SentinelReport:
    """Every figure both runs measured at the same point, then the verdict."""
    changes: list[Change] = []
    if outcome != baseline_outcome:
        worse = baseline_outcome == "ok"
        changes.append(
            Change(
                "outcome",
                "run",
                "",
                baseline_outcome,
                outcome,
                None,
                None,
                True,
                "worse" if worse else "better",
            )
        )
    now_by_key = {point.key: point for point in now}
    base_by_key = {point.key: point for point in baseline}
    tasks_now = [point for point in now if point.task is not None]
    task_seen = False
    not_judged: list[str] = []
    for before in baseline:
        after = now_by_key.get(before.key)
        if after is not None and before.kind != "needle":
            if decode_unjudged(before):
                not_judged.append(
                    f"decode at {where_of(before)}: the baseline's answers arrived in bursts, "
                    "so it has no decode to compare with; re-baseline with --rebaseline"
                )
            elif decode_unjudged(after):
                not_judged.append(
                    f"decode at {where_of(before)}: this run's answers arrived in bursts"
                )
        if after is not None and before.kind != "needle":
            short = held_short_note(before, after)
            not_judged += [short] if short else []
            one = (before.context_length, 1, "ramp")
            scaled = before.kind == "ramp" and before.concurrency > 1
            scaling = (
                scaling_change(before, after, base_by_key.get(one), now_by_key.get(one))
                if scaled
                else None
            )
            ratio = held(after) / held(before)
            found = point_changes(before, after, scaled=scaling is not None, load_ratio=ratio)
            changes += [
                replace(c, at=before.key) for c in [*found, *([scaling] if scaling else [])]
            ]
        if after is not None and before.kind == "needle":
            needle = needle_change(before, after)
            changes += [replace(needle, at=before.key)] if needle else []
        if before.task is not None and tasks_now and not task_seen:
            task_seen = True
            task = task_change(before, tasks_now[0])
            changes += [task] if task else []
    return SentinelReport(
        baseline_id,
        verdict_of(changes),
        changes,
        tuple(not_judged),
        baseline_runs=runs_of(baseline),
    )


def findings(report: SentinelReport) -> dict[str, Any]:
    """What a first run found, as plain JSON a queued job can keep until its second run:
    each significant change's (metric, point, direction), and what was not judged."""
    return {
        "seen": [[c.metric, c.point, c.direction] for c in report.changes if c.significant],
        "not_judged": list(report.not_judged),
    }


def confirmed(first: SentinelReport, second: SentinelReport) -> SentinelReport:
    """The second run's report, where a change counts only when the first run found it
    too, beyond both bands and the same way: one run's outlier is not a regression."""
    return confirmed_by(findings(first), second)


def confirmed_by(first: dict[str, Any], second: SentinelReport) -> SentinelReport:
    """`confirmed`, from the first run's `findings`."""
    seen = {tuple(found) for found in first["seen"]}
    changes = [
        c
        if not c.significant or (c.metric, c.point, c.direction) in seen
        else replace(c, significant=False, direction=None)
        for c in second.changes
    ]
    not_judged = tuple(dict.fromkeys((*first["not_judged"], *second.not_judged)))
    return SentinelReport(
        second.baseline_record, verdict_of(changes), changes, not_judged, 2, second.baseline_runs
    )


def _memory_band(peak: float) -> Band:
    said = MEMORY_BAND(gb=MEMORY_RESOLUTION_GB)
    return Band(peak - MEMORY_RESOLUTION_GB, peak + MEMORY_RESOLUTION_GB, said)
