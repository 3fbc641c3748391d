"""The cyclic garbage collector paused while a catalog is resolved.

Resolving builds tens of thousands of small objects that all stay alive (the recipes and
the estimator's shared work), so the collector would find nothing to free, yet each full
pass walks every object of the process: a third of a whole-catalog resolution went to it.
Reference counting still frees everything that is not a cycle; the collector runs again
when the last resolution in the process ends, and what the resolutions built is taken out
of its young generations rather than walked again there (`_promote_survivors`).
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
    """Take what a resolution built out of the young generations without walking it: the
    cache holds it, and walking it there, as the collector would next, costs a tenth of
    the resolution again.

    Before start-up settles (nothing frozen yet): every tracked object goes to the oldest
    generation (`unfreeze` puts frozen objects there); cycles among them are still freed
    by the next full collection. Once the process has frozen its long-lived objects
    (app.observability.runtime), unfreezing would hand all of those back to the collector:
    instead what the resolution built is frozen too. Under load a model resolved again
    after a review otherwise went through a young collection and then a middle one, each
    walking its tens of thousands of objects while every request waited (up to 65 ms of
    CPU, measured with tests/perf/bench_mixed_load.py). Resolved recipes hold no reference
    cycles (tests/recipes/test_gc_paused.py), so reference counting frees them when the
    cache lets them go; only a cycle among objects of requests in flight at that moment
    stays, frozen, a few kilobytes at most per resolution."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
    else:
        gc.freeze()
