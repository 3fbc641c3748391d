"""MTP heads and speculative decoding are flagged beside the speed, never multiplied in."""

from estimate_specs import LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090

from app.estimate import Plan, estimate
from app.estimate.cautions import speculative_caution
from app.estimate.messages import Code, message
from app.i18n.messages import english


def test_a_model_with_mtp_layers_is_flagged_even_when_speculation_is_off():
    assert speculative_caution(1, speculative_decoding=False) == message(Code.MTP_LAYERS, layers=1)


def test_mtp_layers_with_speculation_on_say_what_raises_the_speed():
    caution = speculative_caution(3, speculative_decoding=True)
    assert caution == message(Code.SPECULATIVE_WITH_MTP, layers=3)


def test_speculation_with_a_draft_model_is_flagged_too():
    assert speculative_caution(0, speculative_decoding=True) == message(Code.SPECULATIVE_ON)


def test_nothing_to_flag_without_either():
    assert speculative_caution(0, speculative_decoding=False) is None


def test_the_speed_estimate_is_the_same_bound_either_way():
    # The caution is words only: the estimator has no MTP input and no acceptance factor.
    plan = Plan(context=4096)
    speed = estimate(LLAMA_8B, LLAMA_8B_Q4_K_M, LLAMA_CPP, RTX_4090, plan).decode_tokens_per_s
    assert "MTP" not in english(speed.note) and "speculative" not in english(speed.note)
