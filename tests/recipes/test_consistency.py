"""One number everywhere: for every model x hardware x profile of the catalog, the fit table
(JSON and page), the detail page, its JSON and `servebook estimate --json` agree, before and
after records of every outcome are accepted."""

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.cli import main
from app.config import PROJECT_ROOT

MODELS = [
    m["slug"]
    for m in yaml.safe_load((PROJECT_ROOT / "seed_data/models.yaml").read_text())["models"]
]
GLM = "glm-5.3-flash"
H200 = "8x-h200-141gb"
MAC_256 = "mac-studio-m5-ultra-256gb"


@dataclass(frozen=True)
class Figures:
    """What one surface says about one recipe, in the units every surface shares."""

    verdict: str
    required_gb: float | None
    usable_gb: float | None
    headroom_gb: float | None
    max_context: int | None
    start_context: int | None
    speed: tuple[float, float, str] | None
    status: str


def from_json(data: dict, memory: dict | None, speed: dict | None) -> Figures:
    return Figures(
        verdict=data["verdict"],
        required_gb=memory["required_gb_per_gpu"] if memory else None,
        usable_gb=memory["usable_gb_per_gpu"] if memory else None,
        headroom_gb=memory["headroom_gb_per_gpu"] if memory else None,
        max_context=data["max_context"],
        start_context=data["start_context"],
        speed=(speed["low"], speed["high"], speed["basis"]) if speed else None,
        status=data["status"] if "status" in data else data["profile_status"],
    )


def from_html(node: Any) -> tuple:
    """The figures a person reads on a page, from the marked-up numbers."""
    memory = node.select_one(".memory")
    speed = node.select_one(".speed")
    return (
        (
            float(memory["data-required"]),
            float(memory["data-usable"]),
            float(memory["data-headroom"]),
        )
        if memory
        else None,
        (float(speed["data-low"]), float(speed["data-high"]), speed["data-basis"])
        if speed
        else None,
    )


def number_in(text: str) -> int:
    return int(text.split()[0].replace(",", ""))


def cli_json(model: str, hardware: str, profile: str) -> dict:
    args = ["estimate", "--model", model, "--hardware", hardware, "--profile", profile, "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture(autouse=True)
def _commands_read_the_test_database(cli_database: Path) -> None:
    """Every test here runs the console script against its own database."""


def check_model(client: TestClient, model: str) -> int:
    """Every surface of every recipe of `model` agrees; returns how many were compared."""
    fit = client.get(f"/api/models/{model}/fit").json()["rows"]
    table = BeautifulSoup(client.get(f"/models/{model}").text, "html.parser")
    compared = 0
    for row in fit:
        hardware = row["hardware"]
        assert row["profile"] == "balanced"
        html_row = table.select_one(f'#fit-table tr[data-hardware="{hardware}"]')
        statuses = {p["slug"]: p["status"] for p in row["profiles"]}
        fit_lines = {p["slug"]: p["at_profile_concurrency"] for p in row["profiles"]}
        page_statuses = {
            a["data-profile"]: a["data-status"] for a in html_row.select("a[data-profile]")
        }
        assert page_statuses == statuses, hardware
        for profile in statuses:
            detail = client.get(f"/api/models/{model}/hardware/{hardware}/profiles/{profile}")
            data = detail.json()
            figures = from_json(data, data["memory"], data["token_generation"])
            where = (model, hardware, profile)
            assert data["status"] == statuses[profile], where
            cli = cli_json(model, hardware, profile)
            assert from_json(cli, cli["memory"], cli["decode_tokens_per_s"]) == figures, where
            assert cli["required_gb_per_gpu"] == figures.required_gb, where
            # The concurrency lines: one request and the profile's own concurrency.
            for line in ("single_request", "at_profile_concurrency"):
                assert cli[line] == data[line], (*where, line)
            check_load(data, where)
            page = BeautifulSoup(
                client.get(f"/models/{model}/hardware/{hardware}/profiles/{profile}").text,
                "html.parser",
            )
            check_page(page, data, figures, where)
            check_rules(data, figures, where)
            check_load_line(data, cli, page, html_row, fit_lines[profile], where)
            if profile == "balanced":
                assert from_json(row, row["memory"], row["token_generation"]) == figures, where
                assert from_html(html_row) == from_html(page.select_one("#verdict")), where
                assert html_row["data-verdict"] == data["verdict"], where
            compared += 1
    return compared


def check_page(page: Any, data: dict, figures: Figures, where: tuple) -> None:
    verdict = page.select_one("#verdict")
    assert verdict.select_one(".verdict")["class"][-1] == f"verdict-{data['verdict']}", where
    memory, speed = from_html(verdict)
    expected_memory = (
        (figures.required_gb, figures.usable_gb, figures.headroom_gb)
        if figures.required_gb is not None
        else None
    )
    assert memory == expected_memory, where
    assert speed == figures.speed, where
    if data["verdict"] == "exceeds_memory":
        assert "nothing to verify" in page.select_one("#profile-status").text, where
    else:
        assert page.select_one(f"#profile-status .status-{figures.status}") is not None, where
    if data["verdict"] == "exceeds_memory":
        assert page.select_one("#max-context") is None, where
    elif data["verdict"] == "fits_with_offload":
        # Planned at one context with part of the weights in system memory: no largest
        # all-on-GPU context to show, and the page says where it runs instead.
        assert figures.max_context is None, where
        assert page.select_one("#max-context") is None, where
        line = page.select_one("#context-line strong").text
        assert number_in(line) == data["start_context"], where
    else:
        assert number_in(page.select_one("#max-context").text) == figures.max_context, where
    if memory is not None:
        # A person checks the arithmetic: headroom is usable minus required, as written.
        required, usable, headroom = memory
        assert round(usable - required, 1) == headroom, where
        headroom_cell = page.select_one("#memory-headroom td.num").text
        assert float(headroom_cell.split()[0].replace(",", "")) == headroom, where
    commands = page.select("#launch .command-block code")
    assert [c.text for c in commands] == [c["shell"] for c in data["commands"]], where


def check_load(data: dict, where: tuple) -> None:
    """A recipe with a speed has both concurrency lines, at the profile's own concurrency,
    with a breakdown that adds up and a range that says what it held."""
    single, load = data["single_request"], data["at_profile_concurrency"]
    if data["token_generation"] is None or data["token_generation"]["basis"] != "estimated":
        return
    assert single is not None and load is not None, where
    assert single["concurrency"] == 1, where
    assert load["concurrency"] == data["applied_values"]["max_concurrency"], where
    speed = data["token_generation"]
    assert (single["decode_tokens_per_s"]["low"], single["decode_tokens_per_s"]["high"]) == (
        speed["low"],
        speed["high"],
    ), where
    for line in (single, load):
        assert sum(line["breakdown"].values()) == pytest.approx(1, abs=0.01), where
        assert line["coverage"]["stated"] == 0.8, where
        # The total is each running request's output over its turn: never above them all
        # at the decode speed, since each turn also waits for its first token.
        most = line["running"] * line["decode_tokens_per_s"]["high"]
        assert (
            line["throughput_tokens_per_s"]["high"]
            <= max(most, single["throughput_tokens_per_s"]["high"]) + 0.1
        ), where
    # Many requests together never put out less than one alone.
    for end in ("low", "high"):
        assert load["throughput_tokens_per_s"][end] >= single["throughput_tokens_per_s"][end]


def load_figures(line: dict | None) -> tuple | None:
    """Each request's decode, the total and the first token at the profile's concurrency."""
    if line is None:
        return None
    keys = ("decode_tokens_per_s", "throughput_tokens_per_s", "ttft_ms")
    return (line["concurrency"], *((line[k]["low"], line[k]["high"]) for k in keys))


def load_in_html(node: Any) -> tuple | None:
    if node is None:
        return None
    pairs = (("decode-low", "decode-high"), ("throughput-low", "throughput-high"))
    pairs += (("ttft-low", "ttft-high"),)
    figures = ((float(node[f"data-{low}"]), float(node[f"data-{high}"])) for low, high in pairs)
    return (int(node["data-concurrency"]), *figures)


def check_load_line(
    data: dict, cli: dict, page: Any, html_row: Any, fit_line: dict | None, where: tuple
) -> None:
    """The profile's line at its concurrency: one figure on the fit table (JSON and page),
    the detail page and its JSON, and the CLI; none where no speed is shown."""
    expected = load_figures(data["at_profile_concurrency"]) if data["token_generation"] else None
    assert load_figures(fit_line) == expected, where
    assert load_figures(cli["at_profile_concurrency"]) == load_figures(
        data["at_profile_concurrency"]
    ), where
    marked = html_row.select_one(f'.profile-line[data-profile="{data["profile"]}"] .load-line')
    assert load_in_html(marked) == expected, where
    if expected is None:
        assert page.select_one("#speed-at-load") is None, where
        return
    shown = page.select_one(f'#speed-at-load tr.load-line[data-concurrency="{expected[0]}"]')
    assert load_in_html(shown) == expected, where
    assert expected[0] == data["applied_values"]["max_concurrency"], where


def check_rules(data: dict, figures: Figures, where: tuple) -> None:
    """The recipe's own rules, on every recipe."""
    if data["verdict"] == "exceeds_memory":
        # Estimated memory only: no speed, no command, no benchmark button.
        assert figures.speed is None and data["commands"] == [], where
        assert data["can_benchmark"] is False and data["applied_values"] is None, where
        if figures.required_gb is not None:
            assert figures.required_gb > figures.usable_gb, where
        return
    if data["memory"]["basis"] == "estimated":
        assert figures.required_gb <= figures.usable_gb, where
    values = data["applied_values"]
    assert values["memory_fraction"] is None or values["memory_fraction"] <= 0.90, where
    for command in data["commands"]:
        argv = command["argv"]
        for flag in ("--gpu-memory-utilization", "--mem-fraction-static"):
            if flag in argv:
                assert float(argv[argv.index(flag) + 1]) <= 0.90, where
    if data["profile"] == "long-context":
        assert figures.start_context <= 16384, where
        steps = [s["context"] for s in data["context_steps"]]
        assert steps == sorted(steps) and all(s > figures.start_context for s in steps), where
    if data["verdict"] == "experimental":
        assert data["commands"] == [] and data["estimate_only"], where


@pytest.mark.parametrize("model", MODELS)
def test_every_surface_agrees_on_every_recipe(client: TestClient, model: str) -> None:
    assert check_model(client, model) == 18 * 3


# ------------------------------------------------------------------- after records


RECORD: dict[str, Any] = {
    "model": GLM,
    "artifact": "glm-5.3-flash-fp8",
    "runtime": "sglang",
    "runtime_version": "0.5.10",
    "hardware": H200,
    "gpu_count": 8,
    "profile": "balanced",
    "command": "python -m sglang.launch_server --model-path zai-org/GLM-5.3-Flash --tp 8",
    "applied_values": {"tensor_parallel": 8, "context": 16384},
    "environment": {"driver": "580.95.05", "os": "Ubuntu 24.04"},
    "outcome": "ok",
    "measurements": [
        {
            "context_length": 16384,
            "concurrency": 1,
            "repetitions": 3,
            "ttft_ms": 900.0,
            "decode_tokens_per_s": 172.0,
            "peak_memory_gb_per_gpu": 118.5,
        },
        {
            "context_length": 16384,
            "concurrency": 8,
            "repetitions": 3,
            "ttft_ms": 1900.0,
            "decode_tokens_per_s": 120.0,
            "peak_memory_gb_per_gpu": 119.2,
        },
    ],
}


def submit_and_accept(client: TestClient, **changes: Any) -> int:
    body = copy.deepcopy(RECORD)
    body.update(changes)
    created = client.post("/api/records", json=body)
    assert created.status_code == 201, created.text
    record = created.json()
    review: dict[str, Any] = {"action": "accept", "reason": "reproduced on our machine"}
    if record["flags"]:
        review["confirm_flags"] = True
    accepted = client.post(f"/api/records/{record['id']}/review", json=review)
    assert accepted.status_code == 200, accepted.text
    return record["id"]


def test_every_surface_agrees_after_records_of_each_outcome(client: TestClient) -> None:
    submit_and_accept(client)  # ok, balanced, on the official route
    submit_and_accept(
        client,
        profile="speed",
        measurements=[
            {"context_length": 4096, "concurrency": 1, "decode_tokens_per_s": 240.0},
            {"context_length": 16384, "concurrency": 1, "decode_tokens_per_s": 230.0},
        ],
    )
    submit_and_accept(  # ok on an unverified pair: verifies MLX 4-bit with MLX-LM everywhere
        client,
        hardware=MAC_256,
        gpu_count=1,
        artifact="glm-5.3-flash-mlx-4bit",
        runtime="mlx-lm",
        runtime_version="0.31.2",
        command="mlx_lm.server --model x",
        applied_values={"context": 4096},
        measurements=[
            {
                "context_length": 4096,
                "concurrency": 1,
                "decode_tokens_per_s": 84.5,
                "peak_memory_gb_per_gpu": 190.0,
            }
        ],
    )
    for outcome in ("load_failure", "long_context_failure", "wrong_answer"):
        submit_and_accept(
            client,
            outcome=outcome,
            profile="long-context",
            measurements=[
                {
                    "context_length": 65536,
                    "concurrency": 1,
                    "ttft_ms": 41000.0,
                    "needle_accuracy": 0.0 if outcome == "wrong_answer" else None,
                }
            ],
        )
    assert check_model(client, GLM) == 18 * 3

    balanced = client.get(f"/api/models/{GLM}/hardware/{H200}/profiles/balanced").json()
    # The single-request point, not the concurrency-8 one, and one value shown as one value.
    assert balanced["memory"]["required_gb_per_gpu"] == 118.5
    assert balanced["memory"]["basis"] == "measured"
    assert balanced["estimate_vs_measured"]["memory"]["measured"] == 118.5
    assert balanced["token_generation"]["low"] == balanced["token_generation"]["high"] == 172.0
    page = client.get(f"/models/{GLM}/hardware/{H200}/profiles/balanced").text
    assert "172.0 ~ 172.0" not in page and "172.0 tok/s" in page
    speed = client.get(f"/api/models/{GLM}/hardware/{H200}/profiles/speed").json()
    assert speed["status"] == "verified" and speed["token_generation"]["low"] == 230.0
    long = client.get(f"/api/models/{GLM}/hardware/{H200}/profiles/long-context").json()
    assert long["status"] == "verification_pending"  # failures verify nothing
    row = next(
        r for r in client.get(f"/api/models/{GLM}/fit").json()["rows"] if r["hardware"] == H200
    )
    assert row["profile_status"] == "verified"
    assert {p["slug"]: p["status"] for p in row["profiles"]} == {
        "balanced": "verified",
        "speed": "verified",
        "long-context": "verification_pending",
    }
    mac = client.get(f"/api/models/{GLM}/hardware/{MAC_256}/profiles/balanced").json()
    assert mac["token_generation"] == {
        **mac["token_generation"],
        "low": 84.5,
        "high": 84.5,
        "basis": "measured",
    }
    assert mac["verified_by"]["record_ids"] and mac["commands"]
    # The pair now verified by that record counts on the 512 GB machine too, and says so.
    other = BeautifulSoup(
        client.get(f"/models/{GLM}/hardware/mac-studio-m5-ultra-512gb/profiles/balanced").text,
        "html.parser",
    )
    links = [a.text for a in other.select("#route a.verified-by")]
    assert links == [f"#{record_id}" for record_id in mac["verified_by"]["record_ids"]]
    assert other.select_one("#verdict .speed")["data-basis"] == "reported"  # not measured here
