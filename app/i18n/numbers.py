"""Numbers in the reader's language, formatted by Babel with its parsed locale and pattern
kept: pages format dozens of figures each, and parsing both for every figure cost more than
the formatting itself. The wording of each (number, pattern, language) is kept too: the
same figures come back in every answer (a card's bandwidth, a reserve's fraction), and
Babel's formatting costs a hundred times a lookup."""

from decimal import InvalidOperation
from functools import lru_cache
from math import copysign

from babel import Locale
from babel.numbers import NumberPattern, parse_pattern

from app.i18n.catalogs import current_locale

# Distinct (number, pattern, language) wordings kept; the least recently used go first.
WORDED_KEPT = 8192


@lru_cache(maxsize=16)
def _locale(code: str) -> Locale:
    return Locale.parse(code)


@lru_cache(maxsize=64)
def _pattern(form: str | None, code: str) -> NumberPattern:
    return parse_pattern(form if form is not None else _locale(code).decimal_formats[None])


def decimal(value: float | int, form: str | None = None, locale: str | None = None) -> str:
    """`value` as babel.numbers.format_decimal words it (same pattern, same rounding)."""
    code = locale or current_locale()
    if value != value or (not value and copysign(1.0, value) < 0):
        # NaN and -0.0 are not kept: NaN equals nothing, so it could not be found again,
        # and -0.0 equals 0.0 but may be worded with its sign.
        return _worded(value, form, code)
    return _kept(value, form, code)


def _worded(value: float | int, form: str | None, code: str) -> str:
    try:
        return _pattern(form, code).apply(
            value,
            _locale(code),
            decimal_quantization=True,
            group_separator=True,
            numbering_system="latn",
        )
    except InvalidOperation:
        # Past 28 significant digits Babel cannot round (a figure someone typed into a
        # refused field, echoed back): six significant digits and an exponent.
        return f"{value:.6g}"


# Typed: 2 and 2.0 are equal keys, and each keeps its own wording.
_kept = lru_cache(maxsize=WORDED_KEPT, typed=True)(_worded)
