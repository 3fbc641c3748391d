"""What the OpenAPI document says of the values `app.security.json_input` reads: each
free-form object's values, depth by depth, within the bounds `check_free_form` keeps, and
every integer within the 64-bit range `loads_strict` reads. A model marks a free-form field
with `FreeForm` (or `FREE_FORM_SCHEMA`); the app states the rest when it builds its
document."""

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from app.security.json_input import (
    INT_MAX,
    INT_MIN,
    MAX_FREE_FORM_DEPTH,
    MAX_FREE_FORM_TEXT,
    free_form,
)

FREE_FORM_VALUE = "FreeFormValue"


def free_form_value_ref(depth: int) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{FREE_FORM_VALUE}{depth}"}


def free_form_components(max_depth: int = MAX_FREE_FORM_DEPTH) -> dict[str, dict[str, Any]]:
    """What check_free_form keeps, as OpenAPI schemas: a value at each depth below a
    free-form object (depth 0). Text up to its length; numbers within the range an integer
    may take; arrays and objects only above `max_depth`."""
    components = {}
    for depth in range(1, max_depth + 1):
        # One schema with a list of types (each keyword binds only its own type), not a
        # branch per type: a value is of one type, whichever branch a reader tries.
        value: dict[str, Any] = {
            "type": ["string", "number", "boolean", "null"],
            "maxLength": MAX_FREE_FORM_TEXT,
            "minimum": INT_MIN,
            "maximum": INT_MAX,
        }
        if depth < max_depth:
            inner = free_form_value_ref(depth + 1)
            value["type"] += ["array", "object"]
            value.update(items=inner, additionalProperties=inner)
        components[f"{FREE_FORM_VALUE}{depth}"] = value
    return components


# A free-form object's mark in a model's JSON schema: the OpenAPI document gives it the
# values above (pydantic resolves every `$ref` it meets, so the reference goes in after).
FREE_FORM_MARK = "x-free-form"
FREE_FORM_SCHEMA = {FREE_FORM_MARK: True}


def state_free_forms(node: Any) -> None:
    """Every free-form object under `node` says which values it may hold."""
    if isinstance(node, dict):
        mark = node.pop(FREE_FORM_MARK, False)
        if mark:  # True: a free-form object in the body; a number: one that deep in one
            node["additionalProperties"] = free_form_value_ref(1 if mark is True else mark)
        for value in node.values():
            state_free_forms(value)
    elif isinstance(node, list):
        for value in node:
            state_free_forms(value)


def state_integer_range(node: Any) -> None:
    """Every integer under `node` (a body's schema) says the range `loads_strict` reads, where
    it states no narrower bound of its own."""
    if isinstance(node, dict):
        if node.get("type") == "integer":
            if "minimum" not in node and "exclusiveMinimum" not in node:
                node["minimum"] = INT_MIN
            if "maximum" not in node and "exclusiveMaximum" not in node:
                node["maximum"] = INT_MAX
        for value in node.values():
            state_integer_range(value)
    elif isinstance(node, list):
        for value in node:
            state_integer_range(value)


# A free-form object in a body: checked as above, and stated so in the OpenAPI document.
FreeForm = Annotated[
    dict[str, Any], BeforeValidator(free_form), Field(json_schema_extra=FREE_FORM_SCHEMA)
]
