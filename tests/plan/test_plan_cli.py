"""`servebook plan` answers with the API's own JSON, and refuses what the API refuses."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.cli import main
from tests.plan.test_plan_api import REFERENCE

ARGS = [
    "plan",
    "--model",
    "glm-5.3-flash",
    "--users",
    "32",
    "--min-decode",
    "20",
    "--max-ttft-ms",
    "3000",
    "--prompt-tokens",
    "2048",
    "--output-tokens",
    "2048",
    "--price",
    "2.5",
]


@pytest.fixture(autouse=True)
def _commands_read_the_test_database(cli_database: Path) -> None:
    """The console script reads the test's database."""


def test_the_cli_json_is_the_apis(client: TestClient) -> None:
    result = CliRunner().invoke(main, [*ARGS, "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    api = client.post("/api/plan", json={**REFERENCE, "price_per_gpu_hour": 2.5}).json()
    assert printed["options"] == api["options"]
    assert (printed["cheapest"], printed["smallest"]) == (api["cheapest"], api["smallest"])


def test_the_cli_text_names_each_option_and_the_cheapest(client: TestClient) -> None:
    result = CliRunner().invoke(main, ARGS)
    assert result.exit_code == 0, result.output
    api = client.post("/api/plan", json={**REFERENCE, "price_per_gpu_hour": 2.5}).json()
    cheapest = api["options"][api["cheapest"]]
    assert f"cheapest  {cheapest['hardware_name']} [{api['cheapest']}]" in result.output
    for option in api["options"]:
        each = option["decode_tokens_per_s"]
        assert f"{each['low']:,.1f} ~ {each['high']:,.1f} ({each['basis']}) tok/s" in result.output


def test_the_cli_refuses_naming_the_field() -> None:
    result = CliRunner().invoke(main, [*ARGS[:4], "0", *ARGS[5:]])
    assert result.exit_code != 0
    assert "users:" in result.output
    result = CliRunner().invoke(main, [*ARGS, "--hardware", "no-such-box"])
    assert result.exit_code != 0 and "hardware.0:" in result.output
