"""A recipe's speed at a load: one request, the profile's concurrency, and any other
concurrency a surface asks for (the detail page's curve), all computed one way: the served
plan's speed model, the request shape asked and the speculative decoding the profile's
command sets; a concurrency beyond what memory holds runs that many and queues the rest."""

from app.estimate import Estimate
from app.estimate.speed.load import LoadEstimate, RequestShape, SpeedModel, load_estimate
from app.resolve.applied import AppliedValues
from app.resolve.resolved import ResolvedRecipe


def recipe_loads(
    at_load: Estimate, applied: AppliedValues, shape: RequestShape, asked: int | None
) -> tuple[LoadEstimate | None, LoadEstimate | None]:
    """The step model's figures for one request and at the concurrency asked (the
    profile's by default), with the speculative decoding the profile's command sets; a
    concurrency beyond what memory holds runs that many and queues the rest."""
    model = at_load.speed_model
    if model is None:
        return None, None
    single = load_with(model, applied, shape, 1)
    concurrency = asked or applied.max_concurrency
    if concurrency == 1:
        return single, single
    return single, load_with(model, applied, shape, concurrency)


def load_with(
    model: SpeedModel, applied: AppliedValues, shape: RequestShape, concurrency: int
) -> LoadEstimate:
    """The step model's figures at one concurrency, as every line of a recipe shows them."""
    spec, slots = applied.speculative_decoding, applied.max_concurrency
    if concurrency == 1:
        return load_estimate(model, 1, shape, spec)
    return load_estimate(model, concurrency, shape, spec, slots=slots)


def load_at(recipe: ResolvedRecipe, concurrency: int) -> LoadEstimate | None:
    """The recipe's figures at another concurrency, computed as its own one-request and
    profile lines are (same speed model, request shape and speculative decoding), so a
    curve through them meets those lines exactly. None where the recipe shows no speed at
    load (no speed model, or part of the weights in system memory)."""
    if recipe.load is None or recipe.estimate is None or recipe.applied is None:
        return None
    model = recipe.estimate.speed_model
    if model is None:
        return None
    return load_with(model, recipe.applied, recipe.shape, concurrency)
