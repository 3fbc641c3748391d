"""A task: a named, versioned set of prompts, each with the check its answer must pass.

One check per prompt, exactly one kind: ``equals`` (the whole answer, outer whitespace
ignored), ``contains``, ``regex`` (searched anywhere in the answer), ``json_schema`` (the
answer, or the first JSON value in it, must satisfy the schema) or ``number`` (the first
number in the answer, within ``tolerance``). A JSONL task file holds one prompt a line:
``{"prompt": "...", "check": {"contains": "..."}}`` (read by ``app.tasks.files``).
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from app.bench.quality.answer_schema import ANSWER_SCHEMA_MARK, MAX_KEYS, answer_schema_problem
from app.i18n.validation_words import refused
from app.security.json_input import not_a_bool

CHECK_KINDS = ("equals", "contains", "regex", "json_schema", "number")
# Validation context of a check read back from the database (app.tasks.service.prompt_spec).
STORED = "stored"
MAX_PROMPTS = 200
# About 25K tokens of English: room for a long document, while a prompt at the limit stays
# far below the API's body limit (the needle covers longer contexts).
MAX_PROMPT_CHARS = 100_000


def _check_schema(schema: dict[str, Any]) -> None:
    """The JSON Schema says what the validators enforce: one kind, never null, tolerance
    only with number, regex a regular expression."""
    properties = schema["properties"]
    for kind in (*CHECK_KINDS, "tolerance"):
        options = properties[kind].pop("anyOf")
        properties[kind].update(next(o for o in options if o.get("type") != "null"))
        properties[kind].pop("default", None)
    properties["regex"]["format"] = "regex"
    schema["oneOf"] = [{"required": [kind]} for kind in CHECK_KINDS]
    schema["dependentRequired"] = {"tolerance": ["number"]}


class TaskCheck(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_check_schema)

    equals: str | None = None
    contains: str | None = Field(default=None, min_length=1)
    regex: str | None = Field(default=None, min_length=1)
    json_schema: dict[str, Any] | None = Field(
        default=None,
        max_length=MAX_KEYS,
        description="a JSON Schema in the keywords a check supports "
        "(app/bench/quality/answer_schema.py)",
        json_schema_extra={ANSWER_SCHEMA_MARK: True},
    )
    # strict: JSON `false` is not the number 0 (it was stored as 0.0); ints still pass.
    number: float | None = Field(default=None, ge=-1e15, le=1e15, allow_inf_nan=False, strict=True)
    tolerance: float | None = Field(default=None, ge=0, le=1e15, allow_inf_nan=False, strict=True)
    ignore_case: bool = False

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            named = (*CHECK_KINDS, "tolerance")
            nulls = [key for key in named if key in data and data[key] is None]
            if nulls:
                raise ValueError(f"{', '.join(nulls)}: give a value or leave it out")
        return data

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(f"not a valid regular expression: {error}") from error
        return value

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(
        cls, value: dict[str, Any] | None, info: ValidationInfo
    ) -> dict[str, Any] | None:
        if value is not None:
            # A stored check is read as it was accepted, whatever rules came after.
            stored = bool(info.context and info.context.get(STORED))
            problem = None if stored else answer_schema_problem(value)
            if problem is not None:
                raise refused(problem)
            try:
                Draft202012Validator.check_schema(value)
            except SchemaError as error:
                raise ValueError(f"not a valid JSON Schema: {error.message}") from error
        return value

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> TaskCheck:
        given = [kind for kind in CHECK_KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(CHECK_KINDS)} (got {len(given)})")
        if self.tolerance is not None and self.number is None:
            raise ValueError("tolerance goes with number only")
        return self

    @model_serializer(mode="wrap")
    def _only_what_is_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A check reads as written: its one kind, and tolerance or ignore_case when used.
        data = handler(self)
        # By identity: a number check of 0 (== False) is a check, not an unused field.
        return {
            key: value for key, value in data.items() if value is not None and value is not False
        }

    @property
    def kind(self) -> str:
        return next(kind for kind in CHECK_KINDS if getattr(self, kind) is not None)


class TaskPrompt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    check: TaskCheck
    max_tokens: int | None = Field(default=None, ge=1, le=32_768)

    _whole_numbers = field_validator("max_tokens", mode="before")(not_a_bool)


class TaskSpec(BaseModel):
    """What a benchmark run needs of a task; ``id`` is set when it comes from the database."""

    model_config = ConfigDict(extra="forbid")

    id: int | None = None
    name: str = Field(min_length=1, max_length=120)
    version: int = Field(default=1, ge=1)
    description: str = Field(default="", max_length=4000)
    source: str = Field(default="", max_length=2000, description="where the prompts come from")
    max_tokens: int | None = Field(
        default=None, ge=1, le=32_768, description="output tokens per prompt; else the plan's"
    )
    prompts: list[TaskPrompt] = Field(min_length=1, max_length=MAX_PROMPTS)

    _whole_numbers = field_validator("id", "version", "max_tokens", mode="before")(not_a_bool)


class TaskFileError(ValueError):
    """A task file that cannot be read, naming the line and the field."""


def describe(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'task'}: {item['msg']}"
        for item in error.errors()
    )
