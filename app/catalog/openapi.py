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
# Values a catalog field takes besides the catalog's slugs (the estimate's "custom" hardware,
# a blank runtime); a profile field without it also takes a blank, as a form sends one.
ALSO_KEY = "x-catalog-also"
# On a runtime field: the platform it must run on and the file format it must load, by the
# hardware and the model fields it names (x-runs): the code states the GPU and quant
# tables' part, the served document adds the catalog's.
RUNS_KEY = "x-runs"


def stated_catalog(document: dict[str, Any], catalog: CatalogReferences) -> dict[str, Any]:
    """A copy of `document` whose catalog fields list what `catalog` holds."""
    stated = copy.deepcopy(document)
    state_key_names(stated, catalog)
    for schema in object_schemas(stated.get("paths", {})):
        state_references(schema, catalog)
    for schema in object_schemas(stated.get("components", {})):
        state_references(schema, catalog)
    return stated


def state_key_names(node: Any, catalog: CatalogReferences) -> None:
    """An object keyed by catalog rows (`propertyNames` with `x-catalog`) lists them."""
    if isinstance(node, dict):
        names = node.get("propertyNames")
        if isinstance(names, dict) and names.get(CATALOG_KEY) == "hardware":
            names["enum"] = list(catalog.hardware)
        for value in node.values():
            state_key_names(value, catalog)
    elif isinstance(node, list):
        for value in node:
            state_key_names(value, catalog)


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

    def also(kind: str) -> list[str]:
        return list(properties[fields[kind]].get(ALSO_KEY, []))

    if "model" in fields:
        restrict(properties[fields["model"]], list(catalog.models))
    if "artifact" in fields and ALSO_KEY in properties[fields["artifact"]]:
        # A file that may be left out, beside a model that may be described: one branch
        # per model and runtimes times the model's kinds grows past what a generator
        # expands, so the file's model is stated in `x-one-of` (and the runtime's formats
        # in `x-runs`, below).
        artifact = properties[fields["artifact"]]
        restrict(artifact, [*also("artifact"), *catalog.artifacts])
        artifact["x-one-of"] = {
            "field": fields["model"],
            "of": {
                m.slug: [*also("artifact"), *(a.slug for a in m.artifacts)]
                for m in catalog.models.values()
            },
        }
    elif "artifact" in fields:
        restrict(properties[fields["artifact"]], list(catalog.artifacts))
        together.append({"anyOf": artifact_branches(fields, catalog)})
    if "runtime" in fields:
        runtime = properties[fields["runtime"]]
        restrict(runtime, [*also("runtime"), *catalog.runtimes])
        if RUNS_KEY in runtime:
            runtime[RUNS_KEY] = {
                **runtime[RUNS_KEY],
                "platforms": {r.slug: list(r.platforms) for r in catalog.runtimes.values()},
                "formats": {r.slug: list(r.formats) for r in catalog.runtimes.values()},
                "catalog_hardware": {h.slug: h.platform for h in catalog.hardware.values()},
                "artifact": fields.get("artifact"),
                "artifact_formats": {a.slug: a.format for a in catalog.artifacts.values()},
            }
    if "hardware" in fields:
        restrict(properties[fields["hardware"]], [*also("hardware"), *catalog.hardware])
        if "gpu_count" in fields:
            # Branches per GPU count times the file branches grow past what a generator
            # can expand, so this relation is stated in the extension the worker progress
            # uses: at most the GPUs of the hardware named.
            properties[fields["gpu_count"]]["x-at-most"] = {
                "field": fields["hardware"],
                "of": {h.slug: h.gpu_count for h in catalog.hardware.values()},
            }
    if "profile" in fields:
        # A blank profile is none, as the server reads it, unless the field says otherwise.
        profile = properties[fields["profile"]]
        restrict(profile, [*profile.get(ALSO_KEY, [""]), *catalog.profiles])
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
    allowed; each of a list's items, as the field's own)."""
    branches = field.get("anyOf", field.get("oneOf"))
    if branches is None:
        field["enum"] = slugs
        return
    for branch in branches:
        if branch.get("type") == "string":
            branch["enum"] = slugs
        elif branch.get("type") == "array" and isinstance(branch.get("items"), dict):
            restrict(branch["items"], slugs)


def catalog_field(kind: str, also: list[str] | None = None) -> dict[str, Any]:
    """A field's `json_schema_extra`: it names a catalog row of this kind (or one of
    `also`)."""
    return {CATALOG_KEY: kind} if also is None else {CATALOG_KEY: kind, ALSO_KEY: also}
