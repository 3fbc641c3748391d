"""Pydantic's validation errors as codes a page can word in the reader's language.

Pydantic names each error by a stable type (`missing`, `greater_than_equal`, ...) with its
limits in `ctx`; those become `Sentence("input.<type>", ctx)`. A validator of this app
raises `refusal(kind, ...)`: the error's type is then the app's own registered code.
"""

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from app.i18n.catalogs import DEFAULT_LOCALE, current_locale
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Kind, Sentence, english, is_registered, register, render

PREFIX = "input."
# pydantic type -> the English words, one parameter per ctx entry they name
for _type, _words in {
    "missing": _l("Field required"),
    "extra_forbidden": _l("Extra inputs are not permitted"),
    "string_type": _l("Input should be a valid string"),
    "string_too_short": _l("String should have at least %(min_length)s characters"),
    "string_too_long": _l("String should have at most %(max_length)s characters"),
    "string_pattern_mismatch": _l("String should match pattern '%(pattern)s'"),
    "int_type": _l("Input should be a valid integer"),
    "int_parsing": _l("Input should be a valid integer, unable to parse string as an integer"),
    "int_from_float": _l("Input should be a valid integer, got a number with a fractional part"),
    "float_type": _l("Input should be a valid number"),
    "float_parsing": _l("Input should be a valid number, unable to parse string as a number"),
    "finite_number": _l("Input should be a finite number"),
    "bool_type": _l("Input should be a valid boolean"),
    "bool_parsing": _l("Input should be a valid boolean, unable to interpret input"),
    "greater_than": _l("Input should be greater than %(gt)s"),
    "greater_than_equal": _l("Input should be greater than or equal to %(ge)s"),
    "less_than": _l("Input should be less than %(lt)s"),
    "less_than_equal": _l("Input should be less than or equal to %(le)s"),
    "literal_error": _l("Input should be %(expected)s"),
    "enum": _l("Input should be %(expected)s"),
    "too_short": _l("Give at least %(min_length)s items, not %(actual_length)s"),
    "too_long": _l("Give at most %(max_length)s items, not %(actual_length)s"),
    "list_type": _l("Input should be a valid list"),
    "dict_type": _l("Input should be a valid dictionary"),
    "url_type": _l("URL input should be a string or URL"),
    "url_parsing": _l("Input should be a valid URL"),
    "url_scheme": _l("URL scheme should be %(expected_schemes)s"),
}.items():
    register(PREFIX + _type, _words)


# A refusal lists at most this many errors, then says how many more there were.
MAX_ERRORS = 50
MORE_ERRORS = register(
    "input.more_errors", _l("%(more)s more errors not listed; the first %(listed)s are above")
)


def first_errors(
    error: ValidationError, limit: int = MAX_ERRORS
) -> tuple[list[dict[str, Any]], int]:
    """The first `limit` of pydantic's errors, and how many there were in all.

    `errors()` builds a Python object per error: a body of 400,000 unknown keys took 1.3 s
    and a 17 MB answer. Past the limit, the errors are read from pydantic's own JSON of
    them (written without Python objects), one at a time, only as far as the limit."""
    total = error.error_count()
    if total <= limit:
        return error.errors(include_url=False), total
    text = error.json(include_url=False, include_input=False)
    decoder = json.JSONDecoder()
    items: list[dict[str, Any]] = []
    at = 1  # past the list's "["
    while len(items) < limit:
        item, at = decoder.raw_decode(text, at)
        items.append(item)
        at = text.index("{", at) if len(items) < limit else at
    return items, total


# A field's name (a key, as sent: it may be megabytes long) and a message, as a refusal
# repeats them: with MAX_ERRORS, a refusal's body stays under 64 KB.
MAX_FIELD = 200
MAX_MESSAGE = 800


def clipped(text: str, most: int = MAX_FIELD) -> str:
    return text if len(text) <= most else f"{text[: most - 3]}..."


def refusal(kind: Kind, **params: Any) -> PydanticCustomError:
    """What a validator raises: pydantic keeps the code as the error's type, the params in
    its ctx, and the English sentence as its msg."""
    text = english(kind(**params))
    return PydanticCustomError(kind.code, "{text}", {"text": text, **params})


def refused(sentence: Sentence) -> PydanticCustomError:
    """`refusal` of a sentence already made."""
    return refusal(Kind(sentence.code), **sentence.params)


def said_by_pydantic(item: dict[str, Any]) -> Sentence | None:
    """The coded form of one of pydantic's `errors()`, when its type is known."""
    kind = str(item.get("type", ""))
    ctx = {k: plain(v) for k, v in (item.get("ctx") or {}).items() if k != "text"}
    if is_registered(kind):
        return Sentence(kind, ctx)
    if is_registered(PREFIX + kind):
        return Sentence(PREFIX + kind, ctx)
    return None


def pydantic_text(item: dict[str, Any]) -> str:
    """One of pydantic's errors in the reader's words; English as pydantic wrote it."""
    said = said_by_pydantic(item) if current_locale() != DEFAULT_LOCALE else None
    return render(said) if said else str(item["msg"]).removeprefix("Value error, ")


def plain(value: Any) -> Any:
    """ctx entries as JSON can carry them (limits are numbers or text)."""
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)
