"""The plan for a load over a real seeded catalog: the fewest replicas of each hardware,
what limits the rest, the order by cost or GPUs, and the cheapest and smallest options."""

from math import ceil

import pytest
from sqlalchemy.orm import Session

from app.config import Settings
from app.plan.options import Plan
from app.plan.schemas import PlanRequest
from app.plan.service import PlanRefused, plan_load
from app.resolve import RecipeService

GLM = "glm-5.3-flash"
REFERENCE = {
    "model": GLM,
    "users": 32,
    "min_decode_tokens_per_s": 20,
    "max_ttft_ms": 3000,
    "prompt_tokens": 2048,
    "output_tokens": 512,
}


def plan(session: Session, settings: Settings, **asked: object) -> Plan:
    request = PlanRequest.model_validate({**REFERENCE, **asked})
    return plan_load(RecipeService(session), request, settings)


def test_each_meeting_option_takes_the_fewest_replicas(
    session: Session, settings: Settings
) -> None:
    found = plan(session, settings)
    meeting = [option for option in found.options if option.meets]
    assert meeting, "the reference load is served somewhere"
    several = [option for option in meeting if option.replicas > 1]
    assert several, "some hardware needs more than one replica at 32 users"
    request = found.request
    for option in meeting:
        assert option.at.concurrency == ceil(32 / option.replicas)
        decode, ttft = option.at.decode, option.at.ttft
        assert (decode["low"] + decode["high"]) / 2 >= 20
        assert (ttft["low"] + ttft["high"]) / 2 <= 3000
        assert option.at.figures["running"] == option.at.concurrency
        applied = option.recipe.applied
        assert applied is not None and applied.max_concurrency == option.at.concurrency
        if option.replicas > 1:  # one replica fewer would put more on each, and fail
            fewer = ceil(32 / (option.replicas - 1))
            alone = plan(session, settings, users=fewer, hardware=[option.candidate.label])
            assert alone.options[0].one_replica_limit is not None
            assert option.one_replica_limit is not None
        else:
            assert option.one_replica_limit is None
        assert option.limited_by is None and option.at.limit(request) is None


def test_by_default_only_the_configurations_that_fit_are_weighed(
    session: Session, settings: Settings
) -> None:
    found = plan(session, settings)
    slugs = {option.candidate.label for option in found.options}
    assert "8x-h200-141gb" in slugs and "rtx-4090-24gb" not in slugs
    assert not found.listed_all


def test_a_speed_no_single_request_reaches_is_refused_with_the_most_it_can(
    session: Session, settings: Settings
) -> None:
    with pytest.raises(PlanRefused) as refused:
        plan(session, settings, min_decode_tokens_per_s=5000)
    assert set(refused.value.errors) == {"min_decode_tokens_per_s"}
    assert "at most" in refused.value.errors["min_decode_tokens_per_s"]


def test_a_model_that_fits_nowhere_lists_every_configuration(
    session: Session, settings: Settings
) -> None:
    found = plan(session, settings, model={"params_b": 20000, "quant": "BF16"})
    assert found.listed_all
    assert len(found.options) == len(RecipeService(session).list_hardware())
    assert {option.limited_by for option in found.options} == {"memory"}


def test_options_go_by_cost_and_name_the_cheapest_and_smallest(
    session: Session, settings: Settings
) -> None:
    prices = {"8x-h100-80gb": 2.0, "8x-h200-141gb": 3.5, "8x-b200-180gb": 6.0}
    found = plan(session, settings, hardware=list(prices), price_per_gpu_hour=prices)
    costs = [option.cost_per_hour for option in found.options]
    assert costs == sorted(costs)
    for option in found.options:
        assert option.cost_per_hour == pytest.approx(prices[option.candidate.label] * option.gpus)
    meeting = [option for option in found.options if option.meets]
    cheapest = found.options[found.cheapest]
    assert cheapest.cost_per_hour == min(option.cost_per_hour for option in meeting)
    smallest = found.options[found.smallest]
    assert smallest.gpus == min(option.gpus for option in meeting)


def test_without_prices_options_go_by_gpus(session: Session, settings: Settings) -> None:
    found = plan(session, settings)
    order = [(not o.meets, o.experimental, o.gpus) for o in found.options]
    assert order == sorted(order)  # those that meet first, verified before experimental
    assert found.cheapest is None and found.smallest is not None
    assert all(option.cost_per_hour is None for option in found.options)


def test_a_first_token_target_no_single_request_reaches_is_refused(
    session: Session, settings: Settings
) -> None:
    with pytest.raises(PlanRefused) as refused:
        plan(session, settings, max_ttft_ms=1)
    assert set(refused.value.errors) == {"max_ttft_ms"}


def test_unknown_hardware_is_refused_by_its_place(session: Session, settings: Settings) -> None:
    with pytest.raises(PlanRefused) as refused:
        plan(session, settings, hardware=["8x-h200-141gb", "no-such-box"])
    assert set(refused.value.errors) == {"hardware.1"}
