"""Ranges that say what they held: the classes of runtime and hardware with the spread of
their checks, and the spread of coefficients fitted on the reader's own hardware
(`classes`); the update accepted records make to them (`from_records`); and the shipped
checks' figures (`accuracy_table`).

Imports only its own modules: speed reads the ranges, never the other way round."""
