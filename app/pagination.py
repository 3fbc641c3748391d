"""Keyset pagination for every list: newest first by (created_at, id), an opaque cursor.

A page asks the database for the rows strictly older than the last row of the page before,
never for an OFFSET: a row inserted while someone pages goes to the top, so no row is
shown twice or skipped, and the cost of a page does not grow with how far back it is.
The cursor is that last row's (created_at, id): microseconds since the Unix epoch ("u"
when the database keeps the time with its UTC offset, as PostgreSQL does), a dash, the id.
Clients only ever follow a `next` link, but every text of that form is a place in the list
(the rows older than it), so the OpenAPI schema states the form and the list answers any
text of it.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Query, Request
from sqlalchemy import and_, or_
from sqlalchemy.orm import InstrumentedAttribute, Session
from sqlalchemy.sql import Select

from app.errors import ServebookError
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register

DEFAULT_LIMIT = 50
MAX_LIMIT = 200

T = TypeVar("T")

LimitQuery = Annotated[
    int,
    Query(ge=1, le=MAX_LIMIT, description=f"rows per page, at most {MAX_LIMIT}"),
]
# At most 16 digits of microseconds (the year 2286) and 10 of id: every text of this form
# names a place in the list. Checked here, not by validation, so anything else gets the
# list's own 400 that says to start again.
CURSOR_FORM = r"([0-9]{1,16})(u?)-([1-9][0-9]{0,9})"
CursorQuery = Annotated[
    str | None,
    Query(
        max_length=200,
        description="the `next` cursor of the page before; blank: newest",
        json_schema_extra={"pattern": f"^$|^{CURSOR_FORM}$"},  # blank: the newest
    ),
]
EPOCH = datetime(1970, 1, 1)


BAD_CURSOR = register(
    "list.bad_cursor",
    _l(
        "The cursor is not one this list gave out; start again from the first page "
        "(leave the cursor out)."
    ),
)


class BadCursor(ServebookError):
    status_code = 400

    def __init__(self) -> None:
        super().__init__(BAD_CURSOR())


@dataclass(frozen=True)
class Page(Generic[T]):
    items: Sequence[T]
    next_cursor: str | None  # None on the last page


def encode_cursor(created_at: datetime, row_id: int) -> str:
    aware = created_at.tzinfo is not None
    since = created_at.astimezone(UTC).replace(tzinfo=None) - EPOCH if aware else created_at - EPOCH
    micros = since // timedelta(microseconds=1)
    return f"{micros}{'u' if aware else ''}-{row_id}"


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """The (created_at, id) a cursor stands for; BadCursor (400) for anything else."""
    found = re.fullmatch(CURSOR_FORM, cursor)
    if found is None:
        raise BadCursor()
    micros, aware, row_id = found.groups()
    created_at = EPOCH + timedelta(microseconds=int(micros))
    return (created_at.replace(tzinfo=UTC) if aware else created_at), int(row_id)


def keyset_page(
    session: Session,
    statement: Select[Any],
    created: InstrumentedAttribute[datetime],
    ident: InstrumentedAttribute[int],
    cursor: str | None,
    limit: int,
) -> Page[Any]:
    """One page of `statement`'s entities, newest first, after `cursor`."""
    if cursor:
        created_at, row_id = decode_cursor(cursor)
        statement = statement.where(
            or_(created < created_at, and_(created == created_at, ident < row_id))
        )
    statement = statement.order_by(created.desc(), ident.desc()).limit(limit + 1)
    rows = session.scalars(statement).all()
    items = rows[:limit]
    if len(rows) <= limit:
        return Page(items, None)
    last = items[-1]
    return Page(items, encode_cursor(getattr(last, created.key), getattr(last, ident.key)))


def next_url(
    request: Request, route: str, page: Page[Any], where: dict[str, Any], limit: int
) -> str | None:
    """The link to the page after `page`, keeping the list's filters; None on the last."""
    if page.next_cursor is None:
        return None
    params = {**where, "cursor": page.next_cursor}
    if limit != DEFAULT_LIMIT:
        params["limit"] = limit
    return str(request.url_for(route).include_query_params(**params))
