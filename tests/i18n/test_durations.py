"""Times are written in the unit their high end takes, and a time past ten minutes is not
printed as a figure: it reads "over 10 min" in every language, on pages and in the CLI."""

import pytest

from app.i18n.catalogs import reset_locale, set_locale
from app.i18n.durations import LONGEST_SHOWN_MS, duration, duration_band
from app.plan.text import option_lines


@pytest.fixture
def locale(request: pytest.FixtureRequest):  # noqa: ANN201
    token = set_locale(request.param)
    yield request.param
    reset_locale(token)


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [
        (420, 850, "420–850 ms"),
        (900, 2_460, "0.9–2.5 s"),
        (5_000, 5_000, "5.0 s"),
        (18_763, 599_000, "18.8–599.0 s"),
        (48_985, 953_189, "49.0 s – over 10 min"),
        (2_223_107, 8_444_110, "over 10 min"),  # a plan's absurd load: no figure at all
    ],
)
def test_a_band_is_written_in_one_unit_and_cut_past_ten_minutes(
    low: float, high: float, shown: str
) -> None:
    assert duration_band({"low": low, "high": high}) == shown


def test_one_time_past_the_longest_is_no_figure() -> None:
    assert duration(LONGEST_SHOWN_MS - 1).endswith(" s")
    assert duration(LONGEST_SHOWN_MS) == "over 10 min"


@pytest.mark.parametrize(
    ("locale", "over"), [("ko", "10분 초과"), ("ja", "10 分超")], indirect=["locale"]
)
def test_over_ten_minutes_in_the_readers_language(locale: str, over: str) -> None:
    assert duration_band({"low": 2_223_107.0, "high": 8_444_110.0}) == over
    assert duration_band({"low": 1_500.0, "high": 2_223_107.0}) == f"1.5 s – {over}"


def test_the_plans_text_prints_no_absurd_first_token() -> None:
    band = {"low": 2_223_107.0, "high": 8_444_110.0, "basis": "estimated"}
    option = {
        "meets": False,
        "limited_by": "ttft",
        "one_replica_limited_by": None,
        "hardware_name": "RTX 4090 24GB",
        "replicas": 1,
        "gpus_per_replica": 1,
        "gpus": 1,
        "concurrency_per_replica": 1000,
        "profile": "balanced",
        "experimental": False,
        "decode_tokens_per_s": {"low": 1.0, "high": 2.0, "basis": "estimated"},
        "ttft_ms": band,
        "throughput_tokens_per_s": None,
        "cost_per_hour": None,
        "command": None,
    }
    text = "\n".join(option_lines(0, option))
    assert "first token      over 10 min (estimated)" in text
    assert "2,223,107" not in text
