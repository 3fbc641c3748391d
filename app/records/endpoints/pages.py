"""What the record pages list and pre-fill; the queries stay in the repositories."""

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from app.catalog.choices import form_choices
from app.catalog.repository import CatalogRepository
from app.models import Record
from app.pagination import Page
from app.records.storage.repository import RecordRepository

PREFILL = ("model", "hardware", "artifact", "runtime", "profile", "command", "applied_values")


class RecordPages:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.catalog = CatalogRepository(session)
        self.records = RecordRepository(session)

    def choices(self, values: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Everything the selects offer; model files and runtimes narrowed to a chosen model."""
        values = values or {}
        choices = form_choices(
            self.session,
            values.get("model"),
            values.get("artifact"),
            values.get("runtime"),
            keep=True,
        )
        return {
            "choices": choices,
            "models": choices.models,
            "hardware": choices.hardware,
            "runtimes": choices.runtimes,
            "profiles": choices.profiles,
        }

    def prefill(self, query: Mapping[str, str]) -> dict[str, str]:
        values = {name: query[name] for name in PREFILL if query.get(name)}
        values.setdefault("outcome", "ok")
        hardware = self.catalog.get_hardware(values["hardware"]) if "hardware" in values else None
        if hardware is not None:
            values["gpu_count"] = str(hardware.gpu_count)
        return values

    def search(
        self, model: str | None, hardware: str | None, state: str | None
    ) -> Sequence[Record]:
        return self.records.search(model, hardware, state)

    def page(
        self,
        model: str | None,
        hardware: str | None,
        state: str | None,
        cursor: str | None,
        limit: int,
    ) -> Page[Record]:
        return self.records.page(model, hardware, state, cursor, limit)

    def listing(
        self,
        model: str | None,
        hardware: str | None,
        state: str | None,
        cursor: str | None,
        limit: int,
    ) -> tuple[Page[Record], dict[int, int]]:
        """The records page's rows and how many points each has."""
        page = self.records.listing(model, hardware, state, cursor, limit)
        return page, self.records.measurement_counts([record.id for record in page.items])
