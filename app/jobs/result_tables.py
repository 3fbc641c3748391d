"""Terminal tables of the quality checks: the needle grid and the tool calls."""

from rich.table import Table

from app.bench.quality.results import NeedleGrid, ToolCallCheck


def grid_table(grid: NeedleGrid) -> Table:
    safe = grid.safe_context_tokens
    ceiling = f"{safe:,} tokens" if safe is not None else "none"
    if safe is not None and grid.confidence is not None:
        ceiling += (
            f" (accuracy at least {grid.confidence.accuracy_low:.0%} up to it, "
            f"{grid.confidence.level:.0%} confidence, {grid.confidence.trials} trials)"
        )
    counting = "server tokenizer" if grid.token_counting == "server_tokenizer" else "estimated"
    table = Table(
        title=f"Needle grid, found/asked · safe ceiling at {grid.threshold:.0%}: {ceiling} · "
        f"lengths {counting}"
    )
    table.add_column("context", justify="right")
    for depth in grid.depths:
        table.add_column(f"depth {depth:g}", justify="right")
    for length in grid.lengths:
        row = {cell.depth: cell for cell in grid.cells if cell.length == length}
        table.add_row(
            f"{length:,}",
            *(f"{row[d].found}/{row[d].repeats}" if d in row else "—" for d in grid.depths),
        )
    return table


def tool_call_table(check: ToolCallCheck) -> Table:
    rate = "—" if check.valid_rate is None else f"{check.valid_rate:.0%}"
    band = f" (95% band {check.band.low:.0%}-{check.band.high:.0%})" if check.band else ""
    table = Table(title=f"Tool calls: {check.valid}/{check.total} valid, {rate}{band}")
    for column in ("schema", "context", "valid", "first reason"):
        table.add_column(column)
    groups: dict[tuple[str, str], list] = {}
    for trial in check.trials:
        groups.setdefault((trial.schema_name, trial.context), []).append(trial)
    for (schema, context), trials in groups.items():
        reason = next((trial.reason for trial in trials if trial.reason), "")
        table.add_row(
            schema, context, f"{sum(t.valid for t in trials)}/{len(trials)}", reason or ""
        )
    return table
