"""Every kind of job the queue runs, gathered in one place as main gathers the routers:
importing this module registers the benchmark, calibration and sentinel kinds with the
queue (app/jobs/kinds.py). The app and every CLI command that runs or queues jobs import
it; the queue itself cannot, as the kinds build on it."""

from app.calibrate.jobs import CalibrationKind
from app.jobs.benchmark import BenchmarkKind
from app.sentinel.jobs import SentinelKind

ALL_KINDS = (BenchmarkKind, CalibrationKind, SentinelKind)
