"""The runtime x format matrix: one sourced cell per runtime and format, and `formats` (the
routes the catalog builds) exactly the routed cells."""

import shutil
from pathlib import Path

import pytest
import yaml

from app.catalog.seed_schema import SeedError, load_catalog

SEED_DIR = Path(__file__).parents[2] / "seed_data"
FORMATS = {"safetensors", "gguf", "mlx"}


def test_every_runtime_has_a_sourced_cell_for_every_format() -> None:
    for runtime in load_catalog(SEED_DIR).runtimes:
        assert set(runtime.format_support) == FORMATS, runtime.slug
        for fmt, cell in runtime.format_support.items():
            assert cell.source.startswith("https://"), (runtime.slug, fmt)
            assert cell.status in ("routed", "loads", "convert", "no")


def test_the_matrix_says_what_the_runtimes_docs_say() -> None:
    matrix = {
        r.slug: {f: c.status for f, c in r.format_support.items()}
        for r in load_catalog(SEED_DIR).runtimes
    }
    # vLLM and SGLang can load a GGUF file but the catalog does not route it there.
    assert matrix["vllm"]["gguf"] == "loads" and matrix["sglang"]["gguf"] == "loads"
    # llama.cpp and Ollama need Safetensors converted or imported first.
    assert matrix["llama-cpp"]["safetensors"] == "convert"
    assert matrix["ollama"]["safetensors"] == "convert"
    assert matrix["mlx-lm"] == {"safetensors": "loads", "gguf": "no", "mlx": "routed"}


@pytest.fixture
def seed_copy(tmp_path: Path) -> Path:
    target = tmp_path / "seed_data"
    shutil.copytree(SEED_DIR, target)
    return target


def _edit_runtime(directory: Path, slug: str, change) -> None:
    path = directory / "runtimes.yaml"
    data = yaml.safe_load(path.read_text())
    change(next(r for r in data["runtimes"] if r["slug"] == slug))
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_a_missing_cell_is_refused_naming_the_format(seed_copy: Path) -> None:
    _edit_runtime(seed_copy, "vllm", lambda r: r["format_support"].pop("mlx"))
    with pytest.raises(SeedError) as caught:
        load_catalog(seed_copy)
    assert "format_support" in str(caught.value) and "needs a cell for mlx" in str(caught.value)


def test_formats_that_disagree_with_the_routed_cells_are_refused(seed_copy: Path) -> None:
    _edit_runtime(seed_copy, "vllm", lambda r: r["formats"].append("gguf"))
    with pytest.raises(SeedError) as caught:
        load_catalog(seed_copy)
    message = str(caught.value)
    assert "runtimes.yaml" in message and "formats" in message
    assert "must be the formats whose cell is routed (safetensors)" in message


def test_a_cell_without_a_source_is_refused(seed_copy: Path) -> None:
    _edit_runtime(seed_copy, "ollama", lambda r: r["format_support"]["gguf"].pop("source"))
    with pytest.raises(SeedError) as caught:
        load_catalog(seed_copy)
    assert "source" in str(caught.value)
