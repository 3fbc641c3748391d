"""Numbers in the reader's language, formatted by Babel with its parsed locale and pattern
kept: pages format dozens of figures each, and parsing both for every figure cost more than
the formatting itself."""

from functools import lru_cache

from babel import Locale
from babel.numbers import NumberPattern, parse_pattern

from app.i18n.catalogs import current_locale


@lru_cache(maxsize=16)
def _locale(code: str) -> Locale:
    return Locale.parse(code)


@lru_cache(maxsize=64)
def _pattern(form: str | None, code: str) -> NumberPattern:
    return parse_pattern(form if form is not None else _locale(code).decimal_formats[None])


def decimal(value: float | int, form: str | None = None, locale: str | None = None) -> str:
    """`value` as babel.numbers.format_decimal words it (same pattern, same rounding)."""
    code = locale or current_locale()
    return _pattern(form, code).apply(value, _locale(code), decimal_quantization=True,
                                      group_separator=True, numbering_system="latn")
