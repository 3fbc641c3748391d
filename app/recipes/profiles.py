"""Profile knobs resolved for one model on one hardware configuration."""

from typing import Any

from app.models import Hardware, LlmModel, Profile

MAX_FIT = "max"


def by_group(value: Any, hardware: Hardware) -> Any:
    """Seed knobs may differ between local machines and servers."""
    if isinstance(value, dict):
        return value.get(hardware.group, value.get("local"))
    return value


def requested_context(profile: Profile, hardware: Hardware, model: LlmModel) -> int | None:
    """The context the profile starts from; None means "the largest that fits"."""
    rule = by_group(profile.settings.get("start_context"), hardware)
    if rule == MAX_FIT:
        return None
    if hardware.group == "local" and model.start_context:
        # A model's own recipe may ask for a lower start on compressed local routes.
        rule = model.start_context
    return min(int(rule), model.native_context)
