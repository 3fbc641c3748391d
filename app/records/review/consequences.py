"""What accepting a record would change on the recipe pages, shown before a maintainer accepts.

The preview resolves each recipe twice, over the catalog as it is and as it would be with the
record accepted (`ModelInputs.with_accepted`), and lists the facts that differ. It is the same
resolution the pages render, so what it lists is what they show once the record is accepted
(unless another record is accepted first). Nothing is written.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.labels import BASES, OUTCOMES, STATUSES, VERDICTS
from app.i18n.sentences import Kind, Sentence, english, register
from app.models import Hardware, Profile, Record
from app.resolve import ModelInputs, Question, ResolvedRecipe, load_model_inputs, resolve_recipe


def _words(kind: str, labels: Mapping[str, Any]) -> dict[str, Kind]:
    """Codes named inside a fact, in the words the pages use for them."""
    return {code: register(f"acceptance.{kind}.{code}", words) for code, words in labels.items()}


VERDICT_WORDS = _words("verdict", VERDICTS)
STATUS_WORDS = _words("status", STATUSES)
BASIS_WORDS = _words("basis", BASES)
OUTCOME_WORDS = _words("outcome", OUTCOMES)
# The facts a recipe page leads with; the keys are the JSON's `what`, as ever.
WHAT = {
    "verdict": register("acceptance.what.verdict", _l("verdict")),
    "route": register("acceptance.what.route", _l("route")),
    "commands shown": register("acceptance.what.commands", _l("commands shown")),
    "token generation": register("acceptance.what.token_generation", _l("token generation")),
    "memory per GPU": register("acceptance.what.memory", _l("memory per GPU")),
    "status": register("acceptance.what.status", _l("status")),
    "starting context": register("acceptance.what.starting_context", _l("starting context")),
}
NONE = register("acceptance.none", _l("none"))
PAIR = {
    True: register("acceptance.verified_pair", _l("verified pair")),
    False: register("acceptance.unverified_pair", _l("unverified pair")),
}
ROUTE = register("acceptance.route", _l("%(artifact)s with %(runtime)s (%(pair)s)"))
SPEED = register("acceptance.speed", _l("%(values)s tok/s, %(basis)s"))
MEMORY = register("acceptance.memory", _l("%(gb)s GB, %(basis)s"))
TOKENS = register("acceptance.tokens", _l("%(tokens)s tokens"))
COMMANDS = register("acceptance.commands", _l("%(runtimes)s"))
STAYS_AS_EVIDENCE = register(
    "acceptance.stays_as_evidence",
    _l(
        "the outcome is “%(outcome)s”; only records that loaded and answered verify a pair or "
        "replace a figure, so this one stays as evidence"
    ),
)
ADDS_TO_EVIDENCE = register(
    "acceptance.adds_to_evidence",
    _l(
        "every verdict, route, command and figure stays as shown; the record adds to the "
        "evidence behind them"
    ),
)


@dataclass(frozen=True)
class Consequence:
    """One fact of one recipe page that accepting the record changes."""

    hardware: Hardware
    profile: Profile
    what: str  # the fact's English name, as the JSON gives it
    said_before: Sentence
    said_after: Sentence

    @property
    def before(self) -> str:
        """English, for the JSON; the page words `said_before` for its reader."""
        return english(self.said_before)

    @property
    def after(self) -> str:
        return english(self.said_after)

    @property
    def said_what(self) -> Sentence:
        return WHAT[self.what]()


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
    question = Question(hardware, profile.slug)
    old = recipe_facts(resolve_recipe(before, question))
    new = recipe_facts(resolve_recipe(after, question))
    return [
        Consequence(hardware, profile, what, old[what], new[what])
        for what in old
        if old[what] != new[what]
    ]


def recipe_facts(recipe: ResolvedRecipe) -> dict[str, Sentence]:
    """The facts a recipe page leads with, as a reader would say them, in page order.

    Figures are written as the English pages write them (Korean and Japanese group and
    point the same way); the words around them are the reader's.
    """
    route, speed, memory = recipe.route, recipe.token_generation, recipe.memory
    route_said = speed_said = memory_said = NONE()
    if route is not None:
        pair = PAIR[bool(route.verified)]()
        route_said = ROUTE(artifact=route.artifact.name, runtime=route.runtime.name, pair=pair)
    if speed is not None:
        # One value when one context length was measured, a range otherwise, as pages show it.
        values = f"{speed.low:,.1f}" if speed.single else f"{speed.low:,.1f} ~ {speed.high:,.1f}"
        speed_said = SPEED(values=values, basis=BASIS_WORDS[speed.basis.value]())
    if memory is not None:
        memory_said = MEMORY(
            gb=f"{memory.required_gb:,.1f}", basis=BASIS_WORDS[memory.basis.value]()
        )
    runtimes = ", ".join(command.runtime for command in recipe.commands)
    return {
        "verdict": VERDICT_WORDS[recipe.verdict.value](),
        "route": route_said,
        "commands shown": COMMANDS(runtimes=runtimes) if runtimes else NONE(),
        "token generation": speed_said,
        "memory per GPU": memory_said,
        "status": STATUS_WORDS[recipe.status](),
        "starting context": TOKENS(tokens=f"{recipe.start_context:,}"),
    }


def why_nothing_changes(record: Record) -> Sentence:
    """Said on the record page when accepting would change no page."""
    if record.outcome != "ok":
        return STAYS_AS_EVIDENCE(outcome=OUTCOME_WORDS[record.outcome]())
    return ADDS_TO_EVIDENCE()
