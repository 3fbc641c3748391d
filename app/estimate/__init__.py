"""Pure estimator: will a model fit on some hardware, with which runtime, and how fast.

Specs in, numbers with their basis out; no database, web or file access.

Units: every *_gb value is decimal GB (1e9 bytes), as hardware memory labels and the
catalog's usable figures are; exact sizes are bytes as int; speeds are tokens per second.
"""

from app.estimate.basis import Basis, Quantity, weakest
from app.estimate.catalog_pass import SharedEstimates
from app.estimate.errors import EstimateError
from app.estimate.estimator import Estimate, Sizing, estimate, max_context, size
from app.estimate.fit import Assessment, Route, RouteResult, Verdict, assess
from app.estimate.inputs.specs import (
    ArtifactSpec,
    BudgetRule,
    HardwareSpec,
    ModelSpec,
    Plan,
    RuntimeSpec,
    shared_plan,
)
from app.estimate.memory.breakdown import MemoryBreakdown
from app.estimate.memory.kv import kv_cache_bytes
from app.estimate.memory.weights import weights_bytes
from app.estimate.speed.llama_constants import SpeedRange
from app.estimate.version import ESTIMATOR_VERSION

__all__ = [
    "ESTIMATOR_VERSION",
    "ArtifactSpec",
    "Assessment",
    "Basis",
    "BudgetRule",
    "Estimate",
    "EstimateError",
    "HardwareSpec",
    "MemoryBreakdown",
    "ModelSpec",
    "Plan",
    "Quantity",
    "Route",
    "RouteResult",
    "RuntimeSpec",
    "SharedEstimates",
    "Sizing",
    "SpeedRange",
    "Verdict",
    "assess",
    "estimate",
    "kv_cache_bytes",
    "size",
    "max_context",
    "shared_plan",
    "weakest",
    "weights_bytes",
]
