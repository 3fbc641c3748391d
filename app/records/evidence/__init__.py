"""What accepted records show on a detail page: the evidence section (`summary`, its
bounded queries in `queries`), the known-good configuration (`known_good`) and the quality
drop that keeps a record from becoming it (`quality_gate`), the safe context ceiling
(`safe_ceiling`) and the runtime build a verified command was verified with (`pinned`).

Imports storage and comparison; never review or the endpoints."""
