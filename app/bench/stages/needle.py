"""Needle: a passkey hidden in filler at each needle length, found or not.

Each repeat hides a fresh passkey, and moves every depth by a fraction of the gap between
the configured depths, so the repeats probe different positions of the same length rather
than asking one question again (which a prefix cache would answer from memory).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.bench.prompts import is_truncated
from app.bench.quality.needle import accuracy, needle_found, needle_prompt
from app.bench.result import LengthResult, NeedleCell, NeedleLength, StepRecord
from app.bench.stages.context import RunContext, truncation_message


def needle_lengths(run: RunContext) -> list[int]:
    """The plan's needle lengths among what this run measures (a length may have been added)."""
    return run.plan.model_copy(update={"lengths": run.lengths}).needle_lengths()


def repeat_depths(depths: Sequence[float], repeat: int) -> list[tuple[int, float]]:
    """(repeat, depth) of every cell: repeat r shifts each depth by r / (repeat x depths),
    wrapping past the end, so the repeats spread evenly over the document."""
    step = 1.0 / (repeat * len(depths))
    cells: list[tuple[int, float]] = []
    for round_ in range(repeat):
        for depth in depths:
            shifted = depth + round_ * step
            cells.append((round_, round(shifted - 1.0 if shifted > 1.0 else shifted, 4)))
    return cells


async def run_needles(run: RunContext, lengths: list[LengthResult]) -> list[NeedleLength]:
    status = {result.length: result for result in lengths}
    results: list[NeedleLength] = []
    for length in needle_lengths(run):
        if status[length].status != "ok":
            results.append(NeedleLength(length=length, accuracy=None))
            run.steps.append(
                StepRecord(name=f"needle:{length}", status="skipped", error=status[length].error)
            )
            continue
        results.append(await _one_needle_length(run, length))
    return results


async def _one_needle_length(run: RunContext, length: int) -> NeedleLength:
    started = time.perf_counter()
    plan = run.plan
    name = f"needle:{length}"
    placements = repeat_depths(plan.needle_depths, plan.repeat)
    cells: list[NeedleCell] = []
    async with run.probe.window() as window:
        for done, (round_, depth) in enumerate(placements):
            await run.progress(name, done, len(placements))
            # The first round keeps the seed of a single-round run; later ones get their own.
            seed = plan.seed if round_ == 0 else plan.seed * 1000 + round_
            prompt = needle_prompt(run.sizer, run.prompt_target(length), depth, seed)
            sample = await run.ask(prompt.messages, plan.max_tokens, prompt)
            truncated = is_truncated(
                sample.prompt_tokens, prompt.expected_tokens, plan.truncation_tolerance
            )
            cells.append(
                NeedleCell(
                    length=length,
                    depth=depth,
                    passkey=prompt.passkey,
                    found=sample.ok and needle_found(sample.answer, prompt.passkey),
                    truncated=truncated,
                    sample=sample,
                )
            )
        await run.progress(name, len(placements), len(placements))
    failed = [cell for cell in cells if not cell.sample.ok or cell.truncated]
    run.record(name, started, needle_error(failed), failed=bool(failed))
    return NeedleLength(
        length=length,
        accuracy=accuracy([cell.found for cell in cells]),
        cells=cells,
        memory=window.reading,
    )


def needle_error(failed: Sequence[NeedleCell]) -> str | None:
    if not failed:
        return None
    cell = failed[0]
    if cell.sample.error is not None:
        return cell.sample.error.message
    return truncation_message(cell.sample.prompt_tokens, cell.sample.prompt_tokens_target or 0)
