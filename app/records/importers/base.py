"""What every importer returns: measurements in our units, plus what the file says about itself."""

from dataclasses import dataclass, field
from typing import Any


class ImportFormatError(ValueError):
    """The file is not what its format promises; the message says what is missing."""


@dataclass
class ImportedRun:
    tool: str
    format: str
    measurements: list[dict[str, Any]]
    tool_version: str | None = None
    runtime_version: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


def number(value: Any) -> float | None:
    """A finite float, or None for missing, null, NaN and the strings tools write for them."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if result == result and abs(result) != float("inf") else None


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def per_second(ms_per_token: float | None) -> float | None:
    """Tokens per second from milliseconds per token."""
    return round(1000 / ms_per_token, 3) if ms_per_token else None


def compact(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != {} and v != []}
