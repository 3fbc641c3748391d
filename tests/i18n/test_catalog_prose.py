"""The catalog's own prose on the pages, in the reader's language: the model page's
description and notes, the recipe page's profile texts, and English where a text has no
translation. Expected sentences are read from the seed files, not copied here."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session

from app.catalog.revision import bump_revision
from app.models import LlmModel, Profile

SEED_DIR = Path(__file__).parents[2] / "seed_data"
MODEL = "qwen3-30b-a3b"
DETAIL = f"/models/{MODEL}/hardware/rtx-4090-24gb/profiles/balanced"


def seed_entry(name: str, key: str, slug: str) -> dict[str, Any]:
    entries = yaml.safe_load((SEED_DIR / name).read_text(encoding="utf-8"))[key]
    return next(entry for entry in entries if entry["slug"] == slug)


def text(element: Any) -> str:
    return " ".join(element.get_text().split())


def page(client: TestClient, path: str, lang: str) -> BeautifulSoup:
    response = client.get(path, params={"lang": lang})
    assert response.status_code == 200, response.text[:500]
    soup = BeautifulSoup(response.text, "html.parser")
    assert soup.html["lang"] == lang
    return soup


@pytest.mark.parametrize("lang", ["en", "ko", "ja"])
def test_the_model_page_speaks_the_readers_language(client: TestClient, lang: str) -> None:
    model = seed_entry("models.yaml", "models", MODEL)
    soup = page(client, f"/models/{MODEL}", lang)
    assert text(soup.select_one("#model-description")) == model["description"][lang]
    assert text(soup.select_one("#model-notes p")) == model["notes"][lang]


@pytest.mark.parametrize("lang", ["en", "ko", "ja"])
def test_the_recipe_page_gives_the_profile_in_the_readers_language(
    client: TestClient, lang: str
) -> None:
    profile = seed_entry("profiles.yaml", "profiles", "balanced")
    soup = page(client, DETAIL, lang)
    assert text(soup.select_one("#profile-summary")) == profile["summary"][lang]
    steps = soup.select("#stop-conditions ul li")
    assert [text(li) for li in steps] == [item[lang] for item in profile["stop_conditions"]]
    order = soup.select("#stop-conditions ol li")
    assert [text(li) for li in order] == [item[lang] for item in profile["measurement_order"]]


def test_the_json_keeps_the_english(client: TestClient) -> None:
    profile = seed_entry("profiles.yaml", "profiles", "balanced")
    answer = client.get(f"/api{DETAIL}", headers={"Accept-Language": "ja"})
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["stop_conditions"] == [i["en"] for i in profile["stop_conditions"]]


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_a_text_with_only_english_shows_english(
    client: TestClient, session: Session, lang: str
) -> None:
    """A row whose description and summary have no translation: the page shows the English,
    unmarked, beside the texts that are translated."""
    model = seed_entry("models.yaml", "models", MODEL)
    profile = seed_entry("profiles.yaml", "profiles", "balanced")
    notes_only = {"notes": {"ko": model["notes"]["ko"], "ja": model["notes"]["ja"]}}
    session.execute(update(LlmModel).where(LlmModel.slug == MODEL).values(translations=notes_only))
    session.execute(update(Profile).where(Profile.slug == "balanced").values(translations={}))
    bump_revision(session)
    session.commit()

    soup = page(client, f"/models/{MODEL}", lang)
    description = soup.select_one("#model-description")
    assert text(description) == model["description"]["en"]
    assert description.attrs == {"id": "model-description"}  # nothing marks the fallback
    assert text(soup.select_one("#model-notes p")) == model["notes"][lang]
    soup = page(client, DETAIL, lang)
    assert text(soup.select_one("#profile-summary")) == profile["summary"]["en"]
    steps = [text(li) for li in soup.select("#stop-conditions ul li")]
    assert steps == [item["en"] for item in profile["stop_conditions"]]
