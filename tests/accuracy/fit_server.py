"""Fit the server coefficients (`app/estimate/speed/coefficients.py`, SERVER) on the fitting
publishers of `servers.yaml`, and set each class's range from the checking publishers.

    python -m tests.accuracy.fit_server                  # print the fitted coefficients
    python -m tests.accuracy.fit_server --write-ranges   # and rewrite RANGE_CLASSES, the
                                                         # checks' ratios and accuracy history

Each runtime family is fitted on its own fitting rows. The fit minimises the mean absolute
log error of per-request decode and total throughput at the point estimates (before the
ranges' spread, so that the ranges written from the fit do not move it), one coefficient at
a time over a multiplicative grid, several passes (coordinate descent: the terms are nearly
separable); ROCm keeps its own bandwidth shares. Then the first token's time per request,
on the rows at one request. The printed values go into `app/estimate/speed/coefficients.py`,
rounded; run it again from them to see that they stay.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
from functools import cache
from pathlib import Path

import msgspec

from app.estimate.inputs.specs import family_of
from app.estimate.ranges import classes
from app.estimate.ranges.classes import (
    STATED,
    class_key,
    pool_keys,
    publisher_medians,
    range_class,
    reach_publishers,
    ttft_range,
)
from app.estimate.speed.coefficients import SERVER, Coefficients
from app.estimate.speed.llama_constants import platform_family
from tests.accuracy.accuracy_history import write_accuracy
from tests.accuracy.cases import cases, outcome
from tests.accuracy.server_cases import (
    ServerCase,
    ServerOutcome,
    publisher_of,
    server_cases,
    server_outcome,
)

# What each family's fit moves. SGLang's fitting rows reach concurrency 100 on MoE models
# only, too few to place a dense model's compute roofline: it keeps vLLM's compute share.
FITTED: dict[str, tuple[str, ...]] = {
    "vllm": (
        "bandwidth_share_dense",
        "bandwidth_share_moe",
        "layer_s",
        "moe_layer_s",
        "quantized_moe_layer_s",
        "step_s",
        "step_per_request_s",
        "compute_share",
    ),
    "sglang": (
        "bandwidth_share_dense",
        "bandwidth_share_moe",
        "layer_s",
        "moe_layer_s",
        "expert_s",
        "step_s",
        "step_per_request_s",
    ),
}
GRID = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.3, 2.0, 4.0, 10.0)
PASSES = 8
FIRST_TOKEN_GRID = tuple(ms / 1e3 for ms in (0, 5, 10, 20, 30, 40, 50, 60, 80, 100, 120, 150, 200))
RANGES = Path(classes.__file__)


def _loss(outcomes: list[ServerOutcome]) -> float:
    errors = []
    for o in outcomes:
        if o.case.decode:
            errors.append(abs(math.log(o.load.decode.middle / o.case.decode)))
        if o.case.throughput:
            estimated = o.load.throughput.middle * o.case.replicas
            errors.append(abs(math.log(estimated / o.case.throughput)))
    return statistics.fmean(errors)


def _evaluate(rows, cuda: Coefficients, rocm: Coefficients) -> float:
    found = [
        server_outcome(c, rocm if c.platform == "rocm/vulkan" else cuda, point=True) for c in rows
    ]
    return _loss(found)


def fit(family: str) -> tuple[Coefficients, Coefficients]:
    """One runtime family's coefficients on CUDA and ROCm, from its own fitting rows,
    starting from the shipped ones."""
    rows = [c for c in server_cases() if c.fitting and c.runtime == family]
    cuda, rocm = fit_rows(family, rows)
    return cuda, rocm


def fit_rows(
    family: str, rows: list[ServerCase], quiet: bool = False
) -> tuple[Coefficients, Coefficients]:
    """A runtime family's coefficients on CUDA and ROCm fitted on the given rows (of that
    family), starting from the shipped ones; `quiet` leaves the fit's figures unprinted."""
    cuda, rocm = SERVER[(family, "cuda")], SERVER[(family, "rocm/vulkan")]
    best = _evaluate(rows, cuda, rocm)
    for _ in range(PASSES):
        for name in FITTED[family]:
            for factor in GRID:
                value = getattr(cuda, name) * factor
                if "share" in name and value > 1:
                    continue
                trial = msgspec.structs.replace(cuda, **{name: value})
                trial_rocm = msgspec.structs.replace(rocm, **{name: value})
                if name.startswith("bandwidth"):
                    trial_rocm = rocm
                loss = _evaluate(rows, trial, trial_rocm)
                if loss < best - 1e-6:
                    best, cuda, rocm = loss, trial, trial_rocm
        for name in ("bandwidth_share_dense", "bandwidth_share_moe"):
            for factor in GRID:
                value = getattr(rocm, name) * factor
                if value > 1:
                    continue
                trial_rocm = msgspec.structs.replace(rocm, **{name: value})
                loss = _evaluate(rows, cuda, trial_rocm)
                if loss < best - 1e-6:
                    best, rocm = loss, trial_rocm
    if not quiet:
        print(f"{family} fitting rows: {len(rows)}, mean |log error| {best:.3f}")
    return _fit_first_token(rows, cuda, rocm, quiet)


def _ttft_middle(outcome: ServerOutcome) -> float:
    """The first token's estimate before its class's spread (the ranges' point)."""
    # Published serving benchmarks start every client together with equal lengths, so the
    # clients stay in step: their first token is the burst's.
    band, spread = outcome.load.ttft_burst_ms, ttft_range(outcome.case.concurrency)
    return (band.low / spread.low + band.high / spread.high) / 2


def _fit_first_token(rows, cuda: Coefficients, rocm: Coefficients, quiet: bool = False):
    """The per-request first-token time that best matches the fitting rows' first tokens at
    one request (mean |log error|), where no other prompt is queued ahead; the step and
    prefill terms already fitted. The median, not the mean: a few rows are a whole
    server's start-up or a queue the source does not state, and would set it alone."""
    timed = [c for c in rows if c.ttft_ms and c.concurrency == 1]
    if not timed:
        return cuda, rocm

    def loss(seconds: float) -> float:
        errors = []
        for c in timed:
            base = rocm if c.platform == "rocm/vulkan" else cuda
            trial = msgspec.structs.replace(base, first_token_s=seconds)
            errors.append(
                abs(math.log(_ttft_middle(server_outcome(c, trial, point=True)) / c.ttft_ms))
            )
        return statistics.median(errors)

    best = min(FIRST_TOKEN_GRID, key=loss)
    if not quiet:
        print(
            f"  first token: {len(timed)} rows, {best * 1e3:.0f} ms,",
            f"median |log error| {loss(best):.3f}",
        )
    return (
        msgspec.structs.replace(cuda, first_token_s=best),
        msgspec.structs.replace(rocm, first_token_s=best),
    )


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _class_ranges(
    ratios: dict[str, list[float]], medians: dict[str, list[float]] | None = None
) -> dict[str, tuple[float, float, int, float]]:
    """Per class: the 10th and 90th percentile of measured / estimate, reaching each of its
    publishers' medians where they are given (`reach_publishers`), its size, what it held."""
    out = {}
    tail = (1 - STATED) / 2
    medians = medians or {}
    for key, values in sorted(ratios.items()):
        low, high = quantile(values, tail), quantile(values, 1 - tail)
        low, high = reach_publishers(key, low, high, medians.get(key, ()))
        low, high = round(low, 2), round(high, 2)
        held = sum(low <= v <= high for v in values) / len(values)
        out[key] = (low, high, len(values), round(held, 2))
    return out


@cache
def _checks() -> tuple[tuple[str, float, str], ...]:
    """(class key, measured / point estimate, publisher) of every checking row of both
    sets, once for its class and once for each pool it may borrow."""
    found: list[tuple[str, float, str]] = []
    for case in server_cases():
        if case.fitting:
            continue
        ratio = server_outcome(case).decode_ratio
        if ratio is None:
            continue
        key = class_key(case.runtime, case.platform, case.gpus, case.concurrency)
        found += [(k, ratio, publisher_of(case)) for k in (key, *pool_keys(key))]
    for case in cases():
        if case.fitting:
            continue
        outcome_found = outcome(case)
        family, platform = family_of(case.runtime), platform_family(case.hardware)
        in_effect = range_class(family, platform, 1, 1)
        point = outcome_found.point or outcome_found.low / in_effect.low
        key = class_key(family, platform, 1, 1)
        # against the point estimate; a community row's publisher is its source
        found += [(k, case.measured / point, case.source) for k in (key, *pool_keys(key))]
    return tuple(found)


def checking_ratios() -> dict[str, list[float]]:
    """measured / point estimate per class, over the checking rows of both sets."""
    ratios: dict[str, list[float]] = {}
    for key, ratio, _ in _checks():
        ratios.setdefault(key, []).append(ratio)
    return ratios


def _by_publisher() -> dict[str, dict[str, list[float]]]:
    """Per class, each publisher's checking ratios."""
    found: dict[str, dict[str, list[float]]] = {}
    for key, ratio, publisher in _checks():
        found.setdefault(key, {}).setdefault(publisher, []).append(ratio)
    return found


def checking_publishers() -> dict[str, int]:
    """How many publishers the checks of each class come from."""
    return {key: len(by) for key, by in _by_publisher().items()}


def checking_medians() -> dict[str, list[float]]:
    """Per class, each publisher's median checking ratio, in order."""
    return {key: sorted(publisher_medians(by)) for key, by in _by_publisher().items()}


def range_table() -> dict[str, tuple[float, float, int, float, int]]:
    """`RANGE_TABLE` as the checks give it: each class's range and its publishers."""
    publishers = checking_publishers()
    ranges = _class_ranges(checking_ratios(), checking_medians())
    return {key: (*found, publishers[key]) for key, found in ranges.items()}


def ttft_ratios() -> dict[str, list[float]]:
    """Measured first token / the estimate's middle before its spread, by load, over the
    checking rows that report one."""
    ratios: dict[str, list[float]] = {}
    for case in server_cases():
        if case.fitting or case.ttft_ms is None:
            continue
        middle = _ttft_middle(server_outcome(case))
        key = "ttft/cN" if case.concurrency > 1 else "ttft/c1"
        ratios.setdefault(key, []).append(case.ttft_ms / middle)
    return ratios


def write_ranges(ranges: dict[str, tuple], table: str, kinds: str) -> None:
    lines = [f'    "{key}": ({", ".join(str(v) for v in found)}),' for key, found in ranges.items()]
    text = RANGES.read_text()
    head = table + f": dict[str, tuple[{kinds}]] = {{"
    block = head + "\n" + "\n".join(lines) + "\n}"
    text = re.sub(re.escape(head) + r".*?\n\}", block, text, flags=re.S)
    RANGES.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-ranges", action="store_true")
    args = parser.parse_args()
    for family in FITTED:
        cuda, rocm = fit(family)
        print(f"{family} cuda:", msgspec.structs.asdict(cuda))
        print(f"{family} rocm:", msgspec.structs.asdict(rocm))
    ranges = range_table()
    for key, value in ranges.items():
        print(f"  {key:<32} {value}")
    ttft = _class_ranges(ttft_ratios())
    for key, value in ttft.items():
        print(f"  {key:<32} {value}")
    if args.write_ranges:
        write_ranges(ranges, "RANGE_TABLE", "float, float, int, float, int")
        write_ranges(ttft, "TTFT_TABLE", "float, float, int, float")
        write_accuracy(checking_ratios(), ranges, checking_medians())


if __name__ == "__main__":
    main()
