"""A benchmark run stamped with the runtime version its server reports (read after the run,
while the server is known to answer), for every path that stores a record."""

from typing import Any

from app.bench.plan import BenchPlan
from app.bench.procedure import run_benchmark_sync
from app.bench.result import BenchResult
from app.bench.server_version import read_server_version_sync


def with_server_version(result: BenchResult) -> BenchResult:
    plan = result.plan
    version = read_server_version_sync(
        plan.base_url,
        allowed_hosts=plan.allowed_hosts,
        api_key=plan.api_key.get_secret_value() if plan.api_key else None,
    )
    return result.model_copy(update={"server_version": version})


def run_and_read_version(plan: BenchPlan, **options: Any) -> BenchResult:
    """``run_benchmark_sync`` then the version; raises what the run raises."""
    return with_server_version(run_benchmark_sync(plan, **options))
