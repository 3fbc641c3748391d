"""What the figures did between two records, each change with its noise band.

The band of a figure is the spread of the repeats it summarises, lowest to highest of the
per-request samples the record keeps. A figure kept as a single number (typed in by hand,
a ramp level, a memory peak) has no band: it is said to be unknown, never made up. A change
is beyond noise only when the two bands do not overlap.

The task pass rate's band is the 95 % Wilson score interval over the answers the task
checked (passed of total): the repeats of a pass/fail check are its samples.
"""

from dataclasses import dataclass
from typing import Any

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register
from app.models import Measurement, Record
from app.records.comparison.statistics import wilson_interval

# metric -> (label, unit, True when higher is better)
TRACKED: dict[str, tuple[Sentence, str, bool]] = {
    "ttft_ms": (register("compare.metric.ttft", _l("TTFT"))(), "ms", False),
    "decode_tokens_per_s": (register("compare.metric.decode", _l("decode speed"))(), "tok/s", True),
    "peak_memory_gb_per_gpu": (
        register("compare.metric.peak_memory", _l("peak memory"))(),
        "GB/GPU",
        False,
    ),
}
TASK_PASS_RATE = register(
    "compare.metric.task_pass_rate", _l("task %(name)s v%(version)s pass rate")
)
POINT = register("compare.point", _l("%(tokens)s tokens x %(concurrency)s"))
RAMP_POINT = register("compare.point_ramp", _l("%(tokens)s tokens x %(concurrency)s (ramp)"))
TASK_PROMPTS = register("compare.point_task", _l("task prompts"))
REPEATS = register("compare.band.repeats", _l("lowest to highest of %(num)s repeats"))
WILSON = register("compare.band.wilson", _l("95 %% Wilson interval over %(num)s checked answers"))
ONE_SINGLE = register(
    "compare.unknown.one", _l("record %(a)s kept a single figure, no repeats: the band is unknown")
)
BOTH_SINGLE = register(
    "compare.unknown.both",
    _l("records %(a)s and %(b)s kept a single figure, no repeats: the band is unknown"),
)
VERDICTS = {
    "within noise": register("compare.verdict.within_noise", _l("within noise")),
    "beyond noise": register("compare.verdict.beyond_noise", _l("beyond noise")),
    "noise unknown": register("compare.verdict.noise_unknown", _l("noise unknown")),
}
DIRECTIONS = {
    "better": register("compare.direction.better", _l("better")),
    "worse": register("compare.direction.worse", _l("worse")),
}
VERDICT_DIRECTION = register("compare.verdict_direction", _l("%(verdict)s (%(direction)s)"))


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    said: Sentence  # what the band spans, e.g. lowest to highest of 3 repeats

    @property
    def basis(self) -> str:
        return english(self.said)

    def as_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "basis": self.basis}


@dataclass(frozen=True)
class Effect:
    """A figure's change; its words (label, where, why the band is unknown) are messages, so
    the page says them in the reader's language and JSON in English."""

    metric: str
    named: Sentence
    unit: str
    where: Sentence  # where it was measured, e.g. 4,096 tokens x 1
    a: float
    b: float
    band_a: Band | None
    band_b: Band | None
    higher_is_better: bool
    unknown: Sentence | None = None

    @property
    def label(self) -> str:
        return english(self.named)

    @property
    def point(self) -> str:
        return english(self.where)

    @property
    def unknown_because(self) -> str:
        return english(self.unknown) if self.unknown else ""

    @property
    def verdict_said(self) -> Sentence:
        verdict = VERDICTS[self.verdict]()
        if self.direction is None:
            return verdict
        return VERDICT_DIRECTION(verdict=verdict, direction=DIRECTIONS[self.direction]())

    @property
    def change(self) -> float:
        return self.b - self.a

    @property
    def change_pct(self) -> float | None:
        return None if self.a == 0 else 100 * self.change / self.a

    @property
    def verdict(self) -> str:
        if self.band_a is None or self.band_b is None:
            return "noise unknown"
        overlap = self.band_a.low <= self.band_b.high and self.band_b.low <= self.band_a.high
        return "within noise" if overlap else "beyond noise"

    @property
    def direction(self) -> str | None:
        """better or worse, only for a change the noise cannot explain."""
        if self.verdict != "beyond noise":
            return None
        return "better" if (self.change > 0) == self.higher_is_better else "worse"

    def as_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "label": self.label,
            "unit": self.unit,
            "point": self.point,
            "a": self.a,
            "b": self.b,
            "change": self.change,
            "change_pct": self.change_pct,
            "band_a": self.band_a.as_json() if self.band_a else None,
            "band_b": self.band_b.as_json() if self.band_b else None,
            "verdict": self.verdict,
            "direction": self.direction,
            "band_unknown_because": self.unknown_because or None,
        }


def sample_band(values: list[float]) -> Band | None:
    if len(values) < 2:
        return None
    return Band(min(values), max(values), REPEATS(num=len(values)))


def wilson_band(passed: int, total: int) -> Band | None:
    found = wilson_interval(passed, total)
    return Band(found.low, found.high, WILSON(num=total)) if found else None


def kind_of(m: Measurement) -> str:
    if m.needle_accuracy is not None:
        return "needle"
    return "ramp" if m.details.get("ramp") else "single"


def samples_of(m: Measurement, metric: str) -> list[float]:
    samples = m.details.get("samples")
    values = samples.get(metric) if isinstance(samples, dict) else None
    return [v for v in values if isinstance(v, int | float)] if isinstance(values, list) else []


def why_unknown(a: Record, b: Record, band_a: Band | None, band_b: Band | None) -> Sentence | None:
    single = [str(r.id) for r, band in ((a, band_a), (b, band_b)) if band is None]
    if not single:
        return None
    if len(single) == 2:
        return BOTH_SINGLE(a=single[0], b=single[1])
    return ONE_SINGLE(a=single[0])


def point_effects(a: Record, b: Record) -> list[Effect]:
    points_a = {(m.context_length, m.concurrency, kind_of(m)): m for m in a.measurements}
    points_b = {(m.context_length, m.concurrency, kind_of(m)): m for m in b.measurements}
    effects = []
    for key in sorted(set(points_a) & set(points_b)):
        left, right = points_a[key], points_b[key]
        length, concurrency, kind = key
        where = (RAMP_POINT if kind == "ramp" else POINT)(tokens=length, concurrency=concurrency)
        for metric, (label, unit, higher) in TRACKED.items():
            x, y = getattr(left, metric), getattr(right, metric)
            if x is None or y is None:
                continue
            band_a, band_b = (
                sample_band(samples_of(left, metric)),
                sample_band(samples_of(right, metric)),
            )
            effects.append(
                Effect(
                    metric,
                    label,
                    unit,
                    where,
                    x,
                    y,
                    band_a,
                    band_b,
                    higher,
                    why_unknown(a, b, band_a, band_b),
                )
            )
    return effects


def task_score(record: Record) -> dict[str, Any] | None:
    for m in record.measurements:
        task = m.details.get("task")
        if isinstance(task, dict) and task.get("pass_rate") is not None:
            return task
    return None


def task_effect(a: Record, b: Record) -> Effect | None:
    """The pass rate, when both records ran the same version of the same task."""
    left, right = task_score(a), task_score(b)
    if left is None or right is None:
        return None
    if (left.get("name"), left.get("version")) != (right.get("name"), right.get("version")):
        return None
    band_a = wilson_band(int(left.get("passed") or 0), int(left.get("total") or 0))
    band_b = wilson_band(int(right.get("passed") or 0), int(right.get("total") or 0))
    label = TASK_PASS_RATE(name=str(left.get("name")), version=str(left.get("version")))
    return Effect(
        "task_pass_rate",
        label,
        "share",
        TASK_PROMPTS(),
        float(left["pass_rate"]),
        float(right["pass_rate"]),
        band_a,
        band_b,
        True,
        why_unknown(a, b, band_a, band_b),
    )


def measurement_effects(a: Record, b: Record) -> list[Effect]:
    """TTFT, decode speed and memory at every point both records measured, then the task."""
    task = task_effect(a, b)
    return point_effects(a, b) + ([task] if task else [])
