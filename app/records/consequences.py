"""What accepting a record would change on the recipe pages, shown before a maintainer accepts.

The preview resolves each recipe twice, over the catalog as it is and as it would be with the
record accepted (`ModelInputs.with_accepted`), and lists the facts that differ. It is the same
resolution the pages render, so what it lists is what they show once the record is accepted
(unless another record is accepted first). Nothing is written.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.models import Hardware, Profile, Record
from app.records.schemas import OUTCOME_LABELS
from app.resolve import ModelInputs, ResolvedRecipe, load_model_inputs, resolve_recipe

STATUS_LABELS = {"verified": "verified", "verification_pending": "verification pending"}


@dataclass(frozen=True)
class Consequence:
    """One fact of one recipe page that accepting the record changes."""

    hardware: Hardware
    profile: Profile
    what: str
    before: str
    after: str


def acceptance_consequences(session: Session, record: Record) -> list[Consequence]:
    """Every fact that differs once `record` is accepted, page by page; [] when none would.

    `record` needs its model and measurements loaded (as `get_record` loads them).
    """
    if record.review_state != "pending":
        return []  # accepted, rejected or retracted: there is nothing left to accept
    inputs = load_model_inputs(session, record.model.slug)
    after = inputs.with_accepted(record)
    if after is inputs:
        return []
    hardware = CatalogRepository(session).list_hardware()
    return [
        consequence
        for machine, profile in pages_that_can_change(inputs, record, hardware)
        for consequence in differences(inputs, after, machine, profile)
    ]


def pages_that_can_change(
    inputs: ModelInputs, record: Record, hardware: Sequence[Hardware]
) -> list[tuple[Hardware, Profile]]:
    """Verifying a pair reaches every hardware and profile where that model file and runtime
    run; once the pair is verified, a record only adds measurements, and those count only
    for its own hardware and profile."""
    profiles = inputs.profiles
    if inputs.verified.is_verified(record.artifact_id, record.runtime_id):
        hardware = [machine for machine in hardware if machine.id == record.hardware_id]
        profiles = [profile for profile in profiles if profile.id == record.profile_id]
    return [(machine, profile) for machine in hardware for profile in profiles]


def differences(
    before: ModelInputs, after: ModelInputs, hardware: Hardware, profile: Profile
) -> list[Consequence]:
    old = recipe_facts(resolve_recipe(before, hardware, profile))
    new = recipe_facts(resolve_recipe(after, hardware, profile))
    return [
        Consequence(hardware, profile, what, old[what], new[what])
        for what in old
        if old[what] != new[what]
    ]


def recipe_facts(recipe: ResolvedRecipe) -> dict[str, str]:
    """The facts a recipe page leads with, as a reader would say them, in page order."""
    route, speed, memory = recipe.route, recipe.token_generation, recipe.memory
    route_text = speed_text = memory_text = "none"
    if route is not None:
        pair = "verified pair" if route.verified else "unverified pair"
        route_text = f"{route.artifact.name} with {route.runtime.name} ({pair})"
    if speed is not None:
        # One value when one context length was measured, a range otherwise, as pages show it.
        values = f"{speed.low:,.1f}" if speed.single else f"{speed.low:,.1f} ~ {speed.high:,.1f}"
        speed_text = f"{values} tok/s, {speed.basis.value}"
    if memory is not None:
        memory_text = f"{memory.required_gb:,.1f} GB, {memory.basis.value}"
    return {
        "verdict": recipe.verdict_label,
        "route": route_text,
        "commands shown": ", ".join(command.runtime for command in recipe.commands) or "none",
        "token generation": speed_text,
        "memory per GPU": memory_text,
        "status": STATUS_LABELS.get(recipe.status, recipe.status),
        "starting context": f"{recipe.start_context:,} tokens",
    }


def why_nothing_changes(record: Record) -> str:
    """Said on the record page when accepting would change no page."""
    if record.outcome != "ok":
        return (
            f"the outcome is “{OUTCOME_LABELS[record.outcome]}”; only records that loaded "
            "and answered verify a pair or replace a figure, so this one stays as evidence"
        )
    return (
        "every verdict, route, command and figure stays as shown; the record adds to the "
        "evidence behind them"
    )
