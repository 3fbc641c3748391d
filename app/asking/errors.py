"""Refusals by field, as the estimate and the plan answer them: each in the reader's words,
with its code, params and English text beside it, and the HTTP status they answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.errors import refusal_status, said_codes
from app.estimate import EstimateError
from app.estimate.messages import Message
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.messages import english, message_text
from app.i18n.sentences import Sentence, json_params, register
from app.i18n.sentences import english as english_sentence
from app.i18n.sentences import render as render_sentence
from app.i18n.validation_words import (
    MAX_MESSAGE,
    MORE_ERRORS,
    clipped,
    first_errors,
    pydantic_text,
    said_by_pydantic,
)


class FieldErrors(dict[str, str]):
    """Errors by field, and the HTTP status they answer: 422 (the request is at fault)
    unless the Hub's answer for a repository says otherwise (`HubUnavailable.status`)."""

    def __init__(
        self,
        errors: dict[str, str],
        status: int = 422,
        messages: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(errors)
        self.status = status
        self.messages = messages or {}


def errors_status(errors: dict[str, str]) -> int:
    return errors.status if isinstance(errors, FieldErrors) else 422


def answered_status(errors: dict[str, str], status: int = 422) -> int:
    """The status a refusal answers: a 422 whose errors are all conflicts between fields
    the schema accepts each of is 409 (app.errors.FIELD_CONFLICTS); any other as given."""
    if status != 422:
        return status
    messages = getattr(errors, "messages", {})
    return refusal_status(code for field in errors for code in said_codes(messages.get(field)))


class CodedErrors(dict[str, str]):
    """Errors by field in the reader's words, and beside them (`messages`) each one's code,
    params and English text where it has a code: a refusal's `error_messages`."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: dict[str, dict[str, Any]] = {}

    def add(self, name: str, text: str, message: dict[str, Any] | None = None) -> None:
        if name not in self:
            self[name] = text
            if message is not None:
                self.messages[name] = message


def coded(errors: Mapping[str, str | Sentence | Message]) -> CodedErrors:
    """Errors by field as a refusal carries them: each in the reader's words and, where it
    was said as a code (a registered sentence or an estimator message), that code, its
    params and its English text beside it. Errors already coded keep their codes."""
    out = CodedErrors()
    known = getattr(errors, "messages", {})
    for field, said in errors.items():
        if isinstance(said, Sentence):
            english_text = english_sentence(said)
            out.add(field, render_sentence(said), {**said.as_json(), "text": english_text})
        elif isinstance(said, Message):
            out.add(field, message_text(said), {**said.as_json(), "text": english(said)})
        else:
            out.add(field, said, known.get(field))
    if isinstance(errors, FieldErrors):
        return FieldErrors(out, errors.status, out.messages)
    return out


def dotted_errors(error: ValidationError) -> CodedErrors:
    """One message per field, named by its path; union branches reduced to the one meant.
    The first MAX_ERRORS, then `more` saying how many more there were."""
    errors = CodedErrors()
    items, total = first_errors(error)
    for item in items:
        # Union members appear in the path by class name: drop those parts.
        loc = [str(p) for p in item["loc"] if not _is_type_name(str(p))]
        name = clipped(".".join(loc) or "body")
        said = said_by_pydantic(item)
        english_text = english_sentence(said) if said else str(item["msg"])
        message = {
            "code": said.code if said else None,
            "params": json_params(said.params) if said else {},
            "text": clipped(english_text.removeprefix("Value error, "), MAX_MESSAGE),
        }
        errors.add(name, clipped(pydantic_text(item), MAX_MESSAGE), message)
    if total > len(items):
        more = MORE_ERRORS(more=total - len(items), listed=len(items))
        message = {"code": more.code, "params": json_params(more.params)}
        errors.add(MORE_FIELD, render_sentence(more), {**message, "text": english_sentence(more)})
    return errors


# The key of a refusal's errors that says how many more were not listed.
MORE_FIELD = "more"


def error_body(errors: dict[str, str]) -> dict[str, Any]:
    """A refusal's JSON: `errors` (field -> text) and `error_messages` (field -> code,
    params and English text; a null code where the refusal has none of its own)."""
    messages = getattr(errors, "messages", {})
    return {
        "errors": dict(errors),
        "error_messages": {
            field: messages.get(field) or {"code": None, "params": {}, "text": text}
            for field, text in errors.items()
        },
    }


def merged(first: dict[str, str], then: dict[str, str]) -> CodedErrors:
    """Every field's error: `first`'s, then those of `then` on other fields."""
    errors = CodedErrors()
    for found in (first, then):
        messages = getattr(found, "messages", {})
        for field, text in found.items():
            errors.add(field, text, messages.get(field))
    return errors


def without_refused(body: dict[str, Any], errors: dict[str, str]) -> dict[str, Any] | None:
    """The body without the top-level fields refused, to find what else is wrong (a second
    pass: an unknown GPU beside a negative price); None when nothing would be left to ask."""
    refused = {field.split(".")[0] for field in errors}
    if MORE_FIELD in refused or not refused or not refused <= set(body):
        return None
    return {key: value for key, value in body.items() if key not in refused}


def _is_type_name(part: str) -> bool:
    return part.startswith("by_")  # the tags of the model and hardware unions


CLOSE_MATCHES = register("estimate.close_matches", _l("%(problem)s; close matches: %(close)s"))


def gpu_refusal(error: ValueError) -> Sentence | str:
    """A refused card name or count, with the names it is close to: a sentence where the
    lookup said it as one."""
    said = getattr(error, "said", None)
    problem = said if isinstance(said, Sentence) else str(error)
    close = getattr(error, "close_matches", [])
    return CLOSE_MATCHES(problem=problem, close=close) if close else problem


def estimate_refusal_words(error: EstimateError) -> str:
    """An input the estimator refused, in the reader's language where it says it as a code
    (its English sentence otherwise)."""
    return message_text(error.reason) if error.reason is not None else error.message
