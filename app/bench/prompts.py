"""Prompts of a requested token length, built from deterministic filler text.

The client has no tokenizer for the served model, so sizes are calibrated against the
token counts the server reports (``usage.prompt_tokens``): a linear fit of reported tokens
against filler words, seeded by the smoke question (no filler: the chat template and
question overhead) and the warm-up prompt, and refined by every measured length.

Each prompt's filler comes from its own seed. Servers with automatic prefix caching (vLLM,
SGLang's radix cache, llama.cpp's ``cache_prompt``) would otherwise reuse the KV cache of
an earlier, shorter prompt that shares the same opening words and report an inflated
prefill speed for the longer one.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field

# One question serves the smoke test and closes every sized prompt, so the smoke request's
# reported prompt tokens measure exactly the overhead that every sized prompt carries.
QUESTION = "Tell me a long story about a lighthouse keeper and the sea."

DEFAULT_TOKENS_PER_WORD = 1.3
SIZING_MARGIN = 0.02

# Common English words without digits, so a numeric needle stays unique in any filler.
_WORDS = (
    "the of and to in is was for on are with as his they be at one have this from or had by "
    "word but what some we can out other were all there when up use your how said an each she "
    "which do their time if will way about many then them write would like so these her long "
    "make thing see him two has look more day could go come did number sound no most people my "
    "over know water than call first who may down side been now find any new work part take get "
    "place made live where after back little only round man year came show every good me give "
    "our under name very through just form sentence great think say help low line differ turn "
    "cause much mean before move right boy old too same tell does set three want air well also "
    "play small end put home read hand port large spell add even land here must big high such "
    "follow act why ask men change went light kind off need house picture try us again animal "
    "point mother world near build self earth father head stand own page should country found "
    "answer school grow study still learn plant cover food sun four between state keep eye never "
    "last let thought city tree cross farm hard start might story saw far sea draw left late run "
    "while press close night real life few north open seem together next white children begin "
    "got walk example ease paper group always music those both mark often letter until mile "
    "river car feet care second book carry took science eat room friend began idea fish "
    "mountain stop once base hear horse cut sure watch color face wood main enough plain girl "
    "usual young ready above ever red list though feel talk bird soon body dog family direct "
    "pose leave song measure door product black short numeral class wind question happen "
    "complete ship area half rock order fire south problem piece told knew pass since top whole "
    "king space heard best hour better true during hundred five remember step early hold west "
    "ground interest reach fast verb sing listen six table travel less morning ten simple "
    "several vowel toward war lay against pattern slow center love person money serve appear "
    "road map rain rule govern pull cold notice voice unit power town fine certain fly fall lead "
    "cry dark machine note wait plan figure star box noun field rest correct able pound done "
    "beauty drive stood contain front teach week final gave green oh quick develop ocean warm "
    "free minute strong special mind behind clear tail produce fact street inch multiply "
    "nothing course stay wheel full force blue object decide surface deep moon island foot "
    "system busy test record boat common gold possible plane stead dry wonder laugh thousand "
    "ago ran check game shape equate hot miss brought heat snow tire bring yes distant fill "
    "east paint language among"
).split()


def stable_seed(*parts: object) -> int:
    """A seed that is the same in every process (``hash()`` of a str is not)."""
    return zlib.crc32(":".join(str(part) for part in parts).encode())


def filler_words(rng: random.Random, count: int) -> list[str]:
    """Words dealt from shuffled copies of the word list, every word once per round.

    Each round has the same token count under any tokenizer, so the tokens per word of a
    long filler hardly vary between seeds and the size calibration carries over.
    """
    words: list[str] = []
    while len(words) < count:
        round_ = list(_WORDS)
        rng.shuffle(round_)
        words.extend(round_)
    return words[:count]


def filler_sentences(seed: int, words: int) -> list[str]:
    """Sentences of 8-16 words, ``words`` words in all, the same for the same seed."""
    rng = random.Random(seed)
    dealt = filler_words(rng, words)
    sentences: list[str] = []
    start = 0
    while start < len(dealt):
        size = rng.randint(8, 16)
        chosen = dealt[start : start + size]
        chosen[0] = chosen[0].capitalize()
        sentences.append(" ".join(chosen) + ".")
        start += size
    return sentences


def compose(sentences: list[str], question: str = QUESTION) -> str:
    if not sentences:
        return question
    return " ".join(sentences) + "\n\n" + question


def user_messages(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@dataclass
class PromptSizer:
    """Maps filler words to prompt tokens: ``tokens = overhead + tokens_per_word * words``."""

    default_tokens_per_word: float = DEFAULT_TOKENS_PER_WORD
    points: list[tuple[int, int]] = field(default_factory=list)

    def observe(self, words: int, reported_tokens: int | None) -> None:
        if reported_tokens is not None and reported_tokens > 0:
            self.points.append((words, reported_tokens))

    @property
    def calibrated(self) -> bool:
        return any(words > 0 for words, _ in self.points)

    def fit(self) -> tuple[float, float]:
        """(overhead tokens, tokens per word) from a least-squares line through the points."""
        overheads = [tokens for words, tokens in self.points if words == 0]
        with_words = [(words, tokens) for words, tokens in self.points if words > 0]
        overhead = sum(overheads) / len(overheads) if overheads else 0.0
        if not with_words:
            return overhead, self.default_tokens_per_word
        distinct_words = {words for words, _ in self.points}
        if len(distinct_words) < 2:
            words, tokens = with_words[0]
            return overhead, max((tokens - overhead) / words, 0.01)
        return _least_squares(self.points)

    def words_for(self, target_tokens: int) -> int:
        """Filler words for a prompt of ``target_tokens``, aimed ``SIZING_MARGIN`` below it.

        The fit is an estimate; landing a little short of the target is harmless, while
        overshooting a context that the server has exactly would be rejected as too long.
        """
        overhead, per_word = self.fit()
        aim = target_tokens * (1.0 - SIZING_MARGIN)
        return max(int((aim - overhead) / per_word), 0)

    def expected_tokens(self, words: int) -> int:
        overhead, per_word = self.fit()
        return round(overhead + per_word * words)


def _least_squares(points: list[tuple[int, int]]) -> tuple[float, float]:
    count = len(points)
    mean_x = sum(words for words, _ in points) / count
    mean_y = sum(tokens for _, tokens in points) / count
    spread = sum((words - mean_x) ** 2 for words, _ in points)
    slope = sum((words - mean_x) * (tokens - mean_y) for words, tokens in points) / spread
    slope = max(slope, 0.01)
    return mean_y - slope * mean_x, slope


@dataclass(frozen=True)
class SizedPrompt:
    messages: list[dict[str, str]]
    words: int
    target_tokens: int
    expected_tokens: int


def sized_prompt(sizer: PromptSizer, target_tokens: int, seed: int) -> SizedPrompt:
    words = sizer.words_for(target_tokens)
    text = compose(filler_sentences(seed, words))
    return SizedPrompt(user_messages(text), words, target_tokens, sizer.expected_tokens(words))


def is_truncated(reported_tokens: int | None, sent_tokens: int, tolerance: float) -> bool | None:
    """True when the server counted well fewer prompt tokens than were sent; None if unknown."""
    if reported_tokens is None:
        return None
    return reported_tokens < (1.0 - tolerance) * sent_tokens
