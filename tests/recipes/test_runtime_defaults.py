"""Every "left at the runtime's default" the catalog says is true: checked against the sourced
table seed_data/runtime_defaults.yaml, whose entries name the version and source they were
read from. A value the profile relies on that the default would not give is in the command."""

import shlex

import pytest
import yaml
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.repository import CatalogRepository
from app.config import PROJECT_ROOT
from app.resolve import load_catalog_inputs
from app.resolve.commands import KnobState
from app.resolve.fit_table import ResolvedModel
from app.resolve.runtime_defaults import (
    OPTIONAL_KNOBS,
    TABLE_PATH,
    documented_default,
    runtime_defaults,
)

GLM = "glm-5.3-flash"
H200 = "8x-h200-141gb"


def test_every_entry_names_a_runtime_a_version_and_an_https_source() -> None:
    runtimes = yaml.safe_load((PROJECT_ROOT / "seed_data/runtimes.yaml").read_text())["runtimes"]
    known = {r["slug"] for r in runtimes}
    table = runtime_defaults(TABLE_PATH)
    assert table, "the table is empty"
    for (runtime, knob), entry in table.items():
        assert runtime in known, runtime
        assert entry.version and entry.source.scheme == "https", (runtime, knob)


def test_the_defaults_read_from_the_runtimes_own_code() -> None:
    """The figures behind the balanced profile's commands, as vLLM and SGLang set them."""
    h200 = type("Card", (), {"name": "8x H200", "memory_gb_per_gpu": 141.0})()
    a100 = type("Card", (), {"name": "8x A100 80GB", "memory_gb_per_gpu": 80.0})()
    rtx = type("Card", (), {"name": "RTX 4090", "memory_gb_per_gpu": 24.0})()
    seqs = documented_default("vllm", "max_concurrency")
    assert [seqs.default.on(card) for card in (h200, a100, rtx)] == [1024, 256, 256]
    tokens = documented_default("vllm", "prefill_tokens")
    assert [tokens.default.on(card) for card in (h200, a100, rtx)] == [8192, 2048, 2048]
    chunk = documented_default("sglang", "prefill_tokens")
    b200 = type("Card", (), {"name": "8x B200", "memory_gb_per_gpu": 180.0})()
    assert [chunk.default.on(card) for card in (rtx, h200, b200)] == [2048, 8192, 16384]
    running = documented_default("sglang", "max_concurrency")
    assert running.default.derived and not running.holds(16, h200)


@pytest.fixture
def catalog(session: Session) -> list[ResolvedModel]:
    hardware = CatalogRepository(session).list_hardware()
    return [ResolvedModel(inputs, hardware) for inputs in load_catalog_inputs(session)]


def test_every_default_the_catalog_claims_is_the_runtimes_documented_one(
    catalog: list[ResolvedModel],
) -> None:
    checked = 0
    for resolved in catalog:
        for row in resolved.rows:
            for recipe in row.recipes:
                for command in recipe.commands:
                    primary = command is recipe.primary_command
                    for knob, state in command.knobs.items():
                        if state.state != KnobState.DEFAULT:
                            continue
                        entry = documented_default(command.runtime, knob)
                        where = (recipe.model.slug, recipe.hardware.slug, recipe.profile.slug)
                        assert entry is not None, (*where, command.runtime, knob)
                        if primary:
                            value = getattr(recipe.applied, knob)
                        elif knob in OPTIONAL_KNOBS and state.flag:
                            value = type(getattr(recipe.applied, knob))(shlex.split(state.flag)[-1])
                        else:
                            continue
                        assert entry.holds(value, recipe.hardware), (*where, knob, value)
                        checked += 1
    assert checked > 1000


def test_balanced_on_8x_h200_sets_the_concurrency_it_relies_on(client: TestClient) -> None:
    data = client.get(f"/api/models/{GLM}/hardware/{H200}/profiles/balanced").json()
    argvs = {c["runtime"]: c["argv"] for c in data["commands"]}
    assert argvs["sglang"][argvs["sglang"].index("--max-running-requests") + 1] == "16"
    assert argvs["vllm"][argvs["vllm"].index("--max-num-seqs") + 1] == "16"
    knobs = {k["name"]: k for k in data["knobs"]}
    assert knobs["max_concurrency"]["state"] == "set"
    # SGLang's chunked prefill on a 141 GB card is 8192 by its own rule: left out, sourced.
    prefill = knobs["prefill_tokens"]
    assert prefill["state"] == "default" and prefill["value"] == "8,192"
    assert prefill["default_source"].startswith("https://github.com/sgl-project/sglang/")
    page = BeautifulSoup(
        client.get(f"/models/{GLM}/hardware/{H200}/profiles/balanced").text, "html.parser"
    )
    concurrency = page.select_one('dd[data-knob="max_concurrency"]').text
    assert "left at the runtime's default" not in concurrency
    assert "--max-running-requests 16" in concurrency
    link = page.select_one('dd[data-knob="prefill_tokens"] a.default-source')
    assert link["href"] == prefill["default_source"] and "main" in link.text
