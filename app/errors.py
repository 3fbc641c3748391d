"""Domain errors carry their HTTP status; one handler renders them as a page or JSON."""

from pydantic import BaseModel


class ServebookError(Exception):
    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


ERROR_DESCRIPTIONS = {
    400: "a list cursor this list did not give out",
    401: "no valid access token (exposed mode)",
    403: "the token's role may not do this, or the CSRF token is missing",
    404: "no such item",
    409: "conflicts with what is stored",
    413: "the body is over SERVEBOOK_MAX_UPLOAD_BYTES",
    415: "the body is not JSON",
}


def error_responses(*codes: int) -> dict[int | str, dict]:
    """OpenAPI `responses` entries for these refusals, each with its ErrorOut body."""
    return {code: {"model": ErrorOut, "description": ERROR_DESCRIPTIONS[code]} for code in codes}
