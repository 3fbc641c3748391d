"""The fit table for a load: each row's configuration weighed as a plan for that load, so a
row says whether one replica carries it, what stops it if not, and how many replicas would."""

from typing import Any

from app.config import Settings
from app.plan.options import PlanOption
from app.plan.schemas import PlanRequest
from app.plan.service import plan_load
from app.resolve.service import RecipeService


def rows_for_load(
    service: RecipeService,
    settings: Settings,
    model: str,
    hardware: list[str],
    load: tuple[int, float],
) -> dict[str, PlanOption]:
    """Each listed hardware's plan for `users` at `min_decode` tok/s each, by slug."""
    if not hardware:
        return {}
    users, speed = load
    request = PlanRequest(
        model=model, users=users, min_decode_tokens_per_s=speed, hardware=list(hardware)
    )
    plan = plan_load(service, request, settings)
    return {option.candidate.label: option for option in plan.options}


def row_load_out(option: PlanOption) -> dict[str, Any]:
    """One row's answer: whether one replica carries every user, what stops it, and the
    replicas that would (None where no number would), with each request's decode there."""
    decode = option.at.decode
    return {
        "users": option.users,
        "carries": option.one_replica_limit is None,
        "limited_by": option.one_replica_limit,
        "replicas": option.replicas if option.meets else None,
        "limited_at_any_count": option.limited_by,
        "concurrency_per_replica": option.at.concurrency,
        "decode_tokens_per_s": (
            {"low": decode["low"], "high": decode["high"], "basis": decode["basis"]}
            if decode
            else None
        ),
    }
