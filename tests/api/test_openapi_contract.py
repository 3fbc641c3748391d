"""The OpenAPI schema is the API: schemathesis drives every documented operation with
generated requests, valid and invalid, against a real migrated and seeded database (with a
record in it) and runs all of its checks: no server error, every status and content type
documented, every JSON body matching its schema, invalid input refused, and valid input
accepted.

Twice over for valid input. As a standard tool reads the schema fresh, knowing nothing of
its `x-` extensions: a body whose fields contradict each other in a relation JSON Schema has
no word for is then answered 409, a conflict, never 422 (app.errors.FIELD_CONFLICTS). And
generated to keep those relations too: such a body is then never called a conflict, so the
extensions state exactly what the server holds to.

Bounded to a few examples per operation and mode, so it stays a CI test.
"""

import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as run_settings
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    NegativeDataRejectionConfig,
)
from schemathesis.generation import GenerationMode

from app.config import Settings
from app.errors import FIELD_CONFLICTS
from app.main import create_app
from tests.live_server import LiveServer
from tests.records.conftest import h200, valid  # noqa: F401 (fixtures)

EXAMPLES_PER_OPERATION = 30
# Every operation is held to positive data acceptance: the served schema states what the
# server requires (the catalog's slugs and how they go together, allowed servers, cursors'
# form, bounded free-form values, 64-bit integers, the quant and GPU tables' names, a
# config.json the estimate reads, the safetensors files' shapes), and the relations JSON
# Schema has no word for in `x-` extensions that a generated case keeps. (A worker's result
# of another server or model than its job asked for is a conflict, 409; a Hub repository the
# Hub does not have, or a task id not stored, is a 404.)


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
    extensions (`x-at-most`, `x-below`, `x-one-of`, `x-runs`, `x-as-many-as`,
    `x-spans-bytes`, `x-together`): JSON Schema cannot compare two fields, and a branch for
    each case would grow past what the generator expands. A positive case here is one valid
    by everything the schema says."""
    if isinstance(value, list):
        items = [part["items"] for part in [schema, *branches(schema)] if "items" in part]
        return all(keeps_stated_relations(item, one) for item in items for one in value)
    if not isinstance(value, dict):
        return True
    if not all(keeps_stated_relations(part, value) for part in branches(schema)):
        return False
    together = schema.get("x-together")
    if together and not all(
        keeps_together(rule, merged(value, together)) for rule in together["rules"]
    ):
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
        if not keeps_one_of(field.get("x-one-of"), given, given[name]):
            return False
        if not keeps_runs(field.get("x-runs"), given, given[name]):
            return False
        many = field.get("x-as-many-as")
        if many and isinstance(given[name], list) and given[name]:
            if len(given[name]) != at_most(many, given):
                return False
        if field.get("x-spans-bytes") and spanned_bytes(given[name]) <= 0:
            return False
        if not keeps_stated_relations(field, given[name]):
            return False
    return True


def merged(value: dict[str, Any], together: dict[str, Any]) -> dict[str, Any]:
    """The object as `x-together` reads it: its `merge` field's fields over its own (a null
    there gives none)."""
    inner = value.get(together["merge"])
    if not isinstance(inner, dict):
        return value
    return {**value, **{key: one for key, one in inner.items() if one is not None}}


def keeps_together(rule: dict[str, Any], value: dict[str, Any]) -> bool:
    """`x-together`: when any of the rule's conditions holds, each field it needs is given
    (under one of its names, a number at least so large)."""

    def holds(condition: dict[str, Any]) -> bool:
        if "names" in condition:
            return any(
                number(value.get(name)) and value[name] >= condition["at_least"]
                for name in condition["names"]
            )
        given = value.get(condition["field"])
        if "contains" in condition:
            return isinstance(given, list) and condition["contains"] in given
        return given in condition["in"]

    return not any(map(holds, rule["when"])) or all(map(holds, rule["needs"]))


def spanned_bytes(header: Any) -> int:
    """`x-spans-bytes`: a safetensors header's tensors' bytes, end minus begin, summed."""
    if not isinstance(header, dict):
        return 1  # not a header: nothing stated of it here
    return sum(
        tensor["data_offsets"][1] - tensor["data_offsets"][0]
        for name, tensor in header.items()
        if name != "__metadata__" and isinstance(tensor, dict) and "data_offsets" in tensor
    )


def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of a schema's `anyOf` and `oneOf` (the relations a part states hold for a
    value that is not of its kind vacuously: they name fields it does not have)."""
    return [*schema.get("anyOf", []), *schema.get("oneOf", [])]


def keeps_one_of(relation: dict[str, Any] | None, value: dict[str, Any], own: Any) -> bool:
    """`x-one-of`: where the named field's value is a key of the table, this field's value
    is one of the table's values for it (a named model's own files, a card's sizes)."""
    if relation is None:
        return True
    key = value.get(relation["field"])
    return not isinstance(key, str) or key not in relation["of"] or own in relation["of"][key]


def keeps_runs(relation: dict[str, Any] | None, value: dict[str, Any], runtime: Any) -> bool:
    """`x-runs`: the runtime named runs on the platform of the hardware named (a catalog
    slug's, a card's, the described hardware's `platform`, or each of a plan's list), and
    loads the file format of a described model (its quant's; a config's own quantization
    where none is named)."""
    if relation is None or not runtime or "platforms" not in relation:
        return True

    def platform_of(hardware: Any) -> Any:
        if isinstance(hardware, dict):
            return relation["gpus"].get(hardware.get("gpu"))
        if hardware == "custom":
            return value.get("platform") or relation["default_platform"]
        return relation["catalog_hardware"].get(hardware)

    hardware = value.get(relation["hardware"], "custom")
    # A plan weighs a list of hardware (each must run it), or by default only what runs it.
    named = hardware if isinstance(hardware, list) else [] if hardware is None else [hardware]
    if any(platform_of(h) not in relation["platforms"].get(runtime, []) for h in named):
        return False
    model = value.get(relation["model"])
    if not isinstance(model, dict):  # a named model: the file named, if one is
        artifact = value.get(relation["artifact"])
        if not artifact:
            return True
        return relation["artifact_formats"][artifact] in relation["formats"].get(runtime, [])
    quant = model.get("quant")
    config = model.get("hf_config") or {}
    if quant:
        file_format = relation["quants"][quant]
    elif isinstance(config.get("quantization"), dict) and config["quantization"].get("bits"):
        file_format = relation["declared"]["quantization"]
    else:
        file_format = relation["declared"]["otherwise"]
    return file_format in relation["formats"].get(runtime, [])


def relaxed(schema: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The body asking the least of every answered bound: each `x-at-least-answered` field
    left out and each `x-at-most-answered` field at its minimum, so that the answer giving
    one field's bound is not refused for another's."""
    out = dict(body)
    for name, field in schema.get("properties", {}).items():
        if "x-at-least-answered" in field:
            out.pop(name, None)
        elif "x-at-most-answered" in field and name in out:
            out[name] = field.get("exclusiveMinimum", 0) + 1e-6
    return out


def answered(server: LiveServer, label: str, body: dict[str, Any], where: list[str]) -> Any:
    """The figure at `where` in the operation's answer to `body`; None if refused."""
    method, path = label.split(" ", 1)
    answer = httpx.request(method, server.base_url + path, json=body, timeout=120)
    if answer.status_code != 200:
        return None  # refused for another reason, which the check of that case covers
    found: Any = answer.json()
    for part in where:
        found = found.get(part) if isinstance(found, dict) else None
    return found


def keeps_answered_floor(server: LiveServer, label: str, schema: dict[str, Any], body: Any) -> bool:
    """`x-at-least-answered`: the field is at least what the operation answers for the same
    body without it (a plan's first-token target and its `least_ttft.ms`), a floor that
    depends on the model and hardware, so the schema points at the answer that gives it."""
    if not isinstance(body, dict):
        return True
    for name, field in schema.get("properties", {}).items():
        where = field.get("x-at-least-answered")
        if where is None or not number(body.get(name)):
            continue
        least = answered(server, label, relaxed(schema, body), where)
        if number(least) and body[name] < least:
            return False
    return True


def keeps_answered_ceiling(
    server: LiveServer, label: str, schema: dict[str, Any], body: Any
) -> bool:
    """`x-at-most-answered`: the field is at most what the operation answers for the same
    body asking the least of it (a plan's speed target and its `most_decode.tokens_per_s`,
    the most one request reaches alone), a ceiling that depends on the model and hardware."""
    if not isinstance(body, dict):
        return True
    for name, field in schema.get("properties", {}).items():
        where = field.get("x-at-most-answered")
        if where is None or not number(body.get(name)):
            continue
        most = answered(server, label, relaxed(schema, body), where)
        if number(most) and body[name] > most:
            return False
    return True


def number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def at_most(relation: str | dict[str, Any] | None, value: dict[str, Any]) -> Any:
    """The bound `x-at-most` sets: another field's value (the first given of several names),
    the product of fields' values, or the figure a table gives for another field's value
    (the GPUs of the hardware named)."""
    if isinstance(relation, str):
        return value.get(relation)
    if isinstance(relation, list):
        return next((value[name] for name in relation if value.get(name) is not None), None)
    if isinstance(relation, dict) and "product" in relation:
        factors = [value.get(name) for name in relation["product"]]
        factors = [relation["missing"] if factor is None else factor for factor in factors]
        return math.prod(factors) if all(map(number, factors)) else None
    if isinstance(relation, dict):
        return relation["of"].get(value.get(relation["field"]))
    return None


@pytest.fixture
def empty_hub() -> Iterator[str]:
    """A Hub on 127.0.0.1 that has no repository at all: a generated repository id is
    answered as the Hub answers one it does not have."""

    class NoRepositories(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the handler's protocol)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), NoRepositories)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def settings(settings: Settings, empty_hub: str) -> Settings:
    return settings.model_copy(update={"hub_url": empty_hub})


@pytest.fixture
def seeded_server(live_server: LiveServer, valid: dict[str, Any]) -> LiveServer:  # noqa: F811
    """A real server on 127.0.0.1 over the seeded catalog, with one record in it."""
    created = httpx.post(f"{live_server.base_url}/api/records", json=valid)
    assert created.status_code == 201, created.text
    return live_server


def fresh_schema(server: LiveServer) -> Any:
    """The served schema as a standard tool reads it, with all checks."""
    schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")
    # Text with NUL is refused before any route on every operation (PostgreSQL cannot store
    # it; tests/security/test_no_nul.py checks that refusal), so no generated text has one.
    schema.config.generation.update(allow_x00=False)
    # Invalid data is refused; a body the mutations grew past the upload limit is refused
    # before it is read, with 413, as documented.
    schema.config.checks.negative_data_rejection = NegativeDataRejectionConfig(
        expected_statuses=[*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "413"]
    )
    return schema


def conflict_codes(response: Any) -> set[str]:
    """The codes of a 409's errors that are conflicts between fields (none for another 409:
    an Idempotency-Key reused, a result of another server than its job's)."""
    if response.status_code != 409:
        return set()
    errors = response.json().get("errors") or {}
    said = errors if isinstance(errors, list) else response.json().get("error_messages", {})
    items = said if isinstance(said, list) else list(said.values())
    codes = {item.get("code") for item in items if isinstance(item, dict)}
    wrapped = {
        item["params"]["problem"].get("code")
        for item in items
        if isinstance(item, dict) and isinstance((item.get("params") or {}).get("problem"), dict)
    }
    return (codes | wrapped) & FIELD_CONFLICTS


def run_cases(cases: Any, check: Any) -> None:
    @given(case=cases)
    @run_settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def keeps_contract(case: Any) -> None:
        check(case)

    keeps_contract()


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_every_operation_keeps_its_contract(
    seeded_server: LiveServer, label: str, mode: GenerationMode
) -> None:
    """With the stated relations kept by every valid case: none is a conflict."""
    schema = fresh_schema(seeded_server)
    operation = next(r.ok() for r in schema.get_all_operations() if r.ok().label == label)
    cases = operation.as_strategy(generation_mode=mode)
    if mode is GenerationMode.POSITIVE:
        body_schema = request_body_schema(seeded_server, label)
        cases = cases.filter(
            lambda case: (
                keeps_stated_relations(body_schema, case.body)
                and keeps_answered_floor(seeded_server, label, body_schema, case.body)
                and keeps_answered_ceiling(seeded_server, label, body_schema, case.body)
            )
        )

    def check(case: Any) -> None:
        response = case.call_and_validate(base_url=seeded_server.base_url)
        if mode is GenerationMode.POSITIVE:
            assert not conflict_codes(response), f"a body keeping the relations: {response.text}"

    run_cases(cases, check)


POSITIVE = [pytest.param(label, id=label) for label, _ in operations()]


@pytest.mark.parametrize("label", POSITIVE)
def test_a_tool_that_reads_the_schema_alone_finds_no_valid_body_refused(
    seeded_server: LiveServer, label: str
) -> None:
    """Valid cases as a standard tool makes them, blind to the `x-` relations: every check
    holds, so a body the schema accepts is never a 422 (a conflict between its fields is a
    409)."""
    schema = fresh_schema(seeded_server)
    operation = next(r.ok() for r in schema.get_all_operations() if r.ok().label == label)
    cases = operation.as_strategy(generation_mode=GenerationMode.POSITIVE)
    run_cases(cases, lambda case: case.call_and_validate(base_url=seeded_server.base_url))
