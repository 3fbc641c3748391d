"""The two resolution figures every benchmark prints the same way, against their targets.

- catalog recompute: every model x hardware x profile recipe (every route assessed) resolved
  from a fresh load of its inputs, as a new catalog revision costs the recipe cache;
- custom estimate: `POST /api/estimate`'s work for a machine described by numbers (parse,
  resolve, the answer's JSON), served from the recipe cache as the app serves it.

Each is timed N times; the median and the best (and the max, for the custom estimate) are
printed in wall-clock and CPU time. On a shared machine the CPU figures move less.
"""

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from app.asking.ask import parse_request, run_estimate
from app.catalog.repository import CatalogRepository
from app.config import Settings
from app.recipes.presenters import estimate_out
from app.resolve import RecipeService, load_catalog_inputs
from app.resolve.cache import RecipeCache
from app.resolve.fit_table import ResolvedModel

RECOMPUTE_TARGET_S = 0.5
CUSTOM_TARGET_MS = 5.0
CUSTOM_REQUEST = {
    "model": "glm-5.3-flash",
    "hardware": "custom",
    "memory_gb_per_gpu": 96,
    "bandwidth_gb_s_per_gpu": 1792,
    "gpu_count": 4,
    "platform": "cuda",
}


@dataclass(frozen=True)
class Timings:
    walls: list[float]
    cpus: list[float]

    def line(self, scale: float, unit: str, digits: int) -> str:
        wall = [w * scale for w in self.walls]
        cpu = [c * scale for c in self.cpus]
        return (
            f"median {statistics.median(wall):.{digits}f} {unit}, best {min(wall):.{digits}f}, "
            f"max {max(wall):.{digits}f} wall; CPU median {statistics.median(cpu):.{digits}f} "
            f"{unit}, best {min(cpu):.{digits}f}"
        )


def timed(work: Callable[[], object], runs: int) -> Timings:
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return Timings(walls, cpus)


def recompute(session: Session) -> int:
    """One whole-catalog resolution from freshly loaded inputs; the number of recipes."""
    hardware = list(CatalogRepository(session).list_hardware())
    recipes = 0
    for inputs in load_catalog_inputs(session):
        resolved = ResolvedModel(inputs, hardware)
        recipes += sum(len(row.recipes) for row in resolved.rows)
    session.expire_all()  # the next pass loads its inputs again
    return recipes


def catalog_recompute(session: Session, runs: int) -> str:
    recipes = recompute(session)  # warm: imports and first queries
    timings = timed(lambda: recompute(session), runs)
    return (
        f"catalog recompute ({recipes} recipes, every route assessed), {runs} runs: "
        f"{timings.line(1, 's', 3)} (target {RECOMPUTE_TARGET_S} s)"
    )


def custom_estimate(sessions: sessionmaker[Session], settings: Settings, runs: int) -> str:
    cache = RecipeCache(sessions)

    def answer() -> str:
        with sessions() as session:
            parsed = parse_request(dict(CUSTOM_REQUEST))
            assert not isinstance(parsed, dict), parsed
            found = run_estimate(RecipeService(session, cache), parsed, settings)
            assert found.result.recipe is not None, found.result.errors
            return json.dumps(estimate_out(found.result.recipe, None, found.hardware_name))

    answer()  # warm: the model's fit table is resolved once per revision
    timings = timed(answer, runs)
    return (
        f"custom estimate (POST /api/estimate's work: 4x 96 GB, glm-5.3-flash), {runs} runs: "
        f"{timings.line(1000, 'ms', 2)} (target {CUSTOM_TARGET_MS:g} ms)"
    )
