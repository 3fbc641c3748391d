"""The event loop every benchmark process runs on: uvloop when installed, else asyncio's.

Its own module so that the procedure and the worker processes of a wide ramp level
(``app.bench.shards``) both read it without importing each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def fastest_event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory when importable, else None (asyncio's default loop)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
