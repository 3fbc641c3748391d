"""`servebook estimate`'s text: the estimate JSON's figures, one line each, in English."""

from typing import Any

from app.estimate.messages import message
from app.estimate.speed.model import TERM_CODES
from app.i18n.durations import duration_band
from app.i18n.messages import english


def format_estimate(result: dict) -> str:
    speed = result["token_generation"]
    lines = [
        f"{result['model']} on {result['hardware_name']} ({result['profile']}): "
        f"{result['verdict_label']} — {result['reason']}",
    ]
    exceeds = result["verdict"] == "exceeds_memory"
    unestimated = result["verdict"] == "cannot_estimate"
    if result["artifact"]:
        pair = "verified" if result["verified_pair"] else "unverified"
        label = "closest route   " if exceeds else "route           "
        lines.append(f"  {label} {result['artifact']} with {result['runtime']} ({pair} pair)")
    if result["required_gb_per_gpu"] is not None:
        headroom = result["headroom_gb_per_gpu"]
        spare = f"{headroom:.1f} GB to spare" if headroom >= 0 else f"{-headroom:.1f} GB short"
        lines.append(
            f"  memory per GPU   {result['required_gb_per_gpu']:.1f} of "
            f"{result['usable_gb_per_gpu']:.1f} GB ({result['memory']['basis']}), {spare}"
        )
    lines.append(f"  start context    {result['context']:,} tokens")
    largest = result["max_context"]
    if unestimated:
        lines.append("  max context      not estimated")
    elif result.get("kv_cache") == "unknown":
        lines.append("  max context      unknown (the KV cache cannot be sized)")
    elif result["verdict"] == "fits_with_offload":
        lines.append(
            f"  max context      none with every weight on the GPU; runs offloaded at "
            f"{result['context']:,} tokens"
        )
    else:
        lines.append(
            f"  max context      {largest:,} tokens (one request)"
            if largest
            else "  max context      does not fit"
        )
    if speed:
        value = (
            f"{speed['low']:.1f}"
            if speed["low"] == speed["high"]
            else f"{speed['low']:.1f} ~ {speed['high']:.1f}"
        )
        lines.append(f"  token generation {value} tok/s ({speed['basis']}: {speed['note']})")
        if speed.get("contradicted"):
            lines.append(f"                   {speed['contradicted']['text']}")
        lines += load_lines(result)
    elif unestimated:
        lines.append("  token generation not estimated")
    elif not exceeds:
        lines.append("  token generation unknown (no bandwidth figure)")
    if result.get("kv_cache") == "unknown":
        lines.append("  KV cache         unknown (weights only: no architecture given)")
    lines.append(f"  status           {result['status'].replace('_', ' ')}")
    for launch in result["commands"]:
        lines.append(f"  command          {launch['shell']}")
    lines += [f"  warning          {w}" for w in result["warnings"]]
    lines += [f"  assumed          {a}" for a in result.get("assumed", [])]
    return "\n".join(lines)


def load_lines(result: dict[str, Any]) -> list[str]:
    """The figures at the concurrency asked: each request's decode, the total and the first
    token, where a step's time goes, what the range held and speculative decoding's part."""
    ttft = result.get("ttft_ms")
    if not ttft:
        return []
    lines = []
    concurrency = result["concurrency"]
    first = f"first token {duration_band(ttft)}"
    if concurrency > 1:
        each, total = result["decode_tokens_per_s"], result["throughput_tokens_per_s"]
        label = f"at {concurrency} at once"
        lines.append(
            f"  {label:<16} {band(each, 1)} tok/s each, {band(total, 1)} tok/s total, {first} "
            f"({each['basis']})"
        )
    else:
        lines.append(f"  one request      {first} (estimated)")
    shape = result.get("request_shape") or {}
    if shape:  # every answer that runs is for a request shape, asked or the default
        output = shape.get("output_tokens")
        lines.append(
            f"  requests         {shape['prompt_tokens']:,} tokens of prompt"
            + (f", {output:,} of output" if output else "")
        )
    shares = ", ".join(
        f"{english(message(TERM_CODES[term]))} {round(100 * share)}%"
        for term, share in result["breakdown"].items()
        if share > 0
    )
    lines.append(f"  time per step    {shares}")
    coverage = result.get("coverage") or {}
    if coverage.get("note"):
        lines.append(f"  range            {coverage['note']}")
    speculative = result.get("speculative")
    if speculative:
        speedup = speculative["speedup"]
        lines.append(
            f"  speculative      {speculative['method']} x{speedup['low']}-{speedup['high']}"
        )
    return lines


def band(figure: dict[str, Any], digits: int) -> str:
    low, high = figure["low"], figure["high"]
    return f"{low:,.{digits}f}" if low == high else f"{low:,.{digits}f} ~ {high:,.{digits}f}"
