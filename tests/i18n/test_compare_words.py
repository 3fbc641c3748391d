"""The compare summary on pages: settings, figures, bands and verdicts in the reader's
language, worded from what app.records.effects and setting_changes write for the JSON."""

import pytest

from app.i18n import set_locale
from app.i18n.catalogs import reset_locale
from app.i18n.compare_words import (
    attribution_text,
    band_basis,
    effect_label,
    effect_point,
    setting_label,
    unknown_text,
    verdict_text,
)
from app.records.effects import Band, Effect, sample_band, wilson_band
from app.records.setting_changes import SettingChange, attribution


@pytest.fixture
def in_language():  # noqa: ANN201
    tokens = []
    yield lambda locale: tokens.append(set_locale(locale))
    for token in reversed(tokens):
        reset_locale(token)


def effect(
    metric: str = "ttft_ms",
    label: str = "TTFT",
    point: str = "4,096 tokens x 1",
    band_b: Band | None = None,
    unknown: str = "",
) -> Effect:
    return Effect(
        metric,
        label,
        "ms",
        point,
        100.0,
        60.0,
        Band(95, 105, "lowest to highest of 3 repeats"),
        band_b,
        False,
        unknown,
    )


CHANGES = [
    SettingChange("setup", "runtime version", "0.5.9", "0.5.10"),
    SettingChange("applied value", "context", 8192, 16384, ("--max-model-len",)),
]


def test_english_pages_say_what_the_json_says(in_language) -> None:  # noqa: ANN001
    in_language("en")
    for changes in ([], CHANGES[:1], CHANGES):
        assert attribution_text(changes) == attribution(changes)
    assert effect_point(effect(point="16,384 tokens x 4 (ramp)")) == "16,384 tokens x 4 (ramp)"
    band = wilson_band(45, 50)
    assert band is not None and band_basis(band) == band.basis
    assert sample_band([1.0, 2.0, 3.0]).basis == band_basis(sample_band([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    ("locale", "attributed", "several", "point"),
    [
        (
            "ko",
            "설정 1개 변경: 런타임 버전",
            "설정 2개 변경: 효과를 한 설정 탓으로 돌릴 수 없습니다",
            "4,096 토큰 × 동시 1",
        ),
        (
            "ja",
            "変更された設定は 1 つ：ランタイムのバージョン",
            "変更された設定は 2 個：効果をどの設定によるものとも特定できません",
            "4,096 トークン × 同時 1",
        ),
    ],
)
def test_korean_and_japanese(
    in_language,
    locale: str,
    attributed: str,
    several: str,  # noqa: ANN001
    point: str,
) -> None:
    in_language(locale)
    assert attribution_text(CHANGES[:1]) == attributed
    assert attribution_text(CHANGES) == several
    assert setting_label(CHANGES[1]) == "--max-model-len (context)"  # a flag stays as spelled
    assert effect_point(effect()) == point
    beyond = effect(band_b=Band(55, 65, "lowest to highest of 3 repeats"))
    assert verdict_text(beyond) != "beyond noise (better)" and verdict_text(beyond)
    unknown = effect(unknown="record 7 kept a single figure, no repeats: the band is unknown")
    assert "7" in unknown_text(unknown) and "record" not in unknown_text(unknown)
    assert "3" in band_basis(beyond.band_a) and "repeats" not in band_basis(beyond.band_a)


def test_task_label_and_unknown_phrases(in_language) -> None:  # noqa: ANN001
    in_language("ko")
    task = effect("task_pass_rate", "task needle-qa v2 pass rate", "task prompts")
    assert effect_label(task) == "태스크 needle-qa v2 통과율"
    assert effect_point(task) == "태스크 프롬프트"
    odd = effect(label="something new", metric="other", point="elsewhere")
    assert (effect_label(odd), effect_point(odd)) == ("something new", "elsewhere")  # kept
