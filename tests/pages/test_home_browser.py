"""The home page: models filtered in the browser, a link to each Hugging Face repo, and
"runs on N of M configurations" agreeing with the model's own fit table."""

import re

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from tests.live_server import LiveServer

GLM = "glm-5.3-flash"
RUNNABLE = {"fits", "fits_reduced_context", "fits_with_offload"}
# Each row's count resolves that model's fit table on a fresh server (then it is cached
# per catalog revision): on a loaded test machine all of them can take a while.
COUNTS_MS = 90_000


def shown(page) -> list[str]:  # noqa: ANN001
    return page.eval_on_selector_all(
        "#model-index tr[data-model]:not([hidden])", "rows => rows.map(r => r.dataset.model)"
    )


@pytest.mark.browser
def test_filters_narrow_the_list_and_stay_in_the_url(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("catalog:index"))
    every = shown(page)
    page.wait_for_function(
        f"() => document.querySelectorAll('.runs-on-count').length === {len(every)}",
        timeout=COUNTS_MS,
    )
    assert len(every) >= 13
    page.fill('input[name="q"]', "glm")  # filtered on each input event, in the page
    assert GLM in shown(page) and all("glm" in s for s in shown(page))
    page.fill('input[name="q"]', "")
    page.select_option('select[name="kind"]', "dense")
    dense = shown(page)
    assert dense and GLM not in dense and len(dense) < len(every)
    page.select_option('select[name="size"]', "large")
    page.select_option('select[name="kind"]', "moe")
    assert GLM in shown(page)
    assert re.search(r"size=large", page.url) and re.search(r"kind=moe", page.url)
    page.reload()  # the URL keeps the filter
    assert page.locator('select[name="size"]').input_value() == "large"
    assert GLM in shown(page) and len(shown(page)) < len(every)
    page.select_option('select[name="publisher"]', "Z.ai")
    page.fill('input[name="q"]', "no such model")
    assert shown(page) == [] and page.locator("#no-models").is_visible()
    assert page.js_errors == []


def test_each_model_links_its_repo_and_counts_what_runs(client: TestClient) -> None:
    home = BeautifulSoup(client.get("/").text, "html.parser")
    row = home.select_one(f'tr[data-model="{GLM}"]')
    assert row.select_one("a.hf-link")["href"] == "https://huggingface.co/zai-org/GLM-5.3-Flash"
    count_url = row.select_one(".runs-on")["hx-get"]
    cell = BeautifulSoup(client.get(count_url).text, "html.parser").select_one(".runs-on-count")
    fit = client.get(f"/api/models/{GLM}/fit").json()
    rows = fit["rows"]
    assert fit["pages"] == 1
    runnable = [r for r in rows if r["verdict"] in RUNNABLE]
    assert (int(cell["data-runs"]), int(cell["data-of"])) == (len(runnable), len(rows))
    assert f"runs on {len(runnable)} of {len(rows)} configurations" in cell.text
    assert 0 < len(runnable) < len(rows)
    assert client.get("/models/no-such-model/runs-on").status_code == 404
