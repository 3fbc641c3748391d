"""Needle in a haystack: a random passkey sentence hidden at a depth of the filler text.

RULER-style synthetic needle with deterministic substring scoring, so no judge model is
needed: the answer is right when it contains the passkey.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from app.bench.prompts import PromptSizer, compose, filler_sentences, stable_seed, user_messages

NEEDLE_QUESTION = (
    "What is the secret passkey mentioned in the text above? Answer with the number only."
)
DEFAULT_DEPTHS = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class NeedlePrompt:
    messages: list[dict[str, str]]
    passkey: str
    depth: float
    words: int
    target_tokens: int
    expected_tokens: int


def make_passkey(seed: int) -> str:
    return str(random.Random(seed).randint(1_000_000, 9_999_999))


def needle_sentence(passkey: str) -> str:
    return f"The secret passkey is {passkey}. Remember it."


def insert_at_depth(sentences: list[str], needle: str, depth: float) -> list[str]:
    """Put ``needle`` at the sentence boundary nearest ``depth`` (0 start, 1 end) of the words."""
    total_words = sum(len(sentence.split()) for sentence in sentences)
    wanted = depth * total_words
    boundary, best_distance, words_before = 0, abs(wanted), 0
    for index, sentence in enumerate(sentences, start=1):
        words_before += len(sentence.split())
        distance = abs(wanted - words_before)
        if distance < best_distance:
            boundary, best_distance = index, distance
    return [*sentences[:boundary], needle, *sentences[boundary:]]


def needle_prompt(
    sizer: PromptSizer, target_tokens: int, depth: float, base_seed: int
) -> NeedlePrompt:
    # A seed per (length, depth): cells sharing a haystack prefix would hit the prefix cache.
    seed = stable_seed(base_seed, "needle", target_tokens, depth)
    passkey = make_passkey(seed)
    needle = needle_sentence(passkey)
    words = max(sizer.words_for(target_tokens) - len(needle.split()), 0)
    sentences = insert_at_depth(filler_sentences(seed, words), needle, depth)
    text = compose(sentences, NEEDLE_QUESTION)
    expected = sizer.expected_tokens(words + len(needle.split()))
    return NeedlePrompt(user_messages(text), passkey, depth, words, target_tokens, expected)


_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[ ,.'_](?=\d)")


def needle_found(answer: str, passkey: str) -> bool:
    """True when the answer contains the passkey, also when written with digit separators."""
    if passkey in answer:
        return True
    return passkey in _DIGIT_SEPARATOR.sub("", answer)


def accuracy(found: list[bool]) -> float | None:
    if not found:
        return None
    return sum(found) / len(found)
