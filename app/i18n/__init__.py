"""Three languages for the pages (English, Korean, Japanese) from gettext catalogs.

JSON answers stay in codes; only what a person reads on a page is translated.
"""

from app.i18n.catalogs import (
    DEFAULT_LOCALE,
    LANGUAGE_NAMES,
    LOCALES,
    current_locale,
    gettext,
    lazy_gettext,
    ngettext,
    set_locale,
)
from app.i18n.middleware import LocaleMiddleware

__all__ = [
    "DEFAULT_LOCALE",
    "LANGUAGE_NAMES",
    "LOCALES",
    "LocaleMiddleware",
    "current_locale",
    "gettext",
    "lazy_gettext",
    "ngettext",
    "set_locale",
]
