"""The catalog's prose in English, Korean and Japanese: the seed form, the errors a broken
text gets, that every text readers see is translated, and what the seed stores."""

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog.seed import split_prose
from app.catalog.seed_schema import LANGUAGES, Prose, SeedError, SeedProfile, load_catalog
from app.i18n import LOCALES
from app.models import Hardware, LlmModel, Profile

SEED_DIR = Path(__file__).parents[2] / "seed_data"

# The prose a page shows, by seed file: (top-level key, fields). A list field is a list of
# texts (the profiles' steps). Per-figure `note:`s inside {value, basis, note} are technical
# basis notes and stay English.
READER_PROSE = {
    "models.yaml": ("models", ("description", "notes")),
    "profiles.yaml": ("profiles", ("name", "summary", "stop_conditions", "measurement_order")),
}


def raw_entries(name: str) -> list[dict[str, Any]]:
    key, _ = READER_PROSE[name]
    return yaml.safe_load((SEED_DIR / name).read_text(encoding="utf-8"))[key]


# ------------------------------------------------------------------------ the real data


def test_the_prose_languages_are_the_page_languages() -> None:
    assert LANGUAGES == LOCALES


@pytest.mark.parametrize("name", sorted(READER_PROSE))
def test_every_text_readers_see_is_written_in_korean_and_japanese(name: str) -> None:
    """A new model or profile whose texts are English only fails here."""
    _, fields = READER_PROSE[name]
    missing = []
    for entry in raw_entries(name):
        for field in fields:
            value = entry.get(field)
            texts = value if isinstance(value, list) else [value]
            for index, text in enumerate(texts):
                if text in (None, ""):
                    continue  # an absent note has nothing to translate
                where = f"{entry['slug']}.{field}" + (f"[{index}]" if len(texts) > 1 else "")
                if not isinstance(text, dict):
                    missing.append(f"{where}: English only")
                    continue
                missing += [f"{where}: no {lang}" for lang in ("ko", "ja") if not text.get(lang)]
    assert missing == []


def test_numbers_survive_translation() -> None:
    """Every number in an English text appears as written in its translations."""
    changed = []
    for name, (_, fields) in READER_PROSE.items():
        for entry in raw_entries(name):
            for field in fields:
                value = entry.get(field)
                for text in value if isinstance(value, list) else [value]:
                    if not isinstance(text, dict):
                        continue
                    for token in _kept_tokens(text["en"]):
                        changed += [
                            f"{entry['slug']}.{field} {lang}: {token}"
                            for lang in ("ko", "ja")
                            if token not in text[lang]
                        ]
    assert changed == []


def _kept_tokens(english: str) -> list[str]:
    """The figures of a text (sizes, counts, versions, dates): copied, never reworded."""
    return re.findall(r"\d+(?:[.,]\d+)*", english)


# ------------------------------------------------------------------------ the seed form


def test_prose_is_a_plain_string_or_a_mapping_with_english() -> None:
    assert Prose.model_validate("only English") == Prose(en="only English")
    both = Prose.model_validate({"en": "Stop.", "ko": "중단.", "ja": "中止。"})
    assert both.translations() == {"ko": "중단.", "ja": "中止。"}
    assert str(both) == "Stop."
    assert Prose.model_validate({"en": "Stop.", "ja": "中止。"}).translations() == {"ja": "中止。"}


def test_prose_refuses_a_mapping_without_english_and_an_unknown_language() -> None:
    with pytest.raises(ValidationError, match="needs its English"):
        Prose.model_validate({"ko": "중단.", "ja": "中止。"})
    with pytest.raises(ValidationError, match="unknown language 'fr'"):
        Prose.model_validate({"en": "Stop.", "fr": "Arrêtez."})
    with pytest.raises(ValidationError):
        Prose.model_validate(42)


@pytest.fixture
def seed_copy(tmp_path: Path) -> Path:
    target = tmp_path / "seed_data"
    shutil.copytree(SEED_DIR, target)
    return target


def edit(directory: Path, name: str, change: Any) -> None:
    path = directory / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def load_error(directory: Path) -> SeedError:
    with pytest.raises(SeedError) as caught:
        load_catalog(directory)
    return caught.value


def test_seed_text_without_english_names_file_entry_and_field(seed_copy: Path) -> None:
    edit(
        seed_copy,
        "models.yaml",
        lambda d: d["models"][0].update(description={"ko": "설명", "ja": "説明"}),
    )
    assert str(load_error(seed_copy)) == (
        "seed_data/models.yaml: models[0] (slug glm-5.3-flash): description.en: "
        "a text in several languages needs its English (en), which readers of other "
        "languages fall back to"
    )


def test_seed_text_in_an_unknown_language_names_it(seed_copy: Path) -> None:
    def add_french(data: dict) -> None:
        data["profiles"][0]["stop_conditions"][1]["fr"] = "Gardez une marge."

    edit(seed_copy, "profiles.yaml", add_french)
    assert str(load_error(seed_copy)) == (
        "seed_data/profiles.yaml: profiles[0] (slug balanced): stop_conditions[1].fr: "
        "unknown language 'fr' (give en, ko, ja)"
    )


def test_a_description_needs_english_text(seed_copy: Path) -> None:
    edit(
        seed_copy,
        "models.yaml",
        lambda d: d["models"][2].update(description={"en": "", "ko": "설명", "ja": "説明"}),
    )
    error = load_error(seed_copy)
    assert (error.field, error.message) == ("description", "must not be empty")


def test_a_plain_english_string_still_loads(seed_copy: Path) -> None:
    edit(seed_copy, "models.yaml", lambda d: d["models"][0].update(description="English."))
    model = load_catalog(seed_copy).model("glm-5.3-flash")
    assert model.description == Prose(en="English.")


# ------------------------------------------------------------------------ what is stored


def test_split_prose_keeps_english_and_fills_list_gaps_with_it() -> None:
    profile = SeedProfile.model_validate(
        {
            **raw_entries("profiles.yaml")[0],
            "stop_conditions": [{"en": "One.", "ko": "하나."}, "Two."],
        }
    )
    values, translations = split_prose(
        {"stop_conditions": profile.stop_conditions, "summary": profile.summary, "sort": 1}
    )
    assert values["stop_conditions"] == ["One.", "Two."]
    assert values["sort"] == 1
    assert translations["stop_conditions"] == {"ko": ["하나.", "Two."]}
    assert set(translations["summary"]) == {"ko", "ja"}


@pytest.mark.postgresql
def test_the_seed_stores_english_and_its_translations(session: Session) -> None:
    """On SQLite and PostgreSQL alike: the English column as before, the rest beside it."""
    seed = {m["slug"]: m for m in raw_entries("models.yaml")}
    for model in session.scalars(select(LlmModel)):
        written = seed[model.slug]["description"]
        assert model.description == written["en"]
        assert model.translations["description"] == {"ko": written["ko"], "ja": written["ja"]}
    profiles = {p["slug"]: p for p in raw_entries("profiles.yaml")}
    for profile in session.scalars(select(Profile)):
        steps = profiles[profile.slug]["measurement_order"]
        assert profile.measurement_order == [step["en"] for step in steps]
        assert profile.translations["measurement_order"]["ja"] == [step["ja"] for step in steps]
    # Hardware notes are English only: nothing beside them.
    assert all(row.translations == {} for row in session.scalars(select(Hardware)))
