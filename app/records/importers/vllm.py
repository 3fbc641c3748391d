"""`vllm bench serve --save-result` JSON (one object, or JSON lines with --append-result).

Per-request figures are medians (``median_*_ms``); decode speed is 1000 / median TPOT,
which excludes the first token as vLLM defines TPOT.
"""

from typing import Any

from app.records.importers.base import (
    NOT_VLLM,
    VLLM_NOTHING_COMPLETED,
    ImportedRun,
    ImportFormatError,
    compact,
    number,
    per_second,
    rounded,
)

SIGNATURE = ("completed", "total_input_tokens")
LATENCY_KEYS = ("mean_ttft_ms", "median_ttft_ms", "output_throughput")
HEADER_KEYS = (
    "date",
    "backend",
    "endpoint_type",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
)
SAMPLE_ARRAYS = {"ttfts": "ttft_ms", "latencies": "e2e_latency_ms"}


def looks_like(document: Any) -> bool:
    results = document if isinstance(document, list) else [document]
    return bool(results) and all(
        isinstance(r, dict) and all(k in r for k in SIGNATURE) and any(k in r for k in LATENCY_KEYS)
        for r in results
    )


def parse(document: Any) -> ImportedRun:
    results = document if isinstance(document, list) else [document]
    if not looks_like(results):
        raise ImportFormatError(NOT_VLLM())
    measurements = [measurement(result, index) for index, result in enumerate(results)]
    first = results[0]
    return ImportedRun(
        tool="vllm bench serve",
        format="vllm",
        measurements=measurements,
        tool_version=first.get("vllm_version") or first.get("version"),
        runtime_version=first.get("vllm_version"),
        summary=compact(
            {
                "model_id": first.get("model_id"),
                "backend": first.get("backend"),
                "date": first.get("date"),
                "results": len(results),
            }
        ),
    )


def measurement(result: dict[str, Any], index: int) -> dict[str, Any]:
    completed = int(number(result.get("completed")) or 0)
    if completed < 1:
        raise ImportFormatError(VLLM_NOTHING_COMPLETED(result=str(index)))
    return compact(
        {
            "context_length": max(
                1, round((number(result.get("total_input_tokens")) or 0) / completed)
            ),
            "concurrency": concurrency(result),
            "repetitions": completed,
            "ttft_ms": rounded(median(result, "ttft")),
            "decode_tokens_per_s": per_second(median(result, "tpot")),
            "itl_ms": rounded(median(result, "itl")),
            "e2e_latency_ms": rounded(median(result, "e2el")),
            "throughput_tokens_per_s": rounded(number(result.get("output_throughput"))),
            "token_count_source": "usage",
            "samples": samples(result),
            "details": compact(
                {
                    "source": "vllm bench serve",
                    "output_tokens_mean": rounded(
                        (number(result.get("total_output_tokens")) or 0) / completed
                    ),
                    "percentiles": percentiles(result),
                    "run": compact({k: result.get(k) for k in HEADER_KEYS}),
                }
            ),
        }
    )


def median(result: dict[str, Any], metric: str) -> float | None:
    value = number(result.get(f"median_{metric}_ms"))
    return value if value is not None else number(result.get(f"mean_{metric}_ms"))


def concurrency(result: dict[str, Any]) -> int:
    """The client's cap; with none and an unbounded rate every prompt was in flight at once."""
    for key in ("max_concurrency", "max_concurrent_requests"):
        value = number(result.get(key))
        if value is not None and value >= 1:
            return int(value)
    if str(result.get("request_rate")) == "inf":
        return max(1, int(number(result.get("num_prompts")) or 1))
    return 1


def percentiles(result: dict[str, Any]) -> dict[str, float]:
    return {
        key: value
        for key, raw in result.items()
        if key.startswith(("p", "mean_", "median_", "std_"))
        and key.endswith("_ms")
        and (value := number(raw)) is not None
    }


def samples(result: dict[str, Any]) -> dict[str, list[float]]:
    """Per-request values when saved with --save-detailed (vLLM writes seconds)."""
    found: dict[str, list[float]] = {}
    for key, name in SAMPLE_ARRAYS.items():
        values = result.get(key)
        if isinstance(values, list) and values:
            found[name] = [round(v * 1000, 3) for v in values if number(v) is not None]
    return found
