"""Profile knobs read for one hardware configuration, and the context a recipe starts from."""

from typing import Any

from app.models import Hardware, LlmModel, Profile

MAX_FIT = "max"
# The recipe's first stop condition: start at a lowered context such as 16K and raise it
# only after the server loads and answers. A "largest that fits" profile starts here too.
LOWERED_START = 16384
# Below this a serving recipe is not useful: the source recipe's smallest start.
MIN_USEFUL_CONTEXT = 4096


def by_group(value: Any, hardware: Hardware) -> Any:
    """Seed knobs may differ between local machines and servers."""
    if isinstance(value, dict):
        return value.get(hardware.group, value.get("local"))
    return value


def aims_for_largest_context(profile: Profile) -> bool:
    """Whether the profile's goal is the largest context that fits (long-context)."""
    return profile.settings.get("start_context") == MAX_FIT


def requested_context(profile: Profile, hardware: Hardware, model: LlmModel) -> int:
    """The context the profile asks to start from, before memory has a say."""
    if aims_for_largest_context(profile):
        return min(LOWERED_START, model.native_context)
    rule = by_group(profile.settings.get("start_context"), hardware)
    if hardware.group == "local" and model.start_context:
        # A model's own recipe may ask for a lower start on compressed local routes.
        rule = model.start_context
    return min(int(rule), model.native_context)


def raise_steps(start: int, largest: int | None, native: int) -> list[int]:
    """Contexts to try after the start works: doubling toward the largest that fits.

    The last step is the largest context that fits; the native length follows only when it
    fits too.
    """
    if largest is None or largest <= start:
        return []
    steps: list[int] = []
    step = start * 2
    while step < largest:
        steps.append(step)
        step *= 2
    steps.append(min(largest, native))
    return steps
