"""The needle of the depth x length grid: wording, filler and passkey all drawn from a seed,
and the judgement of an answer, which catches a server that echoes the prompt back.

The passkey alone does not make a cell hard to fake: a server that answers by repeating
the prompt contains the passkey too. So an answer that quotes the needle sentence, the
question or a run of the filler is an echo, never a find.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.bench.prompts import compose, filler_sentences, stable_seed, user_messages
from app.bench.quality.needle import insert_at_depth, make_passkey, needle_found

GRID_DEPTHS = (0.05, 0.275, 0.5, 0.725, 0.95)
GRID_FIRST_LENGTH = 4096
# A run of this many prompt words in the answer is an echo, not an answer.
ECHO_WORDS = 8
ANSWER_KEPT = 200

_HOLDERS = (
    "blue lighthouse",
    "old harbour",
    "north tower",
    "quiet library",
    "red bridge",
    "stone mill",
    "winter garden",
    "silver train",
)
_NEEDLE_FORMS = (
    "The secret passkey of the {holder} is {passkey}. Remember it.",
    "Keep this in mind: the secret passkey of the {holder} is {passkey}.",
    "Note that the secret passkey of the {holder} is {passkey}, and nothing else.",
)
_QUESTION = (
    "What is the secret passkey of the {holder} mentioned in the text above? "
    "Answer with the number only."
)


def grid_lengths(context: int, first: int = GRID_FIRST_LENGTH) -> list[int]:
    """4096, 8192, 16384 ... below ``context``, then ``context`` itself."""
    lengths: list[int] = []
    length = first
    while length < context:
        lengths.append(length)
        length *= 2
    return [*lengths, context]


def trial_seed(base_seed: int, length: int, depth: float, repeat: int) -> int:
    return stable_seed(base_seed, "grid", length, depth, repeat)


@dataclass(frozen=True)
class GridPrompt:
    messages: list[dict[str, str]]
    passkey: str
    needle: str
    question: str
    words: int

    @property
    def text(self) -> str:
        return self.messages[0]["content"]


def grid_prompt(seed: int, words: int, depth: float) -> GridPrompt:
    """A haystack of about ``words`` filler words with the needle at ``depth``."""
    rng = random.Random(seed)
    holder = rng.choice(_HOLDERS)
    passkey = make_passkey(seed)
    needle = rng.choice(_NEEDLE_FORMS).format(holder=holder, passkey=passkey)
    question = _QUESTION.format(holder=holder)
    filler = max(words - len(needle.split()), 0)
    sentences = insert_at_depth(filler_sentences(seed, filler), needle, depth)
    return GridPrompt(user_messages(compose(sentences, question)), passkey, needle, question, words)


def judge_answer(answer: str, prompt: GridPrompt) -> tuple[bool, str | None]:
    """(found, the reason it is not) for one answer to ``prompt``."""
    if echoes_prompt(answer, prompt.text, prompt.needle):
        return False, "echo: the answer repeats the prompt instead of answering it"
    if not needle_found(answer, prompt.passkey):
        return False, "missed: the answer does not hold the passkey"
    return True, None


def echoes_prompt(answer: str, prompt_text: str, needle: str) -> bool:
    """True when the answer quotes the needle sentence, the question or a run of filler."""
    stripped = answer.strip()
    if not stripped:
        return False
    if needle in stripped or "Answer with the number only" in stripped:
        return True
    words = stripped.split()
    for start in range(0, max(len(words) - ECHO_WORDS + 1, 0)):
        if " ".join(words[start : start + ECHO_WORDS]) in prompt_text:
            return True
    return False
