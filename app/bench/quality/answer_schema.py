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

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
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

# Why a schema is refused, in the reader's language; `at` is the path of the keyword at fault.
NOT_A_SCHEMA = register("answer_schema.not_a_schema", _l("%(at)s: a schema must be an object"))
NESTED_TOO_DEEP = register(
    "answer_schema.too_deep", _l("nested deeper than %(most)s schemas at %(at)s")
)
TYPE_NAMES_ONLY = register(
    "answer_schema.type_names", _l("%(at)s: give one of %(names)s, or a list of them")
)
TYPE_TWICE = register("answer_schema.type_twice", _l("%(at)s: list a type once"))
PROPERTY_NAMES = register(
    "answer_schema.property_names", _l("%(at)s: give a list of property names")
)
NAMES_BOUNDED = register(
    "answer_schema.names_bounded",
    _l("%(at)s: at most %(most)s names of at most %(longest)s characters"),
)
PROPERTY_TWICE = register("answer_schema.property_twice", _l("%(at)s: name a property once"))
VALUES_BOUNDED = register(
    "answer_schema.values_bounded", _l("%(at)s: give a list of at most %(most)s values")
)
SCALAR_ONLY = register(
    "answer_schema.scalar_only",
    _l("%(at)s: give text, a number within -2^63..2^63-1, true, false or null"),
)
NUMBER_IN_RANGE = register(
    "answer_schema.number_in_range", _l("%(at)s: give a number within -2^63..2^63-1")
)
WHOLE_NUMBER = register("answer_schema.whole_number", _l("%(at)s: give a whole number 0..%(most)s"))
TEXT_BOUNDED = register(
    "answer_schema.text_bounded", _l("%(at)s: give text of at most %(longest)s characters")
)
NOT_A_REGEX = register(
    "answer_schema.not_a_regex", _l("%(at)s: not a valid regular expression: %(error)s")
)
PROPERTY_SCHEMAS = register(
    "answer_schema.property_schemas",
    _l("%(at)s: give an object of at most %(most)s property schemas"),
)
NAME_TOO_LONG = register("answer_schema.name_too_long", _l("%(at)s: a property name is too long"))
GIVE_A_SCHEMA = register("answer_schema.give_a_schema", _l("%(at)s: give a schema"))
BOOL_OR_SCHEMA = register(
    "answer_schema.bool_or_schema", _l("%(at)s: give true, false or a schema")
)
NOT_A_KEYWORD = register(
    "answer_schema.not_a_keyword", _l("%(at)s: not a keyword a check supports")
)

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


def answer_schema_problem(schema: Any) -> Sentence | None:
    """Why `schema` is not an answer schema as stated above, naming where (the path of the
    keyword at fault); None if it is. (Walked with an explicit stack: a hostile depth stops
    at the limit.)"""
    stack: list[tuple[str, Any, int]] = [("", schema, 1)]
    while stack:
        where, node, depth = stack.pop()
        if not isinstance(node, dict):
            return NOT_A_SCHEMA(at=where or "json_schema")
        if depth > MAX_ANSWER_SCHEMA_DEPTH:
            return NESTED_TOO_DEEP(most=MAX_ANSWER_SCHEMA_DEPTH, at=where)
        for key, value in node.items():
            problem = keyword_problem(f"{where}.{key}".lstrip("."), key, value)
            if problem is not None:
                return problem
        for name, inner in (node.get("properties") or {}).items():
            stack.append((f"{where}.properties.{name}".lstrip("."), inner, depth + 1))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append((f"{where}.{key}".lstrip("."), node[key], depth + 1))
    return None


def keyword_problem(at: str, key: str, value: Any) -> Sentence | None:
    """What is wrong with one keyword's value (at `at`), apart from the schemas nested in it."""
    if key == "type":
        names = value if isinstance(value, list) else [value]
        if not names or any(name not in TYPE_NAMES for name in names):
            return TYPE_NAMES_ONLY(at=at, names=", ".join(TYPE_NAMES))
        return TYPE_TWICE(at=at) if len(set(names)) < len(names) else None
    if key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            return PROPERTY_NAMES(at=at)
        if len(value) > MAX_KEYS or any(len(n) > MAX_NAME for n in value):
            return NAMES_BOUNDED(at=at, most=MAX_KEYS, longest=MAX_NAME)
        return PROPERTY_TWICE(at=at) if len(set(value)) < len(value) else None
    if key == "enum":
        if not isinstance(value, list) or len(value) > MAX_KEYS:
            return VALUES_BOUNDED(at=at, most=MAX_KEYS)
        return next(filter(None, (scalar_problem(at, item) for item in value)), None)
    if key == "const":
        return scalar_problem(at, value)
    if key in ("minimum", "maximum"):
        return None if is_bounded_number(value) else NUMBER_IN_RANGE(at=at)
    if key in ("minLength", "maxLength", "minItems", "maxItems"):
        # As JSON Schema reads an integer: 12.0 is one.
        whole = is_bounded_number(value) and float(value).is_integer()
        return None if whole and 0 <= value <= MAX_COUNT else WHOLE_NUMBER(at=at, most=MAX_COUNT)
    if key in ("pattern", "description", *ANNOTATIONS):
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            return TEXT_BOUNDED(at=at, longest=MAX_TEXT)
        return regex_problem(at, value) if key == "pattern" else None
    if key == "properties":
        if not isinstance(value, dict) or len(value) > MAX_KEYS:
            return PROPERTY_SCHEMAS(at=at, most=MAX_KEYS)
        return None if all(len(n) <= MAX_NAME for n in value) else NAME_TOO_LONG(at=at)
    if key == "items":
        return None if isinstance(value, dict) else GIVE_A_SCHEMA(at=at)
    if key == "additionalProperties":
        return None if isinstance(value, bool | dict) else BOOL_OR_SCHEMA(at=at)
    return NOT_A_KEYWORD(at=at)


def scalar_problem(at: str, value: Any) -> Sentence | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return None if len(value) <= MAX_TEXT else TEXT_BOUNDED(at=at, longest=MAX_TEXT)
    if is_bounded_number(value):
        return None
    return SCALAR_ONLY(at=at)


def is_bounded_number(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and INT_MIN <= value <= INT_MAX


def regex_problem(at: str, pattern: str) -> Sentence | None:
    try:
        re.compile(pattern)
    except re.error as error:
        return NOT_A_REGEX(at=at, error=str(error))
    return None
