"""Two records side by side, every difference marked; above the table, what was changed
(each setting counted once) and what the figures did, with their noise."""

from dataclasses import dataclass, field
from typing import Any

from app.i18n import gettext as _
from app.i18n import lazy_gettext as _l
from app.i18n.sentences import Sentence
from app.models import Measurement, Record
from app.records.comparison.effects import Effect, measurement_effects
from app.records.comparison.paired import PairedVerdict, paired_verdicts
from app.records.comparison.setting_changes import (
    SettingChange,
    attribution,
    attribution_said,
    setting_changes,
)
from app.records.schemas import METRICS

METRIC_LABELS = {
    "ttft_ms": _l("TTFT (ms)"),
    "decode_tokens_per_s": _l("decode (tok/s)"),
    "itl_ms": _l("ITL (ms)"),
    "e2e_latency_ms": _l("end-to-end (ms)"),
    "throughput_tokens_per_s": _l("throughput (tok/s)"),
    "peak_memory_gb_per_gpu": _l("peak memory (GB/GPU)"),
    "kv_cache_usage_peak": _l("KV cache peak"),
    "needle_accuracy": _l("needle accuracy"),
}


@dataclass(frozen=True)
class Row:
    label: str
    a: Any
    b: Any

    @property
    def differs(self) -> bool:
        return self.a != self.b


@dataclass(frozen=True)
class Comparison:
    a: Record
    b: Record
    sections: list[tuple[str, list[Row]]]
    settings: list[SettingChange] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    paired: list[PairedVerdict] = field(default_factory=list)

    @property
    def differences(self) -> int:
        return sum(row.differs for _, rows in self.sections for row in rows)

    @property
    def attribution(self) -> str:
        return attribution(self.settings)

    @property
    def attribution_said(self) -> Sentence:
        return attribution_said(self.settings)


def setup_rows(a: Record, b: Record) -> list[Row]:
    def view(r: Record) -> list[Any]:
        return [
            r.model.slug,
            r.artifact.slug,
            r.runtime.slug,
            r.runtime_version,
            r.hardware.slug,
            r.gpu_count,
            r.profile.slug if r.profile else None,
            r.outcome,
            r.review_state,
            r.command,
        ]

    # Page labels, in the reader's language (the comparison is built per request).
    labels = [
        _("model"),
        _("model file"),
        _("runtime"),
        _("runtime version"),
        _("hardware"),
        _("GPUs"),
        _("profile"),
        _("outcome"),
        _("review state"),
        _("command"),
    ]
    return [Row(label, x, y) for label, x, y in zip(labels, view(a), view(b), strict=True)]


def mapping_rows(a: dict[str, Any], b: dict[str, Any]) -> list[Row]:
    return [Row(key, a.get(key), b.get(key)) for key in sorted(set(a) | set(b))]


def point_key(m: Measurement) -> tuple[int, int]:
    return m.context_length, m.concurrency


def result_rows(a: Record, b: Record) -> list[Row]:
    points_a = {point_key(m): m for m in a.measurements}
    points_b = {point_key(m): m for m in b.measurements}
    rows: list[Row] = []
    for length, concurrency in sorted(set(points_a) | set(points_b)):
        left, right = points_a.get((length, concurrency)), points_b.get((length, concurrency))
        for metric in METRICS:
            x = getattr(left, metric) if left else None
            y = getattr(right, metric) if right else None
            if x is not None or y is not None:
                tokens = f"{length:,}"
                label = _(
                    "%(metric)s at %(length)s tokens x %(concurrency)s",
                    metric=METRIC_LABELS[metric],
                    length=tokens,
                    concurrency=concurrency,
                )
                rows.append(Row(label, x, y))
    return rows


def compare_records(a: Record, b: Record) -> Comparison:
    return Comparison(
        a,
        b,
        [
            (_("Setup"), setup_rows(a, b)),
            (_("Applied values"), mapping_rows(a.applied_values, b.applied_values)),
            (_("Environment"), mapping_rows(a.environment, b.environment)),
            (_("Results"), result_rows(a, b)),
        ],
        setting_changes(a, b),
        measurement_effects(a, b),
        paired_verdicts(a, b),
    )


def comparison_out(comparison: Comparison, urls: dict[int, str]) -> dict[str, Any]:
    """The JSON twin of the compare page's summary: settings changed and their effects."""
    a, b = comparison.a, comparison.b
    return {
        "a": {"id": a.id, "url": urls[a.id], "review_state": a.review_state},
        "b": {"id": b.id, "url": urls[b.id], "review_state": b.review_state},
        "settings_changed": len(comparison.settings),
        "attribution": comparison.attribution,
        "settings": [change.as_json() for change in comparison.settings],
        "effects": [effect.as_json() for effect in comparison.effects],
        "quality": [verdict.as_json() for verdict in comparison.paired],
        "differences": comparison.differences,
    }
