"""The OpenAPI schema is the API: schemathesis drives every documented operation with
generated requests, valid and invalid, against a real migrated and seeded database (with a
record in it) and runs all of its checks: no server error, every status and content type
documented, every JSON body matching its schema, invalid input refused, and valid input
accepted (positive data: generated to keep the relations between fields that the schema
states in its `x-` extensions too).

Bounded to a few examples per operation and mode, so it stays a CI test.
"""

import re
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import positive_data_acceptance
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    NegativeDataRejectionConfig,
)
from schemathesis.generation import GenerationMode

from app.config import Settings
from app.main import create_app
from tests.live_server import LiveServer
from tests.records.conftest import h200, valid  # noqa: F401 (fixtures)

EXAMPLES_PER_OPERATION = 30
# Every other operation is held to positive data acceptance: the served schema states what
# the server requires (the catalog's slugs, stored tasks, allowed servers, cursors' form,
# bounded free-form values, 64-bit integers), so a body valid by it is accepted. (A worker's
# result of another server or model than its job asked for is a conflict, 409.) These
# still answer 422 to some bodies valid by the schema, for rules it does not state yet:
SEMANTIC_422 = {
    # A catalog model is stated by slug, and a safetensors description as one of its two
    # files; a described model is not yet: a Hugging Face config must describe a model (its
    # fields under several names, defaults by model_type, text_config merged, attention
    # and MoE fields that go together), a quant name be one the estimator knows, a GPU name
    # one it recognises, a repo one the Hub answers for; described hardware needs its
    # figures, and a runtime, file and profile must go with the model.
    "POST /api/estimate",
    # As the estimate's model and hardware; a price per GPU-hour is stated as any value;
    # and a first-token target below what one request takes on every hardware weighed is
    # refused (422, naming max_ttft_ms): that floor depends on the model and the hardware,
    # so no schema can state it.
    "POST /api/plan",
}


def operations() -> list[tuple[str, bool]]:
    """Every documented operation, and whether it has input that can be invalid: a body,
    or a parameter narrower than "any text" (the schema does not depend on the database)."""
    document = create_app(Settings(database_url="sqlite://", run_worker=False)).openapi()
    found = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            constrained = [
                p
                for p in operation.get("parameters", [])
                if p["schema"] != {"type": "string", "title": p["schema"].get("title")}
            ]
            found.append(
                (f"{method.upper()} {path}", "requestBody" in operation or bool(constrained))
            )
    return found


CASES = [
    pytest.param(label, mode, id=f"{label}-{mode.value}")
    for label, takes_input in operations()
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if takes_input or mode is GenerationMode.POSITIVE
]


def request_body_schema(server: LiveServer, label: str) -> dict[str, Any]:
    method, path = label.split(" ", 1)
    document = httpx.get(f"{server.base_url}/openapi.json").json()
    body = document["paths"][path][method.lower()].get("requestBody", {})
    return body.get("content", {}).get("application/json", {}).get("schema", {})


def keeps_stated_relations(schema: dict[str, Any], value: Any) -> bool:
    """Whether `value` keeps the relations between fields that the schema states in its
    extensions (`x-at-most`, `x-below`, `x-pattern-unless`): JSON Schema cannot compare two
    fields, and a branch for each case would grow past what the generator expands. A
    positive case is one valid by everything the schema says."""
    if not isinstance(value, dict):
        return True
    if not all(keeps_stated_relations(part, value) for part in schema.get("anyOf", [])):
        return False
    properties = schema.get("properties", {})
    # A field left out holds its default, and the relations hold for that too.
    given = {name: f["default"] for name, f in properties.items() if "default" in f} | value
    for name, field in properties.items():
        if given.get(name) is None:
            continue
        most = at_most(field.get("x-at-most"), given)
        if number(most) and number(given[name]) and given[name] > most:
            return False
        # Only a field that states `x-below` has a bound there (a generated key may be "").
        below = given.get(field["x-below"]) if "x-below" in field else None
        if below and all(map(number, [*below, given[name]])) and given[name] >= min(below):
            return False
        if not keeps_pattern_unless(field.get("x-pattern-unless"), given, given[name]):
            return False
        if not keeps_stated_relations(field, given[name]):
            return False
    return True


def number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def keeps_pattern_unless(relation: dict[str, str] | None, value: dict, text: Any) -> bool:
    """`x-pattern-unless`: the text matches the pattern unless the named field is given."""
    if relation is None or not isinstance(text, str) or value.get(relation["field"]):
        return True
    return re.search(relation["pattern"], text) is not None


def at_most(relation: str | dict[str, Any] | None, value: dict[str, Any]) -> Any:
    """The bound `x-at-most` sets: another field's value, or the figure a table gives for
    another field's value (the GPUs of the hardware named)."""
    if isinstance(relation, str):
        return value.get(relation)
    if isinstance(relation, dict):
        return relation["of"].get(value.get(relation["field"]))
    return None


@pytest.fixture
def seeded_server(live_server: LiveServer, valid: dict[str, Any]) -> LiveServer:  # noqa: F811
    """A real server on 127.0.0.1 over the seeded catalog, with one record in it."""
    created = httpx.post(f"{live_server.base_url}/api/records", json=valid)
    assert created.status_code == 201, created.text
    return live_server


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_every_operation_keeps_its_contract(
    seeded_server: LiveServer, label: str, mode: GenerationMode
) -> None:
    schema = schemathesis.openapi.from_url(f"{seeded_server.base_url}/openapi.json")
    # Text with NUL is refused before any route on every operation (PostgreSQL cannot store
    # it; tests/security/test_no_nul.py checks that refusal), so no generated text has one.
    schema.config.generation.update(allow_x00=False)
    # Invalid data is refused; a body the mutations grew past the upload limit is refused
    # before it is read, with 413, as documented.
    schema.config.checks.negative_data_rejection = NegativeDataRejectionConfig(
        expected_statuses=[*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "413"]
    )
    operation = next(r.ok() for r in schema.get_all_operations() if r.ok().label == label)
    cases = operation.as_strategy(generation_mode=mode)
    if mode is GenerationMode.POSITIVE:
        body_schema = request_body_schema(seeded_server, label)
        cases = cases.filter(lambda case: keeps_stated_relations(body_schema, case.body))

    @given(case=cases)
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def keeps_contract(case: Any) -> None:
        case.call_and_validate(base_url=seeded_server.base_url, excluded_checks=excluded)

    excluded = [positive_data_acceptance] if label in SEMANTIC_422 else []
    keeps_contract()
