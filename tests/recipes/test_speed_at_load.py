"""Speed at load on every surface: each profile's line at its own concurrency (per-request
decode, total throughput, first token) is one figure on the fit table (JSON and page), the
detail page and its JSON, `POST /api/estimate` and `servebook estimate --json`; the detail
page draws where a step's time goes and names the one change most likely to help, in the
reader's language."""

import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.cli import main

GLM = "glm-5.3-flash"
H200 = "8x-h200-141gb"
DETAIL = f"/models/{GLM}/hardware/{H200}/profiles/{{profile}}"
# Each profile's own concurrency on a server (seed_data/profiles.yaml).
PROFILES = {"balanced": 16, "speed": 4, "long-context": 1}

Line = tuple[float, float, float, float, float, float]


@pytest.fixture(autouse=True)
def _commands_read_the_test_database(cli_database: Path) -> None:
    """The console script reads the test's database."""


def line_of(data: dict[str, Any]) -> Line:
    """Per-request decode, total throughput and first token, low and high, from a JSON line."""
    decode, total, first = (
        data["decode_tokens_per_s"],
        data["throughput_tokens_per_s"],
        data["ttft_ms"],
    )
    return (decode["low"], decode["high"], total["low"], total["high"], first["low"], first["high"])


def line_in_html(node: Any) -> Line:
    """The same figures as a page marks them up on its load line."""
    names = ("decode-low", "decode-high", "throughput-low", "throughput-high", "ttft-low")
    return tuple(float(node[f"data-{name}"]) for name in (*names, "ttft-high"))  # type: ignore[return-value]


def cli_json(profile: str, concurrency: int) -> dict[str, Any]:
    args = ["estimate", "--model", GLM, "--hardware", H200, "--profile", profile]
    result = CliRunner().invoke(main, [*args, "--concurrency", str(concurrency), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_every_surface_shows_each_profiles_line_at_its_concurrency(client: TestClient) -> None:
    rows = client.get(f"/api/models/{GLM}/fit").json()["rows"]
    row = next(r for r in rows if r["hardware"] == H200)
    fit_lines = {p["slug"]: p["at_profile_concurrency"] for p in row["profiles"]}
    table = BeautifulSoup(client.get(f"/models/{GLM}").text, "html.parser")
    html_row = table.select_one(f'#fit-table tr[data-hardware="{H200}"]')
    # The table says which request its token generation is for.
    stated = table.select_one("#fit-request").text
    assert "1,024" in stated and "256" in stated
    for profile, concurrency in PROFILES.items():
        detail = client.get(f"/api/{DETAIL.format(profile=profile).lstrip('/')}").json()
        at_load = detail["at_profile_concurrency"]
        assert at_load["concurrency"] == concurrency == detail["applied_values"]["max_concurrency"]
        expected = line_of(at_load)
        assert fit_lines[profile]["concurrency"] == concurrency
        assert line_of(fit_lines[profile]) == expected, profile
        body = {"model": GLM, "hardware": H200, "profile": profile, "concurrency": concurrency}
        api = client.post("/api/estimate", json=body).json()
        assert api["concurrency"] == concurrency and line_of(api) == expected, profile
        cli = cli_json(profile, concurrency)
        assert cli["concurrency"] == concurrency and line_of(cli) == expected, profile
        marked = html_row.select_one(f'.profile-line[data-profile="{profile}"] .load-line')
        assert int(marked["data-concurrency"]) == concurrency
        assert line_in_html(marked) == expected, profile
        page = BeautifulSoup(client.get(DETAIL.format(profile=profile)).text, "html.parser")
        shown = page.select_one(f'#speed-at-load .load-line[data-concurrency="{concurrency}"]')
        assert line_in_html(shown) == expected, profile
        # The breakdown drawn is the JSON's, term by term.
        drawn = {
            tr["data-term"]: float(tr["data-share"])
            for tr in page.select("#speed-at-load .step-numbers tr")
        }
        assert drawn == {term: share for term, share in at_load["breakdown"].items() if share > 0}
        # Every line is for the stated default request, and the page says which.
        said = page.select_one("#load-shape")
        for line in (detail["single_request"], at_load, api):
            shape = line.get("request_shape") or line
            assert (shape["prompt_tokens"], shape["output_tokens"]) == (1024, 256), profile
        assert (said["data-prompt"], said["data-output"]) == ("1024", "256")
        assert "1,024" in said.text and "256" in said.text
    # Serving sixteen at once: each request is slower than one alone, the total far higher.
    balanced = client.get(f"/api/{DETAIL.format(profile='balanced').lstrip('/')}").json()
    one, many = balanced["single_request"], balanced["at_profile_concurrency"]
    assert many["decode_tokens_per_s"]["high"] < one["decode_tokens_per_s"]["high"]
    assert many["throughput_tokens_per_s"]["low"] > 4 * one["throughput_tokens_per_s"]["low"]
    assert many["ttft_ms"]["low"] > one["ttft_ms"]["low"]  # sixteen prompts queue


def test_the_cli_prints_the_line_at_the_concurrency_asked() -> None:
    args = ["estimate", "--model", GLM, "--hardware", H200, "--concurrency", "16"]
    text = CliRunner().invoke(main, args).output
    data = cli_json("balanced", 16)
    decode, total = data["decode_tokens_per_s"], data["throughput_tokens_per_s"]
    assert (
        f"at 16 at once    {decode['low']:,.1f} ~ {decode['high']:,.1f} tok/s each, "
        f"{total['low']:,.1f} ~ {total['high']:,.1f} tok/s total" in text
    )
    assert "time per step    reading weights" in text
    assert f"range            {data['coverage']['note']}" in text
    ignored = ["--prompt-tokens", "2000", "--output-tokens", "500", "--ignore-evidence"]
    shaped = CliRunner().invoke(main, [*args, *ignored, "--json"])
    request = json.loads(shaped.output)["request_shape"]
    assert request == {
        "prompt_tokens": 2000,
        "output_tokens": 500,
        "depth_tokens": 2250,
        "defaulted": [],
    }
    # Without lengths the CLI states the default request as the answer's assumption.
    said = "assumed          request lengths not all given: each request is counted as 1,024"
    assert said in text
    assert "requests         1,024 tokens of prompt, 256 of output" in text
    refused = CliRunner().invoke(main, [*args[:-1], "0"])
    assert refused.exit_code != 0 and "--concurrency" in refused.output


# The words a reader sees for the block's title, a term and a line, per language.
WORDS = {
    "en": ("Speed at load", "reading weights", "tok/s each", "Where the time goes"),
    "ko": ("부하에서의 속도", "가중치 읽기", "요청당", "시간이 쓰이는 곳"),
    "ja": ("負荷時の速度", "重みの読み出し", "リクエストごとに", "時間の内訳"),
}


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_the_detail_page_shows_the_load_and_where_the_time_goes(
    client: TestClient, lang: str
) -> None:
    title, term, each, breakdown = WORDS[lang]
    page = BeautifulSoup(
        client.get(DETAIL.format(profile="balanced"), params={"lang": lang}).text, "html.parser"
    )
    block = page.select_one("#speed-at-load")
    assert block.select_one("h2").text == title
    assert breakdown in block.select_one("h3").text
    lines = {tr["data-concurrency"] for tr in block.select("tr.load-line")}
    assert lines == {"1", "16"}  # one request, and the profile's sixteen
    assert term in block.select_one('.step-numbers tr[data-term="weights"]').text
    widths = [float(seg["data-width"]) for seg in block.select(".step-chart .seg")]
    assert 99 <= sum(widths) <= 101  # the bar is the whole step
    assert block.select_one("#load-coverage").text.strip()
    advice = block.select_one("#advice")
    assert advice["data-change"] == "speculative"  # balanced leaves MTP off; it would help most
    assert "mtp" in advice.text
    table = BeautifulSoup(client.get(f"/models/{GLM}", params={"lang": lang}).text, "html.parser")
    line = table.select_one(f'#fit-table tr[data-hardware="{H200}"] .load-line')
    assert each in line.text and line.text.startswith("×16")


def test_the_detail_json_carries_the_advice(client: TestClient) -> None:
    data = client.get(f"/api/{DETAIL.format(profile='balanced').lstrip('/')}").json()
    advice = data["advice"]
    assert advice["change"] == "speculative" and advice["decode_factor"] > 1
    assert advice["message"]["code"] == "advice_speculative"
    assert advice["text"] == advice["message"]["text"]
    assert advice["text"].startswith("speculative decoding (mtp): decode x")


def test_the_estimate_page_takes_a_concurrency(client: TestClient) -> None:
    query = {"model": GLM, "hardware": H200, "concurrency": "16"}
    page = BeautifulSoup(client.get("/estimate", params=query).text, "html.parser")
    assert page.select_one("#estimate-concurrency")["value"] == "16"
    body = {"model": GLM, "hardware": H200, "concurrency": 16}
    api = client.post("/api/estimate", json=body).json()
    assert line_in_html(page.select_one("#estimate-load .load-line")) == line_of(api)
    assert page.select_one("#estimate-coverage").text.strip() == api["coverage"]["note"]
    refused = client.get("/estimate", params={**query, "concurrency": "0"})
    assert refused.status_code == 422 and 'data-field="concurrency"' in refused.text


def test_speculative_decodings_speed_up_is_shown_where_it_is_counted(client: TestClient) -> None:
    speed = client.get(f"/api/{DETAIL.format(profile='speed').lstrip('/')}").json()
    counted = speed["at_profile_concurrency"]["speculative"]
    assert counted["method"] == "mtp" and counted["speedup"]["low"] > 1
    page = BeautifulSoup(client.get(DETAIL.format(profile="speed")).text, "html.parser")
    said = page.select_one("#load-speculative").text
    low, high = counted["speedup"]["low"], counted["speedup"]["high"]
    assert said == f"speculative decoding (mtp) x{low}-{high}"
    balanced = BeautifulSoup(client.get(DETAIL.format(profile="balanced")).text, "html.parser")
    assert balanced.select_one("#load-speculative") is None  # balanced leaves it off
