"""Turn a benchmark result into a reproduction record (one path for CLI and worker)."""

from typing import Any

from app.bench.memory_reading import MemoryReading
from app.bench.metrics import median
from app.bench.quality.results import TaskRunResult
from app.bench.result import BenchResult, ConcurrencyLevel, LengthResult, NeedleLength
from app.jobs.quality_record import grid_point, tool_call_details

# Failures kept on the record (the full list stays with the job's result), and their size.
RECORD_TASK_FAILURES = 10
RECORD_ANSWER_CHARS = 200


def peak_gb(memory: MemoryReading | None) -> tuple[float | None, str | None]:
    """Highest per-GPU peak in GB, and where it came from; never a made-up number."""
    if memory is None or not memory.measured or not memory.gpus:
        return None, "not measured"
    peak = max(gpu.peak_used_bytes for gpu in memory.gpus) / 1e9
    return round(peak, 3), ",".join(memory.sources) or "probe"


def memory_details(memory: MemoryReading | None) -> dict[str, Any]:
    if memory is None:
        return {}
    return {"memory": memory.model_dump(mode="json", exclude={"metric_names_seen"})}


def length_point(length: LengthResult) -> dict[str, Any] | None:
    ok = [s for s in length.samples if s.ok]
    if not ok or length.ttft_ms is None:
        return None
    peak, source = peak_gb(length.memory)
    return {
        "context_length": length.length,
        "concurrency": 1,
        "repetitions": len(ok),
        "ttft_ms": length.ttft_ms,
        "decode_tokens_per_s": length.decode_tps,
        # Per token, not per chunk: a chunk may carry several tokens.
        "itl_ms": length.tpot_ms,
        "e2e_latency_ms": length.e2e_ms,
        "peak_memory_gb_per_gpu": peak,
        "kv_cache_usage_peak": length.memory.kv_cache_usage_peak if length.memory else None,
        "token_count_source": ok[0].token_count_source,
        "memory_source": source,
        "samples": {
            "ttft_ms": [s.ttft_ms for s in ok if s.ttft_ms is not None],
            "decode_tokens_per_s": [s.decode_tps for s in ok if s.decode_tps is not None],
            "e2e_latency_ms": [s.e2e_ms for s in ok if s.e2e_ms is not None],
        },
        "details": {
            "prompt_tokens_reported": length.prompt_tokens_reported,
            "chunk_gap_ms_median": median([g for s in ok for g in s.itl_ms]),
            "truncated": length.truncated,
            "decode_measurable": length.decode_measurable,
            **memory_details(length.memory),
        },
    }


def level_point(length: int, level: ConcurrencyLevel) -> dict[str, Any] | None:
    if level.ttft_ms.p50 is None:
        return None
    peak, source = peak_gb(level.memory)
    return {
        "context_length": length,
        "concurrency": level.concurrency,
        "repetitions": level.requests - level.errors,
        "ttft_ms": level.ttft_ms.p50,
        "decode_tokens_per_s": level.decode_tps.p50,
        "itl_ms": level.tpot_ms.p50,
        "e2e_latency_ms": level.e2e_ms.p50,
        "throughput_tokens_per_s": level.output_tps,
        "peak_memory_gb_per_gpu": peak,
        "memory_source": source,
        # Each stream's view of the level's throughput: its band (app/sentinel/compare.py).
        "samples": {"throughput_tokens_per_s": level.stream_output_tps},
        "details": {
            "ramp": True,  # a ramp level, not a single-request point at this length
            "errors": level.errors,
            "ttft_ms": level.ttft_ms.model_dump(),
            "tpot_ms": level.tpot_ms.model_dump(),
            "e2e_ms": level.e2e_ms.model_dump(),
            "over_ttft_limit": level.over_ttft_limit,
            "decode_measurable": level.decode_measurable,
            "held_concurrency": (
                level.held_concurrency.model_dump() if level.held_concurrency else None
            ),
            "held_short": level.held_short,
        },
    }


def needle_point(needle: NeedleLength) -> dict[str, Any] | None:
    if needle.accuracy is None:
        return None
    peak, source = peak_gb(needle.memory)
    return {
        "context_length": needle.length,
        "concurrency": 1,
        "repetitions": len(needle.cells),
        "needle_accuracy": needle.accuracy,
        "peak_memory_gb_per_gpu": peak,
        "memory_source": source,
        "details": {
            "needle": [
                {"depth": cell.depth, "found": cell.found, "truncated": cell.truncated}
                for cell in needle.cells
            ]
        },
    }


def task_details(task: TaskRunResult) -> dict[str, Any]:
    """The task's score as the record keeps it: pass rate, counts, the first failures."""
    return {
        "task": {
            "id": task.id,
            "name": task.name,
            "version": task.version,
            "pass_rate": task.pass_rate,
            "passed": task.passed,
            "total": task.total,
            "errors": task.errors,
            "duration_s": task.duration_s,
            # Prompt by prompt, so two records of the same task can be compared in pairs.
            "prompts": [
                {"index": prompt.index, "passed": prompt.passed, "total": prompt.total}
                for prompt in task.prompts
            ],
            "failures": [
                {
                    "prompt_index": failure.prompt_index,
                    "reason": failure.reason,
                    "answer": failure.answer[:RECORD_ANSWER_CHARS],
                }
                for failure in task.failures[:RECORD_TASK_FAILURES]
            ],
        }
    }


def task_point(task: TaskRunResult) -> dict[str, Any] | None:
    """The speed measured on the task's own prompts, with its score in the details; the
    context length is the longest prompt the server counted."""
    tokens = [prompt.prompt_tokens for prompt in task.prompts if prompt.prompt_tokens]
    if task.ttft_ms is None or not tokens:
        return None
    return {
        "context_length": max(tokens),
        "concurrency": 1,
        "repetitions": task.total - task.errors,
        "ttft_ms": task.ttft_ms,
        "decode_tokens_per_s": task.decode_tps,
        "e2e_latency_ms": task.e2e_ms,
        "details": task_details(task),
    }


def measurements(result: BenchResult) -> list[dict[str, Any]]:
    points = [length_point(length) for length in result.lengths]
    if result.concurrency:
        points += [
            level_point(result.concurrency.length, level) for level in result.concurrency.levels
        ]
    points += [needle_point(needle) for needle in result.needle]
    kept = [point for point in points if point is not None]
    if result.outcome == "inconclusive":
        # Most answers arrived in bursts: the few timed ones do not make a decode figure.
        for point in kept:
            point["decode_tokens_per_s"] = None
            point["itl_ms"] = None
            point.get("samples", {}).pop("decode_tokens_per_s", None)
            point["details"]["decode_measurable"] = False
    if result.task is not None:
        point = task_point(result.task)
        if point is not None:
            kept.append(point)
        elif kept:  # nothing answered to time: the score still goes on the record
            kept[0]["details"].update(task_details(result.task))
    if result.needle_grid is not None:
        point = grid_point(result.needle_grid)
        if point is not None:
            kept.append(point)
    if result.tool_calls is not None and kept:
        quality = next((p for p in kept if "needle_grid" in p["details"]), kept[0])
        quality["details"].update(tool_call_details(result.tool_calls))
    return kept


def record_from_result(result: BenchResult, target: dict[str, Any]) -> dict[str, Any]:
    """A RecordIn-shaped dict: what was run (target) plus what was measured (result)."""
    notes = [f"Measured by the servebook benchmark client against {result.plan.base_url}."]
    if result.outcome == "inconclusive":
        # A record's outcome says whether the server loaded and answered, which it did;
        # what could not be measured is said here, and its figures are left out.
        notes.append(f"Inconclusive: {result.outcome_error}")
    elif result.outcome_error:
        notes.append(f"Server error: {result.outcome_error}")
    notes += result.notes
    return {
        "model": target["model"],
        "artifact": target["artifact"],
        "runtime": target["runtime"],
        "runtime_version": target["runtime_version"],
        "hardware": target["hardware"],
        "gpu_count": target.get("gpu_count"),
        "profile": target.get("profile") or None,
        "command": target.get("command", ""),
        "applied_values": target.get("applied_values", {}),
        "environment": target.get("environment", {}),
        "outcome": "ok" if result.outcome == "inconclusive" else result.outcome,
        "notes": "\n".join(notes)[:20_000],
        "measurements": measurements(result),
        "pinned": pinned(result, target.get("pinned") or {}),
    }


def pinned(result: BenchResult, declared: dict[str, Any]) -> dict[str, Any]:
    """What the submitter declared (image digest, model revision...) and what the server
    itself reported to the client, which no declaration overrides."""
    kept = {key: value for key, value in declared.items() if key != "server_reported"}
    if result.server_version is not None:
        kept["server_reported"] = result.server_version.model_dump()
    return kept


# The plan fields a re-run repeats (app/sentinel): never the address, key or allow-list.
KEPT_PLAN_EXCLUDES = {"base_url", "api_key", "allowed_hosts", "metrics_url", "task"}


def kept_plan(result: BenchResult) -> dict[str, Any]:
    """The plan as the record keeps it, to run it again with the same lengths, seeds,
    concurrency, needle and task (the task by id, name and version)."""
    plan = result.plan.model_dump(mode="json", exclude=KEPT_PLAN_EXCLUDES)
    # The lengths as run, a long one the run added included: a re-run repeats them exactly.
    plan["lengths"] = sorted({*result.plan.lengths, *(length.length for length in result.lengths)})
    plan["add_long_length"] = False
    task = result.plan.task
    if task is not None:
        plan["task"] = {"id": task.id, "name": task.name, "version": task.version}
    return plan
