"""llama.cpp ``llama-bench -o json``: a list of test rows (pp, tg, or pp+tg) with samples.

Context length is the KV length a test ends at: depth + prompt + generated tokens.
A pp row gives the prompt time (n_prompt / avg_ts) as TTFT; a tg row gives the decode
speed; a combined row only gives total tokens/s, which llama-bench itself averages over
prompt and generation.
"""

from typing import Any

from app.records.importers.base import (
    LLAMA_BENCH_ROW,
    NOT_LLAMA_BENCH,
    ImportedRun,
    ImportFormatError,
    compact,
    number,
    rounded,
)

SIGNATURE = ("n_prompt", "n_gen", "avg_ts")
SETTINGS = (
    "model_filename",
    "model_type",
    "model_size",
    "model_n_params",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "type_k",
    "type_v",
    "n_gpu_layers",
    "split_mode",
    "flash_attn",
    "tensor_split",
    "use_mmap",
    "backends",
)


def looks_like(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(row, dict) and all(k in row for k in SIGNATURE) for row in document)
    )


def parse(document: Any) -> ImportedRun:
    if not looks_like(document):
        raise ImportFormatError(NOT_LLAMA_BENCH())
    first = document[0]
    build = first.get("build_number")
    return ImportedRun(
        tool="llama-bench",
        format="llama-bench",
        measurements=[measurement(row, i) for i, row in enumerate(document)],
        tool_version=f"b{build}" if build else first.get("build_commit"),
        runtime_version=f"b{build}" if build else None,
        environment=compact(
            {
                "runtime_build": first.get("build_commit"),
                "gpu": first.get("gpu_info"),
                "cpu": first.get("cpu_info"),
                "backends": first.get("backends"),
            }
        ),
        summary=compact({"model_type": first.get("model_type"), "tests": len(document)}),
    )


def measurement(row: dict[str, Any], index: int) -> dict[str, Any]:
    prompt = int(number(row.get("n_prompt")) or 0)
    generated = int(number(row.get("n_gen")) or 0)
    depth = int(number(row.get("n_depth")) or 0)
    speed = number(row.get("avg_ts"))
    if speed is None or speed <= 0 or prompt + generated < 1:
        raise ImportFormatError(LLAMA_BENCH_ROW(row=str(index)))
    samples = [v for v in row.get("samples_ts") or [] if number(v) is not None]
    values: dict[str, Any] = {
        "context_length": depth + prompt + generated,
        "concurrency": 1,
        "repetitions": len(samples) or 1,
        "token_count_source": "exact",
        "samples": {"tokens_per_s": samples} if samples else {},
        "details": compact(
            {
                "source": "llama-bench",
                "test": test_name(prompt, generated, depth),
                "tokens_per_s": speed,
                "stddev_tokens_per_s": number(row.get("stddev_ts")),
                **{key: row.get(key) for key in SETTINGS},
            }
        ),
    }
    if prompt and not generated:
        values["ttft_ms"] = rounded(prompt / speed * 1000)
        values["details"]["prefill_tokens_per_s"] = speed
    elif generated and not prompt:
        values["decode_tokens_per_s"] = rounded(speed)
    else:
        values["throughput_tokens_per_s"] = rounded(speed)
    return compact(values)


def test_name(prompt: int, generated: int, depth: int) -> str:
    parts = [f"pp{prompt}" if prompt else "", f"tg{generated}" if generated else ""]
    name = "+".join(part for part in parts if part)
    return f"{name} @ d{depth}" if depth else name
