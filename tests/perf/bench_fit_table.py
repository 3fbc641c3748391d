"""How long the fit table and a detail page take, per model and over HTTP.

Every row resolves each profile's recipe: the estimator over every loadable route, the
profile's values fitted to memory and the largest context solved. This is the page's hot
path. Prints figures; asserts nothing.
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
from app.db import session_scope, upgrade_database  # noqa: E402
from app.main import create_app  # noqa: E402
from app.resolve.fit_table import ResolvedModel  # noqa: E402
from app.resolve.inputs import load_model_inputs  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database_url=f"sqlite:///{folder}/bench.db", run_worker=False)
        upgrade_database(settings)
        with session_scope(settings) as session:
            seed_catalog(session, load_catalog(PROJECT_ROOT / "seed_data"))
        print(f"{'model':32} {'rows':>5} {'resolve p50 ms':>15} {'HTTP page p50 ms':>17}")
        with TestClient(create_app(settings)) as client, session_scope(settings) as session:
            hardware = list(CatalogService(session).list_hardware())

            def resolve(slug: str) -> ResolvedModel:
                # Uncached: the cost each catalog revision pays once per model.
                return ResolvedModel(load_model_inputs(session, slug), hardware)

            for model in CatalogService(session).list_models():
                rows = resolve(model.slug).rows
                direct = timed(lambda s=model.slug: resolve(s), 5)
                page = timed(lambda s=model.slug: client.get(f"/models/{s}"), 5)
                print(
                    f"{model.slug:32} {len(rows):5} {statistics.median(direct):15.1f}"
                    f" {statistics.median(page):17.1f}"
                )
            detail = timed(
                lambda: client.get(
                    "/models/glm-5.3-flash/hardware/8x-h200-141gb/profiles/balanced"
                ),
                10,
            )
            print(
                f"\ndetail page glm-5.3-flash / 8x-h200 / balanced: p50 "
                f"{statistics.median(detail):.1f} ms, max {max(detail):.1f} ms"
            )


if __name__ == "__main__":
    main()
