"""The upgrade sentinel: re-run a known-good record's plan against a server (often on a new
runtime version), compare with the record within its noise bands, and keep the verdict."""
