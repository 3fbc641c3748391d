"""Domain errors carry their HTTP status; one handler renders them as a page or JSON.

An error a person reads is raised with a Sentence (a code and its params): the page words it
in the reader's language, JSON carries the code and params beside the English `detail`.
"""

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
