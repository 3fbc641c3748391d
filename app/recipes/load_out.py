"""JSON of the step model's figures at a load: per-request decode, total throughput, first
token, where the step's time goes, and what the range held. Reads what the resolution holds."""

from typing import Any

from app.estimate.load import Band, LoadEstimate
from app.resolve.figures import Evidence, SpeedFigure


def band_out(band: Band, basis: str = Evidence.ESTIMATED.value) -> dict[str, Any]:
    return {"low": band.low, "high": band.high, "basis": basis}


def coverage_out(load: LoadEstimate) -> dict[str, Any]:
    """The range's class: the share it is meant to hold and what it held on its checks."""
    found = load.range
    return {
        "segment": found.key,
        "stated": found.stated,
        "measured": found.held,
        "checks": found.checks,
        "widened": found.borrowed,
    }


def load_out(load: LoadEstimate, single_speed: SpeedFigure | None = None) -> dict[str, Any]:
    """One concurrency's figures. At one request a measured or reported speed (the table's
    figure) stands for the estimate's decode, with its basis."""
    decode = band_out(load.decode)
    throughput = band_out(load.throughput)
    if single_speed is not None and load.concurrency == 1:
        decode = single_speed.as_json()
        throughput = {"low": single_speed.low, "high": single_speed.high}
        throughput["basis"] = single_speed.basis.value
    speedup = load.speculative_speedup
    return {
        "concurrency": load.concurrency,
        "running": load.running,
        "prompt_tokens": load.prompt_tokens,
        "output_tokens": load.output_tokens,
        "depth_tokens": load.depth,
        "decode_tokens_per_s": decode,
        "throughput_tokens_per_s": throughput,
        "ttft_ms": band_out(load.ttft_ms),
        "step_ms": round(load.step.total * 1e3, 3),
        "breakdown": load.shares(),
        "speculative": (
            {"method": load.speculative, "speedup": {"low": speedup.low, "high": speedup.high}}
            if speedup is not None
            else None
        ),
        "coverage": coverage_out(load),
    }
