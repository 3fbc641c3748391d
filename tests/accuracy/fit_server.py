"""Fit the server coefficients (`app/estimate/coefficients.py`, SERVER) on the fitting
publishers of `servers.yaml`, and set each class's range from the checking publishers.

    python -m tests.accuracy.fit_server                  # print the fitted coefficients
    python -m tests.accuracy.fit_server --write-ranges   # and rewrite RANGE_CLASSES, the
                                                         # checks' ratios and accuracy history

The fit minimises the mean absolute log error of per-request decode and total throughput
over the fitting rows, one coefficient at a time over a multiplicative grid, a few passes
(coordinate descent: the terms are nearly separable). vLLM and SGLang share the fit (SGLang
has too few fitting rows of its own); ROCm keeps its own bandwidth shares.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
from pathlib import Path

import msgspec

from app.estimate.coefficients import SERVER, Coefficients, family_of
from app.estimate.ranges import STATED, class_key, range_class, ttft_range
from app.estimate.speed import platform_family
from tests.accuracy.accuracy_history import write_accuracy
from tests.accuracy.cases import cases, outcome
from tests.accuracy.server_cases import ServerOutcome, server_cases, server_outcome

FITTED = (
    "bandwidth_share_dense",
    "bandwidth_share_moe",
    "layer_s",
    "moe_layer_s",
    "step_s",
    "step_per_request_s",
    "compute_share",
)
GRID = (0.6, 0.75, 0.9, 1.0, 1.1, 1.3, 1.6)
PASSES = 3
RANGES = Path(__file__).parents[2] / "app" / "estimate" / "ranges.py"


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
    found = [server_outcome(c, rocm if c.platform == "rocm/vulkan" else cuda) for c in rows]
    return _loss(found)


def fit() -> tuple[Coefficients, Coefficients]:
    rows = [c for c in server_cases() if c.fitting]
    cuda, rocm = SERVER[("vllm", "cuda")], SERVER[("vllm", "rocm/vulkan")]
    best = _evaluate(rows, cuda, rocm)
    for _ in range(PASSES):
        for name in FITTED:
            for factor in GRID:
                value = getattr(cuda, name) * factor
                if name.endswith("share") and value > 1:
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
    print(f"fitting rows: {len(rows)}, mean |log error| {best:.3f}")
    return cuda, rocm


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _class_ranges(ratios: dict[str, list[float]]) -> dict[str, tuple[float, float, int, float]]:
    """Per class: the 10th and 90th percentile of measured / estimate, its size, what it held."""
    out = {}
    tail = (1 - STATED) / 2
    for key, values in sorted(ratios.items()):
        low, high = round(_quantile(values, tail), 2), round(_quantile(values, 1 - tail), 2)
        held = sum(low <= v <= high for v in values) / len(values)
        out[key] = (low, high, len(values), round(held, 2))
    return out


def checking_ratios() -> dict[str, list[float]]:
    """measured / point estimate per class, over the checking rows of both sets."""
    ratios: dict[str, list[float]] = {}
    for case in server_cases():
        if case.fitting:
            continue
        found = server_outcome(case)
        if found.decode_ratio is None:
            continue
        for key in (
            class_key(case.runtime, case.platform, case.gpus, case.concurrency),
            f"{case.runtime}/*/*/*",
        ):
            ratios.setdefault(key, []).append(found.decode_ratio)
    for case in cases():
        if case.fitting:
            continue
        found = outcome(case)
        family, platform = family_of(case.runtime), platform_family(case.hardware)
        in_effect = range_class(family, platform, 1, 1)
        ratio = case.measured / (found.low / in_effect.low)  # against the point estimate
        key = class_key(family, platform, 1, 1)
        for k in (key, f"{family}/*/*/*"):
            ratios.setdefault(k, []).append(ratio)
    return ratios


def ttft_ratios() -> dict[str, list[float]]:
    """Measured first token / the estimate's middle before its spread, by load, over the
    checking rows that report one."""
    ratios: dict[str, list[float]] = {}
    for case in server_cases():
        if case.fitting or case.ttft_ms is None:
            continue
        band = server_outcome(case).load.ttft_ms
        spread = ttft_range(case.concurrency)
        middle = (band.low / spread.low + band.high / spread.high) / 2
        key = "ttft/cN" if case.concurrency > 1 else "ttft/c1"
        ratios.setdefault(key, []).append(case.ttft_ms / middle)
    return ratios


def write_ranges(ranges: dict[str, tuple[float, float, int, float]], table: str) -> None:
    lines = [
        f'    "{key}": ({low}, {high}, {n}, {held}),'
        for key, (low, high, n, held) in ranges.items()
    ]
    text = RANGES.read_text()
    head = table + ": dict[str, tuple[float, float, int, float]] = {"
    block = head + "\n" + "\n".join(lines) + "\n}"
    text = re.sub(re.escape(head) + r".*?\n\}", block, text, flags=re.S)
    RANGES.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write-ranges", action="store_true")
    args = parser.parse_args()
    cuda, rocm = fit()
    print("cuda:", msgspec.structs.asdict(cuda))
    print("rocm:", msgspec.structs.asdict(rocm))
    ranges = _class_ranges(checking_ratios())
    for key, value in ranges.items():
        print(f"  {key:<32} {value}")
    ttft = _class_ranges(ttft_ratios())
    for key, value in ttft.items():
        print(f"  {key:<32} {value}")
    if args.write_ranges:
        write_ranges(ranges, "RANGE_TABLE")
        write_ranges(ttft, "TTFT_TABLE")
        write_accuracy(checking_ratios(), ranges)


if __name__ == "__main__":
    main()
