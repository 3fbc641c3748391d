from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.bench.prompts import (
    PromptSizer,
    compose,
    filler_sentences,
    is_truncated,
    sized_prompt,
    stable_seed,
)
from app.bench.quality.needle import insert_at_depth, needle_found, needle_prompt, needle_sentence


def test_filler_is_deterministic_per_seed_and_exact_in_words() -> None:
    first = filler_sentences(7, 1000)
    assert first == filler_sentences(7, 1000)
    assert sum(len(sentence.split()) for sentence in first) == 1000
    assert filler_sentences(8, 1000)[0] != first[0]
    assert all(sentence.endswith(".") for sentence in first)


def test_filler_has_no_digits_so_a_numeric_needle_is_unique() -> None:
    assert not re.search(r"\d", " ".join(filler_sentences(3, 5000)))


def test_stable_seed_differs_per_length_and_is_reproducible() -> None:
    assert stable_seed(0, "length", 1024) == stable_seed(0, "length", 1024)
    assert stable_seed(0, "length", 1024) != stable_seed(0, "length", 2048)


def test_sizer_fits_overhead_and_tokens_per_word() -> None:
    sizer = PromptSizer()
    sizer.observe(0, 20)
    sizer.observe(500, 670)
    overhead, per_word = sizer.fit()
    assert overhead == pytest.approx(20)
    assert per_word == pytest.approx(1.3)
    assert sizer.expected_tokens(1000) == 1320
    # Aimed 2 % short of the target: 0.98 * 1346.94 = 1320 tokens.
    assert sizer.words_for(1347) == 1000


def test_sizer_least_squares_over_several_points() -> None:
    sizer = PromptSizer()
    for words in (0, 100, 1000, 5000):
        sizer.observe(words, 12 + 2 * words)
    overhead, per_word = sizer.fit()
    assert overhead == pytest.approx(12)
    assert per_word == pytest.approx(2)


def test_uncalibrated_sizer_uses_the_default_ratio() -> None:
    sizer = PromptSizer()
    sizer.observe(0, None)
    assert not sizer.calibrated
    assert sizer.words_for(1300) == 980


def test_sized_prompt_reports_what_it_aimed_for() -> None:
    sizer = PromptSizer(points=[(0, 10), (100, 110)])
    prompt = sized_prompt(sizer, 1010, seed=1)
    assert prompt.words == 979
    assert prompt.target_tokens == 1010
    assert prompt.expected_tokens == 989
    assert prompt.messages[0]["role"] == "user"
    assert prompt.messages[0]["content"].endswith(compose([]))


@pytest.mark.parametrize(
    ("reported", "sent", "expected"),
    [
        (None, 1000, None),
        (1000, 1000, False),
        (905, 1000, False),
        (899, 1000, True),
        (2048, 8000, True),
    ],
)
def test_truncation_flag(reported: int | None, sent: int, expected: bool | None) -> None:
    assert is_truncated(reported, sent, tolerance=0.1) is expected


@pytest.mark.parametrize("depth", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_needle_lands_near_the_requested_depth(depth: float) -> None:
    sentences = filler_sentences(1, 2000)
    placed = insert_at_depth(sentences, "NEEDLE.", depth)
    index = placed.index("NEEDLE.")
    words_before = sum(len(sentence.split()) for sentence in placed[:index])
    assert abs(words_before - depth * 2000) <= 16


def test_needle_prompt_holds_its_passkey_once_and_asks_for_it() -> None:
    sizer = PromptSizer(points=[(0, 10), (100, 110)])
    prompt = needle_prompt(sizer, 2000, 0.5, base_seed=0)
    text = prompt.messages[0]["content"]
    assert re.fullmatch(r"\d{7}", prompt.passkey)
    assert text.count(prompt.passkey) == 1
    assert needle_sentence(prompt.passkey) in text
    assert text.rstrip().endswith("Answer with the number only.")
    other = needle_prompt(sizer, 2000, 0.9, base_seed=0)
    assert other.messages[0]["content"][:200] != text[:200]


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ("The passkey is 4821907.", True),
        ("4821907", True),
        ("4,821,907", True),
        ("482 1907", True),
        ("482190", False),
        ("I do not know.", False),
        ("", False),
    ],
)
def test_needle_scoring(answer: str, found: bool) -> None:
    assert needle_found(answer, "4821907") is found


@given(st.integers(min_value=1, max_value=3000), st.floats(min_value=0, max_value=1))
def test_needle_insertion_keeps_every_sentence(words: int, depth: float) -> None:
    sentences = filler_sentences(2, words)
    placed = insert_at_depth(sentences, "N.", depth)
    assert [sentence for sentence in placed if sentence != "N."] == sentences
