"""A small, bounded, thread-safe store of values kept per revision.

A detail page reads some figures (counts, medians, which record is known-good) that only a
record or a review changes, and both move a revision (the records revision, and the catalog
revision when accepted evidence changes): a value found at one revision holds until it
moves. Keys name the database too, so one process serving two
databases (tests do) never takes one's figures for the other's.
"""

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from sqlalchemy.orm import Session

Value = TypeVar("Value")


def database_of(session: Session) -> str:
    """Which database a session reads (password hidden)."""
    return session.get_bind().url.render_as_string(hide_password=True)


class KeptPerRevision(Generic[Value]):
    """The most recently used `size` entries, each with the revision it was found at."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple, tuple[Hashable, Value]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple[Hashable, Value] | None:
        """The kept (revision, value), whatever its revision: a caller may reuse part of an
        older one (the medians when the accepted records did not change)."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: tuple, revision: Hashable, value: Value) -> None:
        with self._lock:
            self._entries[key] = (revision, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
