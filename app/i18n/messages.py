"""The reader's words for the estimator's and the resolution's messages (app/estimate/messages).

Each code has one gettext-marked English template (app/i18n/message_templates.py); a
message is worded in the current language with its numbers formatted for that language
(Babel). Pages render messages with
the `message_text` and `messages_text` filters; JSON carries the codes and parameters, with
the English wording beside them; the CLI prints the English wording.
"""

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from babel.lists import format_list

from app.estimate.messages import Code, Message
from app.i18n.catalogs import current_locale, reset_locale, set_locale
from app.i18n.catalogs import gettext as _
from app.i18n.message_templates import TEMPLATES
from app.i18n.numbers import decimal


def message_text(found: Message | Mapping[str, Any] | None) -> str:
    """One message in the reader's language; a message from JSON ({code, params}) as well."""
    if found is None:
        return ""
    found = as_message(found)
    template = TEMPLATES[found.code]  # every Code has one (tests/i18n/test_messages.py)
    words = {
        name: (
            quoted_source(value)
            if name == "note" and isinstance(value, str)
            else _param_text(value)
        )
        for name, value in found.params.items()
    }
    return str(template) % words


def quoted_source(note: str) -> str:
    """A source's own note (a catalog figure's basis, a reported figure's): English by design,
    so a page in another language quotes it as the source's words rather than running it into
    its own sentence."""
    if not note or current_locale() == "en":
        return note
    return _("“%(source)s” (the source's words)") % {"source": note}


def messages_text(found: Iterable[Message | Mapping[str, Any]] | None) -> str:
    """Clauses of one reason, joined the reader's way."""
    return _("; ").join(message_text(one) for one in found or ())


def as_message(found: Message | Mapping[str, Any]) -> Message:
    """A message, or the {code, params} object JSON carries it as."""
    if isinstance(found, Message):
        return found
    params = {name: _from_json(value) for name, value in found.get("params", {}).items()}
    return Message(Code(found["code"]), params)


def _from_json(value: Any) -> Any:
    if isinstance(value, Mapping) and "code" in value:
        return as_message(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def _param_text(value: Any) -> str:
    """Numbers with the reader's grouping and decimal signs, names as they are, a list as
    alternatives ("a or b"), a nested message worded in turn."""
    locale = current_locale()
    if isinstance(value, Message | Mapping):
        return message_text(value)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return decimal(value, "#,##0", locale)
    if isinstance(value, float):
        return decimal(value, "#,##0.0##", locale)
    if isinstance(value, tuple | list) and value and all(_is_message(v) for v in value):
        return messages_text(value)  # a figure's notes: clauses, joined as a reason's are
    if isinstance(value, tuple | list):
        return format_list([_param_text(v) for v in value], style="or", locale=locale)
    return str(value)


def _is_message(value: Any) -> bool:
    return isinstance(value, Message) or (isinstance(value, Mapping) and "code" in value)


@contextmanager
def in_locale(locale: str) -> Iterator[None]:
    token = set_locale(locale)
    try:
        yield
    finally:
        reset_locale(token)


def english(found: Message | Iterable[Message] | None) -> str:
    """The English wording: the CLI's text and JSON's `text` beside the codes."""
    if isinstance(found, Message):
        return _english_of(found)
    with in_locale("en"):
        return _("; ").join(
            _english_of(one) if isinstance(one, Message) else message_text(one)
            for one in found or ()
        )


# Each message's English wording, kept by the message itself: messages are shared (one per
# distinct code and parameters) and every JSON answer words each of its notes in English.
# Looked up by identity, not equality, since 2 and 2.0 are equal parameters worded apart;
# the entry holds the message, so its identity is not reused while it is kept.
ENGLISH_KEPT = 4096
_english: dict[int, tuple[Message, str]] = {}


def _english_of(found: Message) -> str:
    kept = _english.get(id(found))
    if kept is not None and kept[0] is found:
        return kept[1]
    with in_locale("en"):
        text = message_text(found)
    if len(_english) >= ENGLISH_KEPT:
        _english.clear()  # simpler than ranking by use; each one is worded again once
    _english[id(found)] = (found, text)
    return text


def messages_json(found: Iterable[Message]) -> list[dict[str, Any]]:
    """Messages as JSON: each code and its parameters, and its English wording."""
    return [{**one.as_json(), "text": english(one)} for one in found]
