"""Whether one answer passes its task check; pure, so a reader can test every kind alone."""

from __future__ import annotations

import json
import re
from typing import Any

from jsonschema import Draft202012Validator

from app.bench.quality.task_spec import TaskCheck

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def check_answer(check: TaskCheck, answer: str) -> str | None:
    """None when the answer passes, else why it failed (one short sentence)."""
    kind = check.kind
    text = answer.strip()
    if kind == "equals":
        expected = check.equals or ""
        same = _fold(text, check) == _fold(expected.strip(), check)
        return None if same else f"expected exactly {expected!r}"
    if kind == "contains":
        expected = check.contains or ""
        return None if _fold(expected, check) in _fold(text, check) else f"no {expected!r}"
    if kind == "regex":
        flags = re.IGNORECASE if check.ignore_case else 0
        found = re.search(check.regex or "", text, flags | re.MULTILINE)
        return None if found else f"no match for /{check.regex}/"
    if kind == "json_schema":
        return _schema_failure(check.json_schema or {}, text)
    return _number_failure(check.number or 0.0, check.tolerance or 0.0, text)


def _fold(text: str, check: TaskCheck) -> str:
    return text.casefold() if check.ignore_case else text


def first_json(text: str) -> Any:
    """The answer as JSON: whole, inside a ``` fence, or the first {...} / [...] in it."""
    candidates = [text, *_FENCE.findall(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char in "{[":
            try:
                return decoder.raw_decode(text, start)[0]
            except ValueError:
                continue
    raise ValueError("no JSON value in the answer")


def _schema_failure(schema: dict[str, Any], text: str) -> str | None:
    try:
        value = first_json(text)
    except ValueError as error:
        return str(error)
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path))
    if not errors:
        return None
    where = "/".join(str(part) for part in errors[0].absolute_path) or "the value"
    return f"{where}: {errors[0].message}"[:300]


def _number_failure(expected: float, tolerance: float, text: str) -> str | None:
    found = _NUMBER.search(text)
    if found is None:
        return "no number in the answer"
    value = float(found.group(0).replace(",", ""))
    if abs(value - expected) <= tolerance:
        return None
    return f"{value:g} is not within {tolerance:g} of {expected:g}"
