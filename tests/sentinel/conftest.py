"""The record builders of the record tests, for the sentinel's page test."""

from tests.records.conftest import h200, valid  # noqa: F401
