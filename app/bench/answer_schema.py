"""The JSON Schema a task check may hold: the part of JSON Schema an answer's shape needs,
so that what the OpenAPI document states is what the server takes.

Keywords: `type` (a name or a list of names), `properties`, `required`,
`additionalProperties` (true, false or a schema), `items`, `minItems`/`maxItems`, `enum`
and `const` (text, numbers, true, false or null), `minimum`/`maximum`,
`minLength`/`maxLength`, `pattern` (a regular expression), `description`, and the
annotations `title`, `$schema`, `$comment` and `format` (text, which accepts anything). A schema
nests at most `MAX_ANSWER_SCHEMA_DEPTH` levels (a property's or an item's schema is one
level below its parent's). Any other keyword is refused by name, rather than kept and
perhaps not applied as its writer meant; a check stored before these rules still runs.

The OpenAPI document states it as one component per level (`AnswerSchema1` ...), as the
free-form values are (app.security.json_input): a generator expands each level once.
"""

import re
from typing import Any

from app.security.json_input import INT_MAX, INT_MIN

MAX_ANSWER_SCHEMA_DEPTH = 6
MAX_KEYS = 100  # properties of one object, names in `required`, values in `enum`
MAX_NAME = 200  # a property's name
MAX_TEXT = 2000  # a description, a pattern, a text in `enum` or `const`
MAX_COUNT = 1_000_000  # lengths and item counts: far past any answer
TYPE_NAMES = ["object", "array", "string", "number", "integer", "boolean", "null"]
# Text that explains a schema and changes nothing it accepts (`format` is an annotation in
# JSON Schema 2020-12): schemas written elsewhere carry them, and they are kept as written.
ANNOTATIONS = ("title", "$schema", "$comment", "format")

ANSWER_SCHEMA = "AnswerSchema"
# A field's mark in a model's JSON schema: the OpenAPI document refers it to the first level.
ANSWER_SCHEMA_MARK = "x-answer-schema"


def answer_schema_ref(depth: int) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{ANSWER_SCHEMA}{depth}"}


def scalar() -> dict[str, Any]:
    """A value `enum` or `const` may name."""
    return {
        "type": ["string", "number", "boolean", "null"],
        "maxLength": MAX_TEXT,
        "minimum": INT_MIN,
        "maximum": INT_MAX,
    }


def count() -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}


def bound() -> dict[str, Any]:
    return {"type": "number", "minimum": INT_MIN, "maximum": INT_MAX}


def answer_schema_components() -> dict[str, dict[str, Any]]:
    """The OpenAPI components: one schema per level, the deepest without nested schemas."""
    components = {}
    for depth in range(1, MAX_ANSWER_SCHEMA_DEPTH + 1):
        properties: dict[str, Any] = {
            "type": {
                "anyOf": [
                    {"enum": TYPE_NAMES},
                    {
                        "type": "array",
                        "items": {"enum": TYPE_NAMES},
                        "minItems": 1,
                        "uniqueItems": True,
                    },
                ]
            },
            "required": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_NAME},
                "maxItems": MAX_KEYS,
                "uniqueItems": True,
            },
            "enum": {"type": "array", "items": scalar(), "maxItems": MAX_KEYS},
            "const": scalar(),
            "minimum": bound(),
            "maximum": bound(),
            "minLength": count(),
            "maxLength": count(),
            "minItems": count(),
            "maxItems": count(),
            "pattern": {"type": "string", "format": "regex", "maxLength": MAX_TEXT},
            "description": {"type": "string", "maxLength": MAX_TEXT},
            **{key: {"type": "string", "maxLength": MAX_TEXT} for key in ANNOTATIONS},
            "additionalProperties": {"type": "boolean"},
        }
        if depth < MAX_ANSWER_SCHEMA_DEPTH:
            inner = answer_schema_ref(depth + 1)
            properties["properties"] = {
                "type": "object",
                "maxProperties": MAX_KEYS,
                "propertyNames": {"maxLength": MAX_NAME},
                "additionalProperties": inner,
            }
            properties["items"] = inner
            properties["additionalProperties"] = {"anyOf": [{"type": "boolean"}, inner]}
        components[f"{ANSWER_SCHEMA}{depth}"] = {
            "type": "object",
            "description": "a JSON Schema for the answer, in the keywords a check supports",
            "properties": properties,
            "additionalProperties": False,
        }
    return components


def state_answer_schemas(node: Any) -> None:
    """Every answer schema field under `node` refers to the first level's component."""
    if isinstance(node, dict):
        if node.pop(ANSWER_SCHEMA_MARK, False):
            for key in ("type", "additionalProperties", "maxProperties"):
                node.pop(key, None)
            node.update(answer_schema_ref(1))
        for value in node.values():
            state_answer_schemas(value)
    elif isinstance(node, list):
        for value in node:
            state_answer_schemas(value)


def answer_schema_problem(schema: Any) -> str | None:
    """Why `schema` is not an answer schema as stated above, naming where; None if it is.
    (Walked with an explicit stack: a hostile depth stops at the limit.)"""
    stack: list[tuple[str, Any, int]] = [("", schema, 1)]
    while stack:
        where, node, depth = stack.pop()
        at = f" at {where}" if where else ""
        if not isinstance(node, dict):
            return f"a schema{at} must be an object"
        if depth > MAX_ANSWER_SCHEMA_DEPTH:
            return f"nested deeper than {MAX_ANSWER_SCHEMA_DEPTH} schemas{at}"
        for key, value in node.items():
            problem = keyword_problem(key, value)
            if problem is not None:
                return f"{key}{at}: {problem}"
        for name, inner in (node.get("properties") or {}).items():
            stack.append((f"{where}.properties.{name}".lstrip("."), inner, depth + 1))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append((f"{where}.{key}".lstrip("."), node[key], depth + 1))
    return None


def keyword_problem(key: str, value: Any) -> str | None:
    """What is wrong with one keyword's value, apart from the schemas nested in it."""
    if key == "type":
        names = value if isinstance(value, list) else [value]
        if not names or any(name not in TYPE_NAMES for name in names):
            return f"give one of {', '.join(TYPE_NAMES)}, or a list of them"
        return "list a type once" if len(set(names)) < len(names) else None
    if key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            return "give a list of property names"
        if len(value) > MAX_KEYS or any(len(n) > MAX_NAME for n in value):
            return f"at most {MAX_KEYS} names of at most {MAX_NAME} characters"
        return "name a property once" if len(set(value)) < len(value) else None
    if key == "enum":
        if not isinstance(value, list) or len(value) > MAX_KEYS:
            return f"give a list of at most {MAX_KEYS} values"
        return next(filter(None, map(scalar_problem, value)), None)
    if key == "const":
        return scalar_problem(value)
    if key in ("minimum", "maximum"):
        return None if is_bounded_number(value) else "give a number within -2^63..2^63-1"
    if key in ("minLength", "maxLength", "minItems", "maxItems"):
        # As JSON Schema reads an integer: 12.0 is one.
        whole = is_bounded_number(value) and float(value).is_integer()
        return None if whole and 0 <= value <= MAX_COUNT else f"give a whole number 0..{MAX_COUNT}"
    if key in ("pattern", "description", *ANNOTATIONS):
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            return f"give text of at most {MAX_TEXT} characters"
        return regex_problem(value) if key == "pattern" else None
    if key == "properties":
        if not isinstance(value, dict) or len(value) > MAX_KEYS:
            return f"give an object of at most {MAX_KEYS} property schemas"
        return None if all(len(n) <= MAX_NAME for n in value) else "a property name is too long"
    if key == "items":
        return None if isinstance(value, dict) else "give a schema"
    if key == "additionalProperties":
        return None if isinstance(value, bool | dict) else "give true, false or a schema"
    return "not a keyword a check supports"


def scalar_problem(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return None if len(value) <= MAX_TEXT else f"text of at most {MAX_TEXT} characters"
    if is_bounded_number(value):
        return None
    return "give text, a number within -2^63..2^63-1, true, false or null"


def is_bounded_number(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and INT_MIN <= value <= INT_MAX


def regex_problem(pattern: str) -> str | None:
    try:
        re.compile(pattern)
    except re.error as error:
        return f"not a valid regular expression: {error}"
    return None
