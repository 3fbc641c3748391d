"""Sentences a person reads, kept as a code and its figures until they are shown.

A service says what went wrong as `Sentence(code, params)`; the page words it in the
reader's language (numbers formatted the way that language writes them), and JSON carries
the code and params as they are, with the English sentence beside them for API clients.
Each code is registered once with its English template, marked for the catalogs:

    UNKNOWN_MODEL = register("record.unknown_model", _l("unknown model '%(slug)s'"))
    raise NotFound(UNKNOWN_MODEL(slug=slug))

The estimator's and the resolution's own sentences are codes of their own
(app/estimate/messages.py), worded by app/i18n/messages.py; everything else the app says to
a person (errors, form refusals, the compare summary) is registered here.

Templates take every parameter as `%(name)s`: the figures are formatted before they are
put in, so `%(n)d` is never needed.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Number
from typing import Any

from app.i18n.catalogs import DEFAULT_LOCALE, reset_locale, set_locale
from app.i18n.numbers import decimal

_TEMPLATES: dict[str, Any] = {}  # code -> lazy English template


@dataclass(frozen=True)
class Sentence:
    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return english(self)

    def as_json(self) -> dict[str, Any]:
        """The language-neutral form: the code and its params (a nested message likewise)."""
        return {"code": self.code, "params": json_params(self.params)}


@dataclass(frozen=True)
class Kind:
    """A registered code: calling it with the params makes the Sentence."""

    code: str

    def __call__(self, **params: Any) -> Sentence:
        return Sentence(self.code, params)


def register(code: str, template: Any) -> Kind:
    """Name a sentence; `template` is its English text, marked with `_l(...)`."""
    known = _TEMPLATES.get(code)
    if known is not None and str(known) != str(template):
        raise ValueError(f"message code {code!r} is registered twice with different words")
    _TEMPLATES[code] = template
    return Kind(code)


def registered() -> dict[str, Any]:
    return dict(_TEMPLATES)


def is_registered(code: str | None) -> bool:
    return code is not None and code in _TEMPLATES


def shown(value: Any) -> str:
    """A parameter as the reader's language writes it."""
    if isinstance(value, Sentence):
        return render(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, Number):
        return decimal(value)  # type: ignore[arg-type]
    if isinstance(value, list | tuple):
        return ", ".join(shown(item) for item in value)
    return str(value)


def render(message: Sentence | str) -> str:
    """The message in the current request's language (text given as text is kept)."""
    if not isinstance(message, Sentence):
        return str(message)
    template = _TEMPLATES.get(message.code)
    if template is None:  # a code from elsewhere (or an old record) is shown as it is
        return message.code
    text = str(template)
    if not message.params:
        return text.replace("%%", "%")
    return text % {name: shown(value) for name, value in message.params.items()}


def english(message: Sentence) -> str:
    """The English sentence, whatever the reader's language (JSON's `detail`, logs)."""
    token = set_locale(DEFAULT_LOCALE)
    try:
        return render(message)
    finally:
        reset_locale(token)


def json_params(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: json_value(value) for name, value in params.items()}


def json_value(value: Any) -> Any:
    if isinstance(value, Sentence):
        return value.as_json()
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    return value
