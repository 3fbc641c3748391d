"""Domain errors carry their HTTP status; one handler renders them as a page or JSON.

An error a person reads is raised with a Sentence (a code and its params): the page words it
in the reader's language, JSON carries the code and params beside the English `detail`.
"""

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, Field

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register, render


class ServebookError(Exception):
    status_code = 400

    def __init__(self, message: str | Sentence) -> None:
        self.said = message if isinstance(message, Sentence) else None
        text = english(message) if isinstance(message, Sentence) else message
        super().__init__(text)
        self.message = text  # English, for JSON's detail and the logs

    @property
    def code(self) -> str | None:
        return self.said.code if self.said else None

    def text(self) -> str:
        """What the page says: the reader's language when the error has a code."""
        return render(self.said) if self.said else self.message

    def json_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": self.message}
        if self.said is not None:
            body.update(self.said.as_json())
        return body


class NotFound(ServebookError):
    status_code = 404


class Forbidden(ServebookError):
    status_code = 403


class Conflict(ServebookError):
    status_code = 409


# The refusals of a body that keeps everything the served schema states in standard JSON
# Schema, whose fields contradict each other or the catalog in a relation JSON Schema has no
# word for: a file of another model, a runtime that does not run on the hardware named or
# load its files, more GPUs than the hardware has, `done` past `total`, a length the output
# does not fit in, a target no hardware weighed reaches. The schema states each one in the
# field's description (and in an `x-` extension a test reads). A refusal made only of these
# answers 409, not 422: 422 says the schema alone refuses the body, so a client (or a
# contract tester) that reads the schema can tell what it could have checked itself from
# what only the server knows.
FIELD_CONFLICTS = frozenset(
    {
        # (A record's and a job's file and runtime are stated in standard branches, one per
        # model: a file of another model is a body the schema refuses there.)
        "record.gpu_count",  # more GPUs than the hardware named has
        "selector.foreign_artifact",  # a file of another model than the one named
        "selector.wrong_platform",  # a runtime that does not run on the hardware named
        "selector.cannot_load",  # ... or load the model's files
        "selector.usable_over_total",  # more usable memory than the cards have in all
        "gpu.sizes",  # a memory size the card named does not come in
        "gpu.unified_count",  # more than one of a system with unified memory
        "estimate.active_over_total",  # more parameters active than the model has
        "estimate.config_lacks_together",  # a config lacking what its other fields need
        "estimate.config_fields_conflict",  # a config whose fields disagree
        "estimate.header_without_bytes",  # a safetensors header that spans no bytes
        "experts_per_token_range",  # experts per token outside 1 to the experts a config has
        "layer_types_count",  # a kind per layer for another number of layers
        "layers_contradict",  # more layers of a kind than layers
        "plan.ttft_below_one_request",  # a first-token target no hardware weighed reaches
        "plan.decode_above_one_request",  # a speed target no hardware weighed reaches
        "bench.length_below_output",  # a context length the output tokens do not fit in
        "worker.done_over_total",  # progress past its total
    }
)
# What such a 409 says in the OpenAPI document.
FIELDS_CONFLICT = (
    "fields the schema accepts each of that contradict each other or the catalog, in a "
    "relation a field's description states: every field at fault, as for 422"
)
# Stored rows a body names that are gone (the schema cannot list stored ids): 404.
ROWS_MISSING = frozenset({"job.no_task"})


def refusal_status(codes: Iterable[str | None]) -> int:
    """A refusal's status from its errors' codes: 409 where every error is a conflict
    between fields (or a stored row missing beside one), 404 where every one is a stored row
    missing, else 422 (the schema refuses the body)."""
    found = set(codes)
    if found and found <= ROWS_MISSING:
        return 404
    if found & FIELD_CONFLICTS and found <= FIELD_CONFLICTS | ROWS_MISSING:
        return 409
    return 422


def said_codes(said: Mapping[str, Any] | None) -> Iterator[str | None]:
    """A coded error's code and, for one that wraps another (`problem`: a card's sizes with
    the close matches beside it), the code it wraps."""
    said = said or {}
    problem = (said.get("params") or {}).get("problem")
    if isinstance(problem, Mapping) and problem.get("code") in FIELD_CONFLICTS:
        yield problem.get("code")
    else:
        yield said.get("code")


# ---------------------------------------------------------------- documented error bodies
# The JSON bodies the handlers in app.main send, so the OpenAPI schema lists every answer.


class ErrorOut(BaseModel):
    """A refusal with one message (404, 401, 403, 409, 413, 415)."""

    detail: str
    code: str | None = Field(default=None, description="the refusal's stable code")
    params: dict[str, Any] | None = Field(default=None, description="the figures it names")


ERROR_DESCRIPTIONS = {
    400: "a list cursor this list did not give out",
    401: "no valid access token (exposed mode)",
    403: "the token's role may not do this, or the CSRF token is missing",
    404: "no such item",
    409: "conflicts with what is stored",
    413: "the body is over SERVEBOOK_MAX_UPLOAD_BYTES",
    415: "the body is not JSON",
    429: "too many writes for this token this minute (SERVEBOOK_WRITE_RATE_PER_MINUTE); "
    "Retry-After says when to try again",
}


# An error page's title, in the reader's language; its heading is the error's own sentence.
PAGE_TITLES = {
    400: _l("Not accepted"),
    401: _l("Sign-in needed"),
    403: _l("Not allowed"),
    404: _l("Not here"),
    405: _l("Not answered here"),
    409: _l("Conflicts with what is stored"),
    413: _l("Too large"),
    415: _l("Not accepted"),
    422: _l("Not accepted"),
    429: _l("Too many requests"),
}


def page_title(status_code: int) -> str:
    return str(PAGE_TITLES.get(status_code, PAGE_TITLES[400]))


# The answers the edge gives before any route runs (the size limit, the method check).
TOO_LARGE = register(
    "request.too_large",
    _l(
        "The request body is larger than the %(limit)s-byte limit (SERVEBOOK_MAX_UPLOAD_BYTES). "
        "Send a smaller file or split the submission."
    ),
)
METHOD_NOT_ALLOWED = register(
    "request.method_not_allowed", _l("%(method)s is not allowed here; use %(allowed)s.")
)
NO_SUCH_PAGE = register("request.no_such_page", _l("There is no page at this address."))


def error_responses(*codes: int) -> dict[int | str, dict]:
    """OpenAPI `responses` entries for these refusals, each with its ErrorOut body."""
    return {code: {"model": ErrorOut, "description": ERROR_DESCRIPTIONS[code]} for code in codes}
