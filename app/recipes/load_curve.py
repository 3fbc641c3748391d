"""The detail page's curve: each request's decode speed against the total throughput, over
concurrency 1 up to the profile's largest, as fleet benchmarks draw it.

The estimate is a band at each concurrency, computed as the page's "Speed at load" lines
are (`load_at`, then `load_out`), so the curve passes through those lines' very figures
(where a record measured one request, that line shows the measurement, and the curve shows
it as a measured point beside the estimate). Measured points are the medians of accepted
records at each concurrency, the same rows the page's "Several requests at once" table
shows; at one request the total throughput is that request's own speed. Each point carries
the GPU-hours a million output tokens take at it; times a price per GPU-hour (which the
reader keeps in a cookie, or the JSON is asked with) that is the cost per million output
tokens.
"""

from typing import Any

from app.asking.load_out import load_out
from app.estimate.costs import cost_per_million_tokens, gpu_hours_per_million_tokens
from app.records.evidence.summary import EvidenceSummary, Spread
from app.resolve import ResolvedRecipe
from app.resolve.figures import Evidence
from app.resolve.loads import load_at


def curve_levels(largest: int, profile: int, measured: list[int]) -> list[int]:
    """1, 2, 4, ... up to the largest, the profile's own and every measured concurrency
    up to the largest."""
    levels = {1, largest, profile}
    step = 2
    while step < largest:
        levels.add(step)
        step *= 2
    levels |= {level for level in measured if 1 <= level <= largest}
    return sorted(levels)


def figure(band: dict[str, Any]) -> dict[str, Any]:
    """A line's figure as the curve draws it: its ends and its basis (the notes stay with
    the line)."""
    return {"low": band["low"], "high": band["high"], "basis": band["basis"]}


def middle(band: dict[str, Any]) -> float | None:
    low, high = band.get("low"), band.get("high")
    if low is None or high is None:
        return None
    return (low + high) / 2


def priced(gpus: int, throughput: float | None, price: float | None) -> dict[str, Any]:
    """A point's GPU-hours per million output tokens and, at a price, its cost."""
    hours = gpu_hours_per_million_tokens(gpus, throughput) if throughput else None
    cost = cost_per_million_tokens(price, gpus, throughput) if price and throughput else None
    return {
        "gpu_hours_per_million_output_tokens": hours,
        "cost_per_million_output_tokens": cost,
    }


def estimated_point(recipe: ResolvedRecipe, concurrency: int, price: float | None) -> dict | None:
    load = load_at(recipe, concurrency)
    if load is None:
        return None
    line = load_out(load)  # the estimate alone: a measured speed is a point of its own
    throughput = line["throughput_tokens_per_s"]
    return {
        "concurrency": line["concurrency"],
        "running": line["running"],
        "decode_tokens_per_s": figure(line["decode_tokens_per_s"]),
        "throughput_tokens_per_s": figure(throughput),
        "ttft_ms": figure(line["ttft_ms"]),
        **priced(load.gpus, middle(throughput), price),
    }


def spread_out(spread: Spread) -> dict[str, Any]:
    return {"median": spread.median, "low": spread.low, "high": spread.high}


def measured_points(summary: EvidenceSummary | None, gpus: int, price: float | None) -> list:
    if summary is None:
        return []
    points = []
    for row in summary.by_concurrency:
        throughput, decode = row.throughput_tokens_per_s, row.decode_tokens_per_s
        if row.concurrency == 1 and throughput.median is None:
            throughput = decode  # one request at a time: the total is its own speed
        if throughput.median is None or decode.median is None:
            continue
        points.append(
            {
                "concurrency": row.concurrency,
                "decode_tokens_per_s": spread_out(decode),
                "throughput_tokens_per_s": spread_out(throughput),
                "records": row.records,
                "basis": Evidence.MEASURED.value,
                **priced(gpus, throughput.median, price),
            }
        )
    return points


def load_curve(
    recipe: ResolvedRecipe, summary: EvidenceSummary | None, price: float | None = None
) -> dict[str, Any] | None:
    """The curve's estimated band and measured points (None where the page shows no speed
    at load). `price`: per GPU-hour, for the cost per million output tokens."""
    if recipe.load is None or recipe.applied is None or recipe.unsupported:
        return None
    gpus = recipe.load.gpus
    largest = max(recipe.applied.max_concurrency, recipe.load.concurrency)
    measured = measured_points(summary, gpus, price)
    levels = curve_levels(largest, recipe.load.concurrency, [p["concurrency"] for p in measured])
    estimated = [estimated_point(recipe, level, price) for level in levels]
    return {
        "gpus": gpus,
        "max_concurrency": largest,
        "profile_concurrency": recipe.load.concurrency,
        "price_per_gpu_hour": price,
        "estimated": [point for point in estimated if point is not None],
        "measured": measured,
    }
