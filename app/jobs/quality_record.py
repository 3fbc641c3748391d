"""The quality checks as a record keeps them: the needle grid and the tool calls, trial by
trial with their seeds, so two records can be compared prompt by prompt."""

from typing import Any

from app.bench.quality.results import NeedleGrid, ToolCallCheck

REASON_CHARS = 120


def grid_details(grid: NeedleGrid) -> dict[str, Any]:
    return {
        "needle_grid": {
            "lengths": grid.lengths,
            "depths": grid.depths,
            "threshold": grid.threshold,
            "safe_context_tokens": grid.safe_context_tokens,
            "confidence": grid.confidence.model_dump() if grid.confidence else None,
            "token_counting": grid.token_counting,
            "failing_reason": grid.failing_reason,
            "cells": [
                {
                    "length": cell.length,
                    "depth": cell.depth,
                    "found": cell.found,
                    "repeats": cell.repeats,
                    # Trial by trial, compact: free-form details have a bounded size.
                    "seeds": [trial.seed for trial in cell.trials],
                    "hits": "".join("1" if trial.found else "0" for trial in cell.trials),
                    "reason": next(
                        (trial.reason[:REASON_CHARS] for trial in cell.trials if trial.reason),
                        None,
                    ),
                }
                for cell in grid.cells
            ],
        }
    }


def tool_call_details(check: ToolCallCheck) -> dict[str, Any]:
    return {
        "tool_calls": {
            "valid": check.valid,
            "total": check.total,
            "valid_rate": check.valid_rate,
            "band": check.band.model_dump() if check.band else None,
            "long_context_tokens": check.long_context_tokens,
            "failing_reason": check.failing_reason,
            "trials": [
                {
                    "schema": trial.schema_name,
                    "context": trial.context,
                    "seed": trial.seed,
                    "valid": trial.valid,
                    "reason": (trial.reason or "")[:REASON_CHARS] or None,
                }
                for trial in check.trials
            ],
        }
    }


def grid_point(grid: NeedleGrid) -> dict[str, Any] | None:
    """The grid as one point: at its safe ceiling (or its first length when it has none),
    with the needle accuracy measured up to there; the whole grid in the details."""
    if not grid.cells:
        return None
    at = grid.safe_context_tokens or grid.lengths[0]
    counted = [cell for cell in grid.cells if cell.length <= at]
    trials = sum(cell.repeats for cell in counted)
    if not trials:
        return None
    return {
        "context_length": at,
        "concurrency": 1,
        "repetitions": trials,
        "needle_accuracy": round(sum(cell.found for cell in counted) / trials, 4),
        "details": grid_details(grid),
    }
