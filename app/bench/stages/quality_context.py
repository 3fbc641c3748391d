"""Which context the quality checks fill, and whether the needle grid runs.

The grid runs up to the configuration's context when asked for (``needle_grid`` true). As
part of the default plan (``"auto"``) it runs only when the context is known and past the
needle threshold, and stops at ``AUTO_GRID_MAX`` tokens so a default run stays short; the
run's notes say what was decided and why.
"""

from __future__ import annotations

from app.bench.stages.context import RunContext
from app.bench.stages.long_length import known_context

AUTO_GRID_MAX = 64 * 1024


async def decide_quality_context(run: RunContext) -> None:
    plan = run.plan
    if plan.needle_grid is False and not plan.tool_calls:
        return
    context = await known_context(run)
    run.quality_context = context
    if plan.needle_grid is False:
        return
    if context is None:
        if plan.needle_grid == "auto":
            return  # the default plan: the long length's note already says the context is unknown
        run.notes.append(
            "no needle grid ran: the context length is unknown (the server reported no "
            "max_model_len); give it to run one"
        )
        return
    if plan.needle_grid is True:
        run.grid_context = context
        return
    if context <= plan.needle_min_length:
        return
    run.grid_context = min(context, AUTO_GRID_MAX)
    if context > AUTO_GRID_MAX:
        run.notes.append(
            f"the needle grid stopped at {AUTO_GRID_MAX:,} tokens of the {context:,} the "
            "context allows; ask for the grid to run it to the end"
        )
