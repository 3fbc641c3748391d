"""Catalog lookups for the model index; recipes are resolved in `app.resolve`."""

from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.models import Hardware, LlmModel, Runtime


class CatalogService:
    def __init__(self, session: Session) -> None:
        self.repo = CatalogRepository(session)

    def list_models(self) -> Sequence[LlmModel]:
        return self.repo.list_models()

    def list_hardware(self) -> Sequence[Hardware]:
        return self.repo.list_hardware()

    def list_runtimes(self) -> Sequence[Runtime]:
        return self.repo.list_runtimes()
