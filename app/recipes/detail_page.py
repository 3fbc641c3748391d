"""What the detail page shows of one recipe: its route builds it for a request, and the
warm-up builds one after start-up so the first request finds every query and template
part already prepared."""

from typing import Any

from sqlalchemy.orm import Session

from app.accuracy.answer import class_answer
from app.asking.load_out import speed_at_load
from app.catalog.revision import Revisions
from app.recipes.knobs import knob_rows
from app.recipes.load_curve import load_curve
from app.recipes.presenters import (
    benchmark_prefill,
    exposure_note,
    memory_check,
    record_prefill,
    smoke_test,
)
from app.records.evidence.known_good import find_known_good
from app.records.evidence.safe_ceiling import load_safe_ceiling
from app.records.evidence.summary import load_detail_evidence
from app.resolve.fit_table import ResolvedModel
from app.resolve.resolved import ResolvedRecipe

TEMPLATE = "recipes/detail.html"


def detail_context(
    session: Session, resolved: ResolvedModel, recipe: ResolvedRecipe, revisions: Revisions
) -> dict[str, Any]:
    records = load_detail_evidence(session, recipe, revisions)
    speed = speed_at_load(recipe)
    return {
        "recipe": recipe,
        "profiles": resolved.inputs.profiles,
        "knobs": knob_rows(recipe),
        "speed_at_load": speed,
        # How right the estimate has been for the range's class, in one sentence.
        "accuracy_answer": class_answer(session, speed["accuracy_class"]) if speed else None,
        "load_curve": load_curve(recipe, records.summary),
        "smoke_test": smoke_test(recipe),
        "memory_check": memory_check(recipe),
        "exposure_note": exposure_note(recipe),
        "records": records,
        "record_prefill": record_prefill(recipe),
        "benchmark_prefill": benchmark_prefill(recipe),
        "known_good": find_known_good(
            session, recipe.model, recipe.hardware, recipe.profile, revisions.catalog
        ),
        "safe_ceiling": load_safe_ceiling(
            session, recipe.model.id, recipe.hardware.id, recipe.profile.id
        ),
    }
