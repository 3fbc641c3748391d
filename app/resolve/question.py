"""The one question every surface asks: the API, the estimate page and its form, the CLI,
the plan at each concurrency it weighs, the fit table and the records review each build a
`Question` and resolve it (`resolve_recipe`), so one question has one answer wherever it
is asked. Reading a request into one is `app.asking`'s work."""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.estimate.speed.load import RequestShape
from app.models import Hardware

BALANCED = "balanced"


@dataclass(frozen=True)
class Question:
    """A model's recipe on one machine, asked with everything that moves its answer.

    `hardware` is a catalog row or a transient one built from a description; `artifact`
    and `runtime` narrow the routes weighed (None: the table's choice); `context` None is
    the profile's; `concurrency` None is one request, with the profile's load beside it;
    `shape` is the requests the load figures are for (None lengths: their stated defaults);
    without `evidence` the figures are the estimator's alone."""

    hardware: Hardware
    profile: str = BALANCED
    artifact: str | None = None
    runtime: str | None = None
    context: int | None = None
    concurrency: int | None = None
    shape: RequestShape = RequestShape()
    evidence: bool = True

    def at(self, concurrency: int) -> Question:
        """The same question at another load (the plan weighs several)."""
        return replace(self, concurrency=concurrency)
