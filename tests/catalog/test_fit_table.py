"""The fit table of GLM-5.3-Flash must read as its source recipe page does."""

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

GLM = "glm-5.3-flash"
SOURCE_EXCEEDS = {
    "macbook-pro-m5-pro-48gb": 41,
    "rtx-4090-24gb": 22.5,
    "2x-rtx-3090-nvlink-48gb": 45,
    "rtx-pro-6000-96gb": 93,
    "dgx-spark-128gb": 116,
    "ryzen-ai-max-395-128gb": 116,
}
SOURCE_EXPERIMENTAL = {"mac-studio-m5-ultra-256gb": 236, "mac-studio-m5-ultra-512gb": 480}


@pytest.fixture
def fit(client: TestClient) -> dict:
    response = client.get(f"/api/models/{GLM}/fit")
    assert response.status_code == 200
    return response.json()


def rows_by_slug(fit: dict) -> dict[str, dict]:
    return {row["hardware"]: row for row in fit["rows"]}


def test_source_rows_that_exceed_memory(fit: dict) -> None:
    rows = rows_by_slug(fit)
    for slug, usable in SOURCE_EXCEEDS.items():
        row = rows[slug]
        assert row["usable_memory_gb"] == usable
        assert row["verdict"] == "exceeds_memory"
        assert row["verdict_label"] == "exceeds memory (unsupported)"
        assert row["recommended_runtime"] is None
        assert row["start_context"] == 4096
        assert row["profile_status"] == "verification_pending"
        assert row["token_generation"] is None
        assert row["memory"]["required_gb_per_gpu"] > row["memory"]["usable_gb_per_gpu"]


def test_m5_ultra_rows_are_experimental_with_the_reported_speed(fit: dict) -> None:
    rows = rows_by_slug(fit)
    for slug, usable in SOURCE_EXPERIMENTAL.items():
        row = rows[slug]
        assert row["usable_memory_gb"] == usable
        assert row["verdict"] == "experimental"
        assert "compressed runtime needs verification" in row["reason"]
        assert row["start_context"] == 4096
        assert row["profile_status"] == "verification_pending"
        speed = row["token_generation"]
        assert (speed["low"], speed["high"], speed["basis"]) == (81.3, 90.3, "reported")
        assert speed["source"]


def test_server_rows_take_the_official_route(fit: dict) -> None:
    rows = rows_by_slug(fit)
    h200 = rows["8x-h200-141gb"]
    assert h200["verdict"] == "fits"
    assert h200["recommended_runtime"] in ("sglang", "vllm")
    assert {"sglang", "vllm"} == {h200["recommended_runtime"], *h200["alternative_runtimes"]}
    assert h200["token_generation"]["basis"] == "estimated"
    assert h200["memory"]["required_gb_per_gpu"] <= h200["memory"]["usable_gb_per_gpu"]


def test_every_row_links_each_profile(fit: dict) -> None:
    for row in fit["rows"]:
        assert [p["slug"] for p in row["profiles"]] == ["balanced", "speed", "long-context"]
        assert all(p["url"].endswith(f"/profiles/{p['slug']}") for p in row["profiles"])


def test_filters_narrow_the_rows(client: TestClient) -> None:
    metal = client.get(f"/api/models/{GLM}/fit", params={"platform": "metal"}).json()
    assert metal["rows"] and all(r["platform"] == "metal" for r in metal["rows"])
    big = client.get(f"/api/models/{GLM}/fit", params={"min_memory": 200}).json()
    assert big["rows"] and all(r["usable_memory_gb"] >= 200 for r in big["rows"])
    experimental = client.get(f"/api/models/{GLM}/fit", params={"verdict": "experimental"}).json()
    assert {r["hardware"] for r in experimental["rows"]} >= set(SOURCE_EXPERIMENTAL)
    assert experimental["filters"] == {"verdict": "experimental"}


def test_bad_filter_is_a_clear_422(client: TestClient) -> None:
    response = client.get(f"/api/models/{GLM}/fit", params={"verdict": "maybe"})
    assert response.status_code == 422
    assert "verdict" in response.text


def test_unknown_model_is_404_in_json_and_html(client: TestClient) -> None:
    api = client.get("/api/models/no-such-model/fit")
    assert api.status_code == 404
    assert "no-such-model" in api.json()["detail"]
    page = client.get("/models/no-such-model")
    assert page.status_code == 404
    assert "no-such-model" in page.text and "<html" in page.text


def test_model_index_lists_models(client: TestClient) -> None:
    models = client.get("/api/models").json()
    slugs = {m["slug"] for m in models}
    assert GLM in slugs and len(slugs) >= 13
    glm = next(m for m in models if m["slug"] == GLM)
    assert (glm["hf_repo"], glm["params_total_b"], glm["params_active_b"]) == (
        "zai-org/GLM-5.3-Flash",
        320,
        18,
    )
    page = BeautifulSoup(client.get("/").text, "html.parser")
    assert page.find("a", string="GLM-5.3-Flash")["href"].endswith(f"/models/{GLM}")


def test_fit_page_marks_basis_and_assumed_shapes(client: TestClient) -> None:
    page = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
    notice = page.select_one("#basis-notice")
    assert notice is not None and notice.select('[data-basis="derived"]')
    studio = page.select_one('tr[data-hardware="mac-studio-m5-ultra-256gb"]')
    assert "experimental" in studio.text and "81.3 ~ 90.3" in studio.text
    assert studio.select_one(".basis-reported") is not None
    server = page.select_one('tr[data-hardware="8x-h200-141gb"]')
    assert server.select_one(".basis-estimated") is not None


def test_the_table_explains_itself(client: TestClient) -> None:
    """A legend for the pair and profile statuses, no start or status for rows that exceed
    memory, units on the profiles' figures, and derived figures not styled as an error."""
    page = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
    legend = page.select_one("#fit-legend").text
    assert "Verified pair" in legend and "verification pending" in legend
    notice = page.select_one("#basis-notice")
    assert "notice-assumed" not in notice["class"] and "notice-info" in notice["class"]
    exceeding = page.select_one('tr[data-verdict="exceeds_memory"]')
    start = exceeding.select_one('td[data-label="Starting context"]').text.strip()
    assert start == "—"
    profiles = exceeding.select_one('td[data-label="Profiles"]')
    assert profiles.select_one(".status") is None and "nothing to verify" in profiles.text
    assert not profiles.select(".status-verification_pending")
    figures = page.select(".profile-links a + .sub")
    assert figures and all("tok/s" in figure.text for figure in figures)


def test_htmx_filter_returns_only_the_table(client: TestClient) -> None:
    response = client.get(
        f"/models/{GLM}", params={"platform": "metal"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="fit-table">')
    assert "<html" not in response.text
    assert response.headers["vary"] == "HX-Request, Accept-Language, Cookie"
