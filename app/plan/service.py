"""The plan for a load, over each hardware weighed: the fewest replicas of it whose
requests each meet the speed and first-token targets, or what stops it.

Each concurrency weighed is the estimate's own question (`app.resolve.Question`) at that
load, asked through the same door (`app.asking.answer.ask`), and its figures are the
estimate answer's own (`asked_load_out`): a measured or reported speed stands for one request's
decode where one exists, as everywhere else; beyond one request the figures are estimated.

A replica meets the load when the middle of each request's decode band reaches the target
and the middle of the first-token band is within it, with every request in a slot of its
own (none queued for memory). The middle, not an end: the bands are the 10th-90th
percentiles of what published servers did against the estimate, and under load the
first token's spread is wide (x0.8-9.5), so planning to its far end would buy hardware for
the slowest publisher's server. Both ends are shown beside it. Per-request decode falls
and the first token grows with the requests a replica carries, so the most a replica carries
is a boundary (found in `app/plan/search.py`), and the replicas are the users over that.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import ceil, floor
from typing import Any

from app.asking.answer import CHOOSE_ONE, CUSTOM, ask
from app.asking.ask import RequestHardware, RequestModel, request_hardware, request_model
from app.asking.errors import CodedErrors, coded, errors_status
from app.asking.load_out import asked_load_out
from app.asking.request import GpuByName
from app.config import Settings
from app.estimate.speed.load import MAX_CONCURRENCY, RequestShape
from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, register
from app.models import Hardware
from app.plan.options import MEMORY, AtLoad, Candidate, Plan, PlanOption
from app.plan.schemas import PlanRequest
from app.plan.search import most_carried
from app.resolve import Question
from app.resolve.service import RecipeService

# Loads kept per model (with its inputs, so they go with the catalog revision and evidence).
MEMO_ENTRIES = 2048

UNKNOWN_HARDWARE = register(
    "plan.unknown_hardware", _l("no hardware '%(slug)s' in the catalog; known: %(known)s")
)
CUSTOM_REFUSED = register(
    "plan.custom_refused",
    _l('name a catalog configuration or a card as {"gpu": NAME, "count": N}'),
)
TTFT_BELOW_ONE_REQUEST = register(
    "plan.ttft_below_one_request",
    _l(
        "a single request's first token at %(prompt)s prompt tokens takes at least "
        "%(least)s ms on the fastest hardware weighed (%(hardware)s): no load can beat it"
    ),
)
DECODE_ABOVE_ONE_REQUEST = register(
    "plan.decode_above_one_request",
    _l(
        "%(asked)s tok/s per request is more than one request reaches alone on any hardware "
        "weighed: at most %(most)s tok/s (on %(hardware)s)"
    ),
)
UNKNOWN_PRICE_KEY = register(
    "plan.unknown_price_key",
    _l("no hardware '%(key)s' among those weighed; prices are keyed by: %(known)s"),
)


class PlanRefused(Exception):
    """The request cannot be planned: messages by field, in the reader's language."""

    def __init__(self, errors: Mapping[str, str | Sentence]) -> None:
        super().__init__(errors)
        self.errors = coded(errors)  # the reader's words, with each one's code beside them
        self.status = errors_status(self.errors)  # 422, or the Hub's answer for a repository


def plan_load(
    service: RecipeService, request: PlanRequest, settings: Settings, description: Any = None
) -> Plan:
    """Every option for the load, by cost (by GPUs without prices); raises PlanRefused."""
    model = request_model(service, request.model, settings, None, description)
    if isinstance(model, dict):
        raise PlanRefused(model)
    candidates = _candidates(service, request, model)
    prices = _prices(service, request, candidates)
    options = [
        _plan_one(service, model, candidate, request, prices.get(candidate.label))
        for candidate in candidates
    ]
    least = least_first_token(request, options)
    most = most_decode(request, options)
    refused = {**_ttft_target_errors(request, least), **_decode_target_errors(request, most)}
    if refused:
        raise PlanRefused(refused)
    listed_all = True
    if request.hardware is None:  # by default the configurations that fit; all if none does
        fitting = [option for option in options if option.single.limit(request) != MEMORY]
        listed_all = not fitting
        options = fitting or options
    options.sort(key=_order)
    return Plan(request, options, listed_all, least, most)


def _order(option: PlanOption) -> tuple:
    """Options that meet first, verified before experimental, then by cost (by GPUs
    without prices)."""
    cost = option.cost_per_hour
    return (
        not option.meets,
        option.experimental,
        cost is None,
        cost or 0.0,
        option.gpus,
        option.candidate.label,
    )


def _candidates(
    service: RecipeService, request: PlanRequest, model: RequestModel
) -> list[Candidate]:
    catalog = {h.slug: h for h in service.list_hardware()}
    runtime = next((r for r in model.inputs.runtimes if r.slug == request.runtime), None)
    if request.runtime is not None and runtime is None:
        known = [r.slug for r in model.inputs.runtimes]
        raise PlanRefused({"runtime": CHOOSE_ONE(choices=known)})

    def listed(machine: Hardware) -> Candidate:
        named = RequestHardware(slug=machine.slug)
        return Candidate(machine.slug, machine.name, named, (machine.name,), machine)

    if request.hardware is None:  # with a runtime named, the hardware it runs on
        runs = runtime.platforms if runtime is not None else None
        return [listed(m) for m in catalog.values() if runs is None or m.platform in runs]
    found, errors = [], CodedErrors()
    for index, asked in enumerate(request.hardware):
        where = f"hardware.{index}"
        if isinstance(asked, str):
            if asked == CUSTOM:
                errors.add(where, *_coded(CUSTOM_REFUSED()))
            elif asked not in catalog:
                errors.add(where, *_coded(UNKNOWN_HARDWARE(slug=asked, known=", ".join(catalog))))
            else:
                found.append(listed(catalog[asked]))
            continue
        described = request_hardware(asked, catalog.values())
        if isinstance(described, dict):
            for field, text in described.items():
                errors.add(f"{where}.{field.split('.')[-1]}", text, described.messages.get(field))
            continue
        assert isinstance(asked, GpuByName) and described.name is not None
        found.append(Candidate(described.name, described.name, described, (asked.gpu,)))
    if errors:
        raise PlanRefused(errors)
    return found


def _prices(
    service: RecipeService, request: PlanRequest, candidates: list[Candidate]
) -> dict[str, float]:
    """Each candidate's price per GPU-hour; a key that names no hardware is refused."""
    given = request.price_per_gpu_hour
    if given is None:
        return {}
    if not isinstance(given, dict):
        return {candidate.label: given for candidate in candidates}
    keys = {key: c.label for c in candidates for key in (c.label, *c.price_keys)}
    for machine in service.list_hardware():  # a catalog name not weighed is no mistake
        keys.setdefault(machine.slug, "")
        keys.setdefault(machine.name, "")
    unknown = [key for key in given if key not in keys]
    if unknown:
        known = ", ".join(sorted({c.label for c in candidates}))
        raise PlanRefused(
            {
                f"price_per_gpu_hour.{key}": UNKNOWN_PRICE_KEY(key=key, known=known)
                for key in unknown
            }
        )
    prices: dict[str, float] = {}
    for candidate in candidates:
        for key in (candidate.label, *candidate.price_keys):
            if key in given:
                prices[candidate.label] = given[key]
                break
    return prices


class _Asker:
    """One candidate's question, asked at any concurrency: the same question each time,
    with only its load changed."""

    def __init__(self, model: RequestModel, candidate: Candidate, request: PlanRequest) -> None:
        machine = candidate.machine or candidate.hardware.machine
        assert machine is not None  # a catalog row, or a named card's machine
        self.inputs = model.inputs
        self.question = Question(
            machine,
            request.profile,
            artifact=model.artifact,
            runtime=request.runtime,
            concurrency=1,
            shape=RequestShape(request.prompt_tokens, request.output_tokens),
            evidence=request.evidence == "use",
        )
        self.seen: dict[int, AtLoad] = {}
        # Catalog cards keep each load's answer with the model's inputs (see `at_load`); the
        # question's machine is the key there, so a named card's (built anew) is not kept.
        self.memo = model.inputs.at_load if candidate.machine is not None else None
        self.key = (
            machine.id,
            request.profile,
            request.evidence,
            request.prompt_tokens,
            request.output_tokens,
            model.artifact,
            request.runtime,
        )

    def at(self, concurrency: int) -> AtLoad:
        """One replica at this concurrency: the question's own answer there."""
        if concurrency in self.seen:
            return self.seen[concurrency]
        key = (*self.key, concurrency)
        found = self.memo.get(key) if self.memo is not None else None
        if found is None:
            answer = ask(self.inputs, self.question.at(concurrency))
            if not answer.ok:
                raise PlanRefused(answer.errors)
            assert answer.recipe is not None
            found = AtLoad(concurrency, answer.recipe, asked_load_out(answer.recipe, concurrency))
            if self.memo is not None:
                if len(self.memo) >= MEMO_ENTRIES:
                    self.memo.clear()
                self.memo[key] = found
        self.seen[concurrency] = found
        return self.seen[concurrency]


def _plan_one(
    service: RecipeService,
    model: RequestModel,
    candidate: Candidate,
    request: PlanRequest,
    price: float | None,
) -> PlanOption:
    """The fewest replicas of this hardware that carry the load, or what stops it."""
    ask = _Asker(model, candidate, request)
    users = request.users
    most = min(users, MAX_CONCURRENCY)  # the most requests one replica is asked to carry
    whole = ask.at(most)
    one_replica_limit = _binding(ask, whole, request) if most == users else MEMORY
    single = ask.at(1)

    def option(replicas: int, at: AtLoad, limit: str | None) -> PlanOption:
        return PlanOption(candidate, users, replicas, at, single, limit, one_replica_limit, price)

    if one_replica_limit is None:
        return option(1, whole, None)
    limit = single.limit(request)
    if limit is not None:  # not even one request per replica meets it
        return option(1, whole, limit)
    low = most
    if whole.limit(request) is not None:
        low = most_carried(request, ask.at, users, most)
    replicas = ceil(users / low)
    carried = ask.at(ceil(users / replicas))
    while carried.limit(request) is not None and carried.concurrency > 1:
        replicas = ceil(users / (carried.concurrency - 1))  # the figures were not monotone
        carried = ask.at(ceil(users / replicas))
    return option(replicas, carried, _binding(ask, carried, request))


def _binding(ask: _Asker, at: AtLoad, request: PlanRequest) -> str | None:
    """What stops a replica first as its requests rise: where the KV pool holds fewer
    requests than asked but the requests it does hold already miss the speed or the first
    token, those bind before memory does."""
    limit = at.limit(request)
    running = at.figures.get("running")
    if limit != MEMORY or at.recipe.unsupported or not running or running >= at.concurrency:
        return limit
    return ask.at(running).limit(request) or MEMORY


def least_first_token(
    request: PlanRequest, options: list[PlanOption]
) -> tuple[float, PlanOption] | None:
    """The first token one request sees on the fastest hardware weighed that holds the
    model (the low end of its range), and that hardware: the least a target can ask."""
    singles = _alone(request, options, "ttft_ms", lambda band: band["low"])
    return min(singles, key=lambda pair: pair[0]) if singles else None


def most_decode(request: PlanRequest, options: list[PlanOption]) -> tuple[float, PlanOption] | None:
    """The decode one request sees alone on the fastest hardware weighed that holds the
    model (the middle of its band, as the rule for meets reads it), and that hardware: the
    most a speed target can ask."""
    # Rounded down: the figure said is one a target can ask and still be met; rounded to
    # the nearest, a middle of 170.66 would read 170.7, which it falls short of.
    singles = _alone(request, options, "decode_tokens_per_s", lambda b: floor(_middle(b) * 10) / 10)
    return max(singles, key=lambda pair: pair[0]) if singles else None


def _alone(
    request: PlanRequest, options: list[PlanOption], figure: str, read: Any
) -> list[tuple[float, PlanOption]]:
    """One request's figure, as `read` takes it from its band, on each hardware weighed
    that holds the model."""
    return [
        (read(option.single.figures[figure]), option)
        for option in options
        if option.single.limit(request) != MEMORY and option.single.figures.get(figure)
    ]


def _ttft_target_errors(
    request: PlanRequest, least: tuple[float, PlanOption] | None
) -> dict[str, Sentence]:
    """A first-token target below any single request's first token is refused (422)."""
    if request.max_ttft_ms is None or least is None:
        return {}
    least_ms, fastest = least
    if request.max_ttft_ms >= least_ms:
        return {}
    said = TTFT_BELOW_ONE_REQUEST(
        prompt=fastest.single.figures["request_shape"]["prompt_tokens"],
        least=round(least_ms),
        hardware=fastest.candidate.name,
    )
    return {"max_ttft_ms": said}


def _decode_target_errors(
    request: PlanRequest, most: tuple[float, PlanOption] | None
) -> dict[str, Sentence]:
    """A speed target above what one request reaches alone on any hardware weighed is
    refused (422): no number of replicas makes a request decode faster than it does alone."""
    if most is None:
        return {}
    most_tps, fastest = most
    if request.min_decode_tokens_per_s <= most_tps:
        return {}
    said = DECODE_ABOVE_ONE_REQUEST(
        asked=request.min_decode_tokens_per_s, most=most_tps, hardware=fastest.candidate.name
    )
    return {"min_decode_tokens_per_s": said}


def _middle(band: dict[str, Any]) -> float:
    return (band["low"] + band["high"]) / 2


def _coded(said: Sentence) -> tuple[str, dict[str, Any]]:
    """A sentence as an error's text and its message (code, params, English text)."""
    found = coded({"": said})
    return found[""], found.messages[""]
