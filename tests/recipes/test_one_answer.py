"""One question, one answer, however it is asked.

Llama 3.1 70B at Q4_K_M on one RTX 4090, and on two cards that split its layers, asked
through the fit table, `POST /api/estimate` and `servebook estimate`: by catalog slug, by
the card's name, by the model's config.json and by bare parameter counts. Every way gets
the same verdict, the same usable memory per card and the same route's runtime; the ways
that know the model's architecture get the same sizing and speed, and bare numbers (which
know neither the layers nor the KV cache) the same verdict on their own weights.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.cli import main

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
MODEL = "llama-3.1-70b-instruct"
CONFIG = CONFIGS / "llama-3.1-70b.json"
# Machine: (catalog slug, card name, count).
ONE_4090 = ("rtx-4090-24gb", "RTX 4090", 1)
TWO_3090 = ("2x-rtx-3090-nvlink-48gb", "RTX 3090", 2)


@pytest.fixture(autouse=True)
def _commands_read_the_test_database(cli_database: Path) -> None:
    """The console script reads the test's database."""


def api(client: TestClient, model: object, hardware: object) -> dict[str, Any]:
    body = {"model": model, "hardware": hardware}
    if not isinstance(model, str):
        body["runtime"] = "llama.cpp"  # a described model may also name its runtime
    else:
        body["artifact"] = f"{MODEL}-q4-k-m"
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 200, response.json()
    return response.json()


def cli(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["estimate", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def answers(client: TestClient, machine: tuple[str, str, int]) -> dict[str, dict[str, Any]]:
    """The answer of every way of asking, by way."""
    slug, card, count = machine
    named = {"gpu": card, "count": count}
    card_args = ("--gpu", card, "--gpu-count", str(count))
    config = json.loads(CONFIG.read_text())
    numbers = {"params_b": 70, "quant": "Q4_K_M"}
    quant = ("--quant", "Q4_K_M", "--runtime", "llama.cpp")
    artifact = ("--artifact", f"{MODEL}-q4-k-m")
    return {
        "api slug": api(client, MODEL, slug),
        "api named card": api(client, MODEL, named),
        "api config": api(client, {"hf_config": config, "quant": "Q4_K_M"}, named),
        "api numbers": api(client, numbers, named),
        "cli slug": cli("--model", MODEL, "--hardware", slug, *artifact),
        "cli named card": cli("--model", MODEL, *card_args, *artifact),
        "cli config": cli("--hf-config", str(CONFIG), *card_args, *quant),
        "cli numbers": cli("--params-b", "70", *card_args, *quant),
    }


def fit_row(client: TestClient, slug: str) -> dict[str, Any]:
    rows = client.get(f"/api/models/{MODEL}/fit").json()["rows"]
    return next(row for row in rows if row["hardware"] == slug)


def decode(answer: dict[str, Any]) -> tuple[float, float]:
    speed = answer["decode_tokens_per_s"] or answer["token_generation"]
    return speed["low"], speed["high"]


@pytest.mark.parametrize("machine", [ONE_4090, TWO_3090], ids=["one 4090", "two 3090s"])
def test_every_way_of_asking_gets_one_answer(
    client: TestClient, machine: tuple[str, str, int]
) -> None:
    slug, _, count = machine
    table = fit_row(client, slug)
    found = answers(client, machine)
    # The fit table's row is the answer to match: it runs offloaded, on llama.cpp.
    assert table["verdict"] == "fits_with_offload", table["reason"]
    usable = table["memory"]["usable_gb_per_gpu"]
    assert usable == 22.5
    for way, answer in found.items():
        assert answer["verdict"] == table["verdict"], (way, answer["reason"])
        assert answer["usable_gb_per_gpu"] == usable, way
        assert answer["runtime"] == table["recommended_runtime"] == "llama-cpp", way
        # Every way sizes each card for its share of the layers: they are all used.
        assert not any("idle_gpus" == m["code"] for m in answer["warning_messages"]), way
        split_warning = any(m["code"] == "layer_split_in_turn" for m in answer["warning_messages"])
        assert split_warning == (count > 1), way
    known = {way: answer for way, answer in found.items() if "numbers" not in way}
    for way, answer in known.items():
        assert answer["required_gb_per_gpu"] == pytest.approx(
            table["memory"]["required_gb_per_gpu"], abs=0.2
        ), way
        low, high = decode(answer)
        assert low == pytest.approx(table["token_generation"]["low"], rel=0.05), way
        assert high == pytest.approx(table["token_generation"]["high"], rel=0.05), way
    # By slug and by the card's name the catalog's own rows answer: the same figures exactly.
    for way in ("api named card", "cli slug", "cli named card"):
        assert found[way]["memory"] == found["api slug"]["memory"], way
        assert decode(found[way]) == decode(found["api slug"]), way
    # Bare numbers count the weights alone: still offloaded, at about the same speed.
    for way in ("api numbers", "cli numbers"):
        low, high = decode(found[way])
        assert low == pytest.approx(table["token_generation"]["low"], rel=0.25), way
        assert high == pytest.approx(table["token_generation"]["high"], rel=0.25), way


def test_a_named_card_takes_the_catalog_usable_figure_and_says_so(client: TestClient) -> None:
    data = api(client, {"params_b": 8, "quant": "Q4_K_M"}, {"gpu": "RTX 4090"})
    assert data["usable_gb_per_gpu"] == 22.5
    usable = [m for m in data["assumed_messages"] if m["code"] == "usable_from_catalog"]
    assert usable and usable[0]["params"] == {"gb": 22.5, "hardware": "RTX 4090 24GB"}
    # A card the catalog holds no machine of keeps the stated share of its memory.
    other = api(client, {"params_b": 8, "quant": "Q4_K_M"}, {"gpu": "RTX 4080"})
    assert other["usable_gb_per_gpu"] == pytest.approx(16 * 0.9, abs=0.05)
    assert not any(m["code"] == "usable_from_catalog" for m in other["assumed_messages"])


def test_two_cards_are_sized_per_card_on_every_surface(client: TestClient) -> None:
    """The fit table, the detail page, the selector with custom 2 x 24 GB, the API and the
    CLI size two cards that split the layers per card, and agree."""
    slug = TWO_3090[0]
    table = fit_row(client, slug)
    assert table["verdict"] == "fits_with_offload", table["reason"]
    detail = client.get(f"/models/{MODEL}/hardware/{slug}/profiles/balanced")
    page = BeautifulSoup(detail.text, "html.parser")
    assert page.select_one("#verdict .verdict-fits_with_offload") is not None
    custom = {
        "hardware": "custom",
        "memory_gb_per_gpu": 24,
        "gpu_count": 2,
        "usable_memory_gb": 45,
        "bandwidth_gb_s_per_gpu": 936,
        "interconnect": "nvlink",
    }
    selector = client.get(f"/models/{MODEL}/selector", params=custom)
    verdict = BeautifulSoup(selector.text, "html.parser").select_one("#selector-verdict")
    assert "verdict-fits_with_offload" in verdict["class"], selector.text
    described = client.post("/api/estimate", json={"model": MODEL, **custom}).json()
    assert described["verdict"] == "fits_with_offload"
    assert decode(described) == (
        table["token_generation"]["low"],
        table["token_generation"]["high"],
    )
    # Each card holds half of what one card would: the weights' share is split by layer.
    weights = described["memory"]["breakdown"]["weights"]
    assert "weights_split_by_layer" in [m["code"] for m in weights["note_messages"]]


def test_two_cards_need_half_of_what_one_card_needs(client: TestClient) -> None:
    one = cli("--model", "glm-5.3-flash", "--hardware", ONE_4090[0])
    two = cli("--model", "glm-5.3-flash", "--hardware", TWO_3090[0])
    assert one["verdict"] == two["verdict"] == "exceeds_memory"
    assert one["artifact"] == two["artifact"]
    # Per card: half the weights and cache, the same workspace and margin.
    assert two["required_gb_per_gpu"] < one["required_gb_per_gpu"] / 2 + 2


def test_a_described_model_on_two_named_cards_uses_both(client: TestClient) -> None:
    config = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    model = {"hf_config": config, "quant": "Q4_K_M"}
    two = api(client, model, {"gpu": "RTX 3090", "count": 2})
    one = api(client, model, {"gpu": "RTX 3090"})
    assert two["verdict"] == one["verdict"]
    codes = [m["code"] for m in two["warning_messages"]]
    assert "idle_gpus" not in codes and "layer_split_in_turn" in codes
    weights = two["memory"]["breakdown"]["weights"]["gb"]
    assert weights == pytest.approx(one["memory"]["breakdown"]["weights"]["gb"] / 2, abs=0.01)
    assert two["max_context"] >= one["max_context"]
    # The cards take turns: no faster than one card, a little slower for the hand-over.
    assert decode(two)[1] <= decode(one)[1]
    assert decode(two)[1] >= 0.9 * decode(one)[1]
