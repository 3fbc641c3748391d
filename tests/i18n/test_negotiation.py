"""Which language a request gets: ?lang=, then the cookie, then Accept-Language by quality."""

import pytest

from app.i18n.negotiation import accepted_languages, choose_locale


@pytest.mark.parametrize(
    ("query", "cookie", "header", "expected"),
    [
        (None, None, None, "en"),
        (None, None, "", "en"),
        (None, None, "ko-KR,ko;q=0.9,en;q=0.8", "ko"),
        (None, None, "en;q=0.5, ja;q=0.9", "ja"),
        (None, None, "fr, ja;q=0.3, ko;q=0.2", "ja"),
        (None, None, "fr-FR, de", "en"),
        (None, None, "ja;q=0, ko;q=0.1", "ko"),
        (None, None, "JA-jp", "ja"),
        (None, None, "ja;q=abc, ko;q=0.4", "ko"),
        (None, "ja", "ko", "ja"),
        ("ko", "ja", "en", "ko"),
        ("xx", "ja", "ko", "ja"),
        ("xx", "yy", "ko;q=0.5", "ko"),
        ("", None, "ja", "ja"),
    ],
)
def test_choose_locale(
    query: str | None, cookie: str | None, header: str | None, expected: str
) -> None:
    assert choose_locale(query, cookie, header) == expected


def test_accepted_languages_orders_by_quality_then_position() -> None:
    header = "de;q=0.5, ko, *;q=0.1, ja;q=0.5, en;q=0"
    assert accepted_languages(header) == ["ko", "de", "ja"]
