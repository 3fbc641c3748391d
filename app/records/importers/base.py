"""What every importer returns: measurements in our units, plus what the file says about itself."""

from dataclasses import dataclass, field
from typing import Any

from app.i18n.catalogs import lazy_gettext as _l
from app.i18n.sentences import Sentence, english, register


class ImportFormatError(ValueError):
    """The file is not what its format promises; the message says what is missing (in
    English as `str(error)`, coded as `said` for a page)."""

    def __init__(self, said: Sentence) -> None:
        super().__init__(english(said))
        self.said = said


NOT_UTF8 = register("import.not_utf8", _l("the file is not UTF-8 text"))
NOT_JSON = register("import.not_json", _l("the file is not JSON (%(detail)s)"))
UNREADABLE = register("import.unreadable", _l("the file cannot be read: %(problem)s"))
UNRECOGNISED = register(
    "import.unrecognised", _l("unrecognised result file; supported: %(formats)s")
)
EMPTY = register("import.empty", _l("the file is empty"))
UNKNOWN_FORMAT = register(
    "import.unknown_format", _l("unknown format '%(name)s'; choose one of: %(formats)s")
)
NOT_LLAMA_BENCH = register(
    "import.not_llama_bench",
    _l("not llama-bench JSON: expected a list of rows with 'n_prompt', 'n_gen' and 'avg_ts'"),
)
LLAMA_BENCH_ROW = register(
    "import.llama_bench_row", _l("row %(row)s: needs n_prompt or n_gen and a positive avg_ts")
)
NOT_VLLM = register(
    "import.not_vllm",
    _l(
        "not a vLLM bench result: expected 'completed', 'total_input_tokens' and latency keys "
        "such as 'median_ttft_ms'"
    ),
)
VLLM_NOTHING_COMPLETED = register(
    "import.vllm_nothing_completed",
    _l("result %(result)s: no request completed, so there is nothing to measure"),
)
NOT_GUIDELLM = register(
    "import.not_guidellm",
    _l(
        "not a GuideLLM report: expected 'benchmarks' whose 'metrics' hold 'time_to_first_token_ms'"
    ),
)
GUIDELLM_NO_SUCCESS = register(
    "import.guidellm_no_success", _l("benchmark %(benchmark)s: no successful request to measure")
)


@dataclass
class ImportedRun:
    tool: str
    format: str
    measurements: list[dict[str, Any]]
    tool_version: str | None = None
    runtime_version: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)


def number(value: Any) -> float | None:
    """A finite float, or None for missing, null, NaN and the strings tools write for them."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if result == result and abs(result) != float("inf") else None


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def per_second(ms_per_token: float | None) -> float | None:
    """Tokens per second from milliseconds per token."""
    return round(1000 / ms_per_token, 3) if ms_per_token else None


def compact(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != {} and v != []}
