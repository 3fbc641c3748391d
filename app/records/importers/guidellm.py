"""GuideLLM's JSON report (``--output-path report.json``): one measurement per benchmark.

Statistics come from the ``successful`` requests: medians of TTFT, ITL and request
latency; decode speed is 1000 / median ITL (GuideLLM's ITL excludes the first token).
"""

from typing import Any

from app.records.importers.base import (
    GUIDELLM_NO_SUCCESS,
    NOT_GUIDELLM,
    ImportedRun,
    ImportFormatError,
    compact,
    number,
    per_second,
    rounded,
)


def looks_like(document: Any) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        return False
    return all(
        isinstance(b, dict) and "time_to_first_token_ms" in b.get("metrics", {})
        for b in document["benchmarks"]
    ) and bool(document["benchmarks"])


def parse(document: Any) -> ImportedRun:
    if not looks_like(document):
        raise ImportFormatError(NOT_GUIDELLM())
    benchmarks = document["benchmarks"]
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    return ImportedRun(
        tool="guidellm",
        format="guidellm",
        measurements=[measurement(b, i) for i, b in enumerate(benchmarks)],
        tool_version=metadata.get("guidellm_version"),
        environment=compact(
            {"platform": metadata.get("platform"), "python": metadata.get("python_version")}
        ),
        summary=compact({"benchmarks": len(benchmarks), "report_version": metadata.get("version")}),
    )


def successful(metrics: dict[str, Any], name: str) -> dict[str, Any]:
    summary = metrics.get(name)
    if not isinstance(summary, dict):
        return {}
    part = summary.get("successful", summary)
    return part if isinstance(part, dict) else {}


def stat(metrics: dict[str, Any], name: str, key: str = "median") -> float | None:
    return number(successful(metrics, name).get(key))


def measurement(benchmark: dict[str, Any], index: int) -> dict[str, Any]:
    metrics = benchmark["metrics"]
    completed = completed_requests(metrics)
    if completed < 1:
        raise ImportFormatError(GUIDELLM_NO_SUCCESS(benchmark=str(index)))
    prompt = stat(metrics, "prompt_token_count")
    itl = stat(metrics, "inter_token_latency_ms")
    latency_s = stat(metrics, "request_latency")
    return compact(
        {
            "context_length": max(1, round(prompt or 1)),
            "concurrency": concurrency(benchmark, metrics),
            "repetitions": completed,
            "ttft_ms": rounded(stat(metrics, "time_to_first_token_ms")),
            "decode_tokens_per_s": per_second(itl),
            "itl_ms": rounded(itl),
            "e2e_latency_ms": rounded(latency_s * 1000) if latency_s is not None else None,
            "throughput_tokens_per_s": rounded(stat(metrics, "output_tokens_per_second", "mean")),
            "token_count_source": "usage",
            "details": compact(
                {
                    "source": "guidellm",
                    "strategy": strategy(benchmark).get("type_"),
                    "ttft_ms": distribution(metrics, "time_to_first_token_ms"),
                    "itl_ms": distribution(metrics, "inter_token_latency_ms"),
                    "request_latency_s": distribution(metrics, "request_latency"),
                    "output_tokens_median": stat(metrics, "output_token_count"),
                }
            ),
        }
    )


def completed_requests(metrics: dict[str, Any]) -> int:
    totals = metrics.get("request_totals")
    if isinstance(totals, dict) and number(totals.get("successful")) is not None:
        return int(number(totals["successful"]) or 0)
    return int(stat(metrics, "request_latency", "count") or 0)


def strategy(benchmark: dict[str, Any]) -> dict[str, Any]:
    for holder in (benchmark.get("config"), benchmark.get("args"), benchmark):
        if isinstance(holder, dict) and isinstance(holder.get("strategy"), dict):
            return holder["strategy"]
    return {}


def concurrency(benchmark: dict[str, Any], metrics: dict[str, Any]) -> int:
    """Streams of a concurrent run, one for synchronous, else the observed mean in flight."""
    plan = strategy(benchmark)
    kind = plan.get("type_")
    if kind == "synchronous":
        return 1
    streams = number(plan.get("streams") or plan.get("max_concurrency"))
    if streams:
        return int(streams)
    observed = stat(metrics, "request_concurrency", "mean")
    return max(1, round(observed)) if observed else 1


def distribution(metrics: dict[str, Any], name: str) -> dict[str, Any]:
    summary = successful(metrics, name)
    keep = ("mean", "median", "std_dev", "min", "max", "count")
    found = {key: summary[key] for key in keep if number(summary.get(key)) is not None}
    if isinstance(summary.get("percentiles"), dict):
        found["percentiles"] = {
            k: v for k, v in summary["percentiles"].items() if number(v) is not None
        }
    return found
