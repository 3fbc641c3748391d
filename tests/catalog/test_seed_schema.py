"""The seed catalog: the facts that matter in the real files, and errors that point at
the file, the entry and the field when a file is broken."""

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from app.catalog.seed_schema import (
    SeedCatalog,
    SeedError,
    SeedModel,
    Sourced,
    load_catalog,
)

SEED_DIR = Path(__file__).parents[2] / "seed_data"

SOURCE_ROWS = {
    "macbook-pro-m5-pro-48gb": 41,
    "mac-studio-m5-ultra-256gb": 236,
    "mac-studio-m5-ultra-512gb": 480,
    "rtx-4090-24gb": 22.5,
    "2x-rtx-3090-nvlink-48gb": 45,
    "rtx-pro-6000-96gb": 93,
    "dgx-spark-128gb": 116,
    "ryzen-ai-max-395-128gb": 116,
}

SOURCED_MODEL_FIELDS = (
    "hf_repo",
    "architecture",
    "params_total_b",
    "params_active_b",
    "native_context",
    "num_layers",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "hidden_size",
    "intermediate_size",
    "vocab_size",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "sliding_window_layers",
    "full_attention_layers",
    "linear_state_bytes_per_seq",
)


@pytest.fixture(scope="module")
def catalog() -> SeedCatalog:
    return load_catalog(SEED_DIR)


# ------------------------------------------------------------------------ the real data


def test_real_seed_loads(catalog: SeedCatalog) -> None:
    assert len(catalog.models) >= 13
    assert {p.slug for p in catalog.profiles} == {"balanced", "speed", "long-context"}
    assert {r.slug for r in catalog.runtimes} == {"sglang", "vllm", "llama-cpp", "mlx-lm", "ollama"}


def test_eight_source_rows_keep_their_usable_memory_exactly(catalog: SeedCatalog) -> None:
    rows = {h.slug: h for h in catalog.hardware if h.source_row}
    assert set(rows) == set(SOURCE_ROWS)
    for slug, usable in SOURCE_ROWS.items():
        assert rows[slug].usable_memory_gb.value == usable, slug
        assert rows[slug].usable_memory_gb.basis == "published", slug

    nvlink = rows["2x-rtx-3090-nvlink-48gb"]
    assert (nvlink.gpu_count, nvlink.memory_gb_per_gpu.value, nvlink.interconnect) == (
        2,
        24,
        "nvlink",
    )
    strix = rows["ryzen-ai-max-395-128gb"]
    assert (strix.platform, strix.unified_memory, strix.vendor) == ("rocm", True, "amd")
    for slug in ("mac-studio-m5-ultra-256gb", "mac-studio-m5-ultra-512gb"):
        bandwidth = rows[slug].bandwidth_gb_s_per_gpu
        assert (bandwidth.value, bandwidth.basis) == (819, "assumed")
        assert "M3 Ultra" in bandwidth.note


def test_server_nodes_are_per_gpu_with_derived_usable_memory(catalog: SeedCatalog) -> None:
    nodes = {h.slug: h for h in catalog.hardware if h.gpu_count == 8}
    assert set(nodes) == {"8x-h100-80gb", "8x-h200-141gb", "8x-b200-180gb", "8x-mi300x-192gb"}
    for node in nodes.values():
        capacity = node.gpu_count * node.memory_gb_per_gpu.value
        assert node.usable_memory_gb.basis == "derived"
        assert node.usable_memory_gb.value == pytest.approx(0.90 * capacity, abs=0.5)
        assert node.interconnect == ("xgmi" if node.vendor == "amd" else "nvswitch")
        assert node.group == "server"
    singles = {h.slug for h in catalog.hardware if h.gpu_count == 1}
    assert {"h100-80gb", "h200-141gb", "a100-80gb", "l40s-48gb", "rtx-5090-32gb"} <= singles
    pcie = catalog.hardware_entry("2x-rtx-4090-pcie-48gb")
    assert (pcie.gpu_count, pcie.interconnect) == (2, "pcie")


def test_every_estimated_number_says_how_it_was_obtained(catalog: SeedCatalog) -> None:
    for model in catalog.models:
        values: list[tuple[str, Any]] = [(n, getattr(model, n)) for n in SOURCED_MODEL_FIELDS]
        for artifact in model.artifacts:
            values += [
                (f"{artifact.slug}.{n}", getattr(artifact, n))
                for n in ("bits_per_weight", "size_bytes", "repo", "file")
            ]
        for name, value in values:
            if isinstance(value, Sourced) and value.basis in ("derived", "assumed"):
                assert value.note, f"{model.slug}: {name} is {value.basis} without a note"
    for entry in catalog.hardware:
        for name in (
            "memory_gb_per_gpu",
            "usable_memory_gb",
            "bandwidth_gb_s_per_gpu",
            "bf16_tflops_per_gpu",
        ):
            value = getattr(entry, name)
            if value is not None and value.estimated:
                assert value.note, f"{entry.slug}: {name}"


def test_glm_5_3_flash(catalog: SeedCatalog) -> None:
    glm = catalog.model("glm-5.3-flash")
    assert glm.hf_repo.value == "zai-org/GLM-5.3-Flash"
    assert glm.moe
    assert (glm.params_total_b.value, glm.params_total_b.basis) == (320, "published")
    assert (glm.params_active_b.value, glm.params_active_b.basis) == (18, "published")
    assert glm.start_context == 4096

    # Layer facts not read as such carry their basis and the reason.
    assert glm.attention == "hybrid_linear"
    for name in ("num_kv_heads", "head_dim", "linear_state_bytes_per_seq"):
        field = getattr(glm, name)
        assert field.basis in ("derived", "assumed") and field.note, name
    assert (glm.kv_lora_rank.value, glm.qk_rope_head_dim.value) == (512, 0)
    # 11 MLA layers x 512 cached values x 2 bytes = 11,264 bytes per token at 16 bit
    per_layer = 2 * glm.num_kv_heads.value * glm.head_dim.value
    assert per_layer == glm.kv_lora_rank.value + glm.qk_rope_head_dim.value
    assert glm.full_attention_layers.value * per_layer * 2 == 11264

    artifacts = {a.slug: a for a in glm.artifacts}
    assert {a.quant for a in glm.artifacts} == {
        "bf16",
        "fp8",
        "q4_k_m",
        "q8_0",
        "mlx-4bit",
        "mlx-8bit",
    }
    bf16, fp8 = artifacts["glm-5.3-flash-bf16"], artifacts["glm-5.3-flash-fp8"]
    assert (bf16.kind, fp8.kind) == ("official", "official")
    assert bf16.bits_per_weight.value == 16
    assert fp8.repo.value == "zai-org/GLM-5.3-Flash"
    assert 8.0 <= fp8.bits_per_weight.value <= 8.25
    # No file below 4 bits: the source page has the model exceeding 93 GB and 116 GB.
    assert min(a.bits_per_weight.value for a in glm.artifacts) >= 4.5
    smallest = min(glm.params_total_b.value * a.bits_per_weight.value / 8 for a in glm.artifacts)
    assert smallest > 116

    reported = {(r.hardware, r.metric): r for r in glm.reported}
    assert set(reported) == {
        ("mac-studio-m5-ultra-256gb", "decode_tokens_per_s"),
        ("mac-studio-m5-ultra-512gb", "decode_tokens_per_s"),
    }
    for report in reported.values():
        assert (report.low, report.high) == (81.3, 90.3)
        assert "unverified" in report.source


def test_models_cover_dense_and_moe_gqa_mla_and_hybrid(catalog: SeedCatalog) -> None:
    slugs = {m.slug for m in catalog.models}
    assert {
        "glm-5.3-flash",
        "deepseek-v3",
        "deepseek-r1",
        "qwen3-235b-a22b",
        "qwen3-30b-a3b",
        "qwen3-32b",
        "gpt-oss-120b",
        "gpt-oss-20b",
        "glm-4.5",
        "glm-4.5-air",
        "llama-3.1-8b-instruct",
        "llama-3.1-70b-instruct",
        "llama-3.3-70b-instruct",
        "mixtral-8x7b-instruct-v0.1",
        "kimi-k2-instruct",
        "qwen3-next-80b-a3b",
    } <= slugs
    assert {m.moe for m in catalog.models} == {True, False}
    assert {m.attention for m in catalog.models} == {"gqa", "mla", "hybrid_linear"}

    deepseek = catalog.model("deepseek-v3")
    assert (deepseek.kv_lora_rank.value, deepseek.qk_rope_head_dim.value) == (512, 64)
    qwen_next = catalog.model("qwen3-next-80b-a3b")
    assert (qwen_next.full_attention_layers.value, qwen_next.num_layers.value) == (12, 48)
    assert qwen_next.linear_state_bytes_per_seq.basis == "derived"
    for slug, sliding_layers in (("gpt-oss-120b", 18), ("gpt-oss-20b", 12)):
        model = catalog.model(slug)
        assert model.sliding_window.value == 128
        assert model.sliding_window_layers.value == sliding_layers
        official = [a for a in model.artifacts if a.kind == "official"]
        assert [a.quant for a in official] == ["mxfp4"]
        assert official[0].bits_per_weight.basis == "derived"
    assert catalog.model("llama-3.1-8b-instruct").sliding_window_layers.value == 0


def test_artifacts_have_official_checkpoints_and_known_sizes(catalog: SeedCatalog) -> None:
    loadable = {fmt for runtime in catalog.runtimes for fmt in runtime.formats}
    for model in catalog.models:
        assert any(a.kind == "official" for a in model.artifacts), model.slug
        for artifact in model.artifacts:
            assert artifact.format in loadable
    for slug in ("deepseek-v3-fp8", "deepseek-r1-fp8", "kimi-k2-instruct-fp8"):
        assert catalog.artifact(slug).kind == "official"
    assert catalog.artifact("deepseek-v3-q4-k-m").size_bytes.value == 377_000_000_000
    assert catalog.artifact("deepseek-v3-q8-0").size_bytes.value == 712_000_000_000
    assert catalog.artifact("llama-3.1-70b-instruct-q4-k-m").size_bytes.value == 43_100_000_000


def test_verified_pairs_use_official_artifacts_only(catalog: SeedCatalog) -> None:
    artifacts = catalog.artifacts()
    for pair in catalog.verified_pairs:
        model, artifact = artifacts[pair.artifact]
        assert artifact.kind == "official", pair.artifact
        assert artifact.format in catalog.runtime(pair.runtime).formats
        assert pair.source == "official" and pair.source_url.startswith("https://")
    pairs = {(p.artifact, p.runtime) for p in catalog.verified_pairs}
    for artifact in ("glm-5.3-flash-bf16", "glm-5.3-flash-fp8", "deepseek-v3-fp8"):
        assert {(artifact, "sglang"), (artifact, "vllm")} <= pairs
    assert ("gpt-oss-120b-mxfp4", "vllm") in pairs
    assert ("llama-3.1-8b-instruct-bf16", "vllm") in pairs


def test_runtimes(catalog: SeedCatalog) -> None:
    vllm, sglang = catalog.runtime("vllm"), catalog.runtime("sglang")
    llama, mlx, ollama = (catalog.runtime(s) for s in ("llama-cpp", "mlx-lm", "ollama"))
    assert (vllm.budget.kind, vllm.budget.fraction) == ("vllm_fraction", 0.90)
    assert sglang.budget.kind == "sglang_static"
    assert (llama.budget.kind, llama.budget.margin_gb) == ("fixed_margin", 1.074)
    assert vllm.tensor_parallel and sglang.tensor_parallel
    assert not (llama.tensor_parallel or mlx.tensor_parallel or ollama.tensor_parallel)
    assert (llama.split, mlx.split) == ("layer", "none")
    assert set(vllm.platforms) == set(sglang.platforms) == {"cuda", "rocm"}
    assert set(llama.platforms) == {"cuda", "rocm", "metal", "vulkan", "cpu"}
    assert mlx.platforms == ["metal"] and mlx.formats == ["mlx"]
    assert vllm.kv_dtypes == ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]
    assert [r.default_prefill_tokens for r in (vllm, sglang, llama, mlx, ollama)] == [
        8192,
        8192,
        512,
        2048,
        512,
    ]


def test_profiles(catalog: SeedCatalog) -> None:
    balanced, speed, long = (catalog.profile(s) for s in ("balanced", "speed", "long-context"))
    assert (balanced.start_context.server, balanced.start_context.local) == (16384, 4096)
    assert (balanced.concurrency.server, balanced.concurrency.local) == (16, 1)
    assert speed.speculative_decoding and not balanced.speculative_decoding
    assert speed.concurrency.server <= 4
    assert speed.prefill_tokens.server < balanced.prefill_tokens.server
    assert long.start_context == "max"
    assert long.kv_cache_dtype == "fp8"
    assert (long.concurrency.server, long.concurrency.local) == (1, 1)
    for profile in (balanced, speed, long):
        assert profile.memory_fraction <= 0.90
        assert any("16K" in s.en for s in profile.stop_conditions)
        assert any("median" in s.en for s in profile.measurement_order)
        assert any("needle" in s.en for s in profile.measurement_order)


# ------------------------------------------------------------------------ the Sourced type


def test_sourced_accepts_a_plain_value_or_a_mapping() -> None:
    plain = Sourced[float].model_validate(320)
    assert (plain.value, plain.basis, plain.note, plain.estimated) == (
        320,
        "published",
        None,
        False,
    )
    mapped = Sourced[float].model_validate({"value": 8.5, "basis": "derived", "note": "8 + 32/64"})
    assert (mapped.value, mapped.basis, mapped.note, mapped.estimated) == (
        8.5,
        "derived",
        "8 + 32/64",
        True,
    )
    with pytest.raises(ValidationError):
        Sourced[float].model_validate({"value": 8.5})  # a mapping must state its basis
    with pytest.raises(ValidationError):
        Sourced[float].model_validate({"value": 8.5, "basis": "guessed"})


def test_catalog_built_directly_checks_references(catalog: SeedCatalog) -> None:
    data = catalog.model_dump()
    data["verified_pairs"][0]["artifact"] = "no-such-artifact"
    with pytest.raises(ValidationError, match="unknown artifact 'no-such-artifact'"):
        SeedCatalog.model_validate(data)


# ------------------------------------------------------------------------ broken copies


@pytest.fixture
def seed_copy(tmp_path: Path) -> Path:
    target = tmp_path / "seed_data"
    shutil.copytree(SEED_DIR, target)
    return target


def edit(directory: Path, name: str, change: Any) -> None:
    path = directory / name
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def load_error(directory: Path) -> SeedError:
    with pytest.raises(SeedError) as caught:
        load_catalog(directory)
    return caught.value


def test_wrong_type_names_file_entry_and_field(seed_copy: Path) -> None:
    slug = yaml.safe_load((SEED_DIR / "models.yaml").read_text())["models"][3]["slug"]
    edit(seed_copy, "models.yaml", lambda d: d["models"][3].update(params_total_b="three hundred"))
    error = load_error(seed_copy)
    assert str(error) == (
        f"seed_data/models.yaml: models[3] (slug {slug}): params_total_b: "
        "Input should be a valid number"
    )
    assert (error.file, error.entry, error.field) == (
        "seed_data/models.yaml",
        f"models[3] (slug {slug})",
        "params_total_b",
    )
    assert error.line is not None


def test_wrong_type_inside_a_sourced_mapping(seed_copy: Path) -> None:
    edit(
        seed_copy,
        "hardware.yaml",
        lambda d: d["hardware"][1].update(
            usable_memory_gb={"value": "236 GB", "basis": "published"}
        ),
    )
    assert str(load_error(seed_copy)) == (
        "seed_data/hardware.yaml: hardware[1] (slug mac-studio-m5-ultra-256gb): "
        "usable_memory_gb.value: Input should be a valid number"
    )


def test_sourced_mapping_without_basis(seed_copy: Path) -> None:
    edit(seed_copy, "models.yaml", lambda d: d["models"][0].update(params_active_b={"value": 18}))
    assert str(load_error(seed_copy)) == (
        "seed_data/models.yaml: models[0] (slug glm-5.3-flash): params_active_b.basis: "
        "Field required"
    )


def test_unknown_field(seed_copy: Path) -> None:
    edit(seed_copy, "runtimes.yaml", lambda d: d["runtimes"][1].update(max_gpus=8))
    assert str(load_error(seed_copy)) == (
        "seed_data/runtimes.yaml: runtimes[1] (slug vllm): max_gpus: Extra inputs are not permitted"
    )


def test_unknown_field_in_an_artifact(seed_copy: Path) -> None:
    edit(seed_copy, "models.yaml", lambda d: d["models"][0]["artifacts"][1].update(sha="abc"))
    assert str(load_error(seed_copy)) == (
        "seed_data/models.yaml: models[0] (slug glm-5.3-flash): artifacts[1].sha: "
        "Extra inputs are not permitted"
    )


def test_cross_field_rule_names_its_field(seed_copy: Path) -> None:
    edit(seed_copy, "hardware.yaml", lambda d: d["hardware"][0].update(usable_memory_gb=60))
    assert str(load_error(seed_copy)) == (
        "seed_data/hardware.yaml: hardware[0] (slug macbook-pro-m5-pro-48gb): "
        "usable_memory_gb: 60 exceeds gpu_count x memory_gb_per_gpu = 48"
    )


def test_mla_model_needs_its_latent(seed_copy: Path) -> None:
    def drop_rank(data: dict) -> None:
        model = next(m for m in data["models"] if m["slug"] == "deepseek-v3")
        del model["kv_lora_rank"]

    edit(seed_copy, "models.yaml", drop_rank)
    error = load_error(seed_copy)
    assert error.entry.endswith("(slug deepseek-v3)")
    assert (error.field, error.message) == ("kv_lora_rank", "required when attention is mla")


def test_duplicate_slug(seed_copy: Path) -> None:
    def duplicate(data: dict) -> None:
        data["hardware"].append(dict(data["hardware"][3]))

    edit(seed_copy, "hardware.yaml", duplicate)
    count = len(yaml.safe_load((SEED_DIR / "hardware.yaml").read_text())["hardware"])
    assert str(load_error(seed_copy)) == (
        f"seed_data/hardware.yaml: hardware[{count}] (slug rtx-4090-24gb): slug: "
        "duplicate slug 'rtx-4090-24gb'"
    )


def test_duplicate_artifact_slug_across_models(seed_copy: Path) -> None:
    def duplicate(data: dict) -> None:
        copy = dict(data["models"][0]["artifacts"][0], slug="deepseek-v3-fp8")
        data["models"][0]["artifacts"][0] = copy

    edit(seed_copy, "models.yaml", duplicate)
    error = load_error(seed_copy)
    assert "artifacts[0].slug" in str(error)
    assert str(error).startswith("seed_data/models.yaml: models[0] (slug glm-5.3-flash): ")


def test_dangling_runtime_in_a_pair(seed_copy: Path) -> None:
    edit(seed_copy, "verified_pairs.yaml", lambda d: d["verified_pairs"][0].update(runtime="tgi"))
    error = load_error(seed_copy)
    assert str(error) == (
        "seed_data/verified_pairs.yaml: verified_pairs[0] (artifact glm-5.3-flash-fp8, "
        "runtime tgi): runtime: unknown runtime 'tgi'"
    )
    assert error.line is not None


def test_dangling_hardware_in_a_report(seed_copy: Path) -> None:
    edit(
        seed_copy,
        "models.yaml",
        lambda d: d["models"][0]["reported"][0].update(hardware="mac-studio-m9"),
    )
    assert str(load_error(seed_copy)) == (
        "seed_data/models.yaml: models[0] (slug glm-5.3-flash): reported[0].hardware: "
        "unknown hardware 'mac-studio-m9'"
    )


def test_community_artifact_cannot_be_a_verified_pair(seed_copy: Path) -> None:
    edit(
        seed_copy,
        "verified_pairs.yaml",
        lambda d: d["verified_pairs"].append(
            {
                "artifact": "glm-5.3-flash-q4-k-m",
                "runtime": "vllm",
                "min_version": None,
                "source_url": "https://example.org",
            }
        ),
    )
    error = load_error(seed_copy)
    assert error.file == "seed_data/verified_pairs.yaml"
    assert "(artifact glm-5.3-flash-q4-k-m, runtime vllm)" in error.entry
    assert error.field == "artifact" and "community artifact" in error.message


def test_yaml_syntax_error_names_file_and_line(seed_copy: Path) -> None:
    path = seed_copy / "runtimes.yaml"
    lines = path.read_text().splitlines()
    lines.append("  - slug: broken")
    lines.append("    name: [unclosed")
    path.write_text("\n".join(lines) + "\n")
    error = load_error(seed_copy)
    assert error.file == "seed_data/runtimes.yaml"
    assert error.line is not None and error.line >= len(lines) - 1
    assert str(error).startswith(f"seed_data/runtimes.yaml: line {error.line}, column ")


def test_duplicate_yaml_key_is_an_error(seed_copy: Path) -> None:
    path = seed_copy / "profiles.yaml"
    text = path.read_text().replace("    sort: 2\n", "    sort: 2\n    sort: 3\n")
    path.write_text(text)
    error = load_error(seed_copy)
    line = text.splitlines().index("    sort: 3") + 1
    assert str(error) == (
        f"seed_data/profiles.yaml: line {line}, column 5: found duplicate key 'sort'"
    )


def test_missing_file(seed_copy: Path) -> None:
    (seed_copy / "profiles.yaml").unlink()
    assert str(load_error(seed_copy)) == "seed_data/profiles.yaml: file not found"


def test_all_problems_are_collected(seed_copy: Path) -> None:
    edit(seed_copy, "runtimes.yaml", lambda d: d["runtimes"][0].update(priority="high"))
    edit(seed_copy, "profiles.yaml", lambda d: d["profiles"][0].update(memory_fraction=0.95))
    error = load_error(seed_copy)
    messages = [str(e) for e in error.errors]
    assert messages[0] == str(error)
    assert (
        "seed_data/runtimes.yaml: runtimes[0] (slug sglang): priority: "
        "Input should be a valid integer"
    ) in messages
    assert any(
        m.startswith(
            "seed_data/profiles.yaml: profiles[0] (slug balanced): "
            "memory_fraction: must be in (0, 0.90]"
        )
        for m in messages
    )


def test_model_rules_reject_inconsistent_shapes() -> None:
    base = yaml.safe_load((SEED_DIR / "models.yaml").read_text())["models"]
    llama = next(m for m in base if m["slug"] == "llama-3.1-8b-instruct")
    with pytest.raises(ValidationError, match="a dense model activates all its parameters"):
        SeedModel.model_validate({**llama, "params_active_b": 4})
    with pytest.raises(ValidationError, match="sliding_window and sliding_window_layers"):
        SeedModel.model_validate({**llama, "sliding_window": 4096})
    with pytest.raises(ValidationError, match="only for attention mla"):
        SeedModel.model_validate({**llama, "kv_lora_rank": 512})
    glm = next(m for m in base if m["slug"] == "glm-5.3-flash")
    with pytest.raises(ValidationError, match="must equal kv_lora_rank"):
        SeedModel.model_validate({**glm, "head_dim": 128})


def test_every_moe_model_states_its_expert_layout(catalog: SeedCatalog) -> None:
    for model in catalog.models:
        if not model.moe:
            assert model.experts is None, model.slug
            continue
        assert model.experts is not None and model.active_experts is not None, model.slug
        assert model.active_experts.value < model.experts.value, model.slug
        assert 0 < model.moe_layers.value <= model.num_layers.value, model.slug


@pytest.mark.parametrize(
    ("slug", "changes", "field", "message"),
    [
        ("deepseek-v3", {"active_experts": 300}, "active_experts", "exceeds experts"),
        ("deepseek-v3", {"moe_layers": 62}, "moe_layers", "exceeds num_layers (61)"),
        ("qwen3-32b", {"experts": 8}, "experts", "only for an MoE model (moe: true)"),
    ],
)
def test_an_impossible_expert_layout_is_refused(
    seed_copy: Path, slug: str, changes: dict, field: str, message: str
) -> None:
    def change(data: dict) -> None:
        next(m for m in data["models"] if m["slug"] == slug).update(changes)

    edit(seed_copy, "models.yaml", change)
    error = load_error(seed_copy)
    assert (error.field, error.message) == (field, message)
