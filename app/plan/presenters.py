"""The plan's JSON: the one shape `POST /api/plan`, the `/plan` page and `servebook plan`
show, each figure with its basis."""

from typing import Any

from app.asking.load_out import band_out
from app.estimate.speed.load import Band
from app.i18n.sentences import english
from app.plan.options import MEETS_RULE, Plan, PlanOption


def option_out(option: PlanOption) -> dict[str, Any]:
    """One hardware's answer: replicas, profile and applied values, per-request figures at
    that load, the total, whether it meets the load and what limits it, cost, command."""
    recipe, at = option.recipe, option.at
    total = option.throughput
    command = recipe.primary_command
    decode, ttft = at.decode, at.ttft
    return {
        "hardware": option.candidate.label,
        "hardware_name": option.candidate.name,
        "gpus_per_replica": option.gpus_per_replica,
        "replicas": option.replicas,
        "gpus": option.gpus,
        "profile": recipe.profile.slug,
        "verdict": recipe.verdict.value,
        "runtime": recipe.route.runtime.slug if recipe.route and not recipe.unsupported else None,
        "artifact": recipe.route.artifact.slug if recipe.route and not recipe.unsupported else None,
        "applied_values": recipe.applied.as_json() if recipe.applied else None,
        "concurrency_per_replica": at.concurrency,
        "running_per_replica": at.figures.get("running"),
        "decode_tokens_per_s": _band(decode),
        "ttft_ms": _band(ttft),
        "throughput_tokens_per_s": (
            {**band_out(Band(*total)), "basis": (at.throughput or {}).get("basis")}
            if total
            else None
        ),
        "meets": option.meets,
        "experimental": option.experimental,
        "limited_by": option.limited_by,
        "one_replica_limited_by": option.one_replica_limit,
        "price_per_gpu_hour": option.price,
        "cost_per_hour": option.cost_per_hour,
        "cost_per_million_output_tokens": option.cost_per_million_output_tokens,
        "command": command.shell if command else None,
        "verified_pair": bool(recipe.route and recipe.route.verified and not recipe.unsupported),
    }


def _band(figure: dict[str, Any] | None) -> dict[str, Any] | None:
    if figure is None:
        return None
    return {"low": figure["low"], "high": figure["high"], "basis": figure["basis"]}


def plan_out(plan: Plan) -> dict[str, Any]:
    """The options by cost (by GPUs without prices), and which is cheapest and smallest."""
    request = plan.request
    stated = request.model_fields_set
    rule = MEETS_RULE()
    return {
        "load": {
            "users": request.users,
            "min_decode_tokens_per_s": request.min_decode_tokens_per_s,
            "max_ttft_ms": request.max_ttft_ms,
            "prompt_tokens": request.prompt_tokens,
            "output_tokens": request.output_tokens,
        },
        # The request every figure is for; a length the request left blank is the stated
        # default, named here.
        "request_shape": {
            "prompt_tokens": request.prompt_tokens,
            "output_tokens": request.output_tokens,
            "defaulted": sorted({"prompt_tokens", "output_tokens"} - stated),
        },
        "meets_rule": {"code": rule.code, "text": english(rule)},
        "include_experimental": request.include_experimental,
        "listed": "named" if request.hardware else ("all" if plan.listed_all else "fitting"),
        "ordered_by": "cost" if plan.priced else "gpus",
        "options": [option_out(option) for option in plan.options],
        "cheapest": plan.cheapest,
        "smallest": plan.smallest,
        # The least a first-token target can ask: one request on the fastest hardware
        # weighed that holds the model (a target below it is refused, naming max_ttft_ms).
        "least_ttft": _least_ttft(plan),
        # The most a speed target can ask: one request alone on the fastest hardware weighed
        # (a target above it is refused, naming min_decode_tokens_per_s).
        "most_decode": _most_decode(plan),
    }


def _least_ttft(plan: Plan) -> dict[str, Any] | None:
    return _single_bound(plan.least_ttft, "ms", "ttft_ms")


def _most_decode(plan: Plan) -> dict[str, Any] | None:
    return _single_bound(plan.most_decode, "tokens_per_s", "decode_tokens_per_s")


def _single_bound(
    found: tuple[float, PlanOption] | None, name: str, figure: str
) -> dict[str, Any] | None:
    """A bound a target can ask (one request alone on the hardware that sets it), with the
    basis of that request's figure and the hardware."""
    if found is None:
        return None
    value, option = found
    band = option.single.figures[figure]
    return {
        name: value,
        "basis": band["basis"],
        "hardware": option.candidate.label,
        "hardware_name": option.candidate.name,
    }
