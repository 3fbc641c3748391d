"""The safe context ceiling measured for a configuration, beside the memory ceiling.

The ceiling comes from the needle grid of the newest accepted working record of the
model on the hardware (this profile's before any other's): the longest length where the
needle was found at least the threshold's share of the time at every depth. The memory
ceiling is the resolved recipe's largest context one request fits (an estimate unless a
record measured it). Which one limits is decided here, once, for every page and the API.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.models import Measurement, Record
from app.records.evidence.queries import newest_first

# How many accepted records with a needle measurement are looked through for a grid.
LOOK_BACK = 20

QUALITY_LIMITS = register(
    "ceiling.quality_limits",
    _l(
        "Quality limits first: past %(safe)s tokens the needle was not found reliably, "
        "although memory fits %(memory)s tokens."
    ),
)
NONE_SAFE = register(
    "ceiling.none_safe",
    _l(
        "Quality limits first: the needle was not found reliably even at %(first)s tokens, "
        "the shortest length measured."
    ),
)
MEMORY_LIMITS = register(
    "ceiling.memory_limits",
    _l(
        "Memory limits first: the needle was found reliably up to %(safe)s tokens, and "
        "memory fits %(memory)s tokens."
    ),
)
UNTESTED_BEYOND = register(
    "ceiling.untested_beyond",
    _l(
        "Safe up to %(safe)s tokens, the longest length measured; memory fits %(memory)s "
        "tokens, and quality past %(safe)s tokens is not measured."
    ),
)


@dataclass(frozen=True)
class SafeCeiling:
    record_id: int
    profile_id: int | None
    safe_tokens: int | None
    tested_up_to: int
    first_length: int
    threshold: float
    accuracy_low: float | None
    confidence_level: float | None
    trials: int | None
    token_counting: str

    def limit(self, memory_tokens: int | None) -> Sentence | None:
        """Which ceiling limits, in words; None without a memory ceiling to weigh."""
        if memory_tokens is None:
            return None
        memory = f"{memory_tokens:,}"
        if self.safe_tokens is None:
            return NONE_SAFE(first=f"{self.first_length:,}")
        safe = f"{self.safe_tokens:,}"
        if self.safe_tokens >= memory_tokens:
            return MEMORY_LIMITS(safe=safe, memory=memory)
        if self.safe_tokens < self.tested_up_to:
            return QUALITY_LIMITS(safe=safe, memory=memory)
        return UNTESTED_BEYOND(safe=safe, memory=memory)

    def limited_by(self, memory_tokens: int | None) -> str | None:
        """ "quality", "memory" or "unknown" (safe as far as measured), for pages and JSON."""
        if memory_tokens is None:
            return None
        if self.safe_tokens is not None and self.safe_tokens >= memory_tokens:
            return "memory"
        if self.safe_tokens is None or self.safe_tokens < self.tested_up_to:
            return "quality"
        return "unknown"

    def as_json(self, memory_tokens: int | None) -> dict[str, Any]:
        return {
            "record": self.record_id,
            "safe_context_tokens": self.safe_tokens,
            "basis": "measured",
            "tested_up_to": self.tested_up_to,
            "threshold": self.threshold,
            "accuracy_low": self.accuracy_low,
            "confidence_level": self.confidence_level,
            "trials": self.trials,
            "token_counting": self.token_counting,
            "memory_context_tokens": memory_tokens,
            "limited_by": self.limited_by(memory_tokens),
        }


def ceiling_from(record_id: int, profile_id: int | None, grid: dict[str, Any]) -> SafeCeiling:
    lengths = [length for length in grid.get("lengths", []) if isinstance(length, int)]
    confidence = grid.get("confidence") or {}
    return SafeCeiling(
        record_id=record_id,
        profile_id=profile_id,
        safe_tokens=grid.get("safe_context_tokens"),
        tested_up_to=max(lengths, default=0),
        first_length=min(lengths, default=0),
        threshold=float(grid.get("threshold", 0.95)),
        accuracy_low=confidence.get("accuracy_low"),
        confidence_level=confidence.get("level"),
        trials=confidence.get("trials"),
        token_counting=str(grid.get("token_counting", "estimated")),
    )


def load_safe_ceiling(
    session: Session, model_id: int, hardware_id: int, profile_id: int
) -> SafeCeiling | None:
    """From the newest accepted working record with a needle grid, this profile's first."""
    statement = newest_first(
        select(Record.id, Record.profile_id, Measurement.details)
        .join(Measurement, Measurement.record_id == Record.id)
        .where(
            Record.model_id == model_id,
            Record.hardware_id == hardware_id,
            Record.review_state == "accepted",
            Record.outcome == "ok",
            Measurement.needle_accuracy.is_not(None),
        )
        .limit(LOOK_BACK)
    )
    rows = session.execute(statement).all()
    grids = [
        (record_id, profile, details["needle_grid"])
        for record_id, profile, details in rows
        if isinstance(details, dict) and isinstance(details.get("needle_grid"), dict)
    ]
    chosen = next((row for row in grids if row[1] == profile_id), None) or next(iter(grids), None)
    return ceiling_from(*chosen) if chosen else None
