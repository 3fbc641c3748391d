"""The record builders of the record tests, for the input gate's tests."""

from tests.records.conftest import h200, valid  # noqa: F401
