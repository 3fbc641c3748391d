"""Verdict reasons and warnings on Korean and Japanese pages are worded from their codes:
no English phrase is left in them, on the fit table, the detail page or an estimate, while
the JSON for the same recipe carries the codes (and English beside them)."""

import re

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.i18n.messages import as_message, english

ENGLISH_PHRASE = re.compile(r"[A-Za-z]{2,}(?:[ \t]+[A-Za-z]{2,})+")
DETAIL = "/models/{model}/hardware/{hardware}/profiles/balanced"
# A model far too big for one card, and one that runs there with its experts offloaded.
EXCEEDS = ("deepseek-r1", "rtx-4090-24gb")
OFFLOAD = ("gpt-oss-120b", "rtx-4090-24gb")
# Bare numbers say nothing of the attention heads: eight-way tensor parallel is assumed
# valid, and a warning says so in the reader's language.
BARE_NUMBERS = {
    "params_b": "32",
    "active_params_b": "32",
    "quant": "BF16",
    "hardware": "8x-h200-141gb",
    "runtime": "vllm",
    "context": "4096",
}
# A hybrid-attention shape without its linear-attention layers: the KV cache cannot be
# sized, so the answer is "cannot estimate", with the cause worded from its own code.
UNSIZABLE_SHAPE = {
    "name": "hybrid-model",
    "attention": "hybrid_linear",
    "model_type": "qwen3_next",
    "num_layers": "48",
    "num_attention_heads": "16",
    "num_kv_heads": "2",
    "head_dim": "256",
    "hidden_size": "2048",
    "vocab_size": "151936",
    "embedding_params": "622329856",
    "linear_params": "3000000000",
    "native_context": "262144",
    "quant": "BF16",
    "hardware": "8x-h200-141gb",
    "runtime": "vllm",
    "context": "4096",
}


def page(client: TestClient, path: str, lang: str, **query: str) -> BeautifulSoup:
    response = client.get(path, params={**query, "lang": lang})
    assert response.status_code == 200, response.text[:500]
    return BeautifulSoup(response.text, "html.parser")


def texts(soup: BeautifulSoup, selector: str) -> list[str]:
    found = [node.get_text(" ", strip=True) for node in soup.select(selector)]
    assert found, selector
    return found


def english_phrases(found: list[str]) -> list[str]:
    return [text for text in found if ENGLISH_PHRASE.search(text)]


def detail_json(client: TestClient, model: str, hardware: str) -> dict:
    path = "/api" + DETAIL.format(model=model, hardware=hardware)
    return client.get(path).json()


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_a_model_that_does_not_fit_is_explained_in_the_readers_language(
    client: TestClient, lang: str
) -> None:
    soup = page(client, DETAIL.format(model=EXCEEDS[0], hardware=EXCEEDS[1]), lang)
    reasons = texts(soup, "#reason") + texts(soup, "#estimate-only p")
    assert english_phrases(reasons) == []
    data = detail_json(client, *EXCEEDS)
    assert data["verdict"] == "exceeds_memory"
    (needs,) = data["reason_messages"]
    assert needs["code"] == "needs_memory"
    # The page's figures are the JSON's, formatted for the reader.
    assert f"{needs['params']['needed']:,}" in reasons[0]
    assert (
        data["reason"]
        == needs["text"]
        == (f"needs {needs['params']['needed']} GB per GPU, {needs['params']['usable']} GB usable")
    )


def test_the_english_page_shows_the_english_wording(client: TestClient) -> None:
    soup = page(client, DETAIL.format(model=EXCEEDS[0], hardware=EXCEEDS[1]), "en")
    (reason,) = texts(soup, "#reason")
    assert reason == detail_json(client, *EXCEEDS)["reason"]
    assert english_phrases([reason]) == [reason]


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_an_offloaded_recipe_words_its_split_and_warning(client: TestClient, lang: str) -> None:
    soup = page(client, DETAIL.format(model=OFFLOAD[0], hardware=OFFLOAD[1]), lang)
    # The applied values say why the context and the concurrency are what they are.
    why = texts(soup, '#applied-values dd[data-knob="context"] .sub')
    why += texts(soup, '#applied-values dd[data-knob="max_concurrency"] .sub')
    shown = texts(soup, "#reason") + texts(soup, ".recipe-warning") + why
    assert english_phrases(shown) == []
    data = detail_json(client, *OFFLOAD)
    (runs,) = data["reason_messages"]
    assert runs["code"] == "runs_with_offload"
    assert runs["params"]["split"]["code"] == "offload_split_experts"
    assert [w["code"] for w in data["warning_messages"]][-1] == "offload_slower"
    assert data["warnings"] == [w["text"] for w in data["warning_messages"]]
    applied = data["applied_values"]
    assert applied["why_messages"]["context"]["code"] == "one_request_offload"
    assert applied["why"]["context"].startswith("one request; ")


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_the_fit_table_words_every_rows_reason(client: TestClient, lang: str) -> None:
    soup = page(client, f"/models/{EXCEEDS[0]}", lang)
    reasons = texts(soup, ".reason")
    assert english_phrases(reasons) == []
    rows = client.get(f"/api/models/{EXCEEDS[0]}/fit").json()["rows"]
    codes = {m["code"] for row in rows for m in row["reason_messages"]}
    assert "needs_memory" in codes
    for row in rows:
        assert row["reason"] == "; ".join(m["text"] for m in row["reason_messages"])


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_an_estimate_that_cannot_be_made_says_why_in_the_readers_language(
    client: TestClient, lang: str
) -> None:
    soup = page(client, "/estimate", lang, **UNSIZABLE_SHAPE)
    shown = texts(soup, "#estimate-verdict") + texts(soup, "#estimate-reason")
    assert english_phrases(shown) == []
    assert "hybrid-model" in shown[1]  # the names and numbers are kept as they are
    english_page = page(client, "/estimate", "en", **UNSIZABLE_SHAPE)
    assert texts(english_page, "#estimate-verdict") == ["cannot estimate"]
    assert "exceeds memory" not in english_page.get_text()


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_an_assumed_tensor_parallel_split_is_said_in_the_readers_language(
    client: TestClient, lang: str
) -> None:
    soup = page(client, "/estimate", lang, **BARE_NUMBERS)
    shown = texts(soup, "#estimate-reason") + texts(soup, ".estimate-warning")
    assert english_phrases(shown) == []
    body = {
        "model": {"params_b": 32, "active_params_b": 32, "quant": "BF16"},
        "hardware": "8x-h200-141gb",
        "runtime": "vllm",
        "context": 4096,
    }
    data = client.post("/api/estimate", json=body).json()
    assert data["verdict"] == "experimental" and data["tensor_parallel"] == 8
    codes = [w["code"] for w in data["warning_messages"]]
    assert codes[:2] == ["kv_unknown", "tp_heads_assumed"]
    assert data["warnings"][1].startswith("tensor parallel 8 assumed valid")


# A model the catalog sizes from its parameters, so every breakdown note is the estimator's.
ESTIMATED = ("llama-3.1-8b-instruct", "rtx-4090-24gb")
PROFILE_NAMES = ("Balanced", "Speed", "Long context")
# A verified pair, so the page shows its command and the knobs it leaves at their defaults.
VERIFIED = ("glm-5.3-flash", "8x-h200-141gb")


def without_catalog_notes(found: list[str], data: dict) -> list[str]:
    """The shown notes less the catalog's own technical notes (kept as the seed gives them,
    in English: a file's recorded size, a reported figure's source), which a note quotes."""
    quoted = {
        m["params"]["note"]
        for part in (data.get("memory") or {}).get("breakdown", {}).values()
        for m in part["note_messages"]
        if m["code"] == "weights_recorded"
    }
    speed = data.get("token_generation") or {}
    quoted |= {m["params"]["note"] for m in speed.get("note_messages", []) if "note" in m["params"]}
    for note in quoted:
        found = [text.replace(note, "") for text in found]
    return found


@pytest.mark.parametrize("lang", ["ko", "ja"])
@pytest.mark.parametrize("recipe", [ESTIMATED, OFFLOAD], ids=["estimated", "offloaded"])
def test_the_detail_pages_notes_and_profile_names_are_in_the_readers_language(
    client: TestClient, lang: str, recipe: tuple[str, str]
) -> None:
    soup = page(client, DETAIL.format(model=recipe[0], hardware=recipe[1]), lang)
    notes = texts(soup, ".memory-numbers .sub") + texts(soup, "#token-generation .sub")
    notes += [
        node["title"] for node in soup.select(".memory-numbers [title], #token-generation [title]")
    ]
    data = detail_json(client, *recipe)
    assert english_phrases(without_catalog_notes(notes, data)) == []
    names = texts(soup, "nav.tabs a") + texts(soup, "#profile-status")
    assert not [name for name in names if any(english in name for english in PROFILE_NAMES)]
    # JSON keeps the English note, with the codes and figures the page worded beside it.
    weights = data["memory"]["breakdown"]["weights"]
    assert weights["note"] == "; ".join(m["text"] for m in weights["note_messages"])
    speed = data["token_generation"]
    assert speed["note"] == "; ".join(m["text"] for m in speed["note_messages"])
    assert speed["note_messages"][0]["code"] in {"decode_read", "reported", "measured_speed"}


def test_the_english_detail_page_shows_the_english_notes(client: TestClient) -> None:
    soup = page(client, DETAIL.format(model=ESTIMATED[0], hardware=ESTIMATED[1]), "en")
    data = detail_json(client, *ESTIMATED)
    shown = " ".join(texts(soup, ".memory-numbers .sub"))
    for part in ("kv_cache", "prefill_workspace", "runtime_reserve"):
        assert data["memory"]["breakdown"][part]["note"] in shown
    assert "Balanced" in texts(soup, "nav.tabs a")


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_an_estimates_notes_are_in_the_readers_language(client: TestClient, lang: str) -> None:
    query = {**BARE_NUMBERS, "hardware": "h100-80gb", "runtime": "vllm"}
    soup = page(client, "/estimate", lang, **query)
    notes = texts(soup, "#estimate-breakdown td.sub") + texts(soup, "#estimate-speed .sub")
    assert english_phrases(notes) == []
    body = {
        "model": {"params_b": 32, "active_params_b": 32, "quant": "BF16"},
        "hardware": "h100-80gb",
        "runtime": "vllm",
        "context": 4096,
    }
    data = client.post("/api/estimate", json=body).json()
    reserve = data["memory"]["breakdown"]["runtime_reserve"]
    (fraction, *_) = reserve["note_messages"]
    assert fraction["code"] == "reserve_gpu_memory_utilization"
    assert reserve["note"].startswith(f"gpu_memory_utilization {fraction['params']['fraction']} ")
    # The range says what it held on its class's checks, or that it was widened.
    codes = [note["code"] for note in data["decode_tokens_per_s"]["note_messages"]]
    assert {"decode_range_held", "decode_range_borrowed"} & set(codes)


def test_a_range_from_one_publishers_sweep_says_it_was_widened(client: TestClient) -> None:
    """SGLang on one CUDA card at one request has nine checks, all one publisher's sweep
    (one card, one release): the range is both servers' on one card, widened, and the note
    says why."""
    body = {"model": "qwen3-32b", "hardware": "h200-141gb", "runtime": "sglang"}
    data = client.post("/api/estimate", json=body).json()
    notes = {n["code"]: n["params"] for n in data["decode_tokens_per_s"]["note_messages"]}
    few = notes["decode_range_few_publishers"]
    assert few["segment"] == "sglang/cuda/single/c1" and few["family"] == "servers/*/single/c1"
    assert few["checks"] >= 8 and few["publishers"] < few["needed"] == 3
    for lang in ("ko", "ja"):
        soup = page(client, "/estimate", lang, **body)
        said = texts(soup, "#estimate-speed .sub")
        assert english_phrases(said) == []


@pytest.mark.parametrize("lang", ["ko", "ja"])
def test_the_knobs_notes_are_in_the_readers_language(client: TestClient, lang: str) -> None:
    soup = page(client, DETAIL.format(model=VERIFIED[0], hardware=VERIFIED[1]), lang)
    for flag in soup.select(".knob-default code"):
        flag.decompose()  # a flag is the runtime's own word
    shown = texts(soup, ".knob-default")
    assert english_phrases(shown) == []
    knobs = detail_json(client, *VERIFIED)["knobs"]
    noted = [k for k in knobs if k["note_message"]]
    assert noted
    for knob in noted:
        assert knob["note_message"]["code"].startswith("knob_")
        assert knob["note"] == english(as_message(knob["note_message"]))
