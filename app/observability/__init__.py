"""Health, readiness and Prometheus metrics for whoever runs the app.

`/healthz` answers while the process runs, touching nothing; `/readyz` answers 200 only
when the database is reachable and its schema is at the newest migration; `/metrics`
exposes request counts and latencies, and benchmark jobs and records by state, in the
Prometheus text format (on loopback always; beyond loopback only when enabled).
"""

from app.observability.health import health_router
from app.observability.metrics import RequestMetrics, RequestMetricsMiddleware, metrics_router

__all__ = ["RequestMetrics", "RequestMetricsMiddleware", "health_router", "metrics_router"]
