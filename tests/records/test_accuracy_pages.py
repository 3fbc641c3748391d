"""GET /api/accuracy and /accuracy: the leave-one-publisher-out and shipped checks' figures
as generated, labels in the reader's language, and every detail page's link landing on a
class the page shows."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.accuracy.labels import class_label
from app.estimate import ESTIMATOR_VERSION
from app.estimate.ranges.accuracy_table import ACCURACY_HISTORY, HELD_OUT_HISTORY
from app.i18n.catalogs import reset_locale, set_locale
from tests.records.conftest import GLM


def test_the_shipped_figures_are_the_generated_ones(client: TestClient) -> None:
    found = client.get("/api/accuracy").json()
    assert found["estimator_version"] == ESTIMATOR_VERSION and found["stated"] == 0.8
    by_key = {c["key"]: c for c in found["classes"]}
    current = [row for row in ACCURACY_HISTORY if row[0] == ESTIMATOR_VERSION]
    assert current, "the generator wrote this version's rows"
    for _, key, count, median, within, held in current:
        shipped = by_key[key]["shipped"]
        assert (shipped["count"], shipped["median_error"]) == (count, median)
        assert (shipped["within_30"], shipped["range_held"]) == (within, held)
        assert by_key[key]["records"] is None
        assert [v["version"] for v in by_key[key]["history"]][-1] == ESTIMATOR_VERSION
    held_out = [row for row in HELD_OUT_HISTORY if row[0] == ESTIMATOR_VERSION]
    assert held_out, "the leave-one-publisher-out generator wrote this version's rows"
    for _, key, count, median, within, held, publishers in held_out:
        figures = by_key[key]["held_out"]
        assert (figures["count"], figures["median_error"]) == (count, median)
        assert (figures["within_30"], figures["range_held"]) == (within, held)
        assert figures["publishers"] == publishers
    assert by_key["sglang/cuda/multi/cN"]["label"] == (
        "SGLang, NVIDIA datacenter and desktop GPUs, several GPUs, concurrent requests"
    )
    assert by_key["llama.cpp/metal/single/c1"]["label"] == (
        "llama.cpp, Apple M-series, one request at a time"
    )


def test_the_page_speaks_the_readers_language_and_the_json_does_not_vary(
    client: TestClient,
) -> None:
    korean = client.get("/api/accuracy?lang=ko").json()
    assert korean == client.get("/api/accuracy").json()
    page = BeautifulSoup(client.get("/accuracy?lang=ko").text, "html.parser")
    row = page.select_one("#class-llama-cpp-metal-single-c1 th").get_text()
    assert "llama.cpp, Apple M 시리즈, 한 번에 요청 하나" in row
    page = BeautifulSoup(client.get("/accuracy?lang=ja").text, "html.parser")
    assert page.select_one("h1").get_text() == "速度推定の精度"


def test_each_class_row_has_its_anchor(client: TestClient) -> None:
    found = client.get("/api/accuracy").json()["classes"]
    page = BeautifulSoup(client.get("/accuracy").text, "html.parser")
    for c in found:
        row = page.select_one(f"#{c['anchor']}")
        assert row is not None and row["data-class"] == c["key"]


def test_the_detail_page_links_to_its_class(client: TestClient, h200: str) -> None:
    detail = client.get(f"/models/{GLM}/hardware/{h200}/profiles/balanced")
    link = BeautifulSoup(detail.text, "html.parser").select_one("#load-accuracy")
    url, anchor = link["href"].split("#")
    assert url.endswith("/accuracy?class=sglang/cuda/multi/cN")
    assert anchor == "class-sglang-cuda-multi-cN"
    page = BeautifulSoup(client.get("/accuracy").text, "html.parser")
    assert page.select_one(f"#{anchor}")["data-class"] == "sglang/cuda/multi/cN"


def test_each_pool_is_named_by_its_load_in_every_language() -> None:
    names = {key: class_label(key) for key in ("vllm/*/*/*", "vllm/*/*/c1", "vllm/*/*/cN")}
    assert len(set(names.values())) == 3, names
    assert names["vllm/*/*/c1"] == "vLLM, all hardware, one request at a time"
    for language in ("ko", "ja"):
        token = set_locale(language)
        try:
            translated = class_label("vllm/*/*/cN")
        finally:
            reset_locale(token)
        assert "all hardware" not in translated and translated.startswith("vLLM, ")


def test_both_servers_pools_at_one_request_are_named_by_their_gpu_count() -> None:
    keys = ("servers/*/*/c1", "servers/*/single/c1", "servers/*/multi/c1")
    assert [class_label(key) for key in keys] == [
        "vLLM and SGLang, all hardware, one request at a time",
        "vLLM and SGLang, one GPU, one request at a time",
        "vLLM and SGLang, several GPUs, one request at a time",
    ]
    for language in ("ko", "ja"):
        token = set_locale(language)
        try:
            named = [class_label(key) for key in keys]
        finally:
            reset_locale(token)
        assert len(set(named)) == 3 and not any("GPU" in n and "several" in n for n in named)


def test_the_answer_for_a_class_is_one_sentence_of_its_own_figures(
    client: TestClient, h200: str
) -> None:
    """At the top of /accuracy for the class asked, on each class's card and beside the
    detail page's range: how many measurements fell inside the range, and the median error,
    from the page's own figures, each publisher left out of the fit where the class has
    such figures; and what a range written "x0.83–1.49" means."""
    key = "sglang/cuda/multi/cN"
    found = {c["key"]: c for c in client.get("/api/accuracy").json()["classes"]}[key]
    figures = found["held_out"]
    held = round(figures["range_held"] * figures["count"])
    error = round(figures["median_error"] * 100)
    expected = (
        f"For {class_label(key)}, each publisher scored by an estimate fitted without its own "
        f"measurements: {held} of {figures['count']} measurements from {figures['publishers']} "
        f"publishers fell inside its range, and the range's middle was a median {error}% off."
    )
    page = BeautifulSoup(client.get(f"/accuracy?class={key}").text, "html.parser")
    assert page.select_one("#accuracy-sentence").get_text(" ", strip=True) == expected
    assert page.select_one(".class-answer").get_text(strip=True).startswith("For llama.cpp")
    card = page.select_one("#class-sglang-cuda-multi-cN .class-answer")
    assert card.get_text(" ", strip=True) == expected
    means = page.select_one("#accuracy-range-means").get_text(" ", strip=True)
    assert means.startswith("x0.") and "times the estimate's own figure" in means
    assert "x0.96–1.20" in page.select_one("#range-explained").get_text()
    detail = client.get(f"/models/{GLM}/hardware/{h200}/profiles/balanced")
    beside = BeautifulSoup(detail.text, "html.parser").select_one("#load-accuracy-answer")
    assert beside.get_text(" ", strip=True).startswith(expected)
    for language, words in (("ko", "건 중"), ("ja", "件のうち")):
        page = BeautifulSoup(
            client.get(f"/accuracy?class={key}&lang={language}").text, "html.parser"
        )
        said = page.select_one("#accuracy-sentence").get_text(" ", strip=True)
        assert words in said and "measurements" not in said and f"{error}%" in said
