"""Reads answered on the event loop give way to a SQLite write in progress.

One writer at a time holds a SQLite file's write lock, for about a millisecond of its own
work. Kept pages and static files are answered on the event loop without leaving the
interpreter, and beside sixteen readers of them the writing thread, which gives the
interpreter up at each SQLite call, waited at each for the loop to hand it back: its hold
grew from 1.0 to 12.5 ms (its CPU time from 0.6 to 1.8 ms), every other write queued behind
it, and submissions beside the readers fell to 0.11x of their rate alone
(tests/perf/bench_mixed_load.py). While this process holds the lock, such a read first
sleeps a moment: once every reader sleeps, the loop waits for the network without the
interpreter, and the writer finishes. A read waits at most `GIVE_WAY_S` for it, never for
the write itself.
"""

from collections.abc import Callable

import anyio
from starlette.types import Scope

# Long enough for a writer to run its next statements, short beside a page's round trip.
GIVE_WAY_S = 0.0005


async def give_way_to_a_write(scope: Scope) -> None:
    writing: Callable[[], bool] | None = scope.get("state", {}).get("sqlite_writing")
    if writing is not None and writing():
        await anyio.sleep(GIVE_WAY_S)
