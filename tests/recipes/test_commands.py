"""Command rendering: real flags, 127.0.0.1 only, and shell quoting that survives odd names."""

import shlex

import pytest

from app.models import Artifact, Runtime
from app.recipes.applied import AppliedValues
from app.recipes.commands import build_command, shared_setup

ODD_REPOS = ["org/model with spaces", 'org/it\'s "quoted"', "/models/$HOME; rm -rf ~", "a`b`"]


def values(**changes: object) -> AppliedValues:
    base = dict(
        tensor_parallel=2,
        split="tensor",
        context=8192,
        kv_cache_dtype="auto",
        prefill_tokens=8192,
        max_concurrency=16,
        memory_fraction=0.9,
        speculative_decoding=False,
        cuda_graphs=True,
    )
    return AppliedValues(**{**base, **changes})


def runtime(slug: str) -> Runtime:
    return Runtime(slug=slug, name=slug)


def artifact(repo: str, quant: str = "q4_k_m") -> Artifact:
    return Artifact(slug="a", repo=repo, quant=quant)


@pytest.mark.parametrize("slug", ["sglang", "vllm", "llama-cpp", "mlx-lm", "ollama"])
@pytest.mark.parametrize("repo", ODD_REPOS)
def test_shell_form_splits_back_into_the_same_argv(slug: str, repo: str) -> None:
    command = build_command(runtime(slug), artifact(repo), values(), values())
    assert command is not None
    assert shlex.split(command.shell) == command.argv
    assert any(repo in part for part in command.argv + (command.followup or []))
    if command.followup:
        assert shlex.split(command.followup_shell) == command.followup


@pytest.mark.parametrize("slug", ["sglang", "vllm", "llama-cpp", "mlx-lm", "ollama"])
def test_every_server_binds_to_loopback(slug: str) -> None:
    command = build_command(runtime(slug), artifact("org/m"), values(), values())
    text = command.shell
    assert "127.0.0.1" in text and "0.0.0.0" not in text


def test_flags_follow_the_profile_only_where_it_departs_from_balanced() -> None:
    balanced = values()
    speed = values(max_concurrency=4, prefill_tokens=4096, speculative_decoding=True)
    vllm = build_command(runtime("vllm"), artifact("org/m"), speed, balanced).argv
    assert vllm[vllm.index("--max-num-seqs") + 1] == "4"
    assert vllm[vllm.index("--max-num-batched-tokens") + 1] == "4096"
    assert "--speculative-config" in vllm
    plain = build_command(runtime("vllm"), artifact("org/m"), balanced, balanced).argv
    assert "--max-num-seqs" not in plain and "--speculative-config" not in plain


def test_llama_cpp_context_is_shared_between_its_slots() -> None:
    argv = build_command(
        runtime("llama-cpp"),
        artifact("org/m-GGUF"),
        values(context=4096, max_concurrency=4, split="layer"),
        values(),
    ).argv
    assert argv[argv.index("--ctx-size") + 1] == str(4096 * 4)
    assert argv[argv.index("--parallel") + 1] == "4"
    assert argv[argv.index("-hf") + 1] == "org/m-GGUF:Q4_K_M"
    assert argv[argv.index("--split-mode") + 1] == "layer"


def test_shared_setup_names_the_runtimes_own_key_flag() -> None:
    assert "--api-key" in shared_setup(runtime("vllm"))
    assert "reverse proxy" in shared_setup(Runtime(slug="mlx-lm", name="MLX-LM server"))
