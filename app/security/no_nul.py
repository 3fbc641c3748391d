"""Text with the NUL character is refused at the edge, on every database.

PostgreSQL text cannot hold NUL (U+0000) and SQLite can, so without this check the same
request stored on one and failed with a server error on the other. A request whose query
string, form body (URL-encoded or multipart, uploaded files included) or JSON body carries
one (`%00`, `\\u0000`, or the byte itself) gets a 422 naming where. What the edge cannot
see (text an importer reads out of a file, a Python caller's record) meets the same check
in the records' schema (app.security.json_input.hostile_value_at).
"""

import re

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register, render
from app.security.body_limit import PayloadTooLarge, too_large_response
from app.security.http import prefers_json
from app.web import error_page

# An escape for U+0000 in JSON: \u0000 after an even number of backslashes (so not the
# literal text "\\u0000"); in URL encoding, %00.
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000", re.IGNORECASE)
_CHECKED_BODIES = (
    b"application/json",
    b"application/x-www-form-urlencoded",
    b"multipart/form-data",
)
MESSAGE = "text may not contain the NUL character (U+0000)"
# A surrogate (U+D800..U+DFFF) written out as UTF-8 bytes: never valid UTF-8, which a form
# decoder would quietly replace with U+FFFD; in a URL-encoded form, its percent escapes.
_RAW_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")
_ENCODED_SURROGATE = re.compile(rb"%ed%[ab][0-9a-f]", re.IGNORECASE)
SURROGATE_MESSAGE = "text may not hold a surrogate (U+D800 to U+DFFF): it is not valid Unicode"
# What a page says, in the reader's language (JSON names the field and keeps MESSAGE).
REFUSED_ON_PAGE = {
    "query": register(
        "request.nul_in_query", _l("The address may not contain the NUL character (U+0000).")
    ),
    "body": register(
        "request.nul_in_body", _l("The form may not contain the NUL character (U+0000).")
    ),
}
SURROGATE_ON_PAGE = register(
    "request.surrogate_in_body",
    _l("The form holds text that is not valid Unicode (a surrogate, U+D800 to U+DFFF)."),
)


def has_surrogate(data: bytes, *, multipart: bool) -> bool:
    """A form's text holding a surrogate, raw (multipart) or percent-encoded (URL-encoded)."""
    if multipart:
        return b"\xed" in data and _RAW_SURROGATE.search(data) is not None
    return _ENCODED_SURROGATE.search(data) is not None


def has_nul(data: bytes, *, json: bool = False, multipart: bool = False) -> bool:
    """NUL raw or escaped: JSON's escape in a JSON body, URL encoding in a query or a
    URL-encoded form; a multipart body carries its text as is."""
    if b"\x00" in data:
        return True
    if multipart:
        return False
    if json:  # the substring test first: cheaper than the pattern, which needs one to match
        return (b"\\u0000" in data or b"\\U0000" in data) and bool(_JSON_NUL.search(data))
    return b"%00" in data


class NulRefusedMiddleware:
    """Runs inside the body-size limit, so the body it reads whole is already bounded."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if has_nul(scope.get("query_string", b"")) or b"\x00" in scope["path"].encode():
            await refused(scope, "query")(scope, receive, send)
            return
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"").lower()
        if not content_type.startswith(_CHECKED_BODIES):
            await self.app(scope, receive, send)
            return
        try:
            messages = await whole_body(receive)
        except PayloadTooLarge as error:  # raised by the size limit around this middleware
            await too_large_response(Request(scope), error.said)(scope, receive, send)
            return
        body = b"".join(m.get("body", b"") for m in messages)
        json = content_type.startswith(b"application/json")
        multipart = content_type.startswith(b"multipart/form-data")
        if has_nul(body, json=json, multipart=multipart):
            await refused(scope, "body")(scope, receive, send)
            return
        if not json and has_surrogate(body, multipart=multipart):  # JSON: loads_strict's
            await refused_surrogate(scope)(scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def whole_body(receive: Receive) -> list[Message]:
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body"):
            return messages


def refused(scope: Scope, where: str) -> Response:
    if prefers_json(Request(scope)):
        return JSONResponse({"errors": [{"field": where, "message": MESSAGE}]}, status_code=422)
    return error_page(Request(scope), render(REFUSED_ON_PAGE[where]()), 422)


def refused_surrogate(scope: Scope) -> Response:
    if prefers_json(Request(scope)):
        body = {"errors": [{"field": "body", "message": SURROGATE_MESSAGE}]}
        return JSONResponse(body, status_code=422)
    return error_page(Request(scope), render(SURROGATE_ON_PAGE()), 422)
