"""All ORM tables, imported together so Alembic sees every one."""

from app.models.api_token import ApiToken, SignInSession
from app.models.artifact import Artifact
from app.models.bench_job import BenchJob
from app.models.calibration import CalibrationProfile
from app.models.catalog_state import CatalogChange, CatalogState
from app.models.hardware import Hardware
from app.models.llm_model import LlmModel
from app.models.measurement import Measurement
from app.models.official_pairing import OfficialPairing
from app.models.profile import Profile
from app.models.record import Record, RecordEvent
from app.models.record_estimate import RecordEstimate
from app.models.reported_figure import ReportedFigure
from app.models.runtime import Runtime
from app.models.sentinel_check import SentinelCheck
from app.models.task import Task, TaskPrompt

__all__ = [
    "ApiToken",
    "Artifact",
    "BenchJob",
    "CalibrationProfile",
    "CatalogChange",
    "CatalogState",
    "Hardware",
    "LlmModel",
    "Measurement",
    "OfficialPairing",
    "Profile",
    "Record",
    "RecordEstimate",
    "RecordEvent",
    "ReportedFigure",
    "Runtime",
    "SentinelCheck",
    "SignInSession",
    "Task",
    "TaskPrompt",
]
