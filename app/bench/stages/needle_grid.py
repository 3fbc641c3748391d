"""The needle at every depth of every grid length, repeated: accuracy per cell and the
safe context ceiling (the longest length that, with every shorter one, reached the
threshold at every depth).

Each trial has its own seed (``trial_seed``): its own filler, needle wording and
passkey, so no two cells share a prefix for a cache to reuse, and a second run with the
same plan seed asks exactly the same prompts, which is what a paired comparison needs.
Prompts are sized with the server's tokenizer when it offers ``/tokenize``, else with the
run's estimate, and the result says which.
"""

from __future__ import annotations

import time

from app.bench.quality.needle_grid import (
    ANSWER_KEPT,
    grid_lengths,
    grid_prompt,
    judge_answer,
    trial_seed,
)
from app.bench.quality.results import CeilingConfidence, GridCell, GridTrial, NeedleGrid
from app.bench.quality.stats import one_sided_lower_bound
from app.bench.stages.context import RunContext
from app.bench.stages.sizing import sized_to

STEP = "needle_grid"


async def run_needle_grid(run: RunContext) -> NeedleGrid | None:
    context = run.grid_context
    if context is None:
        return None
    plan = run.plan
    started = time.perf_counter()
    lengths = [
        length
        for length in grid_lengths(context, plan.grid_first_length)
        if length > plan.max_tokens
    ]
    depths = list(plan.grid_depths)
    cells: list[GridCell] = []
    total = len(lengths) * len(depths) * plan.repeat
    done = 0
    first_error: str | None = None
    for length in lengths:
        for depth in depths:
            trials: list[GridTrial] = []
            for repeat in range(plan.repeat):
                await run.progress(STEP, done, total)
                trial, error = await _one_trial(run, length, depth, repeat)
                trials.append(trial)
                first_error = first_error or error
                done += 1
            found = sum(trial.found for trial in trials)
            cells.append(
                GridCell(
                    length=length,
                    depth=depth,
                    found=found,
                    repeats=len(trials),
                    accuracy=found / len(trials) if trials else None,
                    trials=trials,
                )
            )
    await run.progress(STEP, total, total)
    grid = summarise_grid(cells, lengths, depths, plan.grid_threshold)
    grid.token_counting = "server_tokenizer" if run.tokenizer.available else "estimated"
    if not run.tokenizer.available:
        run.notes.append(
            "needle grid lengths are estimated: the server offers no /tokenize to count them"
        )
    run.record(STEP, started, first_error or grid.failing_reason)
    return grid


async def _one_trial(
    run: RunContext, length: int, depth: float, repeat: int
) -> tuple[GridTrial, str | None]:
    plan = run.plan
    seed = trial_seed(plan.seed, length, depth, repeat)
    prompt, counted = await sized_to(
        run,
        run.prompt_target(length),
        lambda words: grid_prompt(seed, words, depth),
        lambda prompt: prompt.messages,
    )
    sample = await run.ask(prompt.messages, plan.max_tokens)
    reason = None
    if sample.ok:
        found, reason = judge_answer(sample.answer, prompt)
    else:
        found = False
        reason = f"error: {sample.error.message if sample.error else 'no answer'}"
    trial = GridTrial(
        repeat=repeat,
        seed=seed,
        passkey=prompt.passkey,
        found=found,
        prompt_tokens=counted if counted is not None else sample.prompt_tokens,
        reason=reason,
        answer=sample.answer.strip()[:ANSWER_KEPT],
    )
    return trial, sample.error.message if sample.error else None


def summarise_grid(
    cells: list[GridCell], lengths: list[int], depths: list[float], threshold: float
) -> NeedleGrid:
    """The grid with its safe ceiling and the confidence of it, from the cells alone."""
    safe: int | None = None
    for length in lengths:
        row = [cell for cell in cells if cell.length == length]
        if not row or any(cell.accuracy is None or cell.accuracy < threshold for cell in row):
            break
        safe = length
    confidence = None
    if safe is not None:
        counted = [cell for cell in cells if cell.length <= safe]
        found = sum(cell.found for cell in counted)
        trials = sum(cell.repeats for cell in counted)
        confidence = CeilingConfidence(
            accuracy_low=round(one_sided_lower_bound(found, trials), 4), trials=trials
        )
    echoes = [
        (cell, trial)
        for cell in cells
        for trial in cell.trials
        if trial.reason and trial.reason.startswith("echo")
    ]
    failing = None
    # A model may quote a few words now and then; a server that echoes does it throughout.
    if echoes and 2 * len(echoes) >= sum(cell.repeats for cell in cells):
        cell, trial = echoes[0]
        failing = (
            f"the server echoed the needle prompt instead of answering it ({len(echoes)} of "
            f"{sum(c.repeats for c in cells)} trials, first at length {cell.length:,}, "
            f"depth {cell.depth:g})"
        )
    return NeedleGrid(
        lengths=lengths,
        depths=depths,
        cells=cells,
        safe_context_tokens=safe,
        threshold=threshold,
        confidence=confidence,
        failing_reason=failing,
    )
