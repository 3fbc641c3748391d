"""What the record and benchmark forms offer once a model is chosen: its own model files,
and the runtimes that read the formats they come in (narrowed to one format once a model
file is chosen). With no model chosen, everything, so the form still works without
JavaScript."""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.models import Artifact, Hardware, LlmModel, Profile, Runtime


@dataclass(frozen=True)
class FormChoices:
    models: Sequence[LlmModel]
    model: LlmModel | None  # the chosen one
    artifacts: Sequence[Artifact]  # the chosen model's model files, or every model's
    runtimes: Sequence[Runtime]
    hardware: Sequence[Hardware]
    profiles: Sequence[Profile]

    def artifacts_by_model(self) -> list[tuple[LlmModel, list[Artifact]]]:
        """Model files grouped under their model's name, in the models' order."""
        return [
            (m, [a for a in self.artifacts if a.model_id == m.id])
            for m in self.models
            if any(a.model_id == m.id for a in self.artifacts)
        ]


def form_choices(
    session: Session,
    model: str | None = None,
    artifact: str | None = None,
    runtime: str | None = None,
    keep: bool = False,
) -> FormChoices:
    """The choices for a chosen model (slug) and model file; unknown slugs count as none, and
    a model file of another model narrows nothing (the model changed before the file did).

    `keep`: a submitted form shown again keeps the model file and runtime it was sent with
    even where they do not match, so the error beside them shows what was chosen.
    """
    repo = CatalogRepository(session)
    models = repo.list_models_with_artifacts()
    every_file = [a for m in models for a in m.artifacts]
    chosen = next((m for m in models if m.slug == model), None)
    runtimes = all_runtimes = repo.list_runtimes()
    artifacts = every_file
    if chosen is not None:
        picked = next((a for a in chosen.artifacts if a.slug == artifact), None)
        formats = {picked.format} if picked else {a.format for a in chosen.artifacts}
        kept_runtime, kept_file = (runtime, artifact) if keep else (None, None)
        runtimes = [r for r in all_runtimes if formats & set(r.formats) or r.slug == kept_runtime]
        artifacts = [a for a in every_file if a.model_id == chosen.id or a.slug == kept_file]
    return FormChoices(
        models, chosen, artifacts, runtimes, repo.list_hardware(), repo.list_profiles()
    )
