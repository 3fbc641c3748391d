"""The "Estimate a model" page: a pasted config, numbers or a catalog model on a named or
catalog card; the share link reproduces the answer with the config carried as its shape."""

import json
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from tests.live_server import LiveServer

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def result_of(response) -> BeautifulSoup:  # noqa: ANN001
    return BeautifulSoup(response.text, "html.parser").select_one("#estimate-result")


def test_share_link_carries_the_shape_and_reproduces_the_answer(client: TestClient) -> None:
    config = (CONFIGS / "qwen3-next-80b-a3b-instruct.json").read_text()
    query = {"config": config, "quant": "Q4_K_M", "hardware": "h200-141gb", "context": "32768"}
    first = client.get("/estimate?" + urlencode(query))
    assert first.status_code == 200
    result = result_of(first)
    share = result.select_one("#estimate-share")["href"]
    params = parse_qs(urlsplit(share).query)
    assert "config" not in params and params["attention"] == ["hybrid_linear"]
    assert params["linear_state_bytes_per_seq"] == ["77266944"]
    assert len(share) < len(config) / 2
    again = result_of(client.get(share))
    for part in (
        "#estimate-verdict",
        "#estimate-memory-line",
        "#estimate-max-context",
        "#estimate-speed",
        "#estimate-breakdown",
    ):
        assert again.select_one(part).get_text(" ", strip=True) == (
            result.select_one(part).get_text(" ", strip=True)
        ), part


def test_an_offloaded_answer_says_where_it_runs_not_that_nothing_fits(client: TestClient) -> None:
    config = (CONFIGS / "llama-3.1-70b.json").read_text()
    query = {"config": config, "quant": "Q4_K_M", "hardware": "gpu", "gpu": "RTX 4090"}
    result = result_of(client.get("/estimate?" + urlencode(query)))
    assert result.select_one("#estimate-verdict").get_text(strip=True) == (
        "fits with offload to system memory"
    )
    line = result.select_one("#estimate-max-context").get_text(" ", strip=True)
    assert "runs offloaded at 4,096 tokens" in line and "none fits" not in line


@pytest.mark.parametrize("lang", ["en", "ko", "ja"])
def test_the_language_switch_alone_asks_nothing(client: TestClient, lang: str) -> None:
    """The header's language links add ?lang= to this page: an empty form in that language,
    not a question with every field missing; with a question, the answer in that language."""
    empty = client.get(f"/estimate?lang={lang}")
    assert empty.status_code == 200
    page = BeautifulSoup(empty.text, "html.parser")
    assert page.html["lang"] == lang
    assert page.select_one("#estimate-errors [data-field]") is None
    assert result_of(empty).get_text(strip=True) == ""
    query = {"params_b": "8", "quant": "Q4_K_M", "gpu": "RTX 4090", "lang": lang}
    answered = client.get("/estimate?" + urlencode(query))
    assert answered.status_code == 200
    assert result_of(answered).select_one("#estimate-verdict") is not None
    share = result_of(answered).select_one("#estimate-share")["href"]
    assert "lang" not in parse_qs(urlsplit(share).query)  # the link is the question alone


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_an_empty_form_says_what_to_give_by_the_forms_labels(client: TestClient, lang: str) -> None:
    """No model and no card: what to give, named as the form labels it, above the form."""
    query = {"model": "", "params_b": "", "hardware": "gpu", "gpu": "", "gpu_count": "1"}
    response = client.get("/estimate?" + urlencode({**query, "lang": lang}))
    assert response.status_code == 422
    page = BeautifulSoup(response.text, "html.parser")
    errors = page.select_one("#estimate-errors")
    assert errors.find_next("form", id="estimate-form") is not None  # before the form
    fields = {li["data-field"]: li.text for li in errors.select("[data-field]")}
    assert set(fields) == {"model", "hardware.gpu"}
    shown = errors.text
    assert "hardware.gpu" not in shown and "String should" not in shown
    if lang == "en":
        assert fields["model"].startswith("Model (one of these): choose a catalog model")
        assert fields["hardware.gpu"].startswith("Card: name a card")
    else:
        assert "모델" in fields["model"] and "카드" in fields["hardware.gpu"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"params_b": "8", "quant": "Q4_K_N", "gpu": "RTX 4090"}, "model.quant"),
        ({"config": "{not json", "gpu": "RTX 4090"}, "model.hf_config"),
        ({"config": json.dumps({"hidden_size": 8}), "gpu": "RTX 4090"}, "model.hf_config"),
        ({"params_b": "8", "quant": "Q4_K_M", "gpu": "RTX 9999"}, "hardware.gpu"),
        ({"attention": "gqa", "num_layers": "x", "gpu": "RTX 4090"}, "model.num_layers"),
        ({"params_b": "8", "quant": "Q4_K_M", "hardware": "custom"}, "memory_gb_per_gpu"),
    ],
)
def test_bad_input_is_shown_by_field_and_kept_in_the_form(
    client: TestClient, query: dict, field: str
) -> None:
    response = client.get("/estimate?" + urlencode(query))
    assert response.status_code == 422
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select_one(f'#estimate-errors [data-field="{field}"]') is not None
    for name, value in query.items():  # nothing typed is lost
        element = page.select_one(f'[name="{name}"]')
        if element is not None and element.name == "input":
            assert element["value"] == value, name
        elif element is not None and element.name == "textarea":
            assert element.get_text() == value, name


@pytest.mark.browser
def test_estimate_page_in_a_browser(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("catalog:index"))
    page.get_by_role("link", name="Estimate a model").click()
    page.fill("#estimate-params", "32")
    page.fill("#estimate-active", "3")
    page.fill("#estimate-quant", "Q4_K_M")
    page.select_option("#estimate-hardware", "gpu")
    page.fill("#estimate-gpu", "RTX 5090")
    page.select_option("#estimate-runtime", "llama-cpp")
    page.fill("#estimate-context", "4096")
    page.click("#estimate-submit")
    expect(page.locator("#estimate-verdict")).to_have_text("experimental")
    expect(page.locator("#estimate-max-context")).to_contain_text("unknown")
    expect(page.locator(".estimate-warning").first).to_contain_text("KV cache unknown")
    expect(page.locator('#estimate-breakdown tr[data-part="kv_cache"] td').nth(1)).to_have_text(
        "unknown"
    )
    speed = page.locator("#estimate-speed .speed")
    low = float(speed.get_attribute("data-low"))
    assert low > 0
    # The address is the request: opening it again gives the same answer.
    url = page.url
    assert "params_b=32" in url and "gpu=RTX+5090" in url
    page.goto(url)
    expect(page.locator("#estimate-speed .speed")).to_have_attribute("data-low", str(low))
    # A pasted config sizes the KV cache.
    config = (CONFIGS / "llama-3.1-8b.json").read_text()
    page.fill("#estimate-params", "")
    page.fill("#estimate-active", "")
    page.fill("#estimate-config", config)
    page.click("#estimate-submit")
    expect(page.locator("#estimate-max-context strong")).not_to_have_text("unknown")
    expect(page.locator("#estimate-described")).to_contain_text("8.03B parameters")
    page.locator("#estimate-share").click()
    expect(page.locator("#estimate-described")).to_contain_text("8.03B parameters")
    assert "config=" not in page.url and "num_kv_heads=8" in page.url
    # A 70B that runs offloaded on the card says where it runs, not that nothing fits.
    page.fill("#estimate-config", (CONFIGS / "llama-3.1-70b.json").read_text())
    page.fill("#estimate-gpu", "RTX 4090")
    page.select_option("#estimate-runtime", "llama-cpp")
    page.click("#estimate-submit")
    expect(page.locator("#estimate-max-context")).to_contain_text("runs offloaded at 4,096 tokens")
    expect(page.locator("#estimate-memory-line")).to_contain_text("22.5")
    assert page.js_errors == []
