"""Which (model file, runtime) pairs are verified, and by what evidence.

The status is computed from evidence, never set by hand: an official source in the
catalog, or accepted reproduction records that loaded and answered.
"""

from collections import defaultdict
from collections.abc import Iterable
from copy import deepcopy
from dataclasses import dataclass, field

from app.catalog.repository import CatalogRepository
from app.estimate.messages import Code, Message, message
from app.i18n.messages import english

SHOWN_RECORDS = 5


@dataclass
class PairEvidence:
    official_url: str | None = None
    official_versions: tuple[str | None, str | None] = (None, None)
    record_ids: list[int] = field(default_factory=list)
    record_versions: list[str] = field(default_factory=list)

    @property
    def latest_record_ids(self) -> list[int]:
        """The newest few records named as the evidence; the rest are a count, so a pair
        verified by thousands of records costs a page no more than one verified by three."""
        return sorted(self.record_ids, reverse=True)[:SHOWN_RECORDS]

    @property
    def verified(self) -> bool:
        return self.official_url is not None or bool(self.record_ids)

    @property
    def source(self) -> str:
        if self.official_url:
            return "official"
        return "records" if self.record_ids else "none"

    def version_range(self) -> str:
        """The runtime versions the evidence covers, in English (JSON and the CLI)."""
        official = self.official_range()
        if official is not None:
            return english(official)
        return self.recorded_versions()

    def official_range(self) -> Message | None:
        """The versions an official source vouches for, worded on a page for its reader."""
        if not self.official_url:
            return None
        low, high = self.official_versions
        if low and high:
            return message(Code.VERSIONS_BETWEEN, low=low, high=high)
        return message(Code.VERSIONS_FROM, low=low) if low else message(Code.VERSIONS_ANY)

    def recorded_versions(self) -> str:
        """The versions the records ran, as they name them (no words to translate)."""
        return ", ".join(sorted(set(self.record_versions)))


class VerifiedPairs:
    """Evidence per (artifact id, runtime id) for one set of artifacts."""

    def __init__(self, evidence: dict[tuple[int, int], PairEvidence]) -> None:
        self._evidence = evidence

    @classmethod
    def load(cls, repo: CatalogRepository, artifact_ids: Iterable[int]) -> "VerifiedPairs":
        ids = list(artifact_ids)
        return cls.from_rows(repo.official_pairing_rows(ids), repo.accepted_ok_pairs(ids))

    @classmethod
    def from_rows(cls, pairings: Iterable[tuple], ok_pairs: Iterable[tuple]) -> "VerifiedPairs":
        """From `official_pairing_rows` and `accepted_ok_pairs` (in record order)."""
        evidence: dict[tuple[int, int], PairEvidence] = defaultdict(PairEvidence)
        for artifact_id, runtime_id, source_url, min_version, max_version in pairings:
            entry = evidence[(artifact_id, runtime_id)]
            entry.official_url = source_url
            entry.official_versions = (min_version, max_version)
        for artifact_id, runtime_id, version, record_id in ok_pairs:
            entry = evidence[(artifact_id, runtime_id)]
            entry.record_ids.append(record_id)
            entry.record_versions.append(version)
        return cls(dict(evidence))

    def evidence(self, artifact_id: int, runtime_id: int) -> PairEvidence:
        return self._evidence.get((artifact_id, runtime_id), PairEvidence())

    def is_verified(self, artifact_id: int, runtime_id: int) -> bool:
        return self.evidence(artifact_id, runtime_id).verified

    def with_record(
        self, artifact_id: int, runtime_id: int, version: str, record_id: int
    ) -> "VerifiedPairs":
        """The same evidence plus one more accepted working record."""
        evidence = deepcopy(self._evidence)
        entry = evidence.setdefault((artifact_id, runtime_id), PairEvidence())
        entry.record_ids.append(record_id)
        entry.record_versions.append(version)
        return VerifiedPairs(evidence)
