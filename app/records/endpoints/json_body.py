"""JSON request bodies: read strictly, refused with a 422 that names the body, and
documented in OpenAPI from the pydantic model that validates them."""

from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from app.errors import ServebookError
from app.records.schemas import FieldError
from app.records.storage.validation import RecordInvalid
from app.security.json_input import PARSE_OFF_LOOP_BYTES, JsonRefused, loads_strict


class UnsupportedMedia(ServebookError):
    status_code = 415


async def json_body(request: Request) -> Any:
    """The raw JSON document; the record schema validates it so every error is listed."""
    body = await request.body()
    if len(body) > PARSE_OFF_LOOP_BYTES:  # a large body is parsed off the event loop
        return await run_in_threadpool(parse_json_body, request, body)
    return parse_json_body(request, body)


def parse_json_body(request: Request, body: bytes) -> Any:
    """The body already read, parsed as `json_body` does (for a route that reads it first
    and checks who is asking before parsing it)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise UnsupportedMedia("Send the body as JSON (Content-Type: application/json).")
    try:
        return loads_strict(body)
    except JsonRefused as error:
        said = FieldError.of(error.field or "body", error.said)
        raise RecordInvalid([said]) from error
    except UnicodeDecodeError as error:
        raise RecordInvalid([FieldError(field="body", message=str(error))]) from error


BodyDep = Annotated[Any, Depends(json_body)]


def as_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise RecordInvalid([FieldError(field="body", message="send one JSON object")])
    return body


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON schema with its $defs inlined, for an OpenAPI request body."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return resolve(defs[ref.removeprefix("#/$defs/")])
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)
