"""The inputs an estimate rests on that were assumed rather than read or derived.

The estimate's "Assumed:" list: each is a message (a code and its figures), worded on the
page for its reader; JSON keeps the English beside the codes.
"""

from typing import Any

from app.asking.described import ModelDescription
from app.estimate import Quantity
from app.estimate.messages import Code, Message, message
from app.i18n.messages import as_message, english, messages_json
from app.resolve import ResolvedRecipe

# The estimate's memory parts, each with the code that says it was assumed.
ASSUMED_PARTS = {
    "weights": Code.ASSUMED_WEIGHTS,
    "kv_cache": Code.ASSUMED_KV_CACHE,
    "prefill_workspace": Code.ASSUMED_PREFILL_WORKSPACE,
    "runtime_reserve": Code.ASSUMED_RUNTIME_RESERVE,
}


def assumptions(recipe: ResolvedRecipe, description: ModelDescription | None) -> list[Message]:
    """Every input the answer rests on that was assumed rather than read or derived.

    A catalog figure's note is the source's own English (as the catalog pages show it); the
    notes the project words itself are codes, worded for the reader.
    """
    found: list[Message] = []
    if recipe.estimate is not None:
        m = recipe.estimate.memory
        for part, code in ASSUMED_PARTS.items():
            quantity: Quantity = getattr(m, part)
            if quantity.basis.value == "assumed":
                found.append(message(code, note=quantity.note))
    for name, entry in (recipe.hardware.basis or {}).items():
        if entry.get("basis") == "assumed":
            worded = entry.get("note_message")
            note = as_message(worded) if worded else entry.get("note", "")
            found.append(message(Code.ASSUMED_HARDWARE, field=name, note=note))
    if description is not None and description.shape and description.shape.native_context is None:
        # A config that names no context: answered at the context asked, or the default.
        found.append(message(Code.ASSUMED_NATIVE_CONTEXT, tokens=recipe.model.native_context))
    if description is not None and description.quant.basis.value == "assumed":
        quant = description.quant
        note = quant.note_words or quant.note
        found.append(message(Code.ASSUMED_QUANT, quant=quant.name, note=note))
    return found


def assumed_out(assumed: list[Message]) -> dict[str, Any]:
    """The assumed inputs in English, as ever, and as codes with their figures beside them."""
    return {
        "assumed": [english(one) for one in assumed],
        "assumed_messages": messages_json(assumed),
    }
