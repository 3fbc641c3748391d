"""The OpenAPI document states the catalog: a body field that names a catalog row carries
`x-catalog` (its kind) in the schema the code declares, and the served document lists the
slugs the catalog holds there, with how they go together (a file of its model, a runtime
that loads the file's format; no more GPUs than the hardware has, in the `x-at-most`
extension that JSON Schema lacks a word for). A body valid by the
served document is then one whose references the server accepts; any other is the 422
naming the field that the schema already said it would be.
"""

import copy
from collections.abc import Iterator
from typing import Any

from app.catalog.references import CatalogReferences

CATALOG_KEY = "x-catalog"
# A field naming a stored row other than the catalog's (a task): the served document lists
# the ids stored when it was built (app.api_docs).
STORED_KEY = "x-stored"


def stated_catalog(document: dict[str, Any], catalog: CatalogReferences) -> dict[str, Any]:
    """A copy of `document` whose catalog fields list what `catalog` holds."""
    stated = copy.deepcopy(document)
    for schema in object_schemas(stated.get("paths", {})):
        state_references(schema, catalog)
    for schema in object_schemas(stated.get("components", {})):
        state_references(schema, catalog)
    return stated


def object_schemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema with properties under `node`, outermost first."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield node
        for value in list(node.values()):
            yield from object_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from object_schemas(value)


def state_references(schema: dict[str, Any], catalog: CatalogReferences) -> None:
    fields = {
        field[CATALOG_KEY]: name
        for name, field in schema["properties"].items()
        if isinstance(field, dict) and CATALOG_KEY in field
    }
    if not fields:
        return
    properties = schema["properties"]
    together: list[dict[str, Any]] = []
    if "model" in fields:
        restrict(properties[fields["model"]], list(catalog.models))
    if "artifact" in fields:
        restrict(properties[fields["artifact"]], list(catalog.artifacts))
        together.append({"anyOf": artifact_branches(fields, catalog)})
    if "runtime" in fields:
        restrict(properties[fields["runtime"]], list(catalog.runtimes))
    if "hardware" in fields:
        restrict(properties[fields["hardware"]], list(catalog.hardware))
        if "gpu_count" in fields:
            # Branches per GPU count times the file branches grow past what a generator
            # can expand, so this relation is stated in the extension the worker progress
            # uses: at most the GPUs of the hardware named.
            properties[fields["gpu_count"]]["x-at-most"] = {
                "field": fields["hardware"],
                "of": {h.slug: h.gpu_count for h in catalog.hardware.values()},
            }
    if "profile" in fields:
        # A blank profile is none, as the server reads it.
        restrict(properties[fields["profile"]], ["", *catalog.profiles])
    if together:
        schema["allOf"] = [*schema.get("allOf", []), *together]


def artifact_branches(fields: dict[str, str], catalog: CatalogReferences) -> list[dict]:
    """One branch per model and set of runtimes: its files that those runtimes load.
    (Grouped, so that the branches times the hardware's stay few enough to generate from.)"""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for artifact in catalog.artifacts.values():
        loaders = tuple(r.slug for r in catalog.runtimes.values() if artifact.format in r.formats)
        if "runtime" in fields and not loaders:
            continue  # no runtime loads it: nothing valid names it
        groups.setdefault((artifact.model.slug, loaders), []).append(artifact.slug)
    branches = []
    for (model, loaders), artifacts in groups.items():
        branch: dict[str, Any] = {fields["artifact"]: {"enum": artifacts}}
        if "model" in fields:
            branch[fields["model"]] = {"const": model}
        if "runtime" in fields:
            branch[fields["runtime"]] = {"enum": list(loaders)}
        branches.append({"properties": branch})
    return branches or [{"not": {}}]


def restrict(field: dict[str, Any], slugs: list[str]) -> None:
    """The field's text is one of `slugs` (a null or a description it allows stays
    allowed)."""
    branches = field.get("anyOf", field.get("oneOf"))
    if branches is None:
        field["enum"] = slugs
        return
    for branch in branches:
        if branch.get("type") == "string":
            branch["enum"] = slugs


def catalog_field(kind: str) -> dict[str, str]:
    """A field's `json_schema_extra`: it names a catalog row of this kind."""
    return {CATALOG_KEY: kind}


def state_stored(node: Any, kind: str, ids: list[int]) -> None:
    """Every field under `node` that names a stored row of `kind` lists `ids`."""
    if isinstance(node, dict):
        if node.get(STORED_KEY) == kind:
            restrict_ids(node, ids)
        for value in node.values():
            state_stored(value, kind, ids)
    elif isinstance(node, list):
        for value in node:
            state_stored(value, kind, ids)


def restrict_ids(field: dict[str, Any], ids: list[int]) -> None:
    """The field's integer is one of `ids` (a null it allows stays allowed)."""
    for branch in field.get("anyOf", [field]):
        if branch.get("type") == "integer":
            branch["enum"] = ids if ids else [None]
