"""Errors, validation messages and the compare summary in the reader's language.

Every sentence is a registered code with params: Korean and Japanese translate each one;
bad input on each form, sent as a Korean or Japanese reader, is refused in that language
with everything typed kept and nothing stored; JSON keeps the code and the English detail.
"""

import copy
import re
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

import app.main  # noqa: F401  (imports every module, so every code is registered)
from app.i18n import sentences as messages
from app.i18n.catalogs import po_path, reset_locale, set_locale
from app.i18n.maintenance import TRANSLATED, read_catalog
from app.i18n.sentences import Sentence, english, register, registered, render
from app.models import BenchJob, Record, RecordEvent
from tests.jobs.test_bench_task_form import form_for
from tests.records.conftest import GLM, GLM_FP8, h200, post_record, valid  # noqa: F401

PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def msgid(template: Any) -> str:
    token = set_locale("en")  # English shows the msgid itself
    try:
        return str(template)
    finally:
        reset_locale(token)


def in_locale(locale: str, message: Sentence) -> str:
    token = set_locale(locale)
    try:
        return render(message)
    finally:
        reset_locale(token)


@pytest.fixture(scope="module")
def catalogs() -> dict[str, Catalog]:
    return {locale: read_catalog(po_path(locale), locale) for locale in TRANSLATED}


def test_the_registry_holds_the_page_errors_and_the_compare_sentences() -> None:
    codes = set(registered())
    for code in (
        "record.unknown_model",
        "record.not_found",
        "review.say_why.reject",
        "job.no_task",
        "input.greater_than_equal",
        "compare.several_changed",
        "compare.unknown.both",
        "import.empty",
        "auth.token_unknown",
        "paired.lost_from",
        "paired.no_change",
        "review.confirm_quality",
        "ceiling.quality_limits",
    ):
        assert code in codes


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_registered_code_is_translated(locale: str, catalogs: dict[str, Catalog]) -> None:
    missing = []
    for code, template in registered().items():
        entry = catalogs[locale].get(msgid(template))
        if entry is None or not entry.string or entry.fuzzy:
            missing.append(code)
    assert missing == []


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_code_renders_with_its_own_params(locale: str) -> None:
    """Each translation takes exactly the params its English template names."""
    for code, template in registered().items():
        names = set(PLACEHOLDER.findall(msgid(template)))
        message = Sentence(code, {name: f"<{name}>" for name in names})
        text = in_locale(locale, message)
        assert {f"<{name}>" for name in names if f"<{name}>" in text} == {
            f"<{name}>" for name in names
        }, code


def test_params_are_shown_the_way_the_language_writes_them() -> None:
    repeats = Sentence("compare.band.repeats", {"num": 12345})
    assert english(repeats) == "lowest to highest of 12,345 repeats"
    assert in_locale("ko", repeats) == "반복 12,345회의 최저값부터 최고값까지"
    nested = Sentence(
        "record.unknown_model", {"slug": "x", "choices": Sentence("record.none_in_catalog")}
    )
    assert in_locale("ja", nested) == "不明なモデル 'x'。次から選んでください：カタログにありません"
    assert nested.as_json() == {
        "code": "record.unknown_model",
        "params": {"slug": "x", "choices": {"code": "record.none_in_catalog", "params": {}}},
    }
    assert render(Sentence("no.such.code")) == "no.such.code"  # shown, never dropped
    lost = Sentence(
        "paired.lost_from",
        {
            "lost": 9,
            "pairs": 40,
            "kind": Sentence("paired.kind.needle"),
            "from": "64K",
            "p": "0.004",
        },
    )
    assert english(lost) == "quality changed: 9 of 40 needle cells lost at 64K+, p = 0.004"
    assert in_locale("ko", lost) == "품질 변화: 64K 이상에서 니들 셀 40개 중 9개를 잃음, p = 0.004"


def test_a_code_cannot_be_registered_twice_with_other_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A copy of the registry, restored afterwards: no other test sees this code.
    monkeypatch.setattr(messages, "_TEMPLATES", registered())
    register("test.twice", "same words")
    register("test.twice", "same words")  # the same words again are harmless
    with pytest.raises(ValueError, match="registered twice"):
        register("test.twice", "other words")


# ------------------------------------------------------------------ the record form


def record_form(client: TestClient, hardware: str, **query: str) -> dict[str, str]:
    page = BeautifulSoup(client.get("/records/new", params=query).text, "html.parser")
    hidden = {i["name"]: i["value"] for i in page.select("#record-form input[type=hidden]")}
    return {
        **hidden,
        "model": "no-such-model",
        "artifact": GLM_FP8,
        "runtime": "sglang",
        "runtime_version": "0.5.10",
        "hardware": hardware,
        "gpu_count": "8",
        "outcome": "ok",
        "command": "python -m sglang.launch_server --tp 8",
        "applied_values": "tensor_parallel 8",
        "notes": "typed notes stay",
        "measurements.0.context_length": "4096",
        "measurements.0.concurrency": "1",
        "measurements.0.decode_tokens_per_s": "-88",
    }


def count(session: Session, table: Any) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(table)) or 0


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        (
            "ko",
            {
                "model": "알 수 없는 모델 'no-such-model'. 다음 중에서 고르세요: ",
                "measurements.0.decode_tokens_per_s": "0 이상이어야 합니다",
                "applied_values": "1번째 줄: 이름 = 값 형식으로 쓰세요",
            },
        ),
        (
            "ja",
            {
                "model": "不明なモデル 'no-such-model'。次から選んでください：",
                "measurements.0.decode_tokens_per_s": "0 以上にしてください",
                "applied_values": "1 行目：名前 = 値 の形で書いてください",
            },
        ),
    ],
)
def test_record_form_errors_in_the_readers_language_keep_what_was_typed(
    client: TestClient,
    session: Session,
    h200: str,  # noqa: F811
    lang: str,
    words: dict[str, str],
) -> None:
    fields = record_form(client, h200, lang=lang)  # the choice is kept in a cookie
    response = client.post("/records", data=fields, headers={"HX-Request": "true"})
    assert response.status_code == 200
    form = BeautifulSoup(response.text, "html.parser")
    errors = {e["data-field"]: e.text for e in form.select(".field-error[data-field]")}
    assert errors["model"].startswith(words["model"]) and GLM in errors["model"]
    assert (
        errors["measurements.0.decode_tokens_per_s"] == words["measurements.0.decode_tokens_per_s"]
    )
    assert errors["applied_values"] == words["applied_values"]
    assert not any(
        re.search(r"\b(unknown|Input should|write it as)\b", text) for text in errors.values()
    )
    assert form.select_one("input[name='measurements.0.decode_tokens_per_s']")["value"] == "-88"
    assert form.select_one("textarea[name='notes']").text == "typed notes stay"
    assert "tensor_parallel 8" in form.select_one("textarea[name='applied_values']").text
    assert count(session, Record) == 0


def test_a_bad_result_file_is_named_in_korean(
    client: TestClient,
    session: Session,
    h200: str,  # noqa: F811
) -> None:
    fields = record_form(client, h200, lang="ko")
    fields.update(model=GLM, applied_values="")
    fields.pop("measurements.0.decode_tokens_per_s")
    response = client.post(
        "/records",
        data=fields,
        headers={"HX-Request": "true"},
        files={"result_file": ("run.json", b"   ", "application/json")},
    )
    form = BeautifulSoup(response.text, "html.parser")
    errors = {e["data-field"]: e.text for e in form.select(".field-error[data-field]")}
    assert errors["file"] == "파일이 비어 있습니다"
    assert count(session, Record) == 0


def test_the_api_keeps_english_and_adds_the_code(
    client: TestClient,
    valid: dict,  # noqa: F811
) -> None:
    body = copy.deepcopy(valid)
    body["model"] = "no-such-model"
    body["measurements"][0]["ttft_ms"] = -1
    response = client.post("/api/records", json=body, headers={"Accept-Language": "ko"})
    assert response.status_code == 422
    errors = {e["field"]: e for e in response.json()["errors"]}
    assert errors["model"]["message"].startswith("unknown model 'no-such-model'")
    assert errors["model"]["code"] == "record.unknown_model"
    assert errors["model"]["params"]["slug"] == "no-such-model"
    assert errors["measurements.0.ttft_ms"]["code"] == "input.greater_than_equal"
    assert errors["measurements.0.ttft_ms"]["params"] == {"ge": 0}


# ------------------------------------------------------------------ review, benchmark, 404


@pytest.mark.parametrize(
    ("lang", "why", "cannot"),
    [
        ("ko", "이 기록을 거부하는 이유를 적으세요", "철회할 수 없습니다"),
        ("ja", "この記録を却下する理由を書いてください", "撤回できません"),
    ],
)
def test_review_refusals_in_the_readers_language(
    client: TestClient,
    session: Session,
    valid: dict,  # noqa: F811
    lang: str,
    why: str,
    cannot: str,
) -> None:
    record_id = post_record(client, valid).json()["id"]
    page = BeautifulSoup(
        client.get(f"/records/{record_id}", params={"lang": lang}).text, "html.parser"
    )
    token = page.select_one("#review form input[name=csrf_token]")["value"]
    url = f"/records/{record_id}/review"
    empty = client.post(
        url,
        data={"action": "reject", "reason": "  ", "csrf_token": token},
        headers={"HX-Request": "true"},
    )
    assert empty.status_code == 200
    fragment = BeautifulSoup(empty.text, "html.parser")
    assert fragment.select_one(".field-error[data-field=reason]").text == f"reason: {why}"
    wrong = client.post(url, data={"action": "retract", "reason": "x", "csrf_token": token})
    assert wrong.status_code == 409
    assert cannot in BeautifulSoup(wrong.text, "html.parser").select_one("h1").text
    assert count(session, RecordEvent) == 1  # the submission only: no review was written
    assert client.get(f"/api/records/{record_id}").json()["review_state"] == "pending"


@pytest.mark.parametrize(
    ("language", "no_task", "lengths"),
    [
        ("ko", "태스크 999이(가) 없습니다", "요청당 출력 토큰(16)보다 커야 합니다"),
        ("ja", "タスク 999 はありません", "出力トークン（16）より大きくしてください"),
    ],
)
def test_benchmark_form_errors_in_the_readers_language(
    client: TestClient, session: Session, language: str, no_task: str, lengths: str
) -> None:
    client.headers["Accept-Language"] = language
    fields = form_for(client, task_id="999", lengths="8")
    page = BeautifulSoup(client.post("/benchmarks", data=fields).text, "html.parser")
    assert page.select_one("[data-field=task_id]").text == no_task
    assert lengths in page.select_one("[data-field=lengths]").text
    assert page.select_one("input[name=lengths]")["value"] == "8"
    assert page.select_one("input[name=base_url]")["value"] == "http://127.0.0.1:9/v1"
    assert count(session, BenchJob) == 0


def test_a_missing_record_is_named_in_japanese_and_coded_in_json(client: TestClient) -> None:
    page = client.get("/records/987654", params={"lang": "ja"})
    assert page.status_code == 404
    assert BeautifulSoup(page.text, "html.parser").select_one("h1").text == (
        "記録 987654 はありません。"
    )
    api = client.get("/api/records/987654", headers={"Accept-Language": "ja"})
    assert api.status_code == 404
    assert api.json() == {
        "detail": "No record 987654.",
        "code": "record.not_found",
        "params": {"record": "987654"},
    }


# ------------------------------------------------------------------ the compare page

ENGLISH = re.compile(
    r"\b(setting|settings|changed|attributed|tokens|noise|record|records|kept"
    r"|repeats|unknown|within|beyond|better|worse|decode|speed|peak|memory"
    r"|command|environment|applied|runtime|version|figure)\b",
    re.I,
)


@pytest.mark.parametrize(
    ("lang", "several"),
    [
        ("ko", "설정 3개 변경: 효과를 한 설정 탓으로 돌릴 수 없습니다"),
        ("ja", "変更された設定は 3 個：効果をどの設定によるものとも特定できません"),
    ],
)
def test_compare_summary_has_no_english_sentence(
    client: TestClient,
    valid: dict,  # noqa: F811
    lang: str,
    several: str,
) -> None:
    a = post_record(client, valid).json()["id"]
    changed = copy.deepcopy(valid)
    changed.update(runtime_version="0.5.11", command=valid["command"] + " --disable-cuda-graph")
    changed["environment"]["driver"] = "590.10"
    b = post_record(client, changed).json()["id"]
    response = client.get("/records/compare", params={"a": a, "b": b, "lang": lang})
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select_one("#attribution strong").text == several
    sentences = [
        cell.get_text(" ", strip=True)
        for cell in page.select(
            "#setting-changes td:first-child .sub, #effects td:nth-child(1), "
            "#effects td:nth-child(2), #effects td:last-child"
        )
    ]
    assert len(sentences) == 3 + 6 * 3
    assert [s for s in sentences if ENGLISH.search(s)] == []
    # Flags and variables are spelled as typed; the setup's settings are named.
    names = [c.get_text() for c in page.select("#setting-changes td:first-child code")]
    assert "--disable-cuda-graph" in names and "driver" in names
    assert "runtime version" not in names


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        (
            {"attention": "gqa", "num_layers": "x", "gpu": "RTX 4090", "lang": "ko"},
            "model.num_layers",
            "num_layers은(는) 정수여야 합니다",
        ),
        (
            {
                "params_b": "8",
                "quant": "Q4_K_M",
                "gpu": "RTX 4090",
                "context": "many",
                "lang": "ja",
            },
            "context",
            "整数にしてください。入力を整数として読めません",
        ),
    ],
)
def test_estimate_form_errors_in_the_readers_language(
    client: TestClient, query: dict[str, str], field: str, words: str
) -> None:
    response = client.get("/estimate", params=query)
    assert response.status_code == 422
    page = BeautifulSoup(response.text, "html.parser")
    error = page.select_one(f'#estimate-errors [data-field="{field}"]')
    assert error is not None and error.get_text().endswith(f": {words}")
    kept = {
        name: element["value"]
        for name in query
        if (element := page.select_one(f'input[name="{name}"]')) is not None
    }
    assert kept and all(kept[name] == query[name] for name in kept)  # nothing typed is lost
