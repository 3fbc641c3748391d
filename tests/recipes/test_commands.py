"""Command rendering: real flags, 127.0.0.1 only, shell quoting that survives odd names, and
an honest account of every knob the command does not set."""

import json
import shlex

import pytest

from app.models import Artifact, LlmModel, Runtime
from app.resolve.applied import AppliedValues
from app.resolve.commands import KNOBS, KnobState, build_command, departures, shared_setup

ODD_REPOS = ["org/model with spaces", 'org/it\'s "quoted"', "/models/$HOME; rm -rf ~", "a`b`"]
RUNTIMES = ["sglang", "vllm", "llama-cpp", "mlx-lm", "ollama"]


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


def model(mtp_layers: int = 0) -> LlmModel:
    return LlmModel(slug="m", mtp_layers=mtp_layers)


def build(
    slug: str,
    profile: AppliedValues,
    balanced: AppliedValues | None = None,
    *,
    repo: str = "org/m",
    mtp: int = 0,
):
    explicit = departures(profile, balanced or values())
    command = build_command(runtime(slug), artifact(repo), model(mtp), profile, explicit)
    assert command is not None
    return command


@pytest.mark.parametrize("slug", RUNTIMES)
@pytest.mark.parametrize("repo", ODD_REPOS)
def test_shell_form_splits_back_into_the_same_argv(slug: str, repo: str) -> None:
    command = build(slug, values(), repo=repo)
    assert shlex.split(command.shell) == command.argv
    assert any(repo in part for part in command.argv + (command.followup or []))
    if command.followup:
        assert shlex.split(command.followup_shell) == command.followup


@pytest.mark.parametrize("slug", RUNTIMES)
def test_every_server_binds_to_loopback(slug: str) -> None:
    text = build(slug, values()).shell
    assert "127.0.0.1" in text and "0.0.0.0" not in text


@pytest.mark.parametrize("slug", RUNTIMES)
def test_every_knob_is_set_left_at_default_or_explained(slug: str) -> None:
    command = build(slug, values(max_concurrency=4, speculative_decoding=True))
    assert set(command.knobs) == set(KNOBS)
    for name, knob in command.knobs.items():
        if knob.state == KnobState.SET:
            flag_words = shlex.split(knob.flag)
            start = command.argv.index(flag_words[0])
            assert command.argv[start : start + len(flag_words)] == flag_words, name
        elif knob.state == KnobState.UNSUPPORTED:
            assert knob.note, name
        else:
            assert knob.flag is None or shlex.split(knob.flag)[0] not in command.argv, name


def test_balanced_leaves_concurrency_and_prefill_at_the_runtimes_default() -> None:
    sglang = build("sglang", values())
    assert "--max-running-requests" not in sglang.argv
    knob = sglang.knobs["max_concurrency"]
    assert knob.state == KnobState.DEFAULT and knob.flag == "--max-running-requests 16"
    assert sglang.knobs["prefill_tokens"].flag == "--chunked-prefill-size 8192"
    assert sglang.knobs["memory_fraction"].state == KnobState.DEFAULT
    assert sglang.knobs["context"].state == KnobState.SET
    vllm = build("vllm", values())
    assert vllm.knobs["max_concurrency"].flag == "--max-num-seqs 16"
    assert vllm.knobs["memory_fraction"].state == KnobState.SET


def test_flags_follow_the_profile_only_where_it_departs_from_balanced() -> None:
    speed = values(
        max_concurrency=4, prefill_tokens=4096, speculative_decoding=True, memory_fraction=0.88
    )
    vllm = build("vllm", speed).argv
    assert vllm[vllm.index("--max-num-seqs") + 1] == "4"
    assert vllm[vllm.index("--max-num-batched-tokens") + 1] == "4096"
    assert vllm[vllm.index("--gpu-memory-utilization") + 1] == "0.88"
    sglang = build("sglang", speed).argv
    assert sglang[sglang.index("--max-running-requests") + 1] == "4"
    assert sglang[sglang.index("--chunked-prefill-size") + 1] == "4096"
    assert sglang[sglang.index("--mem-fraction-static") + 1] == "0.88"
    plain = build("vllm", values()).argv
    assert "--max-num-seqs" not in plain and "--speculative-config" not in plain


def test_speculative_decoding_uses_the_models_mtp_layers_where_it_has_them() -> None:
    speed = values(speculative_decoding=True)
    vllm = build("vllm", speed, mtp=1).argv
    config = json.loads(vllm[vllm.index("--speculative-config") + 1])
    assert config == {"method": "mtp", "num_speculative_tokens": 1}
    plain = build("vllm", speed, mtp=0).argv
    assert json.loads(plain[plain.index("--speculative-config") + 1])["method"] == "ngram"
    sglang = build("sglang", speed, mtp=1).argv
    assert sglang[sglang.index("--speculative-algorithm") + 1] == "EAGLE"
    assert sglang[sglang.index("--speculative-num-draft-tokens") + 1] == "4"
    ngram = build("sglang", speed, mtp=0).argv
    assert ngram[ngram.index("--speculative-algorithm") + 1] == "NGRAM"


@pytest.mark.parametrize("slug", ["llama-cpp", "mlx-lm", "ollama"])
def test_runtimes_without_a_draft_head_path_say_why(slug: str) -> None:
    command = build(slug, values(speculative_decoding=True), mtp=1)
    knob = command.knobs["speculative_decoding"]
    assert knob.state == KnobState.UNSUPPORTED and knob.note
    assert not any("specul" in part or "draft" in part for part in command.argv)


def test_llama_cpp_context_is_shared_between_its_slots() -> None:
    argv = build(
        "llama-cpp", values(context=4096, max_concurrency=4, split="layer"), repo="org/m-GGUF"
    ).argv
    assert argv[argv.index("--ctx-size") + 1] == str(4096 * 4)
    assert argv[argv.index("--parallel") + 1] == "4"
    assert argv[argv.index("-hf") + 1] == "org/m-GGUF:Q4_K_M"
    assert argv[argv.index("--split-mode") + 1] == "layer"


@pytest.mark.parametrize("cards", [2, 3])
def test_a_layer_split_spreads_the_layers_evenly_over_every_card(cards: int) -> None:
    split = values(tensor_parallel=1, split="layer", layer_split=cards)
    argv = build("llama-cpp", split).argv
    assert argv[argv.index("--split-mode") + 1] == "layer"
    assert argv[argv.index("--tensor-split") + 1] == ",".join(["1"] * cards)
    assert "OLLAMA_SCHED_SPREAD=1" in build("ollama", split).argv
    one_card = values(tensor_parallel=1, split="none")
    assert "--split-mode" not in build("llama-cpp", one_card).argv
    assert not any("SCHED_SPREAD" in part for part in build("ollama", one_card).argv)


def test_shared_setup_names_the_runtimes_own_key_flag() -> None:
    assert "--api-key" in shared_setup(runtime("vllm"))
    assert "reverse proxy" in shared_setup(Runtime(slug="mlx-lm", name="MLX-LM server"))
