"""The sentinel's verdict from two runs' points: bands, the smallest change that counts, a
needle lost, an outcome that got worse."""

import json
import math
import statistics
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.sentinel.compare import compare_runs, confirmed
from app.sentinel.points import Point
from app.sentinel.spread import (
    TRIM_FROM,
    kept_run,
    read_runs,
    runs_of,
    spread_band,
    with_kept_runs,
    with_runs,
)


def single(decode: list[float], memory: float | None = None, length: int = 4096) -> Point:
    values = {"decode_tokens_per_s": sorted(decode)[len(decode) // 2]}
    if memory is not None:
        values["peak_memory_gb_per_gpu"] = memory
    return Point(length, 1, "single", values, {"decode_tokens_per_s": decode})


def needle(found: list[bool], length: int = 65536) -> Point:
    cells = [{"depth": d, "found": f} for d, f in zip((0.1, 0.5, 0.9), found, strict=True)]
    return Point(length, 1, "needle", {"needle_accuracy": sum(found) / 3}, {}, cells)


def test_faster_decode_beyond_its_band_is_an_improvement() -> None:
    report = compare_runs(7, "ok", [single([100, 101, 102])], "ok", [single([112, 113, 114])])
    assert report.verdict == "improved"
    assert report.summary == "improved: decode +12 % at 4,096 tokens x 1"
    (change,) = report.changes
    assert change.significant and change.direction == "better"


def test_a_change_inside_the_bands_or_too_small_is_no_regression() -> None:
    overlapping = compare_runs(1, "ok", [single([90, 100, 110])], "ok", [single([85, 95, 105])])
    tiny = compare_runs(1, "ok", [single([100, 100.1, 100.2])], "ok", [single([98, 98.1, 98.2])])
    assert overlapping.verdict == tiny.verdict == "no_regression"
    assert not tiny.changes[0].significant  # apart, but by 2 %


def test_a_memory_peak_that_grows_beyond_its_reading_band_is_a_regression() -> None:
    report = compare_runs(
        1, "ok", [single([100, 101], memory=20.0)], "ok", [single([100, 101], memory=22.1)]
    )
    memory = next(c for c in report.changes if c.metric == "peak_memory_gb_per_gpu")
    band = memory.as_json()["band"]
    assert band["baseline"]["low"] == 19.5 and band["now"]["high"] == 22.6
    assert memory.significant and memory.direction == "worse"
    assert report.verdict == "regressed"
    assert report.summary.startswith("regressed: peak memory +2.1 GB per GPU")


def test_a_memory_peak_within_the_allocators_rounding_is_no_change() -> None:
    report = compare_runs(
        1, "ok", [single([100, 101], memory=20.0)], "ok", [single([100, 101], memory=20.8)]
    )
    memory = next(c for c in report.changes if c.metric == "peak_memory_gb_per_gpu")
    assert not memory.significant and report.verdict == "no_regression"


def test_a_needle_found_before_and_missed_now_is_a_regression() -> None:
    report = compare_runs(
        1, "ok", [needle([True, True, True])], "ok", [needle([True, False, True])]
    )
    assert report.verdict == "regressed"
    assert report.summary == "regressed: needle lost at 65,536 tokens x 1"


def test_an_outcome_worse_than_ok_is_a_regression() -> None:
    report = compare_runs(1, "ok", [single([100, 101])], "load_failure", [])
    assert report.verdict == "regressed"
    assert report.changes[0].as_json()["metric"] == "outcome"


def ramp(throughput: list[float], concurrency: int = 4, length: int = 1024) -> Point:
    values = {"throughput_tokens_per_s": sorted(throughput)[len(throughput) // 2]}
    return Point(length, concurrency, "ramp", values, {"throughput_tokens_per_s": throughput})


def test_throughput_at_load_counts_as_its_gain_over_one_stream() -> None:
    # --max-num-seqs 1: four streams get the throughput of one, while one stream's own
    # throughput holds.
    baseline = [ramp([600], concurrency=1), ramp([1400, 1466, 1500, 1520])]
    now = [ramp([590], concurrency=1), ramp([560, 600, 609, 640])]
    report = compare_runs(1, "ok", baseline, "ok", now)
    assert report.verdict == "regressed"
    assert report.summary == "regressed: throughput at load -59 % at 1,024 tokens x 4 (ramp)"
    # A machine slowed by other work slows both levels: the gain holds, no verdict.
    slowed = [ramp([300], concurrency=1), ramp([700, 733, 750, 760])]
    assert compare_runs(1, "ok", baseline, "ok", slowed).verdict == "no_regression"


def test_a_verdict_names_only_the_changes_that_made_it() -> None:
    baseline = [single([100, 101, 102]), ramp([600], 1), ramp([1400, 1466, 1500])]
    now = [single([150, 151, 152]), ramp([600], 1), ramp([560, 600, 640])]
    report = compare_runs(1, "ok", baseline, "ok", now)
    assert report.verdict == "regressed"
    assert "decode" not in report.summary and "throughput at load" in report.summary
    assert any(c.direction == "better" for c in report.changes)  # listed, not in the verdict


def test_a_decode_read_from_bursts_is_not_judged() -> None:
    bursts = Point(4096, 1, "single", {"decode_tokens_per_s": 261_386.0}, {})
    flagged = Point(
        4096, 1, "single", {"ttft_ms": 50.0}, {"ttft_ms": [49, 50, 51]}, decode_measurable=False
    )
    for baseline in (bursts, flagged):
        report = compare_runs(1, "ok", [baseline], "ok", [single([10, 11, 12])])
        assert report.verdict == "no_regression", report.summary
        assert not any(c.metric == "decode_tokens_per_s" for c in report.changes)
        (said,) = report.not_judged
        assert "baseline's answers arrived in bursts" in said and "--rebaseline" in said


def test_a_regression_counts_only_when_a_second_run_finds_it() -> None:
    baseline = [single([100, 101, 102]), ramp([1400, 1466, 1500])]
    outlier = compare_runs(1, "ok", baseline, "ok", [single([80, 81, 82]), ramp([1400, 1450])])
    quiet = compare_runs(1, "ok", baseline, "ok", [single([99, 101, 103]), ramp([1410, 1490])])
    assert outlier.verdict == "regressed" and quiet.verdict == "no_regression"
    assert confirmed(outlier, quiet).verdict == "no_regression"
    again = compare_runs(1, "ok", baseline, "ok", [single([79, 80, 81]), ramp([1420, 1480])])
    both = confirmed(outlier, again)
    assert both.verdict == "regressed" and both.runs == 2
    assert both.summary == "regressed: decode -21 % at 4,096 tokens x 1"


def test_a_level_held_short_counts_only_what_its_lighter_load_cannot_explain() -> None:
    baseline = [ramp([600], concurrency=1), ramp([1400, 1466, 1500, 1520])]
    # A client starved of its core held 1.8 of 4: the gain fell with the load, and per
    # request held it did not, so the server is not to blame.
    starved = replace(ramp([560, 600, 609, 640]), held_short=True, held_mean=1.8)
    report = compare_runs(1, "ok", baseline, "ok", [ramp([590], concurrency=1), starved])
    assert report.verdict == "no_regression", report.summary
    (said,) = report.not_judged
    assert "this run held 1.8 of 4 requests at once" in said
    # A server that stopped batching (--max-num-seqs 1) lost the gain per request held
    # too, though the client held only 3.1 of 4 while requests queued one by one.
    serial = replace(ramp([560, 600, 609, 640]), held_short=True, held_mean=3.1)
    report = compare_runs(1, "ok", baseline, "ok", [ramp([590], concurrency=1), serial])
    assert report.verdict == "regressed"
    assert report.summary == "regressed: throughput at load -59 % at 1,024 tokens x 4 (ramp)"
    # A baseline that held short and a run that held fully: a larger gain is what the
    # heavier load gives, unless the gain per request held grew too.
    short_baseline = [baseline[0], replace(baseline[1], held_short=True, held_mean=2.0)]
    fuller = ramp([1600, 1650, 1700, 1720])
    assert compare_runs(1, "ok", short_baseline, "ok", [baseline[0], fuller]).verdict == (
        "no_regression"
    )
    much = ramp([3600, 3650, 3700, 3720])
    assert compare_runs(1, "ok", short_baseline, "ok", [baseline[0], much]).verdict == "improved"


def test_a_request_figure_counts_where_the_load_cannot_explain_it() -> None:
    base = Point(1024, 4, "ramp", {"ttft_ms": 100.0}, {"ttft_ms": [98.0, 100.0, 102.0]})
    lighter = replace(base, held_short=True, held_mean=2.0)
    sooner = replace(lighter, values={"ttft_ms": 60.0}, samples={"ttft_ms": [59.0, 60.0, 61.0]})
    later = replace(lighter, values={"ttft_ms": 150.0}, samples={"ttft_ms": [149.0, 150.0]})
    # Half the load: a sooner first token is what it gives; a later one is the server's.
    assert compare_runs(1, "ok", [base], "ok", [sooner]).verdict == "no_regression"
    assert compare_runs(1, "ok", [base], "ok", [later]).verdict == "regressed"
    # The same first tokens, where the baseline held half and this run the whole load.
    assert compare_runs(1, "ok", [lighter], "ok", [replace(later, held_short=False)]).verdict == (
        "no_regression"
    )


def with_earlier(baseline: list[Point], *earlier: list[Point]) -> list[Point]:
    """The baseline as a record keeps it, beside earlier runs against the same server."""
    kept = json.loads(json.dumps([kept_run(run) for run in earlier]))
    return with_kept_runs(baseline, kept)


def test_a_baseline_of_several_runs_bands_how_far_a_fresh_run_moves() -> None:
    # Measured on the real vLLM server: each run's repeats within a few percent, the runs'
    # medians 481-532 tok/s apart over a minute.
    record = single([505, 518, 502])
    drifted = [single([468, 474, 480])]
    alone = compare_runs(1, "ok", [record], "ok", drifted)
    assert alone.verdict == "regressed" and alone.baseline_runs == 1
    baseline = with_earlier([record], [single([530, 533, 532])], [single([519, 527, 529])])
    report = compare_runs(1, "ok", baseline, "ok", drifted)
    assert report.verdict == "no_regression", report.summary
    assert report.baseline_runs == 3 and report.as_json()["baseline_runs"] == 3
    (decode,) = report.changes
    band = decode.as_json()["band"]["baseline"]
    # Every repeat (502-533), widened each way by the medians' factor (505 to 532).
    factor = 532 / 505
    assert band["low"] == pytest.approx(502 / factor) and band["high"] == pytest.approx(
        533 * factor
    )
    assert band["basis"] == (
        "lowest to highest of 9 repeats over 3 runs against the same server, widened each "
        "way by the factor between the runs' highest and lowest medians (x1.05)"
    )
    # A change past what the runs moved still counts.
    slower = compare_runs(1, "ok", baseline, "ok", [single([400, 410, 420])])
    assert slower.verdict == "regressed"


def test_throughput_at_load_is_banded_by_every_baseline_run() -> None:
    record = [ramp([600], concurrency=1), ramp([1500, 1510, 1520, 1530])]
    earlier = [ramp([600], concurrency=1), ramp([1300, 1310, 1320, 1330])]
    now = [ramp([600], concurrency=1), ramp([1280, 1290, 1300, 1310])]
    assert compare_runs(1, "ok", record, "ok", now).verdict == "regressed"
    assert compare_runs(1, "ok", with_earlier(record, earlier), "ok", now).verdict == (
        "no_regression"
    )
    # --max-num-seqs 1 is past any of it.
    serial = [ramp([600], concurrency=1), ramp([560, 600, 609, 640])]
    report = compare_runs(1, "ok", with_earlier(record, earlier), "ok", serial)
    assert report.summary == "regressed: throughput at load -60 % at 1,024 tokens x 4 (ramp)"


def test_a_gain_that_moves_between_runs_still_tells_a_server_that_stopped_batching() -> None:
    # Measured on the real vLLM server on 2 cores: the gain at four streams read x2.0-x4.3
    # by the run, and x1.0-x1.3 with --max-num-seqs 1. Widened by the gains' difference
    # (x2.4 to x3.6: 1.2), the band would reach down to x1.15 and take in the limited server;
    # widened by their factor (x1.5), it stops at x1.57.
    record = [ramp([200], concurrency=1), ramp([700, 710, 720, 730])]
    earlier = [
        [ramp([200], concurrency=1), ramp([470, 475, 480, 485])],
        [ramp([200], concurrency=1), ramp([590, 595, 600, 610])],
    ]
    baseline = with_earlier(record, *earlier)
    serial = [ramp([200], concurrency=1), ramp([205, 212, 220, 250])]
    report = compare_runs(1, "ok", baseline, "ok", serial)
    assert report.verdict == "regressed", report.summary
    (gain,) = [c for c in report.changes if c.metric == "throughput_scaling"]
    assert gain.band_baseline is not None
    assert gain.band_baseline.low == pytest.approx(470 / 200 / (720 / 480))
    # A run at the low end of what the unchanged server read is no regression.
    slow_run = [ramp([200], concurrency=1), ramp([395, 400, 402, 414])]
    assert compare_runs(1, "ok", baseline, "ok", slow_run).verdict == "no_regression"


def test_a_kept_run_that_did_not_measure_the_same_plan_is_left_out() -> None:
    record = [single([100, 101, 102]), ramp([600], 1), ramp([1400, 1466, 1500])]
    whole = kept_run([single([90, 91, 92]), ramp([590], 1), ramp([1390, 1400, 1410])])
    lacking = kept_run([single([90, 91, 92])])  # no ramp: another plan
    broken = [{**whole[0], "values": {"decode_tokens_per_s": "fast"}}, *whole[1:]]
    for kept in ([lacking], [broken], ["a run"], {"runs": 1}, None, [whole[:1] + [7]]):
        assert read_runs(kept, record) == [], kept
    (run,) = read_runs([lacking, whole, broken], record)
    assert [point.key for point in run] == sorted(point.key for point in record)
    assert runs_of(with_runs(record, [run])) == 2


samples = st.lists(st.floats(1, 1000, allow_nan=False), min_size=2, max_size=6)


@settings(max_examples=200, deadline=None)
@given(samples, st.lists(samples, min_size=1, max_size=3), samples)
def test_earlier_runs_never_make_a_change_count(
    own: list[float], earlier: list[list[float]], now: list[float]
) -> None:
    """The bands of a baseline with earlier runs hold its own repeats' band: a change that
    did not count against one run never counts against several, and the verdict is never
    worse."""
    record = [single(own)]
    alone = compare_runs(1, "ok", record, "ok", [single(now)])
    runs = compare_runs(1, "ok", with_earlier(record, *[[single(e)] for e in earlier]), "ok",
                        [single(now)])  # fmt: skip
    band_alone, band_runs = alone.changes[0].band_baseline, runs.changes[0].band_baseline
    assert band_alone is not None and band_runs is not None
    assert band_runs.low <= band_alone.low and band_runs.high >= band_alone.high
    assert runs.changes[0].significant <= alone.changes[0].significant
    rank = {"regressed": 2, "improved": 1, "no_regression": 0}
    assert rank[runs.verdict] <= rank[alone.verdict]


def test_a_figure_each_run_measured_once_is_banded_by_the_runs_alone() -> None:
    # A ramp level's first token and decode keep no repeats: the runs' medians are all there is.
    band = spread_band([(100.0, []), (120.0, []), (110.0, [])])
    assert band is not None
    assert (band.low, band.high) == pytest.approx((100 / 1.2, 120 * 1.2))
    assert str(band.said) == (
        "lowest to highest of 3 runs against the same server, widened each way by the factor "
        "between the highest and the lowest (x1.20)"
    )


def test_one_run_far_from_the_rest_does_not_stretch_the_band() -> None:
    # A baseline of eight runs, one measured while a neighbour held the cores at four
    # streams: its gain read x1.6 where the others read x2.5-x3.3. Counted, it would take the
    # limited server's x1.1-1.3 into the band (x1.6 over a factor of 2.06: down to x0.78).
    gains = [3.0, 2.6, 1.6, 3.3, 2.9, 2.5, 3.1, 2.8]
    runs = [[ramp([200], concurrency=1), ramp([200 * g] * 4)] for g in gains]
    baseline = with_earlier(runs[-1], *runs[:-1])
    serial = [ramp([200], concurrency=1), ramp([220, 230, 240, 260])]
    report = compare_runs(1, "ok", baseline, "ok", serial)
    assert report.verdict == "regressed", report.summary
    (gain,) = [c for c in report.changes if c.metric == "throughput_scaling"]
    assert gain.band_baseline is not None
    assert gain.band_baseline.low == pytest.approx(2.5 / (3.3 / 2.5))
    assert str(gain.band_baseline.said) == (
        "lowest to highest of 28 repeats over 7 of 8 runs against the same server (the run "
        "farthest from their median left out), widened each way by the factor between the "
        "kept runs' highest and lowest medians (x1.32)"
    )
    # Five runs keep every run: the far one stretches the band past the limited server.
    few = with_earlier(runs[-1], *runs[-5:-1])
    assert compare_runs(1, "ok", few, "ok", serial).verdict == "regressed"
    with_far = with_earlier(runs[-1], runs[2], *runs[-4:-1])
    assert compare_runs(1, "ok", with_far, "ok", serial).verdict == "no_regression"


medians = st.lists(st.floats(1, 1000, allow_nan=False), min_size=TRIM_FROM, max_size=10)


@settings(max_examples=300, deadline=None)
@given(medians, st.floats(1, 100, allow_nan=False))
def test_the_farthest_run_moving_farther_never_moves_the_band(
    found: list[float], further: float
) -> None:
    """However far the run farthest from the others' median goes, the band stays where the
    other runs put it."""
    runs = [(m, [m * 0.98, m, m * 1.02]) for m in found]
    centre = statistics.median(found)
    distance = sorted(abs(math.log(m / centre)) for m in found)
    assume(distance[-1] > distance[-2] * 1.001)  # one run is the farthest
    band = spread_band(runs)
    far = max(range(len(runs)), key=lambda i: abs(math.log(found[i] / centre)))
    m = found[far] * (further if found[far] >= centre else 1 / further)
    moved = [*runs[:far], (m, [m * 0.98, m, m * 1.02]), *runs[far + 1 :]]
    assert band is not None and spread_band(moved) == band
