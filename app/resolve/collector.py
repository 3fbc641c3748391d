"""The cyclic garbage collector paused while a catalog is resolved.

Resolving builds tens of thousands of small objects that all stay alive (the recipes and
the estimator's shared work), so the collector would find nothing to free, yet each full
pass walks every object of the process: a third of a whole-catalog resolution went to it.
Reference counting still frees everything that is not a cycle; the collector runs again
when the last resolution in the process ends.
"""

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0  # resolutions running now, in every thread
_was_enabled = False  # whether the collector ran before the first of them


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause automatic collection for the duration; nested and concurrent uses share one
    pause, and the collector is enabled again only if it was enabled before."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
