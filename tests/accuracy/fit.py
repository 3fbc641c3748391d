"""Fit the decode constants of app/estimate/speed/llama_constants.py on the fitting rows only.

`python -m tests.accuracy.fit` prints the constants to copy into speed.py; the checking
rows are never read here. The model it fits is the llama.cpp step the step model takes:

    tok/s = long_context_factor(context) / (bytes / (eta x bandwidth) + layers x overhead)

For a long-context constant and a family's per-layer overhead (both on a grid), each
llama.cpp row implies an eta; a cell's eta (family x dense/MoE) is the median of its rows'.
Each family keeps the overhead with the smallest mean |log(estimate / measured)| (no eta
above 1), and the long-context constant is the one with the smallest total. A runtime
other than llama.cpp gets a speed factor: the median of measured / llama.cpp estimate over
its rows. The ranges come from the checking rows (`make accuracy`), not from here.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

import app.estimate.speed.llama_constants as speed
from tests.accuracy.cases import Case, cases, outcome

OVERHEADS_S = [i / 1_000_000 for i in range(0, 201, 5)]  # per layer, 0 to 200 us
LONG_CONTEXT = [100_000, 150_000, 200_000, 300_000, 400_000, 600_000, 1_000_000, 10**12]
LLAMA_CPP = ("llama-cpp", "ollama")


@dataclass(frozen=True)
class Row:
    case: Case
    size: float  # bytes read per token, as the estimator counts them

    @property
    def family(self) -> str:
        return speed.platform_family(self.case.hardware)

    @property
    def cell(self) -> tuple[str, bool]:
        return self.family, self.case.model.is_moe

    @property
    def layers(self) -> int:
        return self.case.model.num_layers or speed.DEFAULT_LAYERS

    def eta(self, overhead: float, long_context: int) -> float | None:
        seconds = 1 / (1 + self.case.context / long_context) / self.case.measured
        seconds -= overhead * self.layers
        if seconds <= 0:
            return None
        return self.size / (self.case.hardware.bandwidth_gb_s_per_gpu * 1e9 * seconds)

    def predict(self, eta: float, overhead: float, long_context: int) -> float:
        bandwidth = self.case.hardware.bandwidth_gb_s_per_gpu * 1e9
        seconds = self.size / (eta * bandwidth) + overhead * self.layers
        return 1 / (1 + self.case.context / long_context) / seconds

    def log_error(self, eta: float, overhead: float, long_context: int) -> float:
        return abs(math.log(self.predict(eta, overhead, long_context) / self.case.measured))


def _bytes_per_token(case: Case) -> float:
    """Bytes the estimator counts per token: its point estimate at eta 1, no overhead and
    no long-context slowdown is bandwidth / bytes."""
    saved = (
        dict(speed.EFFICIENCY),
        dict(speed.RUNTIME_FACTOR),
        dict(speed.PER_LAYER_OVERHEAD_S),
        speed.LONG_CONTEXT_TOKENS,
    )
    try:
        speed.EFFICIENCY.update(dict.fromkeys(speed.EFFICIENCY, 1.0))
        speed.RUNTIME_FACTOR.update(dict.fromkeys(speed.RUNTIME_FACTOR, 1.0))
        speed.PER_LAYER_OVERHEAD_S.update(dict.fromkeys(speed.PER_LAYER_OVERHEAD_S, 0.0))
        speed.LONG_CONTEXT_TOKENS = 10**18
        roofline = outcome(case).center
    finally:
        speed.EFFICIENCY.update(saved[0])
        speed.RUNTIME_FACTOR.update(saved[1])
        speed.PER_LAYER_OVERHEAD_S.update(saved[2])
        speed.LONG_CONTEXT_TOKENS = saved[3]
    return case.hardware.bandwidth_gb_s_per_gpu * 1e9 / roofline


def _cells(rows: list[Row], overhead: float, long_context: int) -> dict | None:
    implied = defaultdict(list)
    for row in rows:
        eta = row.eta(overhead, long_context)
        if eta is None:
            return None
        implied[row.cell].append(eta)
    cells = {cell: statistics.median(etas) for cell, etas in implied.items()}
    return None if max(cells.values()) > 1 else cells


def _fit_family(rows: list[Row], long_context: int):
    """The family's overhead and cell etas with the smallest mean log error."""
    best = None
    for overhead in OVERHEADS_S:
        cells = _cells(rows, overhead, long_context)
        if cells is None:
            continue
        score = statistics.mean(r.log_error(cells[r.cell], overhead, long_context) for r in rows)
        if best is None or score < best[0]:
            best = (score, overhead, cells)
    return best


def _fill_missing(cells: dict, overheads: dict) -> None:
    """A family without MoE (or dense) fitting rows takes its other kind times the MoE/dense
    ratio of the families that have both; CPU takes the ROCm/Vulkan figures."""
    both = {f for f, _ in cells if (f, True) in cells and (f, False) in cells}
    ratio = statistics.median(cells[(f, True)] / cells[(f, False)] for f in both)
    for family in ("cuda", "cuda-unified", "rocm/vulkan", "metal"):
        if (family, True) not in cells and (family, False) in cells:
            cells[(family, True)] = cells[(family, False)] * ratio
        if (family, False) not in cells and (family, True) in cells:
            cells[(family, False)] = cells[(family, True)] / ratio
    for moe in (False, True):
        cells[("cpu", moe)] = cells[("rocm/vulkan", moe)]
    overheads["cpu"] = overheads["rocm/vulkan"]


def main() -> None:
    rows = [Row(case, _bytes_per_token(case)) for case in cases() if case.fitting]
    base = [r for r in rows if r.case.runtime in LLAMA_CPP]
    families = sorted({r.family for r in base})
    best = None
    for long_context in LONG_CONTEXT:
        fits = {f: _fit_family([r for r in base if r.family == f], long_context) for f in families}
        if any(fit is None for fit in fits.values()):
            continue
        total = sum(fit[0] * sum(r.family == f for r in base) for f, fit in fits.items())
        if best is None or total < best[0]:
            best = (total, long_context, fits)
    _, long_context, fits = best
    overheads = {f: fit[1] for f, fit in fits.items()}
    cells = {cell: eta for fit in fits.values() for cell, eta in fit[2].items()}
    _fill_missing(cells, overheads)
    factors = defaultdict(list)
    for r in rows:
        if r.case.runtime not in LLAMA_CPP:
            predicted = r.predict(cells[r.cell], overheads[r.family], long_context)
            factors[r.case.runtime].append(r.case.measured / predicted)
    runtime_factors = {name: statistics.median(found) for name, found in factors.items()}
    ratios = sorted(
        r.case.measured
        / r.predict(cells[r.cell], overheads[r.family], long_context)
        / runtime_factors.get(r.case.runtime, 1.0)
        for r in rows
    )
    deciles = statistics.quantiles(ratios, n=10)
    print(f"fitting rows: {len(rows)} ({len(base)} llama.cpp)")
    print("EFFICIENCY = {")
    for cell in sorted(cells):
        print(f"    {cell!r}: {cells[cell]:.2f},")
    print("}")
    fitted = {k: round(v, 2) for k, v in runtime_factors.items()}
    print(f"RUNTIME_FACTOR (fitted, others stay 1.0): {fitted}")
    print(f"PER_LAYER_OVERHEAD_S = { {k: round(v, 6) for k, v in sorted(overheads.items())} }")
    print(f"LONG_CONTEXT_TOKENS = {long_context:_}")
    print(f"fitting rows' spread: x{deciles[0]:.2f}-{deciles[-1]:.2f} (10th-90th percentile)")


if __name__ == "__main__":
    main()
