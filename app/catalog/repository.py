"""Every catalog query lives here; relationships load explicitly."""

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Row, Select, func, select
from sqlalchemy.orm import Session, selectinload

from app.models import (
    Hardware,
    LlmModel,
    Measurement,
    OfficialPairing,
    Profile,
    Record,
    ReportedFigure,
    Runtime,
)

T = TypeVar("T")


class CatalogRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def find_by(self, model_class: type[T], **key: Any) -> T | None:
        return self.session.scalars(select(model_class).filter_by(**key)).one_or_none()

    def list_models(self) -> Sequence[LlmModel]:
        return self.session.scalars(select(LlmModel).order_by(LlmModel.family, LlmModel.name)).all()

    def list_models_with_artifacts(self) -> Sequence[LlmModel]:
        statement = select(LlmModel).options(selectinload(LlmModel.artifacts))
        return self.session.scalars(statement.order_by(LlmModel.family, LlmModel.name)).all()

    def get_model(self, slug: str) -> LlmModel | None:
        statement = select(LlmModel).where(LlmModel.slug == slug).options(*_MODEL_ROWS)
        return self.session.scalars(statement).one_or_none()

    def list_models_with_rows(self) -> Sequence[LlmModel]:
        """Every model as `get_model` loads one, in catalog order."""
        statement = select(LlmModel).order_by(LlmModel.family, LlmModel.name).options(*_MODEL_ROWS)
        return self.session.scalars(statement).all()

    def list_hardware(self) -> Sequence[Hardware]:
        return self.session.scalars(select(Hardware).order_by(Hardware.sort, Hardware.name)).all()

    def get_hardware(self, slug: str) -> Hardware | None:
        return self.find_by(Hardware, slug=slug)

    def list_runtimes(self) -> Sequence[Runtime]:
        return self.session.scalars(select(Runtime).order_by(Runtime.priority, Runtime.name)).all()

    def list_profiles(self) -> Sequence[Profile]:
        return self.session.scalars(select(Profile).order_by(Profile.sort, Profile.name)).all()

    def get_profile(self, slug: str) -> Profile | None:
        return self.find_by(Profile, slug=slug)

    def records_of_artifact(self, artifact_id: int, model_id: int) -> int:
        """How many records name this artifact under this model (any review state)."""
        return (
            self.session.scalar(
                select(func.count())
                .select_from(Record)
                .where(Record.artifact_id == artifact_id, Record.model_id == model_id)
            )
            or 0
        )

    def reported_figures(self, model_id: int) -> Sequence[ReportedFigure]:
        return self.session.scalars(
            select(ReportedFigure).where(ReportedFigure.model_id == model_id)
        ).all()

    def official_pairings(
        self, artifact_ids: Iterable[int] | None = None
    ) -> Sequence[OfficialPairing]:
        statement = select(OfficialPairing).options(
            selectinload(OfficialPairing.runtime), selectinload(OfficialPairing.artifact)
        )
        if artifact_ids is not None:
            statement = statement.where(OfficialPairing.artifact_id.in_(list(artifact_ids)))
        return self.session.scalars(statement).all()

    def official_pairing_rows(self, artifact_ids: Iterable[int]) -> Sequence[Row[Any]]:
        """(artifact_id, runtime_id, source_url, min_version, max_version) of official pairings."""
        statement = select(
            OfficialPairing.artifact_id,
            OfficialPairing.runtime_id,
            OfficialPairing.source_url,
            OfficialPairing.min_version,
            OfficialPairing.max_version,
        ).where(OfficialPairing.artifact_id.in_(list(artifact_ids)))
        return self.session.execute(statement).all()

    def accepted_ok_pairs(self, artifact_ids: Iterable[int]) -> Sequence[Row[Any]]:
        """(artifact_id, runtime_id, runtime_version, record_id) of accepted, working records."""
        statement = (
            select(Record.artifact_id, Record.runtime_id, Record.runtime_version, Record.id)
            .where(
                Record.artifact_id.in_(list(artifact_ids)),
                Record.review_state == "accepted",
                Record.outcome == "ok",
            )
            .order_by(Record.id)
        )
        return self.session.execute(statement).all()

    def accepted_single_stream_points(self, model_id: int) -> Sequence[Row[Any]]:
        """Single-request measurements of accepted, working records of a model."""
        return self.session.execute(
            _single_stream_points().where(Record.model_id == model_id)
        ).all()

    def all_accepted_single_stream_points(self) -> Sequence[Row[Any]]:
        """`accepted_single_stream_points` of every model, with the model's id last."""
        statement = _single_stream_points().add_columns(Record.model_id)
        return self.session.execute(statement).all()


# What resolving a model's recipes reads of it beyond its own row.
_MODEL_ROWS = (
    selectinload(LlmModel.artifacts),
    selectinload(LlmModel.reported_figures).selectinload(ReportedFigure.hardware),
)


def _single_stream_points() -> Select[Any]:
    """Single-request measurements of accepted, working records, in record order."""
    return (
        select(
            Record.id.label("record_id"),
            Record.hardware_id,
            Record.profile_id,
            Record.artifact_id,
            Record.runtime_id,
            Measurement.context_length,
            Measurement.decode_tokens_per_s,
            Measurement.ttft_ms,
            Measurement.peak_memory_gb_per_gpu,
        )
        .join(Measurement, Measurement.record_id == Record.id)
        .where(
            Record.review_state == "accepted",
            Record.outcome == "ok",
            Measurement.concurrency == 1,
        )
        .order_by(Record.id, Measurement.id)
    )
