"""Accuracy of the decode estimate against public measurements (`make accuracy`).

Prints first the headline: the server speeds with each publisher left out of the fit and
scored (`leave_one_out.py`). Then the figures in sample: the server rows of the checking
publishers (which set the class ranges) and of the fitting ones (which set the
coefficients); the community single-GPU checking rows (never used to set a constant) and
fitting rows, as median error of the range's middle, the share within 30% and 50%, and how
often the measurement falls inside the low-high range, by runtime, platform and dense/MoE;
then every checking row, and whether any measured run is called exceeds_memory.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from app.estimate import Verdict
from app.estimate.ranges.classes import STATED
from app.estimate.speed.load import load_estimate
from app.estimate.speed.model import split_speed
from app.i18n.messages import english
from tests.accuracy import leave_one_out
from tests.accuracy.cases import (
    Outcome,
    assessment,
    cases,
    offload_cases,
    outcome,
    summarize,
)
from tests.accuracy.server_cases import (
    ServerCase,
    ServerOutcome,
    server_cases,
    server_outcome,
    summarize_decode,
    summarize_throughput,
    summarize_ttft,
)

RANGE_COVERS = f"{STATED:.0%}"
GROUPS: dict[str, Callable[[Outcome], str]] = {
    "runtime": lambda o: o.case.runtime,
    "platform": lambda o: o.case.platform,
    "kind": lambda o: o.case.family,
}
# Done-when targets of the checking set, printed beside the figures.
TARGET_MEDIAN_ERROR = 0.25
TARGET_WITHIN_30 = 0.65


def _line(label: str, outcomes: list[Outcome]) -> str:
    s = summarize(outcomes)
    return (
        f"  {label:<22} n={s.count:>3}  median error {s.median_error:6.1%}  "
        f"within 30% {s.within_30:6.1%}  within 50% {s.within_50:6.1%}  "
        f"in range {s.coverage:6.1%}"
    )


def _report(title: str, outcomes: list[Outcome]) -> None:
    print(f"{title} (the range is meant to hold {RANGE_COVERS})")
    print(_line("all", outcomes))
    for name, key in GROUPS.items():
        for value in sorted({key(o) for o in outcomes}):
            print(_line(f"{name}={value}", [o for o in outcomes if key(o) == value]))


def _server_line(label: str, outcomes: list[ServerOutcome], point: bool = False) -> str:
    """One segment's figures; at the `point` estimate a range's coverage and the first
    token (whose spread is the range's) say nothing and are left out."""
    decode, throughput = summarize_decode(outcomes), summarize_throughput(outcomes)
    text = f"  {label:<34}"
    if decode is not None:
        text += (
            f" decode n={decode.count:>3} median error {decode.median_error:6.1%}"
            f" within 30% {decode.within_30:6.1%}"
        )
        if not point:
            text += f" in range {decode.coverage:6.1%}"
    if throughput is not None:
        text += f" | throughput n={throughput.count:>3} median error {throughput.median_error:6.1%}"
    ttft = None if point else summarize_ttft(outcomes)
    if ttft is not None:
        text += f" | TTFT n={ttft.count:>3} median error {ttft.median_error:6.1%}"
    return text


def server_report() -> None:
    """The server measurements by segment: single / multi-GPU, concurrency 1 / above,
    runtime family and platform; checking publishers first."""
    everything = [server_outcome(case) for case in server_cases()]
    for title, fitting in (("checking publishers", False), ("fitting publishers", True)):
        found = [o for o in everything if o.case.fitting == fitting]
        print(f"server speeds, {title}, in sample: ranges set from the checking publishers")
        print(_server_line("all", found))
        for segment in sorted({o.case.segment for o in found}):
            print(_server_line(segment, [o for o in found if o.case.segment == segment]))
        print()
    publisher_report([c for c in server_cases() if not c.fitting])


def publisher_report(checking: list[ServerCase]) -> None:
    """Each checking publisher on its own, at the point estimate: the class ranges are set
    from the checking rows, so their middle has seen them; the point has not."""
    print("server speeds by checking publisher, point estimate (before the class's spread)")
    for publisher in sorted({c.publisher for c in checking}):
        points = [server_outcome(c, point=True) for c in checking if c.publisher == publisher]
        for load, chosen in (
            ("c1", [o for o in points if o.case.concurrency == 1]),
            ("cN", [o for o in points if o.case.concurrency > 1]),
        ):
            if chosen:
                print(_server_line(f"{publisher[:44]:<44} {load}", chosen, point=True))
    print()


def main() -> int:
    leave_one_out.report()
    server_report()
    everything = [outcome(case) for case in cases()]
    checking = [o for o in everything if not o.case.fitting]
    fitting = [o for o in everything if o.case.fitting]
    _report("community single GPU, checking rows", checking)
    print()
    _report("community single GPU, fitting rows", fitting)
    print("\nchecking rows: measured | estimated low-high | error")
    for o in checking:
        c = o.case
        print(
            f"  {c.label:<58} ctx {c.context:>6}  {c.measured:7.1f} | "
            f"{o.low:6.1f}-{o.high:6.1f} | {o.error:5.1%}{'' if o.covered else '  (outside)'}"
        )
    measured_runs = cases() + offload_cases()
    exceeding = [c for c in measured_runs if assessment(c).verdict == Verdict.EXCEEDS_MEMORY]
    print(f"\nmeasured runs called exceeds_memory: {len(exceeding)}")
    for case in exceeding:
        print(f"  {case.label}: {english(assessment(case).reason)}")
    print("\noffloaded runs: verdict | measured | estimated low-high")
    for case in offload_cases():
        found = assessment(case)
        speed = None
        if found.offload is not None and found.estimate and found.estimate.speed_model:
            split = split_speed(found.estimate.speed_model, found.offload)
            speed = load_estimate(split, 1).decode
        estimated = f"{speed.low:.1f}-{speed.high:.1f}" if speed else "none"
        split = english(found.offload.summary if found.offload else found.reason)
        print(
            f"  {case.label} ctx {case.context}: {found.verdict.value} | "
            f"{case.measured:.1f} | {estimated}"
        )
        print(f"    {split}")
    summary = summarize(checking)
    met = (
        summary.median_error <= TARGET_MEDIAN_ERROR
        and summary.within_30 >= TARGET_WITHIN_30
        and not exceeding
    )
    print(
        f"\ntargets (checking set): median error <= {TARGET_MEDIAN_ERROR:.0%}, "
        f">= {TARGET_WITHIN_30:.0%} within 30%, none exceeds_memory: {'met' if met else 'NOT met'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
