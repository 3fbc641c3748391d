"""The recipe's words where they apply, and the Mac pages' own facts."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.bench.stages.smoke import SMOKE_MAX_TOKENS, SMOKE_PROMPT

GLM = "glm-5.3-flash"


def detail(client: TestClient, hardware: str) -> BeautifulSoup:
    url = f"/models/{GLM}/hardware/{hardware}/profiles/balanced"
    response = client.get(url)
    assert response.status_code == 200
    return BeautifulSoup(response.text, "html.parser")


def test_mac_page_keeps_to_the_mac(client: TestClient) -> None:
    page = detail(client, "mac-studio-m5-ultra-512gb")
    assert "do not translate them into a Mac procedure" in page.select_one("#mac-commands").text
    labels = [dt.text for dt in page.select("#applied-values dt")]
    assert labels and "CUDA graphs" not in labels  # a Mac has none to turn off
    assert page.select_one("#multi-gpu-check") is None
    text = page.text
    assert "more bandwidth than the M3 Ultra" not in text
    assert "assumes for the unannounced" in text


def test_gpu_server_page_checks_links_each_card_and_a_log_policy(client: TestClient) -> None:
    page = detail(client, "8x-h200-141gb")
    assert page.select_one("#mac-commands") is None
    check = page.select_one("#multi-gpu-check").text
    assert "nvidia-smi topo -m" in check and "not the average" in check
    assert "CUDA graphs" in [dt.text for dt in page.select("#applied-values dt")]
    assert "log handling and access policy" in page.select_one("#exposure").text
    smoke = page.select_one("#check code").text
    assert SMOKE_PROMPT in smoke and f'"max_tokens": {SMOKE_MAX_TOKENS}' in smoke
    assert SMOKE_MAX_TOKENS == 512


def test_model_page_says_why_this_size(client: TestClient) -> None:
    page = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
    why = " ".join(page.select_one("#why-this-size").text.split())
    assert "18B active parameters do not make the files small" in why
    assert "smaller model may be enough" in why
    assert "finish one real task of your own" in why
