"""Finds visible English left outside the translation markers of a Jinja template.

The template is read with Jinja's own lexer: text inside `{% trans %}` blocks and
`_()` calls is marked; every other text node, the attributes a reader sees (title,
placeholder, aria-label, alt, summary), and string literals a `{{ }}` shows directly
(`"a" if x else "b"`, `x or "none"`) are returned when they hold an English word.
"""

import re
from html.parser import HTMLParser

from jinja2 import Environment

# Words that are the same in every language: names, units and technical terms.
TECHNICAL = {
    "servebook",
    "GB",
    "GB/s",
    "KV",
    "TTFT",
    "ITL",
    "MoE",
    "vLLM",
    "llama",
    "cpp",
    "Ollama",
    "tok",
    "ms",
    "GPU",
    "GPUs",
    "API",
    "JSON",
    "URL",
    "CSV",
    "HF",
    "SGLang",
    "MLX",
    "GGUF",
    "cuda",
    "rocm",
    "metal",
    "vulkan",
    "cpu",
    "none",
    "pcie",
    "nvlink",
    "nvswitch",
    "xgmi",
    "CUDA",
    "ROCm",
    "UTC",
    "id",
    "English",
    "p50",
    "p95",
    "p99",
    "Hub",
    "AWQ",
    "FP8",
}
SEEN_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt", "summary"}
SKIPPED_ELEMENTS = {"code", "pre", "script", "style"}
WORD = re.compile(r"[A-Za-z][A-Za-z'’]+")
# Code, not prose: snake_case names, sha256-like tokens, file names, `name = value` samples.
CODE = re.compile(r"\S*[_\d]\S*|\w+ = \S+|\w+\.\w+")
HOLE = "\x00"  # where an expression stood: keeps words on either side apart


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED_ELEMENTS:
            self.skipping += 1
        self.found += [value for name, value in attrs if name in SEEN_ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED_ELEMENTS and self.skipping:
            self.skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.found.append(data)


def english_words(text: str) -> list[str]:
    words = WORD.findall(CODE.sub(" ", text.replace(HOLE, " ")))
    return [w for w in words if w not in TECHNICAL and not w.isupper()]  # acronyms stay


def shown_literals(tokens: list[tuple[str, str]]) -> list[str]:
    """String literals a `{{ }}` prints as they are: first thing shown, or after if/else/or."""
    found = []
    for i, (kind, value) in enumerate(tokens):
        if kind != "string":
            continue
        before = tokens[i - 1] if i else ("", "")
        after = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if before[0] == "variable_begin" or before[1] in ("else", "or") or after[1] == "if":
            found.append(value[1:-1])
    return found


def unmarked_text(source: str) -> list[str]:
    """Each piece of visible English in `source` not marked for translation."""
    env = Environment(extensions=["jinja2.ext.i18n"])
    tokens = [(kind, value) for _, kind, value in env.lex(source) if kind != "whitespace"]
    html: list[str] = []
    in_trans = False
    expression: list[tuple[str, str]] = []
    for i, (kind, value) in enumerate(tokens):
        if kind == "name" and tokens[i - 1][0] == "block_begin":
            in_trans = value in ("trans", "pluralize") or (in_trans and value != "endtrans")
        if kind == "variable_begin":
            expression = [(kind, value)]
        elif kind == "variable_end":
            if not in_trans:
                html.append(HOLE)
            found = shown_literals(expression)
            expression = []
            if found and not in_trans:
                html.append(HOLE.join(found))  # shown as text: checked like text
        elif expression:
            expression.append((kind, value))
        elif kind == "data" and not in_trans:
            html.append(value)
        elif kind == "block_end":
            html.append(" ")  # blocks sit inside tags: <option{% if x %} selected{% endif %}>
    parser = _Text()
    parser.feed("".join(html))
    parser.close()
    return [
        " ".join(piece.replace(HOLE, " ").split()) for piece in parser.found if english_words(piece)
    ]
