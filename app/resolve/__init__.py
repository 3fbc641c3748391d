"""The one resolution: catalog rows + accepted evidence + the estimator -> resolved recipes.

It answers one typed `Question`; every surface (fit table, detail page, selector, JSON API,
plan, CLI) asks it through `app.asking` and renders what this package returns, computing no
figure of its own. It reads `app.catalog` and `app.estimate`; it never imports the asking
of questions (`app.asking`), the pages or the records package.
"""

from app.resolve.figures import Evidence, MemoryFigure, SpeedFigure
from app.resolve.fit_table import FitRow
from app.resolve.inputs import ModelInputs, RouteChoice, load_catalog_inputs, load_model_inputs
from app.resolve.question import Question
from app.resolve.recipe import ResolvedRecipe, resolve_recipe
from app.resolve.service import RecipeService

__all__ = [
    "Evidence",
    "FitRow",
    "MemoryFigure",
    "ModelInputs",
    "Question",
    "RecipeService",
    "ResolvedRecipe",
    "RouteChoice",
    "SpeedFigure",
    "load_catalog_inputs",
    "load_model_inputs",
    "resolve_recipe",
]
