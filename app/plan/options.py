"""What a plan is made of: one replica's figures at a concurrency (`AtLoad`), a hardware
weighed (`Candidate`), its answer (`PlanOption`) and the options together (`Plan`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.asking.ask import RequestHardware
from app.estimate import Verdict
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import register
from app.models import Hardware
from app.plan.schemas import PlanRequest
from app.resolve import ResolvedRecipe

MEMORY, DECODE, TTFT = "memory", "decode", "ttft"
LIMITS = (MEMORY, DECODE, TTFT)

# The one rule for "meets": the README, the page's footnote, the JSON (`meets_rule`) and the
# CLI all give this sentence, and `AtLoad.limit` is its code.
MEETS_RULE = register(
    "plan.meets_rule",
    _l(
        "An option meets the load when the middle of each request's decode band reaches "
        "the target, the middle of its first-token band is within the limit, and every "
        "user's request holds a slot of its own (replicas x requests per replica covers the "
        "users). Both ends of each band are shown beside it."
    ),
)


@dataclass(frozen=True)
class AtLoad:
    """One replica's recipe at a concurrency, and the estimate answer's figures there."""

    concurrency: int
    recipe: ResolvedRecipe
    figures: dict[str, Any]  # asked_load_out: decode, throughput, ttft_ms, running, ...

    @property
    def decode(self) -> dict[str, Any] | None:
        return self.figures.get("decode_tokens_per_s")

    @property
    def ttft(self) -> dict[str, Any] | None:
        return self.figures.get("ttft_ms")

    @property
    def throughput(self) -> dict[str, Any] | None:
        return self.figures.get("throughput_tokens_per_s")

    def limit(self, request: PlanRequest) -> str | None:
        """What stops this replica carrying its requests: memory (the model does not run, or
        not every request has a slot), decode or the first token; None when it meets."""
        if self.recipe.unsupported or self.recipe.single is None:
            return MEMORY
        if self.figures.get("running", self.concurrency) < self.concurrency:
            return MEMORY
        decode = self.decode
        if decode is None or _middle(decode) < request.min_decode_tokens_per_s:
            return DECODE
        ttft = self.ttft
        if request.max_ttft_ms is not None and (
            ttft is None or _middle(ttft) > request.max_ttft_ms
        ):
            return TTFT
        return None


@dataclass(frozen=True)
class Candidate:
    """One hardware weighed: its label (the catalog slug, or the card as named), the
    hardware as the request named it, and the keys a price may be given under."""

    label: str
    name: str
    hardware: RequestHardware
    price_keys: tuple[str, ...]
    machine: Hardware | None = None  # the catalog row, read once for every concurrency


@dataclass(frozen=True)
class PlanOption:
    """One hardware's answer: replicas of `gpus_per_replica` GPUs, each carrying
    `concurrency_per_replica` requests, at the figures of `at`."""

    candidate: Candidate
    users: int
    replicas: int
    at: AtLoad
    single: AtLoad  # one request on one replica: the best each request can see here
    limited_by: str | None  # None when it meets the load
    one_replica_limit: str | None  # what stops a single replica carrying every user
    price: float | None

    @property
    def meets(self) -> bool:
        return self.limited_by is None

    @property
    def experimental(self) -> bool:
        """Served through a model file and runtime no source or record has verified."""
        recipe = self.recipe
        return recipe.verdict == Verdict.EXPERIMENTAL or not (
            recipe.route is not None and recipe.route.verified and not recipe.unsupported
        )

    @property
    def recipe(self) -> ResolvedRecipe:
        return self.at.recipe

    @property
    def gpus_per_replica(self) -> int:
        return self.recipe.hardware.gpu_count

    @property
    def gpus(self) -> int:
        return self.gpus_per_replica * self.replicas

    @property
    def throughput(self) -> tuple[float, float] | None:
        """Output tokens/s of all replicas together: each replica's total, times replicas."""
        each = self.at.throughput
        if each is None:
            return None
        return round(each["low"] * self.replicas, 1), round(each["high"] * self.replicas, 1)

    @property
    def cost_per_hour(self) -> float | None:
        return None if self.price is None else self.price * self.gpus

    @property
    def cost_per_million_output_tokens(self) -> float | None:
        """The hour's cost over the tokens the hour puts out, at the throughput's middle."""
        cost, total = self.cost_per_hour, self.throughput
        if cost is None or total is None or sum(total) <= 0:
            return None
        return cost / ((total[0] + total[1]) / 2 * 3600) * 1e6


@dataclass
class Plan:
    request: PlanRequest
    options: list[PlanOption] = field(default_factory=list)
    listed_all: bool = True  # False: only the configurations that fit are listed
    # One request's first token on the fastest hardware weighed (its figure and option).
    least_ttft: tuple[float, PlanOption] | None = None
    # One request's decode alone on the fastest hardware weighed (its figure and option).
    most_decode: tuple[float, PlanOption] | None = None

    @property
    def priced(self) -> bool:
        return any(option.price is not None for option in self.options)

    def named(self, option: PlanOption) -> bool:
        """Whether an option may be named cheapest or smallest: it meets the load, through
        a verified route unless the request asks to include experimental ones."""
        return option.meets and (self.request.include_experimental or not option.experimental)

    @property
    def cheapest(self) -> int | None:
        """The meeting option of least cost per hour (None without prices)."""
        priced = [
            (option.cost_per_hour, i)
            for i, option in enumerate(self.options)
            if self.named(option) and option.cost_per_hour is not None
        ]
        return min(priced)[1] if priced else None

    @property
    def smallest(self) -> int | None:
        """The meeting option of fewest GPUs (the cheaper of equals)."""
        meeting = [
            (option.gpus, option.cost_per_hour or 0.0, i)
            for i, option in enumerate(self.options)
            if self.named(option)
        ]
        return min(meeting)[2] if meeting else None


def _middle(band: dict[str, Any]) -> float:
    """The band's middle: the point the estimate's errors are measured from (see
    docs/estimation.md); its ends are the class's 10th and 90th percentiles."""
    return (band["low"] + band["high"]) / 2
