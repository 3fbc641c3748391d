"""A record's measured points in one plain shape, whether read from the database (a
baseline) or about to be written (a sentinel run's raw record), so both compare alike."""

from dataclasses import dataclass, field
from typing import Any

from app.models import Measurement, Record


@dataclass(frozen=True)
class Point:
    context_length: int
    concurrency: int
    kind: str  # single | ramp | needle | task
    values: dict[str, float]
    samples: dict[str, list[float]] = field(default_factory=dict)
    needle: list[dict[str, Any]] = field(default_factory=list)  # depth, found
    task: dict[str, Any] | None = None
    # False when its answers arrived in bursts: the point has no decode to judge.
    decode_measurable: bool | None = None
    # A ramp level that held under 90 % of the requests asked at once, and what it held:
    # its figures describe a lighter load than its name says.
    held_short: bool = False
    held_mean: float | None = None
    # The same point as the baseline's other runs against the same server measured it
    # (app/sentinel/spread.py): its band holds how far a fresh run moves, not only the
    # spread of one run's repeats.
    runs: tuple["Point", ...] = ()

    @property
    def key(self) -> tuple[int, int, str]:
        return self.context_length, self.concurrency, self.kind


VALUE_FIELDS = (
    "ttft_ms",
    "decode_tokens_per_s",
    "throughput_tokens_per_s",
    "peak_memory_gb_per_gpu",
    "needle_accuracy",
)


def point_of(values: dict[str, Any], details: dict[str, Any], samples: Any) -> Point:
    task = details.get("task") if isinstance(details.get("task"), dict) else None
    if values.get("needle_accuracy") is not None:
        kind = "needle"
    elif details.get("ramp"):
        kind = "ramp"
    elif task is not None and not samples:  # a task's own point keeps no repeats
        kind = "task"
    else:
        kind = "single"
    kept_samples = {
        name: [float(v) for v in found if isinstance(v, int | float) and not isinstance(v, bool)]
        for name, found in (samples or {}).items()
        if isinstance(found, list)
    }
    needle = details.get("needle") if isinstance(details.get("needle"), list) else []
    held = details.get("held_concurrency")
    return Point(
        int(values["context_length"]),
        int(values.get("concurrency") or 1),
        kind,
        {name: float(values[name]) for name in VALUE_FIELDS if values.get(name) is not None},
        kept_samples,
        [cell for cell in needle if isinstance(cell, dict)],
        task,
        details.get("decode_measurable")
        if isinstance(details.get("decode_measurable"), bool)
        else None,
        details.get("held_short") is True,
        _number(held.get("mean")) if isinstance(held, dict) else None,
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def stored_points(record: Record) -> list[Point]:
    """A stored record's points (its measurements must be loaded)."""
    return [stored_point(m) for m in record.measurements]


def stored_point(m: Measurement) -> Point:
    values = {name: getattr(m, name) for name in ("context_length", "concurrency", *VALUE_FIELDS)}
    return point_of(values, m.details, m.details.get("samples"))


def raw_points(raw: dict[str, Any]) -> list[Point]:
    """The points of a RecordIn-shaped dict, as ``record_from_result`` builds it."""
    return [point_of(m, m.get("details") or {}, m.get("samples")) for m in raw["measurements"]]
