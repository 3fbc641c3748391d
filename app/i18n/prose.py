"""The catalog's own prose in the reader's language.

Rows keep the English text in its column and the other languages in ``translations``
(``{field: {"ko": ..., "ja": ...}}``, written by the seed). A page asks for a field and gets
the text in the current language, or the English when that language has none; JSON keeps
the English column.
"""

from typing import Any

from app.i18n.catalogs import DEFAULT_LOCALE, current_locale


def prose(row: Any, field: str) -> Any:
    """``row.field`` in the current language, falling back to the English column."""
    english = getattr(row, field)
    locale = current_locale()
    if locale == DEFAULT_LOCALE:
        return english
    translated = (getattr(row, "translations", None) or {}).get(field, {}).get(locale)
    return translated or english
