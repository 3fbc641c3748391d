"""`servebook plan`'s text: the plan JSON's options, one line each, in English."""

from typing import Any

from app.i18n.durations import duration_band

LIMITS = {"memory": "memory", "decode": "decode speed", "ttft": "first token"}


def _band(figure: dict[str, Any] | None, digits: int) -> str:
    if not figure:
        return "—"
    low, high = figure["low"], figure["high"]
    shown = f"{low:,.{digits}f}" if low == high else f"{low:,.{digits}f} ~ {high:,.{digits}f}"
    basis = figure.get("basis")
    return f"{shown} ({basis})" if basis else shown


def _first_token(figure: dict[str, Any] | None) -> str:
    """The first-token band in the unit its high end takes ("over 10 min" past that)."""
    if not figure:
        return "—"
    basis = figure.get("basis")
    return f"{duration_band(figure)} ({basis})" if basis else duration_band(figure)


def option_lines(index: int, option: dict[str, Any]) -> list[str]:
    if option["meets"]:
        verdict = "meets"
        if option["one_replica_limited_by"]:
            verdict += f" (one replica: {LIMITS[option['one_replica_limited_by']]})"
    else:
        verdict = f"limited by {LIMITS[option['limited_by']]}"
    if option["experimental"]:
        verdict += ", experimental route"
    lines = [
        f"[{index}] {option['hardware_name']}: {option['replicas']} x "
        f"{option['gpus_per_replica']} GPUs ({option['gpus']} in all), "
        f"{option['concurrency_per_replica']} users per replica, "
        f"{option['profile']} profile — {verdict}",
        f"    each request     {_band(option['decode_tokens_per_s'], 1)} tok/s",
        f"    first token      {_first_token(option['ttft_ms'])}",
        f"    total            {_band(option['throughput_tokens_per_s'], 1)} tok/s",
    ]
    if option["cost_per_hour"] is not None:
        million = option["cost_per_million_output_tokens"]
        per_million = f", {million:,.3f} per million output tokens" if million is not None else ""
        lines.append(f"    cost             {option['cost_per_hour']:,.2f} per hour{per_million}")
    if option["command"]:
        lines.append(f"    command          {option['command']}")
    return lines


def format_plan(plan: dict[str, Any]) -> str:
    load = plan["load"]
    ttft = f", first token within {load['max_ttft_ms']:,.0f} ms" if load["max_ttft_ms"] else ""
    shape = plan["request_shape"]
    defaulted = " (stated default)" if shape["defaulted"] else ""
    lines = [
        f"{load['users']:,} users at {load['min_decode_tokens_per_s']:,.1f} tok/s each{ttft}, "
        f"{shape['prompt_tokens']:,} prompt + {shape['output_tokens']:,} output tokens"
        f"{defaulted}"
    ]
    if plan["listed"] == "all":
        lines.append("the model fits none of the hardware weighed: every one is listed")
    for index, option in enumerate(plan["options"]):
        lines += option_lines(index, option)
    least = plan.get("least_ttft")
    if least:
        lines.append(
            f"least first token {least['ms']:,.0f} ms ({least['basis']}, on "
            f"{least['hardware_name']}): a first-token target can ask no less"
        )
    for key in ("cheapest", "smallest"):
        found = plan[key]
        named = plan["options"][found]["hardware_name"] if found is not None else "none"
        lines.append(f"{key:<9} {named}" + (f" [{found}]" if found is not None else ""))
    lines.append(f"meets     {plan['meets_rule']['text']}")
    return "\n".join(lines)
