"""Verdict reasons on pages: known clauses reworded with their figures, unknown ones kept."""

import pytest

from app.i18n import set_locale
from app.i18n.catalogs import reset_locale
from app.i18n.reasons import reason_text


@pytest.fixture
def in_language(request: pytest.FixtureRequest):  # noqa: ANN201
    tokens = []

    def use(locale: str) -> None:
        tokens.append(set_locale(locale))

    yield use
    for token in reversed(tokens):
        reset_locale(token)


@pytest.mark.parametrize(
    ("locale", "reason", "expected"),
    [
        ("en", "fits 16,384 tokens x 4 requests", "fits 16,384 tokens x 4 requests"),
        ("ko", "fits 16,384 tokens x 4 requests", "16,384 토큰 × 요청 4개가 들어감"),
        ("ja", "compressed runtime needs verification; fits 8,192 tokens",
         "圧縮モデルのランタイムは検証待ち。8,192 トークンが収まる"),
        ("ko", "needs 412.3 GB per GPU, 127.2 GB usable; fits only 1,024 tokens, below the "
               "4,096 minimum",
         "GPU당 412.3 GB 필요, 사용 가능 127.2 GB; 1,024 토큰만 들어가 최소치 4,096에 못 미침"),
        ("ja", "fits up to 32768 tokens, not the 131072 requested",
         "要求された 131072 トークンではなく、最大 32768 トークンまで収まる"),
        ("ko", "runs at 8192 tokens with 12 of 48 layers on the CPU",
         "runs at 8192 tokens with 12 of 48 layers on the CPU"),  # unknown: shown as written
        ("ja", "", ""),
    ],
)
def test_reason_text(in_language, locale: str, reason: str, expected: str) -> None:  # noqa: ANN001
    in_language(locale)
    assert reason_text(reason) == expected
