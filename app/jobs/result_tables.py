"""Terminal tables of a benchmark result, as `servebook bench` prints them: each length, the
concurrency ramp, the needle grid, the tool calls and the task."""

from rich.table import Table

from app.bench.quality.results import NeedleGrid, TaskRunResult, ToolCallCheck
from app.bench.result import BenchResult


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


# A decode figure from answers that arrived in bursts (app/bench/stream/arrival.py).
NOT_MEASURABLE = "not measurable"


def fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def summary(result: BenchResult) -> list[Table]:
    """Readable tables: per length, the concurrency ramp, the needle."""
    lengths = Table(title=f"Single request · outcome: {result.outcome}")
    for column in ("context", "TTFT ms", "decode tok/s", "TPOT ms", "peak GB/GPU", "truncated"):
        lengths.add_column(column, justify="right")
    for length in result.lengths:
        peak = (
            length.memory
            and length.memory.gpus
            and max(g.peak_used_bytes for g in length.memory.gpus) / 1e9
        )
        lengths.add_row(
            f"{length.length:,}",
            fmt(length.ttft_ms),
            NOT_MEASURABLE if length.decode_measurable is False else fmt(length.decode_tps),
            NOT_MEASURABLE if length.decode_measurable is False else fmt(length.tpot_ms),
            fmt(peak or None, 2) if peak else "not measured",
            str(length.truncated) if length.truncated is not None else "unknown",
        )
    tables = [lengths]
    if result.concurrency and result.concurrency.levels:
        ramp = Table(title=f"Concurrency ramp at {result.concurrency.length:,} tokens")
        for column in (
            "streams",
            "held (mean/fewest)",
            "output tok/s",
            "TTFT p50",
            "TTFT p90",
            "TPOT p50",
            "TPOT p90",
            "errors",
        ):
            ramp.add_column(column, justify="right")
        for level in result.concurrency.levels:
            held = level.held_concurrency
            unmeasured = level.decode_measurable is False
            ramp.add_row(
                str(level.concurrency),
                (f"{held.mean:.2f}/{held.min}" if held else "—")
                + (" under 90%" if level.held_short else ""),
                fmt(level.output_tps),
                fmt(level.ttft_ms.p50),
                fmt(level.ttft_ms.p90),
                NOT_MEASURABLE if unmeasured else fmt(level.tpot_ms.p50),
                NOT_MEASURABLE if unmeasured else fmt(level.tpot_ms.p90),
                str(level.errors),
            )
        tables.append(ramp)
    if result.needle:
        needle = Table(title="Needle")
        needle.add_column("context", justify="right")
        needle.add_column("accuracy", justify="right")
        for row in result.needle:
            needle.add_row(
                f"{row.length:,}",
                fmt(row.accuracy * 100 if row.accuracy is not None else None, 0) + " %",
            )
        tables.append(needle)
    if result.needle_grid is not None:
        tables.append(grid_table(result.needle_grid))
    if result.tool_calls is not None:
        tables.append(tool_call_table(result.tool_calls))
    if result.task is not None:
        tables.append(task_table(result.task))
    return tables


def task_table(task: TaskRunResult) -> Table:
    """The task's score and the speed measured on its own prompts."""
    rate = fmt(task.pass_rate * 100 if task.pass_rate is not None else None, 0)
    table = Table(title=f"Task {task.name} v{task.version}: {task.passed}/{task.total} ({rate} %)")
    for column in ("prompt", "check", "passed", "prompt tokens", "TTFT ms", "decode tok/s"):
        table.add_column(column, justify="right")
    for prompt in task.prompts:
        table.add_row(
            str(prompt.index),
            prompt.check,
            f"{prompt.passed}/{prompt.total}",
            str(prompt.prompt_tokens) if prompt.prompt_tokens is not None else "—",
            fmt(prompt.ttft_ms),
            fmt(prompt.decode_tps),
        )
    return table
