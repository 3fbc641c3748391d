"""How far a number can be trusted, and numbers that carry that basis."""

from __future__ import annotations

from enum import StrEnum

import msgspec

from app.estimate.messages import Notes


class Basis(StrEnum):
    """Where a number comes from, strongest first."""

    EXACT = "exact"
    PUBLISHED = "published"
    DERIVED = "derived"
    ASSUMED = "assumed"


_STRENGTH: dict[Basis, int] = {
    Basis.EXACT: 3,
    Basis.PUBLISHED: 2,
    Basis.DERIVED: 1,
    Basis.ASSUMED: 0,
}


def weakest(*bases: Basis | str) -> Basis:
    """Return the weakest of the given bases (EXACT when none are given)."""
    # A plain string looks up the same entry as its enum member; convert only the answer,
    # and only when it is not a member already (an enum call costs more than the min).
    found = min(bases, key=_STRENGTH.__getitem__, default=Basis.EXACT)
    return found if type(found) is Basis else Basis(found)


class Quantity(msgspec.Struct, frozen=True):
    """A number with its basis and a short note on how it was obtained."""

    value: float
    basis: Basis
    note: Notes = ()
