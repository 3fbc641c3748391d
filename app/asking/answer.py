"""Asking a `Question` of a model's inputs: its named file, runtime and profile checked
against the model and the machine, each fault by field, then the one resolution."""

from dataclasses import dataclass, field
from typing import Any

from app.asking.errors import coded
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.resolve import ModelInputs, Question, ResolvedRecipe, resolve_recipe

CUSTOM = "custom"  # hardware described by the question's own figures, not a catalog row
CHOOSE_ONE = register("selector.choose_one", _l("choose one of: %(choices)s"))
WRONG_PLATFORM = register(
    "selector.wrong_platform",
    _l("%(runtime)s does not run on %(platform)s (runs on %(platforms)s)"),
)
FOREIGN_ARTIFACT = register(
    "selector.foreign_artifact",
    _l("artifact '%(slug)s' is a file of %(owner)s, not of %(model)s; choose one of: %(choices)s"),
)
CANNOT_LOAD = register(
    "selector.cannot_load", _l("%(runtime)s cannot load %(format)s files (loads %(formats)s)")
)


@dataclass
class Answer:
    """A question's recipe, or what to fix by field; `values` is what the model page's form
    shows again (catalog figures and the chosen route filled in)."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    recipe: ResolvedRecipe | None = None
    catalog_hardware: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors and self.recipe is not None


def route_errors(inputs: ModelInputs, question: Question) -> dict[str, str]:
    """A named model file and runtime must exist, load each other and run here: each fault
    in the reader's words, with its code beside it."""
    errors: dict[str, Sentence] = {}
    artifacts = {a.slug: a for a in inputs.model.artifacts}
    runtimes = {r.slug: r for r in inputs.runtimes}
    artifact = artifacts.get(question.artifact) if question.artifact else None
    runtime = runtimes.get(question.runtime) if question.runtime else None
    platform = question.hardware.platform
    if question.artifact and artifact is None:
        errors["artifact"] = CHOOSE_ONE(choices=list(artifacts))
    if question.runtime and runtime is None:
        errors["runtime"] = CHOOSE_ONE(choices=list(runtimes))
    if question.profile not in {p.slug for p in inputs.profiles}:
        errors["profile"] = CHOOSE_ONE(choices=[p.slug for p in inputs.profiles])
    if runtime is not None and platform not in runtime.platforms:
        errors["runtime"] = WRONG_PLATFORM(
            runtime=runtime.name, platform=platform, platforms=list(runtime.platforms)
        )
    elif runtime is not None and artifact is not None and artifact.format not in runtime.formats:
        errors["runtime"] = CANNOT_LOAD(
            runtime=runtime.name, format=artifact.format, formats=list(runtime.formats)
        )
    return coded(errors)


def ask(inputs: ModelInputs, question: Question, values: dict[str, Any] | None = None) -> Answer:
    """The question's answer: the recipe, or its route's faults by field."""
    values = {} if values is None else values
    errors = route_errors(inputs, question)
    if errors:
        return Answer(values, errors)
    recipe = resolve_recipe(inputs, question)
    return Answer(values, {}, recipe, catalog_hardware=question.hardware.slug != CUSTOM)
