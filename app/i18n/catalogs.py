"""The translation catalogs: gettext `.po` files compiled in memory by Babel at first use,
and the language of the request being answered.

The `.po` files under app/locales are the only source; no `.mo` file is committed or
needed, so a fresh clone serves every language without a build step.
"""

import io
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import LazyProxy, Translations

LOCALES = ("en", "ko", "ja")
DEFAULT_LOCALE = "en"
# The name each language gives itself, as the header's switcher shows it.
LANGUAGE_NAMES = {"en": "English", "ko": "한국어", "ja": "日本語"}
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locales"
DOMAIN = "messages"

_current: ContextVar[str] = ContextVar("locale", default=DEFAULT_LOCALE)


def po_path(locale: str) -> Path:
    return LOCALE_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(locale: str) -> Translations:
    """One language's catalog, compiled from its `.po` by Babel's own compiler."""
    with po_path(locale).open("rb") as po:
        catalog = read_po(po, locale=locale, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)  # fuzzy entries are left out, as msgfmt does
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def current_locale() -> str:
    return _current.get()


def set_locale(locale: str) -> Any:
    """Answer in `locale` from here on in this context; returns the token to reset it."""
    return _current.set(locale if locale in LOCALES else DEFAULT_LOCALE)


def reset_locale(token: Any) -> None:
    _current.reset(token)


def gettext(message: str, **variables: Any) -> str:
    text = translations(current_locale()).ugettext(message)
    return text % variables if variables else text


def ngettext(singular: str, plural: str, n: int, **variables: Any) -> str:
    text = translations(current_locale()).ungettext(singular, plural, n)
    return text % variables if variables else text


def lazy_gettext(message: str) -> LazyProxy:
    """A label defined at import time, translated when shown (in the reader's language)."""
    return LazyProxy(gettext, message, enable_cache=False)


_ = gettext
