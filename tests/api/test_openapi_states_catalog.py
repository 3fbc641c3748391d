"""The served OpenAPI document lists what a body may name: the catalog's slugs where a field
names a catalog row, which files go with which model and runtime, the GPUs each hardware
has, and the values a free-form object may hold. Each is checked against the server: what
the document admits is accepted, what it leaves out is refused."""

from typing import Any

import jsonschema
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.references import catalog_references
from tests.records.conftest import h200, post_record, valid  # noqa: F401 (fixtures)


def record_schema(client: TestClient) -> dict[str, Any]:
    document = client.get("/openapi.json").json()
    body = document["paths"]["/api/records"]["post"]["requestBody"]["content"]
    return {**body["application/json"]["schema"], "components": document["components"]}


def test_record_fields_list_the_catalog(client: TestClient, session: Session) -> None:
    catalog = catalog_references(session)
    schema = record_schema(client)
    properties = schema["properties"]
    assert properties["model"]["enum"] == list(catalog.models)
    assert properties["hardware"]["enum"] == list(catalog.hardware)
    gpus = properties["gpu_count"]["x-at-most"]
    assert gpus == {
        "field": "hardware",
        "of": {h.slug: h.gpu_count for h in catalog.hardware.values()},
    }
    # Every file is in exactly the branch of its own model, with the runtimes that load it.
    files = schema["allOf"][-1]["anyOf"]
    for artifact in catalog.artifacts.values():
        branches = [b for b in files if artifact.slug in b["properties"]["artifact"]["enum"]]
        assert len(branches) == 1
        assert branches[0]["properties"]["model"]["const"] == artifact.model.slug
        for runtime in branches[0]["properties"]["runtime"]["enum"]:
            assert artifact.format in catalog.runtimes[runtime].formats


def test_what_the_document_admits_is_accepted_and_what_it_leaves_out_is_refused(
    client: TestClient,
    session: Session,
    valid: dict[str, Any],  # noqa: F811
) -> None:
    catalog = catalog_references(session)
    schema = record_schema(client)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(valid)
    foreign = next(a for a in catalog.artifacts.values() if a.model.slug != valid["model"])
    refused = [
        {**valid, "model": "no-such-model"},
        {**valid, "artifact": foreign.slug},
        {**valid, "applied_values": {"big": 2**63}},
        {**valid, "applied_values": {"big": -1e19}},
        {**valid, "applied_values": {"deep": [[[[[[[[1]]]]]]]]}},
        {**valid, "measurements": [{"context_length": 1024, "ttft_ms": None}]},
    ]
    for body in refused:
        assert not validator.is_valid(body), body
        assert post_record(client, body).status_code == 422, body
    kept = {**valid, "applied_values": {"deep": [[[[[[[1]]]]]]], "big": 2**63 - 1}}
    assert validator.is_valid(kept)
    assert post_record(client, kept).status_code == 201


def test_an_estimate_and_a_plan_name_a_catalog_model_or_describe_one(
    client: TestClient, session: Session
) -> None:
    catalog = catalog_references(session)
    document = client.get("/openapi.json").json()
    for path in ("/api/estimate", "/api/plan"):
        body = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        schema = {**body["schema"], "components": document["components"]}
        by_slug = schema["properties"]["model"]["oneOf"][0]
        assert by_slug["enum"] == list(catalog.models)
        validator = jsonschema.Draft202012Validator(schema["properties"]["model"])
        assert not validator.is_valid("no-such-model")
        assert not validator.is_valid({"safetensors_index": None, "params_b": 8})
        assert validator.is_valid({"safetensors_header": {}, "safetensors_index": None})
        assert client.post(path, json={"model": "no-such-model"}).status_code == 422
        neither = client.post(path, json={"model": {"safetensors_index": None, "params_b": 8}})
        assert neither.status_code == 422, neither.text
        assert "model" in str(neither.json()["errors"])


def test_the_document_follows_the_catalog(client: TestClient) -> None:
    """Built once per catalog definition: the same document while the catalog stands."""
    first = client.get("/openapi.json")
    assert first.status_code == 200
    assert client.get("/openapi.json").json() == first.json()
