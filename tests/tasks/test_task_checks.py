"""Each kind of check, on answers that pass and answers that fail, and checks refused."""

import pytest
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.bench.quality.task_checks import check_answer, first_json
from app.bench.quality.task_spec import STORED, TaskCheck
from app.models import Task, TaskPrompt
from app.tasks.service import task_spec

PERSON = {
    "type": "object",
    "required": ["name", "year"],
    "properties": {"name": {"type": "string"}, "year": {"const": 1887}},
}


@pytest.mark.parametrize(
    ("check", "answer"),
    [
        ({"equals": "Kelsby"}, "  Kelsby\n"),
        ({"equals": "kelsby", "ignore_case": True}, "KELSBY"),
        ({"contains": "Maren Oakes"}, "It was Maren Oakes, the electrician."),
        ({"contains": "maren", "ignore_case": True}, "MAREN"),
        ({"regex": r"def\s+is_palindrome\s*\("}, "```python\ndef is_palindrome(s):\n```"),
        ({"json_schema": PERSON}, '{"name": "Harwick", "year": 1887}'),
        ({"json_schema": PERSON}, 'Sure:\n```json\n{"name": "H", "year": 1887}\n```'),
        ({"json_schema": PERSON}, 'Here it is: {"name": "H", "year": 1887} as asked.'),
        ({"number": 4.7, "tolerance": 0.01}, "The pressure was 4.7 bar."),
        ({"number": 1200}, "1,200"),
        ({"number": -3}, "minus: -3"),
    ],
)
def test_right_answers_pass(check: dict, answer: str) -> None:
    assert check_answer(TaskCheck.model_validate(check), answer) is None


@pytest.mark.parametrize(
    ("check", "answer", "reason"),
    [
        ({"equals": "Kelsby"}, "Kelsby town", "expected exactly 'Kelsby'"),
        ({"equals": "kelsby"}, "Kelsby", "expected exactly 'kelsby'"),
        ({"contains": "Maren Oakes"}, "maren oakes", "no 'Maren Oakes'"),
        ({"regex": r"def\s+is_palindrome\s*\("}, "def palindrome(s):", "no match for"),
        ({"json_schema": PERSON}, '{"name": "H", "year": 1888}', "year: 1887 was expected"),
        ({"json_schema": PERSON}, '{"year": 1887}', "'name' is a required property"),
        ({"json_schema": PERSON}, "no JSON here", "no JSON value in the answer"),
        ({"number": 4.7, "tolerance": 0.01}, "4.8", "4.8 is not within 0.01 of 4.7"),
        ({"number": 4}, "four", "no number in the answer"),
    ],
)
def test_wrong_answers_fail_with_the_reason(check: dict, answer: str, reason: str) -> None:
    failure = check_answer(TaskCheck.model_validate(check), answer)
    assert failure is not None and reason in failure


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({}, "give exactly one of"),
        ({"equals": "a", "contains": "a"}, "got 2"),
        ({"regex": "(unclosed"}, "not a valid regular expression"),
        ({"json_schema": {"type": "no-such-type"}}, "type: give one of object, array"),
        # The keywords a check supports, and no others: what the OpenAPI document states.
        ({"json_schema": {"oneOf": [{"type": "string"}]}}, "oneOf: not a keyword a check"),
        (
            {"json_schema": {"properties": {"a": {"pattern": "(x"}}}},
            "properties.a.pattern: not a valid regular expression",
        ),
        ({"json_schema": {"required": ["a", "a"]}}, "required: name a property once"),
        ({"json_schema": {"enum": [{"a": 1}]}}, "enum: give text, a number"),
        ({"json_schema": {"maxLength": -1}}, "maxLength: give a whole number"),
        (
            {"json_schema": {"items": {"items": {"items": {"items": {"items": {"items": {}}}}}}}},
            "nested deeper than 6 schemas at items.items.items.items.items.items",
        ),
        ({"contains": "a", "tolerance": 1}, "tolerance goes with number only"),
        ({"number": 4, "tolerance": -1}, "greater than or equal to 0"),
        ({"contains": "a", "spelling": "b"}, "Extra inputs are not permitted"),
    ],
)
def test_bad_checks_are_refused_naming_the_problem(check: dict, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        TaskCheck.model_validate(check)
    assert message in str(caught.value)


def test_every_supported_keyword_makes_a_check() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Person",
        "$comment": "as the answer should read",
        "type": "object",
        "description": "a person",
        "required": ["name", "tags"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 80, "pattern": "^[A-Z]"},
            "site": {"type": "string", "format": "uri"},
            "year": {"type": ["integer", "null"], "minimum": 1800, "maximum": 2100.0},
            "role": {"enum": ["keeper", "clerk", None]},
            "kind": {"const": 1887},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
            "extra": {"type": "object", "additionalProperties": {"type": "number"}},
        },
    }
    check = TaskCheck.model_validate({"json_schema": schema})
    answer = '{"name": "Harwick", "year": 1887, "kind": 1887, "tags": ["a"], "extra": {"x": 1}}'
    assert check_answer(check, answer) is None
    assert check_answer(check, '{"name": "harwick", "tags": ["a"]}') is not None


def test_a_stored_check_outside_the_supported_keywords_still_reads() -> None:
    """A check stored before the keywords were stated is read as it was accepted: a task
    that ran yesterday runs today. A new one is refused by name."""
    schema = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    with pytest.raises(ValidationError, match="oneOf: not a keyword a check supports"):
        TaskCheck.model_validate({"json_schema": schema})
    stored = TaskCheck.model_validate({"json_schema": schema}, context={STORED: True})
    assert check_answer(stored, "42") is None
    assert check_answer(stored, "[1]") is not None


def test_first_json_prefers_the_whole_answer_then_a_fence_then_the_first_value() -> None:
    assert first_json("[1, 2]") == [1, 2]
    assert first_json('text ```json\n{"a": 1}\n``` more {"b": 2}') == {"a": 1}
    assert first_json('broken { then {"c": 3}') == {"c": 3}
    with pytest.raises(ValueError, match="no JSON value"):
        first_json("nothing")


@pytest.mark.parametrize("check", [{"number": 0}, {"number": 0.0, "tolerance": 0}, {"equals": ""}])
def test_a_check_of_zero_or_empty_reads_back_as_written(check: dict) -> None:
    """Zero equals False in Python: a stored check of 0 must not lose its one kind."""
    stored = TaskCheck.model_validate(check).model_dump()
    assert stored == check
    assert TaskCheck.model_validate(stored) == TaskCheck.model_validate(check)


def test_a_stored_task_outside_the_supported_keywords_runs(session: Session) -> None:
    task = Task(name="legacy", prompts=[])
    task.prompts.append(
        TaskPrompt(position=0, prompt="A number?", check={"json_schema": {"anyOf": [{}]}})
    )
    session.add(task)
    session.flush()
    spec = task_spec(task)
    assert spec.prompts[0].check.json_schema == {"anyOf": [{}]}
