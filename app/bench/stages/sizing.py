"""Sizing a quality-check prompt to a token target: with the server's own count when it
offers ``/tokenize`` (resized until it lands within the margin), else with the run's
estimate (``PromptSizer``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from app.bench.prompts import SIZING_MARGIN
from app.bench.stages.context import RunContext

Built = TypeVar("Built")
# At most this many re-sizings of one prompt against the server's count.
SIZING_ROUNDS = 3


async def sized_to(
    run: RunContext,
    target: int,
    build: Callable[[int], Built],
    messages_of: Callable[[Built], list[dict[str, str]]],
) -> tuple[Built, int | None]:
    """``build(words)`` for about ``target`` tokens, and the server's count of it (or None)."""
    words = run.sizer.words_for(target)
    built = build(words)
    aim = target * (1.0 - SIZING_MARGIN)
    counted = None
    for round_ in range(SIZING_ROUNDS):
        counted = await run.tokenizer.count(messages_of(built))
        fits = counted is not None and aim * 0.99 <= counted <= target
        if counted is None or fits or round_ == SIZING_ROUNDS - 1:
            break
        words = max(int(words * aim / counted), 1)
        built = build(words)
    return built, counted
