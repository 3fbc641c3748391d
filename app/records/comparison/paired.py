"""Paired verdicts: two records that asked the same prompts (same seeds), compared prompt
by prompt, for needle cells, tool calls and task prompts.

A pair that passed in the first record and failed in the second is lost; the other way it
is gained. McNemar's exact test on the lost and gained pairs says whether the change is
more than chance, and a seeded bootstrap over the pairs gives the band of the rate's
change. When nothing changed significantly, the verdict says how many more prompts a
10-point drop would need to show.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.bench.quality.stats import ALPHA, bootstrap_change, mcnemar_exact, pairs_needed
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.models import Record

DROP_TO_SEE = 0.10

KINDS = {
    "needle": register("paired.kind.needle", _l("needle cells")),
    "tool_calls": register("paired.kind.tool_calls", _l("tool calls")),
    "task": register("paired.kind.task", _l("task prompts")),
}
LOST = register(
    "paired.lost", _l("quality changed: %(lost)s of %(pairs)s %(kind)s lost, p = %(p)s")
)
LOST_FROM = register(
    "paired.lost_from",
    _l("quality changed: %(lost)s of %(pairs)s %(kind)s lost at %(from)s+, p = %(p)s"),
)
GAINED = register(
    "paired.gained", _l("quality improved: %(gained)s of %(pairs)s %(kind)s gained, p = %(p)s")
)
NO_CHANGE = register(
    "paired.no_change",
    _l(
        "no change detected in %(pairs)s %(kind)s (would need %(more)s more prompts to see a "
        "10-point drop)"
    ),
)
NO_CHANGE_ENOUGH = register(
    "paired.no_change_enough",
    _l("no change detected in %(pairs)s %(kind)s (enough prompts to see a 10-point drop)"),
)

Outcomes = dict[tuple[Any, ...], tuple[bool, int | None]]  # key -> (passed, length or None)


@dataclass(frozen=True)
class PairedVerdict:
    kind: str
    pairs: int
    lost: int
    gained: int
    p_value: float
    rate_a: float
    rate_b: float
    change_band: tuple[float, float]
    lost_from: int | None  # the shortest length where a needle cell was lost

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA

    @property
    def dropped(self) -> bool:
        return self.significant and self.lost > self.gained

    @property
    def more_needed(self) -> int:
        return max(0, pairs_needed(DROP_TO_SEE) - self.pairs)

    @property
    def said(self) -> Sentence:
        kind = KINDS[self.kind]()
        p = p_text(self.p_value)
        if self.dropped and self.lost_from is not None:
            return LOST_FROM(
                lost=self.lost, pairs=self.pairs, kind=kind, p=p, **{"from": tokens(self.lost_from)}
            )
        if self.dropped:
            return LOST(lost=self.lost, pairs=self.pairs, kind=kind, p=p)
        if self.significant:
            return GAINED(gained=self.gained, pairs=self.pairs, kind=kind, p=p)
        if self.more_needed:
            return NO_CHANGE(pairs=self.pairs, kind=kind, more=self.more_needed)
        return NO_CHANGE_ENOUGH(pairs=self.pairs, kind=kind)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "pairs": self.pairs,
            "lost": self.lost,
            "gained": self.gained,
            "p_value": round(self.p_value, 6),
            "rate_a": round(self.rate_a, 4),
            "rate_b": round(self.rate_b, 4),
            "change_band": {"low": self.change_band[0], "high": self.change_band[1]},
            "significant": self.significant,
            "dropped": self.dropped,
            "more_prompts_needed": self.more_needed,
            "said": self.said.as_json(),
        }


def p_text(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def tokens(length: int) -> str:
    return f"{length // 1024}K" if length % 1024 == 0 else f"{length:,}"


def details_of(record: Record) -> Iterable[dict[str, Any]]:
    return (m.details or {} for m in record.measurements)


def needle_outcomes(details: Iterable[dict[str, Any]]) -> Outcomes:
    outcomes: Outcomes = {}
    for detail in details:
        grid = detail.get("needle_grid")
        for cell in grid.get("cells", []) if isinstance(grid, dict) else []:
            seeds, hits = cell.get("seeds") or [], cell.get("hits") or ""
            for seed, hit in zip(seeds, hits, strict=False):
                outcomes[(cell.get("length"), cell.get("depth"), seed)] = (
                    hit == "1",
                    cell.get("length"),
                )
    return outcomes


def tool_call_outcomes(details: Iterable[dict[str, Any]]) -> Outcomes:
    outcomes: Outcomes = {}
    for detail in details:
        check = detail.get("tool_calls")
        for trial in check.get("trials", []) if isinstance(check, dict) else []:
            key = (trial.get("schema"), trial.get("context"), trial.get("seed"))
            outcomes[key] = (bool(trial.get("valid")), None)
    return outcomes


def task_outcomes(details: Iterable[dict[str, Any]]) -> Outcomes:
    """A task prompt passes when every one of its repeats passed."""
    outcomes: Outcomes = {}
    for detail in details:
        task = detail.get("task")
        if not isinstance(task, dict):
            continue
        for prompt in task.get("prompts", []) or []:
            key = (task.get("name"), task.get("version"), prompt.get("index"))
            outcomes[key] = (prompt.get("passed") == prompt.get("total"), None)
    return outcomes


def paired_verdict(kind: str, a: Outcomes, b: Outcomes) -> PairedVerdict | None:
    """The verdict over the prompts both records asked; None when they share none."""
    keys = sorted(set(a) & set(b), key=repr)
    if not keys:
        return None
    before = [a[key][0] for key in keys]
    after = [b[key][0] for key in keys]
    lost_keys = [key for key in keys if a[key][0] and not b[key][0]]
    gained = sum(1 for key in keys if b[key][0] and not a[key][0])
    lengths = [a[key][1] for key in lost_keys if a[key][1] is not None]
    low, high = bootstrap_change(before, after)
    return PairedVerdict(
        kind=kind,
        pairs=len(keys),
        lost=len(lost_keys),
        gained=gained,
        p_value=mcnemar_exact(len(lost_keys), gained),
        rate_a=sum(before) / len(keys),
        rate_b=sum(after) / len(keys),
        change_band=(round(low, 4), round(high, 4)),
        lost_from=min(lengths) if lengths else None,
    )


def paired_verdicts(a: Record, b: Record) -> list[PairedVerdict]:
    """Record ``a`` as the baseline, ``b`` as the change; one verdict per kind they share."""
    details_a, details_b = list(details_of(a)), list(details_of(b))
    verdicts = [
        paired_verdict(kind, read(details_a), read(details_b))
        for kind, read in (
            ("needle", needle_outcomes),
            ("tool_calls", tool_call_outcomes),
            ("task", task_outcomes),
        )
    ]
    return [verdict for verdict in verdicts if verdict is not None]


def quality_drop(baseline: Record, record: Record) -> PairedVerdict | None:
    """The first significant drop from ``baseline`` to ``record``, if any."""
    return next((v for v in paired_verdicts(baseline, record) if v.dropped), None)
