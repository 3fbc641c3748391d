"""How long a plan for a load over the whole catalog takes: every hardware configuration
weighed for 32 users at 20 tok/s each, the first token within 3 s at a 2,048-token prompt,
per model, through the service (as the server holds its resolved models) and over HTTP
(`POST /api/plan`). A load asked before answers from the resolutions kept with the model;
"new load" asks another number of users each time (32, 33, ...), so most of its
resolutions are fresh. Target: under 50 ms. Prints figures; asserts nothing.
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fastapi.testclient import TestClient  # noqa: E402

from app.catalog.seed import seed_catalog  # noqa: E402
from app.catalog.seed_schema import load_catalog  # noqa: E402
from app.catalog.service import CatalogService  # noqa: E402
from app.config import PROJECT_ROOT, Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker, session_scope, upgrade_database  # noqa: E402
from app.main import create_app  # noqa: E402
from app.plan.schemas import PlanRequest  # noqa: E402
from app.plan.service import plan_load  # noqa: E402
from app.resolve.cache import RecipeCache  # noqa: E402
from app.resolve.service import RecipeService  # noqa: E402

TARGET_MS = 50.0
REPEAT = 15
LOAD = {
    "users": 32,
    "min_decode_tokens_per_s": 20,
    "max_ttft_ms": 3000,
    "prompt_tokens": 2048,
    "output_tokens": 512,
    "price_per_gpu_hour": 2.5,
}


def timed(fn, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def p95(samples: list[float]) -> float:
    return sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database_url=f"sqlite:///{folder}/bench.db", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        engine = make_engine(settings)
        sessions = make_sessionmaker(engine)
        cache = RecipeCache(sessions)
        worst = 0.0
        print(
            f"{'model':32} {'options':>7} {'meet':>5} {'new load p50/p95 ms':>20}"
            f" {'same load p50/p95 ms':>21} {'HTTP p50/p95 ms':>16}"
        )
        with TestClient(create_app(settings)) as client, sessions() as session:
            service = RecipeService(session, cache)
            models = [m.slug for m in CatalogService(session).list_models()]
            for slug in models:
                request = PlanRequest.model_validate({"model": slug, **LOAD})
                plan = plan_load(service, request, settings)  # resolves the model once
                users = iter(range(LOAD["users"] + 1, LOAD["users"] + 1 + REPEAT))
                fresh = timed(
                    lambda r=request, u=users: plan_load(
                        service, r.model_copy(update={"users": next(u)}), settings
                    ),
                    REPEAT,
                )
                again = timed(lambda r=request: plan_load(service, r, settings), REPEAT)
                body = {"model": slug, **LOAD}
                client.post("/api/plan", json=body)
                http = timed(lambda b=body: client.post("/api/plan", json=b), REPEAT)
                meeting = sum(option.meets for option in plan.options)
                worst = max(worst, statistics.median(fresh), statistics.median(http))
                print(
                    f"{slug:32} {len(plan.options):7} {meeting:5}"
                    f" {statistics.median(fresh):10.1f}/{p95(fresh):<9.1f}"
                    f" {statistics.median(again):11.1f}/{p95(again):<9.1f}"
                    f" {statistics.median(http):7.1f}/{p95(http):<8.1f}"
                )
        engine.dispose()
        verdict = "within" if worst < TARGET_MS else "OVER"
        print(
            f"slowest model, p50 (new load or HTTP): {worst:.1f} ms"
            f" ({verdict} the {TARGET_MS:.0f} ms target)"
        )


if __name__ == "__main__":
    main()
