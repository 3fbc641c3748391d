"""The tool-call check's cases: OpenAI ``tools`` with a flat, a nested and an enum schema,
and a choice among several tools, each asked with values drawn from a seed.

A call is valid when the stream built exactly one call of the tool the prompt asks for,
whose arguments parse as JSON and validate against that tool's schema (``jsonschema``). A
server that writes the call as plain text in the answer instead fails, with that reason.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from app.bench.result import RequestSample

_CITIES = ("Lisbon", "Osaka", "Busan", "Quito", "Tromso", "Nairobi", "Perth", "Ghent")
_NAMES = ("Ada", "Min-jun", "Yuki", "Omar", "Lena", "Tomas", "Aiko", "Priya")


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


WEATHER = _function(
    "get_weather",
    "Current weather of a city.",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
        },
        "required": ["city", "days"],
        "additionalProperties": False,
    },
)
MEETING = _function(
    "book_meeting",
    "Book a meeting with people at a date and time.",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "when": {
                "type": "object",
                "properties": {
                    "date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
                    "hour": {"type": "integer", "minimum": 0, "maximum": 23},
                },
                "required": ["date", "hour"],
            },
            "people": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "minLength": 1}},
                    "required": ["name"],
                },
            },
        },
        "required": ["title", "when", "people"],
    },
)
THERMOSTAT = _function(
    "set_thermostat",
    "Set the thermostat's mode.",
    {
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["heat", "cool", "off", "auto"]}},
        "required": ["mode"],
        "additionalProperties": False,
    },
)
CONVERT = _function(
    "convert_currency",
    "Convert an amount between currencies.",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "source": {"type": "string", "enum": ["EUR", "USD", "JPY", "KRW"]},
            "target": {"type": "string", "enum": ["EUR", "USD", "JPY", "KRW"]},
        },
        "required": ["amount", "source", "target"],
    },
)


@dataclass(frozen=True)
class ToolCase:
    schema_name: str
    tools: list[dict[str, Any]]
    expected_tool: str
    request: str  # the user's words; the check puts them after any long filler


def tool_case(schema_name: str, seed: int) -> ToolCase:
    rng = random.Random(seed)
    if schema_name == "flat":
        city, days = rng.choice(_CITIES), rng.randint(1, 7)
        return ToolCase(
            "flat",
            [WEATHER],
            "get_weather",
            f"Call the function get_weather for {city} for the next {days} days.",
        )
    if schema_name == "nested":
        first, second = rng.sample(_NAMES, 2)
        day, hour = rng.randint(10, 28), rng.randint(8, 17)
        return ToolCase(
            "nested",
            [MEETING],
            "book_meeting",
            f"Call the function book_meeting: a review with {first} and {second} "
            f"on 2026-03-{day} at {hour}:00.",
        )
    if schema_name == "enum":
        mode = rng.choice(["heat", "cool", "off", "auto"])
        return ToolCase(
            "enum",
            [THERMOSTAT],
            "set_thermostat",
            f"Call the function set_thermostat to switch the thermostat to {mode}.",
        )
    amount = rng.randint(5, 500)
    source, target = rng.sample(["EUR", "USD", "JPY", "KRW"], 2)
    return ToolCase(
        "multi",
        [WEATHER, MEETING, THERMOSTAT, CONVERT],
        "convert_currency",
        f"Call the function convert_currency to convert {amount} {source} to {target}.",
    )


SCHEMA_NAMES = ("flat", "nested", "enum", "multi")


def check_call(sample: RequestSample, case: ToolCase) -> tuple[bool, str | None]:
    """(valid, the reason it is not) for one streamed answer to ``case``."""
    if not sample.ok:
        return False, f"error: {sample.error.message if sample.error else 'no answer'}"
    if not sample.tool_calls:
        if _looks_like_call_text(sample.answer, case):
            return False, "plain text: the call came back as answer text, not as tool_calls"
        return False, "no call: the answer holds no tool_calls"
    if len(sample.tool_calls) != 1:
        return False, f"{len(sample.tool_calls)} calls where one was asked for"
    call = sample.tool_calls[0]
    if call.name != case.expected_tool:
        return False, f"wrong tool: {call.name[:60]!r} instead of {case.expected_tool!r}"
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        return False, "malformed: the arguments are not JSON"
    schema = next(
        tool["function"]["parameters"]
        for tool in case.tools
        if tool["function"]["name"] == case.expected_tool
    )
    error = next(iter(Draft202012Validator(schema).iter_errors(arguments)), None)
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        return False, f"schema: {where}: {error.message[:120]}"
    return True, None


def _looks_like_call_text(answer: str, case: ToolCase) -> bool:
    return case.expected_tool in answer or ('"name"' in answer and "{" in answer)
