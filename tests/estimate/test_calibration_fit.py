"""The calibration fit: the step model's coefficients from a probe's decode and first-token
timings, recovered where the timings follow the model, refused where they do not, and
then used for every model on that hardware with the range the fit's error sets."""

from dataclasses import replace

import msgspec
import pytest

from app.estimate import ArtifactSpec, Plan, estimate
from app.estimate.calibration import (
    MAX_ERROR,
    MAX_SPREAD_OF_ROUNDS,
    DecodePoint,
    PrefillPoint,
    fit_calibration,
)
from app.estimate.speed.load import load_estimate
from app.estimate.speed.step import communication_s, decode_step, prefill_seconds
from tests.estimate.estimate_specs import H100, H200_X8, LLAMA_8B, LLAMA_70B, MOE_320B, VLLM

BF16 = ArtifactSpec("bf16", "safetensors", "bf16", 16.0)
BATCHES, DEPTHS = (1, 2, 4, 8, 16), (150, 1100, 4100)


def _speed(model=LLAMA_8B, hardware=H100, tensor_parallel=1):
    plan = Plan(context=4096, tensor_parallel=tensor_parallel)
    return estimate(model, BF16, VLLM, hardware, plan).speed_model


def _truth(step, **changes):
    """The shipped coefficients changed as a real server would differ from them."""
    return msgspec.structs.replace(step, coefficients=msgspec.structs.replace(
        step.coefficients, **changes))  # fmt: skip


def _probe(truth, chunk, noise=()):
    decode = [
        DecodePoint(b, d, decode_step(truth, b, d).total * (noise[i % len(noise)] if noise else 1))
        for i, (b, d) in enumerate((b, d) for d in DEPTHS for b in BATCHES)
    ]
    # A first token alone: its prefill, one decode step and 40 ms of the server's own.
    prefill = [
        PrefillPoint(
            p, prefill_seconds(truth, p, chunk, 0.3) + decode_step(truth, 1, p).total + 0.04
        )
        for p in (256, 1024, 4000)
    ]
    return decode, prefill


def test_a_server_that_follows_the_model_is_fitted_closely():
    speed = _speed()
    truth = _truth(speed.step, bandwidth_share_dense=0.7, layer_s=90e-6, step_s=2e-3)
    decode, prefill = _probe(truth, speed.prefill_chunk)
    fit = fit_calibration(speed.step, decode, prefill, speed.prefill_chunk)
    assert fit.ok and fit.error < 0.02
    assert fit.coefficients.calibrated_error == pytest.approx(fit.error, abs=1e-4)
    fitted = msgspec.structs.replace(speed.step, coefficients=fit.coefficients)
    for b, d in ((1, 4096), (16, 2048), (32, 8000)):  # also beyond the probed points
        assert decode_step(fitted, b, d).total == pytest.approx(
            decode_step(truth, b, d).total, rel=0.05
        )
    assert sum(fit.coefficients.prefill_utilisation) / 2 == pytest.approx(0.3, rel=0.1)
    assert fit.coefficients.first_token_s == pytest.approx(0.04, abs=0.005)
    assert fit.prefill_error is not None and fit.prefill_error < 0.05


def test_the_fitted_coefficients_serve_another_model_on_that_hardware():
    speed = _speed()
    truth = _truth(speed.step, bandwidth_share_dense=0.7, layer_s=90e-6, step_s=2e-3)
    fit = fit_calibration(speed.step, *_probe(truth, speed.prefill_chunk), speed.prefill_chunk)
    calibrated = replace(H100, calibrated={"vllm": fit.coefficients})
    other = estimate(LLAMA_70B, BF16, VLLM, replace(H100, gpu_count=4), Plan(4096))
    other_calibrated = estimate(LLAMA_70B, BF16, VLLM, replace(calibrated, gpu_count=4), Plan(4096))
    assert other.speed_model.step.coefficients != fit.coefficients
    assert other_calibrated.speed_model.step.coefficients == fit.coefficients
    shipped = load_estimate(other.speed_model, 1)
    found = load_estimate(other_calibrated.speed_model, 1)
    assert shipped.calibrated_error is None
    assert found.calibrated_error == fit.coefficients.calibrated_error
    assert found.range.key.startswith("calibrated/")
    assert found.decode.middle < shipped.decode.middle  # this card reads slower than shipped
    assert found.range.low == pytest.approx(0.9) and found.range.high == pytest.approx(1.1)


def test_communication_is_fitted_where_there_are_several_gpus():
    speed = _speed(LLAMA_70B, H200_X8, tensor_parallel=8)
    truth = _truth(speed.step, communication_scale=2.0, bandwidth_share_dense=0.8)
    fit = fit_calibration(speed.step, *_probe(truth, speed.prefill_chunk), speed.prefill_chunk)
    assert fit.ok and fit.error < 0.03
    fitted = msgspec.structs.replace(speed.step, coefficients=fit.coefficients)
    assert communication_s(fitted, 1) > communication_s(speed.step, 1)


def test_an_moe_probe_fits_the_moe_share_and_keeps_the_dense_ratio():
    speed = _speed(MOE_320B, H200_X8, tensor_parallel=8)
    truth = _truth(speed.step, bandwidth_share_moe=0.6)
    fit = fit_calibration(speed.step, *_probe(truth, speed.prefill_chunk), speed.prefill_chunk)
    assert fit.ok
    shipped = speed.step.coefficients
    ratio = shipped.bandwidth_share_moe / shipped.bandwidth_share_dense
    c = fit.coefficients
    assert c.bandwidth_share_moe / c.bandwidth_share_dense == pytest.approx(ratio, rel=0.02)


def test_timings_that_are_noise_are_refused():
    speed = _speed()
    noise = (0.3, 2.5, 1.0, 4.0, 0.5, 1.7, 0.25, 3.0)
    decode, prefill = _probe(speed.step, speed.prefill_chunk, noise)
    fit = fit_calibration(speed.step, decode, prefill, speed.prefill_chunk)
    assert not fit.ok
    assert fit.refusal.kind in ("poor_fit", "contradictory")


def test_rounds_that_disagree_like_noise_are_refused_even_where_their_medians_fit():
    speed = _speed()
    decode, prefill = _probe(speed.step, speed.prefill_chunk)
    noisy = [msgspec.structs.replace(p, spread=3.0) for p in decode]
    fit = fit_calibration(speed.step, noisy, prefill, speed.prefill_chunk)
    assert fit.refusal.kind == "noisy"
    assert fit.refusal.figures == {"spread": 3.0, "limit": MAX_SPREAD_OF_ROUNDS}
    # A busy machine's rounds, apart by a third at the typical point, are not noise.
    busy = [msgspec.structs.replace(p, spread=1.3 if i % 3 else 2.5) for i, p in enumerate(decode)]
    assert fit_calibration(speed.step, busy, prefill, speed.prefill_chunk).ok


def test_a_poor_fit_names_its_error():
    speed = _speed()
    # Never slower at a smaller batch, but a step no line through the batches follows.
    steps = {1: 0.01, 2: 0.01, 3: 0.01, 4: 0.01, 5: 0.5, 6: 0.5}
    decode = [DecodePoint(b, 150, s) for b, s in steps.items()]
    fit = fit_calibration(speed.step, decode, [], speed.prefill_chunk)
    assert fit.refusal.kind == "poor_fit"
    assert fit.refusal.figures["error"] > 100 * MAX_ERROR


def test_one_request_slower_than_each_of_eight_contradicts():
    speed = _speed()
    decode, _ = _probe(speed.step, speed.prefill_chunk)
    decode = [DecodePoint(p.batch, p.depth, p.step_s * 3) if p.batch == 1 else p for p in decode]
    fit = fit_calibration(speed.step, decode, [], speed.prefill_chunk)
    assert fit.refusal.kind == "contradictory"
    assert fit.refusal.figures["small_batch"] == 1


def test_a_smaller_batch_slower_within_the_points_own_scatter_does_not_contradict():
    speed = _speed()
    decode, _ = _probe(speed.step, speed.prefill_chunk)
    slower = [
        msgspec.structs.replace(p, step_s=p.step_s * 1.8) if p.batch == 1 else p for p in decode
    ]
    assert fit_calibration(speed.step, slower, [], speed.prefill_chunk).refusal.kind == (
        "contradictory"
    )
    # The same medians from requests that scatter (a busy machine): not a contradiction.
    scattered = [msgspec.structs.replace(p, spread=1.9) for p in slower]
    refusal = fit_calibration(speed.step, scattered, [], speed.prefill_chunk).refusal
    assert refusal is None or refusal.kind != "contradictory"


def test_too_few_points_are_refused():
    speed = _speed()
    fit = fit_calibration(speed.step, [DecodePoint(1, 100, 0.01)] * 5, [], speed.prefill_chunk)
    assert fit.refusal.kind == "too_few_points"
