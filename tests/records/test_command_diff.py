"""A launch command read as settings: spellings of one flag agree, booleans take no value,
and the diff of two commands names exactly the settings that differ."""

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.models import Artifact, LlmModel, Runtime
from app.records.comparison.command_diff import (
    KNOB_FLAGS,
    diff_commands,
    parse_command,
    same_value,
    show_value,
)
from app.resolve.applied import AppliedValues
from app.resolve.commands import KNOBS, KnobState, build_command

SGLANG = "python -m sglang.launch_server"
RUNTIMES = ["sglang", "vllm", "llama-cpp", "mlx-lm", "ollama"]


def flags(command: str, runtime: str | None = None) -> dict:
    return parse_command(command, runtime).flags


def changed(a: str, b: str, runtime: str | None = None) -> list[str]:
    return [c.key for c in diff_commands(parse_command(a, runtime), parse_command(b, runtime))]


class TestSpellings:
    @pytest.mark.parametrize(("runtime", "a", "b"), [
        ("vllm", "vllm serve m --max-model-len=4096", "vllm serve m --max-model-len 4096"),
        ("vllm", "vllm serve m --max_model_len 4096", "vllm serve m --max-model-len 4096"),
        ("vllm", "vllm serve m -tp 2", "vllm serve m --tensor-parallel-size=2"),
        ("vllm", "vllm serve org/m", "vllm serve --model org/m"),
        ("sglang", f"{SGLANG} --tp 8", f"{SGLANG} --tp-size 8"),
        ("sglang", f"{SGLANG} --model x", f"{SGLANG} --model-path=x"),
        ("llama-cpp", "llama-server -c 8192 -ngl 9", "llama-server --ctx-size 8192 --gpu-layers 9"),
        ("llama-cpp", "llama-server -ctk q8_0 -fa on", "llama-server --cache-type-k=q8_0 -fa=on"),
        ("vllm", "vllm serve m --gpu-memory-utilization 0.9",
         "vllm serve m --gpu-memory-utilization=.90"),
        ("vllm", """vllm serve m --speculative-config '{"method": "mtp"}'""",
         """vllm serve m --speculative-config '{"method":"mtp"}'"""),
        ("vllm", "vllm serve m \\\n  --max-model-len 4096", "vllm serve m --max-model-len 4096"),
    ])  # fmt: skip
    def test_the_same_setting_written_two_ways_is_no_change(self, runtime, a, b) -> None:
        assert changed(a, b, runtime) == []

    def test_aliases_are_the_runtimes_own(self) -> None:
        # `-c` is llama.cpp's context; vLLM has no such alias, so it stays as written.
        assert flags("llama-server -c 4096", "llama-cpp") == {"--ctx-size": "4096"}
        assert "-c" in flags("vllm serve m -c 4096", "vllm")

    def test_a_changed_spelling_is_shown_as_the_newer_command_writes_it(self) -> None:
        a = parse_command("python -m sglang.launch_server --tp-size 4", "sglang")
        b = parse_command("python -m sglang.launch_server --tp 8", "sglang")
        [change] = diff_commands(a, b)
        assert (change.name, change.key, change.a, change.b) == (
            "--tp",
            "--tensor-parallel-size",
            "4",
            "8",
        )


class TestValues:
    def test_boolean_flags_take_no_value(self) -> None:
        parsed = flags("vllm serve --enforce-eager org/m --trust-remote-code", "vllm")
        assert parsed == {"--enforce-eager": True, "--model": "org/m", "--trust-remote-code": True}

    def test_an_unknown_flag_before_another_flag_or_the_end_is_a_switch(self) -> None:
        assert flags("llama-server --new-thing --port 1 --last", "llama-cpp") == {
            "--new-thing": True,
            "--port": "1",
            "--last": True,
        }

    def test_vllm_no_prefix_switches_the_option_off(self) -> None:
        assert (
            flags("vllm serve m --no-enable-prefix-caching", "vllm")["--enable-prefix-caching"]
            is False
        )
        assert changed(
            "vllm serve m --enable-prefix-caching",
            "vllm serve m --no-enable-prefix-caching",
            "vllm",
        ) == ["--enable-prefix-caching"]

    def test_negative_numbers_are_values_not_flags(self) -> None:
        assert flags("llama-server --seed -1 -ngl 99", "llama-cpp") == {
            "--seed": "-1",
            "--n-gpu-layers": "99",
        }

    def test_a_repeated_flag_keeps_every_value(self) -> None:
        parsed = flags("llama-server -ot a=CPU --override-tensor b=CPU", "llama-cpp")
        assert parsed == {"--override-tensor": ("a=CPU", "b=CPU")}
        assert show_value(parsed["--override-tensor"]) == "a=CPU · b=CPU"

    def test_environment_assignments_are_settings(self) -> None:
        a = "env OLLAMA_HOST=127.0.0.1:8000 OLLAMA_CONTEXT_LENGTH=8192 ollama serve"
        b = "OLLAMA_HOST=127.0.0.1:8000 OLLAMA_CONTEXT_LENGTH=16384 ollama serve"
        assert parse_command(a, "ollama").program == "ollama serve"
        assert changed(a, b, "ollama") == ["OLLAMA_CONTEXT_LENGTH"]

    def test_the_program_is_a_setting(self) -> None:
        assert changed(
            "vllm serve m", "python -m vllm.entrypoints.openai.api_server --model m", "vllm"
        ) == ["program"]

    def test_numbers_and_json_compare_by_meaning(self) -> None:
        assert same_value("0.9", "0.90") and same_value("8192", "8192.0")
        assert same_value('{"a": 1}', '{ "a":1 }')
        assert not same_value("0.9", "0.95") and not same_value("fp8", "auto")
        assert not same_value(True, "true") and not same_value(None, "1")


class TestUnreadable:
    def test_an_unclosed_quote_keeps_the_text_and_compares_it_whole(self) -> None:
        parsed = parse_command('vllm serve "m --port 1', "vllm")
        assert parsed.error and "closing quotation" in parsed.error and parsed.flags == {}
        assert changed('vllm serve "m', 'vllm serve "m', "vllm") == []
        assert changed('vllm serve "m', "vllm serve m", "vllm") == ["command"]

    def test_an_empty_command_has_no_settings(self) -> None:
        assert parse_command("", "vllm").flags == {}
        assert changed("", "vllm serve m --port 1", "vllm") == ["program", "--model", "--port"]


# Property tests: a command made of flag -> value, written in any order and either form.
FLAG = st.from_regex(r"--[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,5}){0,2}", fullmatch=True)
VALUE = st.text(
    st.characters(codec="ascii", exclude_categories=("Cc",)), min_size=1, max_size=12
).filter(lambda v: not v.startswith("-"))
SETTINGS = st.dictionaries(FLAG, VALUE, max_size=8)


def written(settings: dict[str, str], equals: list[bool], order: list[int]) -> str:
    words: list[str] = ["llama-server"]
    items = list(settings.items())
    for index in sorted(range(len(items)), key=lambda i: order[i % len(order)] if order else 0):
        flag, value = items[index]
        if equals[index % len(equals)]:
            words.append(f"{flag}={value}")
        else:
            words += [flag, value]
    return shlex.join(words)


@settings(deadline=None)  # a loaded machine is slow, not wrong
@given(SETTINGS, st.lists(st.booleans(), min_size=1), st.lists(st.integers(), max_size=8))
def test_any_order_and_either_form_reads_back_the_same_settings(settings, equals, order) -> None:
    # No runtime: no alias and no boolean list applies, so every flag is read as written.
    assert parse_command(written(settings, equals, order)).flags == settings


@settings(deadline=None)  # a loaded machine is slow, not wrong
@given(SETTINGS, st.lists(st.booleans(), min_size=1), st.lists(st.booleans(), min_size=1))
def test_only_the_form_differs_means_no_change(settings, form_a, form_b) -> None:
    a = parse_command(written(settings, form_a, []))
    b = parse_command(written(settings, form_b, []))
    assert diff_commands(a, b) == []


@settings(deadline=None)  # a loaded machine is slow, not wrong
@given(SETTINGS.filter(bool), st.data())
def test_changing_one_value_is_one_change_of_that_flag(settings, data) -> None:
    flag = data.draw(st.sampled_from(sorted(settings)))
    new = data.draw(VALUE.filter(lambda v: not same_value(v, settings[flag])))
    a = parse_command(written(settings, [False], []))
    b = parse_command(written({**settings, flag: new}, [True], []))
    [change] = diff_commands(a, b)
    assert (change.key, change.a, change.b) == (flag, settings[flag], new)


@settings(deadline=None)  # a loaded machine is slow, not wrong
@given(st.text(max_size=80), st.sampled_from([*RUNTIMES, None]))
def test_any_text_parses_or_says_why(text, runtime) -> None:
    parsed = parse_command(text, runtime)
    assert parsed.error is None or (parsed.flags == {} and parsed.text == text)


# The knob -> flag table agrees with the commands the recipes print.
def every_knob_set() -> AppliedValues:
    return AppliedValues(
        tensor_parallel=2,
        split="tensor",
        context=8192,
        kv_cache_dtype="fp8",
        prefill_tokens=4096,
        max_concurrency=4,
        memory_fraction=0.85,
        speculative_decoding=True,
        cuda_graphs=False,
    )


def recipe_command(slug: str, values: AppliedValues) -> str:
    command = build_command(
        Runtime(slug=slug, name=slug),
        Artifact(slug="a", repo="org/m", quant="q4_k_m"),
        LlmModel(slug="m", mtp_layers=1),
        values,
        KNOBS,
    )
    assert command is not None
    return command.shell


@pytest.mark.parametrize("slug", RUNTIMES)
def test_each_knob_the_recipe_sets_is_carried_by_the_flags_the_table_names(slug) -> None:
    command = build_command(
        Runtime(slug=slug, name=slug),
        Artifact(slug="a", repo="org/m", quant="q4_k_m"),
        LlmModel(slug="m", mtp_layers=1),
        every_knob_set(),
        KNOBS,
    )
    assert command is not None
    parsed = parse_command(command.shell, slug)
    assert parsed.error is None
    set_knobs = {name for name, knob in command.knobs.items() if knob.state == KnobState.SET}
    assert set_knobs <= set(KNOB_FLAGS[slug])
    for knob in set_knobs:
        assert set(KNOB_FLAGS[slug][knob]) <= set(parsed.flags), knob


@pytest.mark.parametrize("slug", RUNTIMES)
@pytest.mark.parametrize(
    ("knob", "value"), [("context", 16384), ("max_concurrency", 8), ("prefill_tokens", 2048)]
)
def test_one_knob_changed_in_a_recipe_changes_only_its_flags(slug, knob, value) -> None:
    base = every_knob_set()
    other = base.changed(**{knob: value})
    keys = changed(recipe_command(slug, base), recipe_command(slug, other), slug)
    carriers = KNOB_FLAGS[slug].get(knob, ())
    assert set(keys) <= set(carriers)
    assert bool(keys) == bool(carriers)  # a runtime that cannot set the knob shows nothing
