"""The cyclic garbage collector paused while a catalog is resolved.

Resolving builds tens of thousands of small objects that all stay alive (the recipes and
the estimator's shared work), so the collector would find nothing to free, yet each full
pass walks every object of the process: a third of a whole-catalog resolution went to it.
Reference counting still frees everything that is not a cycle; the collector runs again
when the last resolution in the process ends, and what the resolutions built is handed to
its oldest generation rather than walked again as young objects.
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
                _promote_survivors()
                gc.enable()


def _promote_survivors() -> None:
    """Move every tracked object to the oldest generation without walking it: what a
    resolution built is kept (the cache holds it), and walking it in the young generations,
    as the collector would next, costs a tenth of the resolution again. Cycles among them
    are still freed by the next full collection. (`unfreeze` puts frozen objects in the
    oldest generation; left alone when something else in the process froze objects.)"""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
