"""The catalogs hold every string the code and templates mark, and Korean and Japanese
translate each of them (not empty, not fuzzy, same placeholders and markup)."""

import re
from collections import Counter

import pytest
from babel.messages.catalog import Catalog

from app.i18n import LOCALES, gettext, set_locale
from app.i18n.catalogs import po_path, translations
from app.i18n.labels import VERDICTS, label
from app.i18n.maintenance import (
    POT_PATH,
    TRANSLATED,
    Problem,
    catalog_problems,
    extract,
    message_key,
    read_catalog,
)


@pytest.fixture(scope="module")
def template() -> Catalog:
    return extract()  # straight from the sources, not the committed messages.pot


@pytest.fixture(scope="module")
def catalogs() -> dict[str, Catalog]:
    return {locale: read_catalog(po_path(locale), locale) for locale in LOCALES}


def test_every_marked_string_is_in_every_catalog_and_translated(
    template: Catalog, catalogs: dict[str, Catalog]
) -> None:
    assert [str(p) for p in catalog_problems(template, catalogs)] == []


def test_the_committed_template_matches_the_sources(template: Catalog) -> None:
    committed = read_catalog(POT_PATH)
    assert {message_key(m.id) for m in committed if m.id} == {
        message_key(m.id) for m in template if m.id
    }, "run `servebook i18n extract` and `servebook i18n update`"


def test_the_checker_finds_missing_fuzzy_empty_and_mismatched_strings() -> None:
    template = Catalog()
    for msgid in ("Models", "Records", "%(count)s tokens", "Weights"):
        template.add(msgid, flags=("python-format",) if "%" in msgid else ())
    ko = Catalog(locale="ko")
    ko.add("Models", "모델")
    ko.add("Records", "기록", flags=("fuzzy",))
    ko.add("%(count)s tokens", "%(n)s 토큰", flags=("python-format",))
    ko.add("Weights", "")
    problems = catalog_problems(template, {"ko": ko, "en": Catalog(locale="en")})
    found = {(p.locale, p.msgid, p.what.split(":")[0]) for p in problems}
    assert ("ko", "Records", "fuzzy") in found
    assert ("ko", "Weights", "untranslated") in found
    assert any(p.locale == "ko" and p.msgid == "%(count)s tokens" for p in problems)
    # English shows the msgid: it only has to list every string.
    assert {p.msgid for p in problems if p.locale == "en"} == {
        "Models",
        "Records",
        "%(count)s tokens",
        "Weights",
    }
    assert all(p.what == "missing" for p in problems if p.locale == "en")
    assert not any(p.msgid == "Models" and p.locale == "ko" for p in problems)
    assert isinstance(problems[0], Problem)


TAG = re.compile(r"</?([a-z0-9]+)")


@pytest.mark.parametrize("locale", TRANSLATED)
def test_translations_keep_the_markup_of_the_source(
    locale: str, catalogs: dict[str, Catalog]
) -> None:
    broken = []
    for message in catalogs[locale]:
        if not message.id or not message.string:
            continue
        source = message.id if isinstance(message.id, str) else message.id[0]
        target = message.string if isinstance(message.string, str) else message.string[0]
        if Counter(TAG.findall(source)) != Counter(TAG.findall(target)):
            broken.append(source)
    assert broken == []


def test_catalogs_compile_in_memory_and_answer_in_the_current_language() -> None:
    seen = {}
    for locale in LOCALES:
        token = set_locale(locale)
        try:
            seen[locale] = (gettext("Models"), label("verdict", "exceeds_memory"))
        finally:
            from app.i18n.catalogs import reset_locale

            reset_locale(token)
    assert seen == {
        "en": ("Models", "exceeds memory (unsupported)"),
        "ko": ("모델", "메모리 초과(미지원)"),
        "ja": ("モデル", "メモリ超過（非対応）"),
    }
    assert translations("ja") is translations("ja")  # compiled once per process


def test_lazy_labels_follow_the_language_they_are_shown_in() -> None:
    from app.i18n.catalogs import reset_locale

    token = set_locale("ja")
    try:
        assert str(VERDICTS["experimental"]) == "実験的な実行"
    finally:
        reset_locale(token)
    assert str(VERDICTS["experimental"]) == "experimental"
    assert label("status", "something_new") == "something new"  # an unknown code still shows
