"""The one change most likely to help: the advice names a change that, asked of the step
model again, really raises each request's decode, and the most of the changes that apply."""

import msgspec
from sqlalchemy.orm import Session

from app.estimate.speed.load import RequestShape, load_estimate
from app.resolve import RecipeService
from app.resolve.advice import MIN_GAIN, AdviceInputs, best_change, candidates, recipe_advice

GLM = "glm-5.3-flash"
H200 = "8x-h200-141gb"


def recipe(session: Session, profile: str, model: str = GLM, hardware: str = H200):
    _, resolved = RecipeService(session).resolved(model)
    return resolved.recipe(hardware, profile)


def middle_decode(model, concurrency: int, speculative: bool) -> float:  # noqa: ANN001
    return load_estimate(model, concurrency, RequestShape(), speculative).decode.middle


def test_speculative_decoding_is_advised_where_it_raises_decode_most(session: Session) -> None:
    balanced = recipe(session, "balanced")  # sixteen at once, MTP layers left unused
    assert balanced.applied.speculative_decoding is False
    advice = recipe_advice(balanced)
    assert advice is not None and advice.change == "speculative"
    model = balanced.estimate.speed_model
    before = middle_decode(model, 16, speculative=False)
    after = middle_decode(model, 16, speculative=True)
    assert after / before >= MIN_GAIN
    assert advice.decode_factor == round(after / before, 2)
    # The best of every change that applies and keeps the total, not merely one that helps;
    # fewer requests at once would raise each one's decode at the total's expense.
    inputs = AdviceInputs(model, balanced.applied, balanced.estimate.memory, kv_splits=False)
    base = load_estimate(model, 16, RequestShape(), False)
    keeping = [c for c in candidates(inputs, base) if c.throughput_factor >= 1]
    assert advice.decode_factor == max(c.decode_factor for c in keeping)


def test_cuda_graphs_are_advised_for_an_eager_server(session: Session) -> None:
    """Without CUDA graphs every layer pays its launch time: turning them on is the change
    that helps most without costing the total (fewer requests would, but at its expense)."""
    speed = recipe(session, "speed")  # speculative decoding already on
    model = speed.estimate.speed_model
    eager = msgspec.structs.replace(
        model, step=msgspec.structs.replace(model.step, cuda_graphs=False)
    )
    inputs = AdviceInputs(
        eager, speed.applied.changed(cuda_graphs=False), speed.estimate.memory, kv_splits=False
    )
    advice = best_change(inputs)
    assert advice is not None and advice.change == "cuda_graphs"
    before = middle_decode(eager, 4, speculative=True)
    after = middle_decode(model, 4, speculative=True)
    assert advice.decode_factor == round(after / before, 2) >= MIN_GAIN
    assert advice.message.params["before"] > advice.message.params["after"]  # fixed share
    # With graphs on already, that change is no longer a candidate.
    graphs_on = AdviceInputs(model, speed.applied, speed.estimate.memory, kv_splits=False)
    base = load_estimate(model, 4, RequestShape(), True)
    assert "cuda_graphs" not in {c.change for c in candidates(graphs_on, base)}


def test_a_halved_tensor_parallel_must_fit_and_is_not_advised_when_it_slows_decode(
    session: Session,
) -> None:
    balanced = recipe(session, "balanced")
    model = balanced.estimate.speed_model
    inputs = AdviceInputs(model, balanced.applied, balanced.estimate.memory, kv_splits=False)
    base = load_estimate(model, 16, RequestShape(), False)
    halved = next(c for c in candidates(inputs, base) if c.change == "tensor_parallel")
    assert halved.message.params["now"] == 8 and halved.message.params["then"] == 4
    assert halved.decode_factor < 1  # twice the weights per GPU outweigh the all-reduces
    assert recipe_advice(balanced).change != "tensor_parallel"
    # Where twice the weights per GPU would not fit, it is not a candidate at all.
    memory = balanced.estimate.memory
    tight = msgspec.structs.replace(
        memory, usable=msgspec.structs.replace(memory.usable, value=memory.required + 1)
    )
    squeezed = AdviceInputs(model, balanced.applied, tight, kv_splits=False)
    assert "tensor_parallel" not in {c.change for c in candidates(squeezed, base)}


def test_nothing_is_advised_where_no_speed_is_estimated(session: Session) -> None:
    exceeding = recipe(session, "balanced", hardware="rtx-4090-24gb")
    assert exceeding.unsupported and recipe_advice(exceeding) is None
