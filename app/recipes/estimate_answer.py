"""The flat JSON of an estimate answer, as `POST /api/estimate`, the estimate page and
`servebook estimate --json` give it: the recipe's own figures (`estimate_out`) at the
concurrency asked, with what the request itself made the answer assume."""

from typing import Any

from app.asking.ask import DescribedResult
from app.estimate.messages import Code, Message, message
from app.estimate.speed.load import RequestShape
from app.i18n.messages import english, messages_json
from app.recipes.presenters import estimate_out


def answer_out(answer: DescribedResult, concurrency: int | None = None) -> dict[str, Any]:
    """The answer's JSON: `estimate_out`, its `request_shape` naming the lengths the request
    left blank (`defaulted`), and the request's assumptions (those lengths among them) added
    to `assumed`."""
    out = estimate_out(answer.result.recipe, answer.description, answer.hardware_name, concurrency)
    assumed = answer.assumed
    shape = out.get("request_shape")
    if shape is not None and answer.shape is not None:
        shape["defaulted"] = blank_lengths(answer.shape)
        assumed += lengths_assumption(shape)
    if assumed:
        out["assumed"] = [*out["assumed"], *(english(one) for one in assumed)]
        out["assumed_messages"] = [*out["assumed_messages"], *messages_json(assumed)]
    if answer.card is not None:
        out["gpu"] = answer.card
    return out


def blank_lengths(shape: RequestShape) -> list[str]:
    """The request lengths the question left blank, by field name."""
    asked = {"prompt_tokens": shape.prompt_tokens, "output_tokens": shape.output_tokens}
    return sorted(name for name, value in asked.items() if value is None)


def lengths_assumption(shape: dict[str, Any]) -> tuple[Message, ...]:
    """A blank length is an assumption the answer states: every figure is then for the
    stated default request (`RequestShape.filled`), whose lengths it names."""
    if not shape["defaulted"]:
        return ()
    prompt, output = shape["prompt_tokens"], shape["output_tokens"]
    return (message(Code.LENGTHS_DEFAULTED, prompt=prompt, output=output),)
