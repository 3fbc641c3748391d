"""A sentinel's report: each figure's change against its baseline, with its noise bands,
and the verdict the significant ones make (app/sentinel/compare.py judges them)."""

from dataclasses import dataclass
from typing import Any, Literal

from app.records.comparison.effects import Band

Verdict = Literal["no_regression", "improved", "regressed"]


@dataclass(frozen=True)
class Change:
    metric: str
    point: str
    unit: str
    baseline: float | str
    now: float | str
    band_baseline: Band | None
    band_now: Band | None
    significant: bool
    direction: str | None  # better | worse, only when significant
    # The measured point (context length, concurrency, kind), so a page can say where in
    # the reader's language; None for the run's outcome and a task.
    at: tuple[int, int, str] | None = None

    @property
    def change(self) -> float | None:
        if isinstance(self.baseline, str) or isinstance(self.now, str):
            return None
        return self.now - self.baseline

    @property
    def change_pct(self) -> float | None:
        change = self.change
        if change is None or not self.baseline:
            return None
        return 100 * change / float(self.baseline)

    def as_json(self) -> dict[str, Any]:
        bands = (self.band_baseline, self.band_now)
        return {
            "metric": self.metric,
            "point": self.point,
            "unit": self.unit,
            "baseline": self.baseline,
            "now": self.now,
            "change": self.change,
            "change_pct": self.change_pct,
            "band": None
            if bands == (None, None)
            else {
                "baseline": self.band_baseline.as_json() if self.band_baseline else None,
                "now": self.band_now.as_json() if self.band_now else None,
            },
            "significant": self.significant,
            "direction": self.direction,
            "at": None
            if self.at is None
            else dict(zip(("context_length", "concurrency", "kind"), self.at, strict=True)),
        }


@dataclass(frozen=True)
class SentinelReport:
    baseline_record: int
    verdict: Verdict
    changes: list[Change]
    not_judged: tuple[str, ...] = ()  # figures left out, and why
    runs: int = 1  # 2 when a second run was asked to confirm a regression
    # How many runs against the same server the baseline's bands hold (app/sentinel/spread.py):
    # one run's bands hold its repeats alone, not how far a fresh run moves.
    baseline_runs: int = 1

    @property
    def summary(self) -> str:
        """One line, e.g. "regressed: decode -40 % at 4,096 tokens x 1, needle lost at
        65,536 tokens x 1"; only the changes that made the verdict."""
        direction = {"regressed": "worse", "improved": "better"}.get(self.verdict)
        said = [
            said_change(change)
            for change in self.changes
            if change.significant and change.direction == direction
        ]
        words = self.verdict.replace("_", " ")
        return f"{words}: {', '.join(said)}" if said else words

    def as_json(self) -> dict[str, Any]:
        return {
            "baseline_record": self.baseline_record,
            "verdict": self.verdict,
            "summary": self.summary,
            "changes": [change.as_json() for change in self.changes],
            "not_judged": list(self.not_judged),
            "runs": self.runs,
            "baseline_runs": self.baseline_runs,
        }


SHORT_NAMES = {
    "ttft_ms": "TTFT",
    "decode_tokens_per_s": "decode",
    "throughput_tokens_per_s": "throughput",
    "peak_memory_gb_per_gpu": "peak memory",
    "task_pass_rate": "task pass rate",
    "throughput_scaling": "throughput at load",
}


def said_change(change: Change) -> str:
    if change.metric == "outcome":
        return f"outcome {change.baseline} -> {change.now}"
    if change.metric == "needle_accuracy" and change.direction == "worse":
        return f"needle lost at {change.point}"
    name = SHORT_NAMES.get(change.metric, change.metric)
    if change.metric == "peak_memory_gb_per_gpu" and change.change is not None:
        return f"{name} {change.change:+.1f} GB per GPU at {change.point}"
    pct = change.change_pct
    amount = f"{pct:+.0f} %" if pct is not None else f"{change.change:+.3g}"
    return f"{name} {amount} at {change.point}"


def verdict_of(changes: list[Change]) -> Verdict:
    directions = {change.direction for change in changes if change.significant}
    if "worse" in directions:
        return "regressed"
    if "better" in directions:
        return "improved"
    return "no_regression"
