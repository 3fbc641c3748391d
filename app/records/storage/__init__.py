"""Submitting and keeping records: one validation path for every submission
(`validation`), the numbers a reviewer would question flagged on the way in
(`plausibility`), submitting (`service`), the write path's statements (`store`), every
record query (`repository`), a record's configuration as one value (`configuration`),
medians in the database (`medians`), values kept per revision (`per_revision`) and how
self-reporting runtimes are named (`runtime_names`).

Imports only the record's schema (`app.records.schemas`): every other room builds on it."""
