"""Which language a request is answered in: `?lang=`, else the `lang` cookie, else the
browser's Accept-Language (quality values honoured), else English."""

from babel.core import negotiate_locale

from app.i18n.catalogs import DEFAULT_LOCALE, LOCALES

COOKIE = "lang"
QUERY = "lang"


def accepted_languages(header: str) -> list[str]:
    """The tags of an Accept-Language header, most wanted first; q=0 means "not this"."""
    weighted: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip()
        if not tag or tag == "*":
            continue
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0  # a malformed weight is not a request for the language
        if quality > 0:
            weighted.append((-quality, position, tag))
    return [tag.lower() for _, _, tag in sorted(weighted)]


def supported(tag: str | None) -> str | None:
    """The catalog language a tag names (ko-KR -> ko), or None."""
    if not tag:
        return None
    return negotiate_locale([tag.strip().lower()], LOCALES, sep="-")


def choose_locale(query: str | None, cookie: str | None, accept_language: str | None) -> str:
    for explicit in (query, cookie):
        found = supported(explicit)
        if found:
            return found
    preferred = accepted_languages(accept_language or "")
    return negotiate_locale(preferred, LOCALES, sep="-") or DEFAULT_LOCALE
