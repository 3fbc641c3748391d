"""A sentinel run's verdict as its record page shows it: read back from the report the run
stored (`provenance_detail.sentinel`, written by `servebook sentinel` and the re-check job),
its words in the reader's language. The report is kept as JSON, so what an older run did
not store (where a change was measured, before `at`) is shown as it was written."""

from dataclasses import dataclass
from typing import Any

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.models import Record
from app.records.comparison.effects import (
    DIRECTIONS,
    POINT,
    RAMP_POINT,
    TRACKED,
    VERDICT_DIRECTION,
    VERDICTS,
)

VERDICT_WORDS = {
    "no_regression": register("sentinel.verdict.no_regression", _l("no regression")),
    "improved": register("sentinel.verdict.improved", _l("improved")),
    "regressed": register("sentinel.verdict.regressed", _l("regressed")),
}
METRIC_WORDS = {
    **{metric: named for metric, (named, _unit, _higher) in TRACKED.items()},
    "throughput_tokens_per_s": register("sentinel.metric.throughput", _l("throughput"))(),
    "throughput_scaling": register(
        "sentinel.metric.throughput_scaling", _l("throughput at load, over one stream")
    )(),
    "needle_accuracy": register("sentinel.metric.needle", _l("needle accuracy"))(),
    "task_pass_rate": register("sentinel.metric.task_pass_rate", _l("task pass rate"))(),
    "outcome": register("sentinel.metric.outcome", _l("outcome"))(),
}
NEEDLE_POINT = register("sentinel.point.needle", _l("needle at %(tokens)s tokens"))


@dataclass(frozen=True)
class ShownBand:
    """A stored band's bounds (its basis is kept in English only, so it is not shown)."""

    low: float
    high: float


@dataclass(frozen=True)
class ShownChange:
    metric: str
    named: Sentence | str
    where: Sentence | str
    unit: str
    baseline: Any
    now: Any
    change_pct: float | None
    band_baseline: ShownBand | None
    band_now: ShownBand | None
    significant: bool
    verdict: Sentence


@dataclass(frozen=True)
class ShownReport:
    verdict: str
    said: Sentence | str
    baseline_record: int | None
    runs: int
    baseline_runs: int
    changes: list[ShownChange]


def sentinel_report(record: Record) -> ShownReport | None:
    """The report a sentinel run stored with its record, or None for any other record."""
    stored = record.provenance_detail.get("sentinel")
    if record.provenance != "bench" or not isinstance(stored, dict):
        return None
    verdict = str(stored.get("verdict"))
    word = VERDICT_WORDS.get(verdict)
    changes = stored.get("changes")
    baseline = stored.get("baseline_record")
    return ShownReport(
        verdict,
        word() if word else verdict,
        baseline if isinstance(baseline, int) and not isinstance(baseline, bool) else None,
        _count(stored.get("runs")),
        _count(stored.get("baseline_runs")),
        [shown(c) for c in changes if isinstance(c, dict)] if isinstance(changes, list) else [],
    )


def shown(change: dict[str, Any]) -> ShownChange:
    metric = str(change.get("metric"))
    significant = change.get("significant") is True
    direction = change.get("direction")
    band = change.get("band") if isinstance(change.get("band"), dict) else {}
    bands = _band(band.get("baseline")), _band(band.get("now"))
    if significant and direction in DIRECTIONS:
        verdict = VERDICT_DIRECTION(
            verdict=VERDICTS["beyond noise"](), direction=DIRECTIONS[direction]()
        )
    else:
        verdict = VERDICTS["noise unknown" if None in bands else "within noise"]()
    return ShownChange(
        metric,
        METRIC_WORDS.get(metric, metric),
        _where(change),
        str(change.get("unit") or ""),
        change.get("baseline"),
        change.get("now"),
        _number(change.get("change_pct")),
        *bands,
        significant,
        verdict,
    )


def _where(change: dict[str, Any]) -> Sentence | str:
    at = change.get("at")
    if not isinstance(at, dict):
        return str(change.get("point") or "")
    tokens, concurrency = f"{_count(at.get('context_length')):,}", _count(at.get("concurrency"))
    if at.get("kind") == "needle":
        return NEEDLE_POINT(tokens=tokens)
    return (RAMP_POINT if at.get("kind") == "ramp" else POINT)(
        tokens=tokens, concurrency=concurrency
    )


def _band(found: Any) -> ShownBand | None:
    if not isinstance(found, dict):
        return None
    low, high = _number(found.get("low")), _number(found.get("high"))
    return ShownBand(low, high) if low is not None and high is not None else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1
