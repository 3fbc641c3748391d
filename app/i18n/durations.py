"""A time given in milliseconds, as a page or the CLI shows it: ms below a second, seconds
beyond; past LONGEST_SHOWN_MS it reads "over 10 min", not a figure.

A first token at a load no server is run at (thousands of requests queued behind one
prefill) comes out of the model as millions of milliseconds: printed, such a figure says
nothing a reader can use and widens the table it sits in.
"""

from typing import Any

from app.i18n.catalogs import gettext
from app.i18n.numbers import decimal

LONGEST_SHOWN_MS = 600_000  # ten minutes


def _digits(value: float, digits: int) -> str:
    return decimal(value, "#,##0" + ("." + "0" * digits if digits else ""))


def over_longest() -> str:
    return gettext("over %(minutes)s min", minutes=_digits(LONGEST_SHOWN_MS / 60_000, 0))


def _unit(high: float) -> tuple[float, int, str]:
    """The divisor, the digits and the unit a time up to `high` ms is written in."""
    if high < 1000:
        return 1, 0, "ms"
    return 1000, 1, "s"


def duration(ms: float) -> str:
    """One time: "850 ms", "2.4 s", or "over 10 min"."""
    if ms >= LONGEST_SHOWN_MS:
        return over_longest()
    divisor, digits, unit = _unit(ms)
    return f"{_digits(ms / divisor, digits)} {unit}"


def duration_band(band: Any) -> str:
    """A low-high time (a mapping with `low` and `high` in ms), in the unit of its high end;
    an end past LONGEST_SHOWN_MS reads "over 10 min"."""
    low, high = band["low"], band["high"]
    if low >= LONGEST_SHOWN_MS:
        return over_longest()
    if high >= LONGEST_SHOWN_MS:
        return f"{duration(low)} – {over_longest()}"
    divisor, digits, unit = _unit(high)
    if low == high:
        return f"{_digits(low / divisor, digits)} {unit}"
    return f"{_digits(low / divisor, digits)}–{_digits(high / divisor, digits)} {unit}"
