"""Reads answered on the event loop give way to a SQLite write in progress.

One writer at a time holds a SQLite file's write lock, for about a millisecond of its own
work. Kept pages and static files are answered on the event loop without leaving the
interpreter, and beside sixteen readers of them the writing thread, which gives the
interpreter up at each SQLite call, waited at each for the loop to hand it back: its hold
grew from 1.0 to 8-12 ms (its CPU time from 0.6 to 1.9 ms), every other write queued
behind it, and submissions beside the readers fell to 0.11-0.19x of their rate alone
(tests/perf/bench_mixed_load.py). Sleeping on the loop did not help: with sixteen
connections the loop always had other work.

So while a thread of this process holds the lock, such a read waits for it on the loop
itself, without the interpreter, for at most `GIVE_WAY_S`: the writer runs its statements
untroubled (its hold stays at a millisecond beside readers), and the readers, whose
answers cost a fraction of a millisecond, lose little. A writer still waiting for another
process's lock does not count: nothing here would hurry it.
"""

import threading

from starlette.types import Scope

# About one uncontended hold: a read waits at most this long, and never for a queue of them.
GIVE_WAY_S = 0.001


def give_way_to_a_write(scope: Scope) -> None:
    free: threading.Event | None = scope.get("state", {}).get("sqlite_write_lock_free")
    if free is not None and not free.is_set():
        free.wait(GIVE_WAY_S)
