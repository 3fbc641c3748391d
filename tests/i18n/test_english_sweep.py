"""No sentence the app knows in English is left on a Korean or Japanese page.

The known sentences are every msgid of the catalogs and every template of the sentence and
message registries, cut at their placeholders and tags into runs of three words or more,
kept when that language's translation differs (a run such as "config.json" is the same in
every language). The main pages are rendered through the real app on a migrated, seeded
database, with records submitted, reviewed and compared, and the refusal pages the edge and
the routes give; a known English run in a page's visible text fails the sweep.
"""

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session

import app.main  # noqa: F401  (imports every module, so every code is registered)
from app.asking.gpu_table import all_gpus
from app.estimate.inputs.quants import QUANTS
from app.i18n.catalogs import po_path, reset_locale, set_locale
from app.i18n.maintenance import read_catalog
from app.i18n.message_templates import TEMPLATES
from app.i18n.negotiation import COOKIE
from app.i18n.sentences import registered
from app.main import create_app
from app.models import Artifact, BenchJob, Hardware, LlmModel, ReportedFigure
from tests.conftest import sqlite_settings
from tests.records.conftest import (  # noqa: F401
    GLM,
    GLM_MLX,
    accept,
    h200,
    post_record,
    valid,
)

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%%|<[^>]*>|\{\w+\}")
CLAUSE_END = re.compile(r"[.;:!?](?:\s|$)|[()]")
WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
EDGES = " \t\n.,:;!?()[]\"'·—–-/"
MIN_WORDS = 3
MAC_256 = "mac-studio-m5-ultra-256gb"
LIMIT_BYTES = 50_000  # small enough that a page's refusal for size is easy to provoke


def runs(english: str) -> Iterator[str]:
    """The literal clauses of a template of at least MIN_WORDS words."""
    for piece in PLACEHOLDER.split(english):
        for clause in CLAUSE_END.split(piece):
            clause = " ".join(clause.split()).strip(EDGES)
            if len(WORD.findall(clause)) >= MIN_WORDS:
                yield clause


def english_of(template: Any) -> str:
    token = set_locale("en")  # English shows the msgid itself
    try:
        return str(template)
    finally:
        reset_locale(token)


def known_english(locale: str) -> set[str]:
    """Runs of every English sentence the catalogs and the registries hold, translated
    differently in `locale` (so their English on its page is a sentence left over)."""
    catalog = read_catalog(po_path(locale), locale)
    translated: dict[str, str] = {}
    for entry in catalog:
        if not entry.id:
            continue
        ids = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for english in ids:
            translated[english] = " ".join(strings)
    registries = [english_of(t) for t in (*registered().values(), *TEMPLATES.values())]
    found: set[str] = set()
    for english in {*translated, *registries}:
        other = translated.get(english)
        assert other, f"{english!r} has no {locale} translation"  # tests/i18n say so too
        found |= {run for run in runs(english) if run not in other}
    return found


def pattern(known: Iterable[str]) -> re.Pattern[str]:
    longest_first = sorted(known, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, run.split())) for run in longest_first)
    return re.compile(rf"(?<![A-Za-z])(?:{alternatives})(?![A-Za-z])", re.IGNORECASE)


def source_notes(session: Session) -> set[str]:
    """The catalog's per-figure basis notes and reported figures' notes, and the quant and
    GPU tables' own notes.

    They are the sources' own English by design (seed_data/SOURCES.md: "vendor spec sheet",
    the README a bit count is read from, what a source page states of its figure) and are
    shown as written in every language, like a quotation; they are cut out of the page text
    before the sweep so a known run inside one is not taken for interface English.
    """
    notes: set[str] = set()
    for row in (
        *session.scalars(select(Hardware)),
        *session.scalars(select(LlmModel)),
        *session.scalars(select(Artifact)),
    ):
        notes |= {entry.get("note") or "" for entry in (row.basis or {}).values()}
    notes |= {figure.note or "" for figure in session.scalars(select(ReportedFigure))}
    notes |= {quant.note for quant in QUANTS.values()}
    notes |= {gpu.note or "" for gpu in all_gpus()}
    return {note for note in notes if note}


def visible_text(html: str) -> str:
    page = BeautifulSoup(html, "html.parser")
    for hidden in page.select("script, style, code, pre"):
        hidden.decompose()  # commands, flags and JSON are the same in every language
    parts = list(page.stripped_strings)
    for attribute in ("title", "placeholder", "aria-label", "alt"):
        parts += [el[attribute] for el in page.select(f"[{attribute}]")]
    return " ".join(" ".join(part.split()) for part in parts)


def leftovers(text: str, known: re.Pattern[str], notes: set[str]) -> list[str]:
    for note in sorted(notes, key=len, reverse=True):
        text = text.replace(" ".join(note.split()), " ")
    return sorted({match.group(0) for match in known.finditer(text)})


@pytest.fixture
def sweep_client(db_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(sqlite_settings(db_path, max_upload_bytes=LIMIT_BYTES))) as client:
        yield client


# The plan and estimate forms sent with each kind of error: a name the catalog or a table does
# not know (answered with its close matches), a value out of range (named by its label).
FORMS_WITH_ERRORS = {
    "422, estimate with an unknown model": "/estimate?model=gpt-oss-12b&hardware=rtx-4090-24gb",
    "422, estimate with an unknown card": "/estimate?model=llama-3.1-8b-instruct&hardware=gpu"
    "&gpu=RTX+4095&gpu_count=1",
    "422, estimate with a card in no such size": "/estimate?model=llama-3.1-8b-instruct"
    "&hardware=gpu&gpu=RTX+4090+12GB&gpu_count=1",
    "422, estimate with an unknown quant": "/estimate?params_b=32&quant=Q4_K_XX"
    "&hardware=rtx-4090-24gb",
    "422, estimate with a value out of range": "/estimate?model=llama-3.1-8b-instruct"
    "&hardware=rtx-4090-24gb&concurrency=0",
    "422, estimate with unknown hardware": "/estimate?model=llama-3.1-8b-instruct"
    "&hardware=no-such-box",
    "422, plan with an unknown model": f"/plan?model={GLM}-nope&users=32"
    "&min_decode_tokens_per_s=20",
    "422, plan with a value out of range": f"/plan?model={GLM}&users=0&min_decode_tokens_per_s=20",
}
# English words of those errors too short for the sweep's runs ("unknown GPU", a field's name).
ERROR_WORDS = ("unknown", "close matches", "did you mean", "catalog", "concurrency", "users")


def pages(client: TestClient, records: dict) -> dict[str, Any]:
    """Each page to sweep: its path, or a request that provokes a refusal page."""
    config = (CONFIGS / "qwen3-next-80b-a3b-instruct.json").read_text()
    a, b = records["accepted"], records["pending"]
    page_headers = {"Accept": "text/html"}
    return {
        "home": "/",
        "fit table": f"/models/{GLM}",
        "detail, verified": f"/models/{GLM}/hardware/8x-h200-141gb/profiles/balanced",
        "detail, offloaded": "/models/gpt-oss-120b/hardware/rtx-4090-24gb/profiles/balanced",
        "detail, exceeds": "/models/deepseek-r1/hardware/rtx-4090-24gb/profiles/balanced",
        "estimate, catalog": "/estimate?model=llama-3.1-8b-instruct&hardware=rtx-4090-24gb",
        "estimate, described numbers and assumed inputs": (
            "/estimate?params_b=32&quant=Q4_K_XL&hardware=custom&memory_gb_per_gpu=24&platform=cuda"
        ),
        "estimate, moe numbers": "/estimate?params_b=30&active_params_b=3&quant=Q4_K_M"
        "&hardware=h100-80gb",
        "estimate, config": (
            "GET",
            "/estimate",
            {"params": {"config": config, "quant": "Q4_K_M", "hardware": "h200-141gb"}},
        ),
        "422, estimate refused": "/estimate?params_b=x&quant=Q4_K_M&hardware=h100-80gb",
        "fit table for a load": f"/models/{GLM}?users=32&min_decode_tokens_per_s=20",
        "plan": f"/plan?model={GLM}&users=32&min_decode_tokens_per_s=20&max_ttft_ms=3000"
        "&prompt_tokens=2048&output_tokens=2048&price_per_gpu_hour=2.5",
        "plan, nothing carries it": f"/plan?model={GLM}&users=32&min_decode_tokens_per_s=20"
        "&hardware=rtx-4090-24gb",
        "422, plan's speed out of reach": f"/plan?model={GLM}&users=32"
        "&min_decode_tokens_per_s=4000",
        "422, plan's first token out of reach": f"/plan?model={GLM}&users=32"
        "&min_decode_tokens_per_s=20&max_ttft_ms=1&prompt_tokens=2048",
        "422, plan refused": f"/plan?model={GLM}&users=32&min_decode_tokens_per_s=20"
        "&hardware=no-such-box",
        "accuracy, a class asked": "/accuracy?class=sglang/cuda/multi/cN",
        "records": "/records",
        "review queue": "/records?state=pending",
        "record, accepted": f"/records/{a}",
        "record, pending": f"/records/{b}",
        "record, pending with changes": f"/records/{records['changes']}",
        "compare": f"/records/compare?a={a}&b={b}",
        "new record": "/records/new",
        "benchmarks": "/benchmarks",
        "calibrate": "/calibrate?hardware=h100-80gb&model=llama-3.1-8b-instruct&runtime=vllm",
        "sign in": "/signin",
        "404, no record": "/records/999999",
        "404, no page": "/no/such/page",
        "403, no form token": (
            "POST",
            "/records",
            {"data": {"notes": "x"}, "headers": page_headers},
        ),
        "405": ("PUT", "/records/new", {"headers": page_headers}),
        "413": (
            "POST",
            "/records",
            {
                "content": b"x" * (LIMIT_BYTES + 1),
                "headers": {**page_headers, "Content-Type": "application/x-www-form-urlencoded"},
            },
        ),
        "422, NUL": "/records?model=a%00b",
        "404, unknown model": f"/models/{GLM}-nope",
        "404, unknown model's profile": f"/models/{GLM}-nope/hardware/rtx-4090-24gb/profiles/x",
        "record, flagged": f"/records/{records['flagged']}",
        "benchmark, running": f"/benchmarks/{records['running']}",
        "benchmark, failed": f"/benchmarks/{records['failed']}",
        "422, estimate form left empty": "/estimate?model=&hardware=gpu&gpu=&gpu_count=1",
        **FORMS_WITH_ERRORS,
        "422, record form with errors": (
            "POST",
            "/records",
            {"data": {"notes": "x"}, "headers": page_headers, "csrf": True},
        ),
    }


def submitted_records(client: TestClient, body: dict, session: Session) -> dict[str, int]:
    accepted = post_record(client, body).json()["id"]
    accept(client, accepted)
    body = {**body, "runtime_version": "0.11.0", "notes": "second run"}
    pending = post_record(client, body).json()["id"]
    # A pair nothing has verified yet: accepting it changes recipe pages (the preview table).
    unverified = {
        **body,
        "hardware": MAC_256,
        "artifact": GLM_MLX,
        "runtime": "mlx-lm",
        "runtime_version": "0.31.2",
        "gpu_count": 1,
        "command": "mlx_lm.server",
        "applied_values": {"context": 4096},
        "measurements": [
            {"context_length": 4096, "decode_tokens_per_s": 60.0, "peak_memory_gb_per_gpu": 190.0}
        ],
    }
    response = post_record(client, unverified)
    assert response.status_code == 201, response.text
    # Flags of every kind the checker words with figures: below the runtime's first version,
    # above the card's memory and bandwidth, ITL against decode, end-to-end below TTFT.
    flagged = {
        **body,
        "runtime_version": "0.1.0",
        "measurements": [
            {
                "context_length": 4096,
                "decode_tokens_per_s": 5000.0,
                "itl_ms": 50.0,
                "ttft_ms": 900.0,
                "e2e_latency_ms": 100.0,
                "peak_memory_gb_per_gpu": 900.0,
            }
        ],
    }
    flags = post_record(client, flagged).json()
    assert len(flags["flags"]) >= 4, flags
    return {
        "accepted": accepted,
        "pending": pending,
        "changes": response.json()["id"],
        "flagged": flags["id"],
        **benchmark_jobs(client, session),
    }


def benchmark_jobs(client: TestClient, session: Session) -> dict[str, int]:
    """A job part-way through a length, and one that found nothing at its URL."""
    body = {
        "base_url": "http://127.0.0.1:9/v1",
        "served_model": "m",
        "model": GLM,
        "hardware": "8x-h200-141gb",
        "artifact": "glm-5.3-flash-fp8",
        "runtime": "sglang",
        "profile": "balanced",
        "runtime_version": "0.5.10",
    }
    ids = [client.post("/api/benchmarks", json=body).json()["id"] for _ in range(2)]
    running, failed = ids
    session.execute(
        update(BenchJob)
        .where(BenchJob.id == running)
        .values(status="running", progress={"step": "length:4096", "done": 1, "total": 3})
    )
    error = "could not connect to http://127.0.0.1:9/v1/chat/completions: connection refused"
    session.execute(
        update(BenchJob).where(BenchJob.id == failed).values(status="failed", error=error)
    )
    session.commit()
    return {"running": running, "failed": failed}


@pytest.mark.parametrize("locale", ["ko", "ja"])
def test_no_known_english_sentence_is_left_on_a_translated_page(
    sweep_client: TestClient,
    session: Session,
    valid: dict,  # noqa: F811
    locale: str,
) -> None:
    known = pattern(known_english(locale))
    notes = source_notes(session)
    records = submitted_records(sweep_client, valid, session)
    sweep_client.cookies.set(COOKIE, locale)
    found: dict[str, list[str]] = {}
    for name, request in pages(sweep_client, records).items():
        method, path, options = request if isinstance(request, tuple) else ("GET", request, {})
        if options.pop("csrf", False):
            options = {**options, "data": {**options["data"], **form_tokens(sweep_client)}}
        response = sweep_client.request(method, path, **options)
        expected = int(name[:3]) if name[:3].isdigit() else 200  # a refusal names its status
        assert response.status_code == expected, (name, response.text[:300])
        assert response.headers["content-type"].startswith("text/html"), (name, response.text)
        assert f'lang="{locale}"' in response.text, name
        if name == "record, pending with changes":  # the preview table is swept too
            assert 'id="acceptance-changes"' in response.text
        english = leftovers(visible_text(response.text), known, notes)
        if english:
            found[name] = english
    assert found == {}
    # Single words the sweep's runs do not reach, where they were left in English.
    plan = "/plan?model=gpt-oss-120b&users=32&min_decode_tokens_per_s=20"
    forms = [
        (name, path, "#estimate-errors, #plan-errors", ERROR_WORDS)
        for name, path in FORMS_WITH_ERRORS.items()
    ]
    for name, path, selector, words in (
        ("job running", f"/benchmarks/{records['running']}", "#job-step", ("length",)),
        ("job failed", f"/benchmarks/{records['failed']}", "#job-error", ("could not",)),
        ("history", f"/records/{records['flagged']}", "#history, .history", ("submitted",)),
        ("home", "/", "main", ("balanced",)),
        ("plan's profiles and runtimes", plan, "#plan-options", ("balanced", "llama-cpp")),
        *forms,
    ):
        page = BeautifulSoup(sweep_client.get(path).text, "html.parser")
        shown = " ".join(el.get_text(" ") for el in page.select(selector))
        assert shown, (name, selector)
        assert not [w for w in words if w in shown.lower()], (name, shown[:300])


def form_tokens(client: TestClient) -> dict[str, str]:
    """The record form's hidden fields (CSRF token, idempotency key), as a browser sends."""
    form = BeautifulSoup(client.get("/records/new").text, "html.parser").select_one("#record-form")
    return {i["name"]: i["value"] for i in form.select("input[type=hidden]")}


def test_the_sweep_sees_english_left_on_a_page() -> None:
    """The checker itself: a known run is found whatever its case and line breaks, a note
    of the sources is not, and a run inside a longer word is not."""
    known = pattern(known_english("ko"))
    text = "추정 A described model has no verified\n model-file and runtime pair, so no command"
    assert leftovers(visible_text(f"<p>{text} <b>is</b> shown</p>"), known, set()) == [
        "A described model has no verified model-file and runtime pair, so no command is shown"
    ]
    note = "a faster memory system than assumed: the file and runtime pair, so no command is shown"
    assert leftovers(visible_text(f"<p>{note}</p>"), known, {note}) == []
    assert leftovers("xof the memory given", known, set()) == []
    assert leftovers("90% of the memory given", known, set()) == ["of the memory given"]


@pytest.mark.parametrize("locale", ["ko", "ja"])
def test_a_body_streamed_past_the_limit_is_refused_in_the_readers_language(
    sweep_client: TestClient, locale: str
) -> None:
    """No Content-Length: the limit is found while the form is read, and the page says so
    as the one for a declared size does; JSON keeps the English detail with the code."""

    def chunks() -> Iterator[bytes]:
        for _ in range(LIMIT_BYTES // 1000 + 2):
            yield b"x" * 1000

    multipart = {"Content-Type": "multipart/form-data; boundary=b", "Accept": "text/html"}
    sweep_client.cookies.set(COOKIE, locale)
    page = sweep_client.post("/records", content=chunks(), headers=multipart)
    assert page.status_code == 413 and page.headers["content-type"].startswith("text/html")
    words = {"ko": "바이트 제한", "ja": "バイトの上限"}[locale]
    assert words in page.text and f"{LIMIT_BYTES:,}" in page.text
    api = sweep_client.post(
        "/records", content=chunks(), headers={**multipart, "Accept": "application/json"}
    )
    assert api.status_code == 413
    assert api.json()["code"] == "request.too_large"
    assert api.json()["params"] == {"limit": LIMIT_BYTES}
    assert f"{LIMIT_BYTES:,}-byte limit" in api.json()["detail"]
