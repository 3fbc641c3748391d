"""The accuracy of a class in one sentence: how many of the measurements it was checked
against fell inside the estimate's range, and how far off the range's middle was.

The figures are the accuracy page's own (`app/accuracy/figures.py`), in this order: with
each publisher left out of the fit and of the ranges it was scored by, where the class has
such figures; else the shipped checks of the current estimator version (measurements the
fit did not use, which set the ranges); else the accepted records scored against the
estimate they were compared with.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.accuracy.figures import ClassFigures, Summary, accuracy
from app.accuracy.labels import class_label
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register

ON_CHECKS = register(
    "accuracy.answer_checks",
    _l(
        "For %(class)s: %(held)s of %(count)s measurements the estimate was checked "
        "against fell inside its range, and the range's middle was a median %(error)s%% off."
    ),
)
ON_HELD_OUT = register(
    "accuracy.answer_held_out",
    _l(
        "For %(class)s, each publisher scored by an estimate fitted without its own "
        "measurements: %(held)s of %(count)s measurements from %(publishers)s publishers "
        "fell inside its range, and the range's middle was a median %(error)s%% off."
    ),
)
ON_RECORDS = register(
    "accuracy.answer_records",
    _l(
        "For %(class)s: %(held)s of %(count)s measurements of accepted records fell "
        "inside the estimate's range, and the range's middle was a median %(error)s%% off."
    ),
)
NOT_YET = register(
    "accuracy.answer_none",
    _l("For %(class)s, no measurement has checked the estimate yet."),
)
# What a range written "x0.96–1.20" means, wherever one is shown.
RANGE_MEANS = register(
    "accuracy.range_means",
    _l(
        "x%(low)s–%(high)s: the speed is expected between %(low)s and %(high)s times the "
        "estimate's own figure; the range is meant to hold %(stated)s%% of measurements."
    ),
)


def answer(found: ClassFigures) -> Sentence:
    """The class's accuracy in one sentence: with each publisher left out, else on its
    shipped checks, else on its records."""
    if found.held_out is not None:
        scored = found.held_out
        return ON_HELD_OUT(**_figures(found.label, scored), publishers=scored.publishers)
    if found.shipped is not None:
        return ON_CHECKS(**_figures(found.label, found.shipped))
    if found.records is not None:
        return ON_RECORDS(**_figures(found.label, found.records))
    return NOT_YET(**{"class": found.label})


def range_means(found: ClassFigures) -> Sentence:
    held = found.range
    return RANGE_MEANS(
        low=f"{held.low:.2f}", high=f"{held.high:.2f}", stated=round(held.stated * 100)
    )


def _figures(label: str, scored: Summary) -> dict[str, object]:
    return {
        "class": label,
        "held": round(scored.range_held * scored.count),
        "count": scored.count,
        "error": round(scored.median_error * 100),
    }


def class_answer(session: Session, key: str) -> Sentence:
    """The sentence for one class key, as the accuracy page words it for that class."""
    for found in accuracy(session).classes:
        if found.key == key:
            return answer(found)
    return NOT_YET(**{"class": class_label(key)})
