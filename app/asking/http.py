"""What the estimate's and the plan's HTTP endpoints share in asking the question: the
recipe service at the request's revision, the statuses a described model may answer, and
the Hub fetch a remote caller may not start."""

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel

from app.asking.hub import is_cached
from app.asking.request import EstimateRequest, ModelByRepo
from app.db import SessionDep
from app.errors import ERROR_DESCRIPTIONS, FIELDS_CONFLICT
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.i18n.sentences import render as say
from app.resolve import RecipeService
from app.security.exposure import request_is_exposed


def recipe_service(request: Request, session: SessionDep) -> RecipeService:
    """Recipes read from the app's cache, at the revision this request's session sees."""
    return RecipeService(session, request.state.recipe_cache)


RecipesDep = Annotated[RecipeService, Depends(recipe_service)]


_BY_FIELD = (
    ' by field name: {"errors": {field: message}, "error_messages": {field: {code, params, '
    "text}}}, every field at fault"
)
# What a request that names a Hub repository may also answer, beside 422 for its own faults.
DESCRIBED_RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {
        "description": "a repository this server does not fetch while exposed, or one the "
        "Hub keeps private or gated;" + _BY_FIELD
    },
    404: {
        "description": "a repository the Hub does not have (or without safetensors "
        "weights);" + _BY_FIELD
    },
    409: {"description": FIELDS_CONFLICT + ";" + _BY_FIELD},
    413: {"description": ERROR_DESCRIPTIONS[413]},
    422: {"description": "errors" + _BY_FIELD},
    502: {"description": "the Hub could not be reached for a repository, or failed;" + _BY_FIELD},
}


HUB_FETCH_OFF = register(
    "estimate.hub_fetch_off",
    _l(
        "this server does not fetch from the Hub while it is reachable from other machines; "
        "paste the model's config.json (hf_config) instead"
    ),
)


def hub_fetch_refused(request: Request, parsed: EstimateRequest) -> dict[str, str] | None:
    """A repo id would make the server fetch from the network: on loopback that is the
    user's own machine asking, beyond it anyone could point it at any repository. Off there
    unless SERVEBOOK_HUB_FETCH_WHEN_EXPOSED; a repository already cached still answers."""
    settings = request.app.state.settings
    if not isinstance(parsed.model, ModelByRepo) or settings.hub_fetch_when_exposed:
        return None
    if not request_is_exposed(request) or is_cached(parsed.model.repo, settings):
        return None
    return {"model.repo": say(HUB_FETCH_OFF())}


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema with its definitions inlined, for an OpenAPI request body."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(definitions[ref.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)
