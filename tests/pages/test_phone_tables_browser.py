"""At a phone's width (390 px) every table keeps its columns: it fits the window, or it shows
each row as a card of labelled figures. A table wider than the window, one whose columns
hide in its own scroll (a figure cut mid-word), or a card figure without its column's name
fails, as does any text cut by a box that hides what overflows it. The plan is held at a
laptop's width too, with a load whose first token runs to millions of milliseconds.
"""

import re
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from app.config import PROJECT_ROOT
from app.records.review.steps import review_record
from app.records.storage.service import submit_record
from tests.live_server import LiveServer
from tests.records.conftest import GLM, h200, valid  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser
SHOTS = PROJECT_ROOT / "test-output" / "pages" / "phone-tables"
PHONE, LAPTOP = 390, 1280
ABSURD_PLAN = "/plan?model=gpt-oss-120b&users=1000&min_decode_tokens_per_s=20&prompt_tokens=100000"

# Per visible table: how wide it is against the window and its own box, whether its rows are
# cards (a row displayed as a block), and the card cells with a figure but no label (a card's
# first cell is its title). Then any
# element that hides overflowing text (overflow hidden or clip, or an ellipsis) and has some.
TABLES = """() => {
  const limit = window.innerWidth;
  const tables = [];
  for (const t of document.querySelectorAll('table')) {
    const box = t.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    const row = t.querySelector('tbody tr');
    const cards = !!row && getComputedStyle(row).display === 'block';
    // A card's first cell is its title (the model, the hardware): every other figure is named.
    // A table without column heads names each row by its first cell: nothing to label.
    const cells = Array.from(t.querySelectorAll('tbody td:not(:first-child)'));
    const unlabelled = cards && t.tHead ? cells.filter((td) =>
      td.getBoundingClientRect().height > 0 && td.textContent.trim() && !td.dataset.label
      && !td.querySelector('pre, code')).length : 0;
    tables.push({name: (t.id || t.className), right: Math.round(box.right),
                 hidden: t.scrollWidth - t.clientWidth, cards, unlabelled});
  }
  const cut = [];
  for (const el of document.body.querySelectorAll('*')) {
    const s = getComputedStyle(el);
    const hides = ['hidden', 'clip'].includes(s.overflowX) || s.textOverflow === 'ellipsis';
    if (hides && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && el.textContent.trim())
      cut.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + el.className);
  }
  return {page: document.documentElement.scrollWidth, limit, tables, cut};
}"""


def check_tables(page, name: str, width: int) -> list[dict]:  # noqa: ANN001
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SHOTS, f"{name}-{width}.png")), full_page=True)
    found = page.evaluate(TABLES)
    assert found["page"] <= found["limit"], f"{name}: the page is {found['page']} px wide"
    for table in found["tables"]:
        where = f"{name}: table {table['name']}"
        assert table["right"] <= found["limit"], f"{where} ends at {table['right']} px"
        assert table["hidden"] <= 1, f"{where} hides {table['hidden']} px of its columns"
        assert table["unlabelled"] == 0, f"{where}: card figures without their column's name"
    assert found["cut"] == [], f"{name}: text cut by its box"
    return found["tables"]


def open_at(page, width: int, path: str, language: str) -> None:  # noqa: ANN001
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(f"{path}{'&' if '?' in path else '?'}lang={language}")
    page.wait_for_load_state("load")
    page.wait_for_timeout(150)  # the resize listener's settle time, once the page has laid out


@pytest.mark.parametrize("language", ["en", "ko", "ja"])
def test_every_pages_tables_hold_on_a_phone(
    page,
    live_server: LiveServer,
    session: Session,
    valid: dict,  # noqa: F811
    h200: str,  # noqa: F811
    language: str,
) -> None:
    found = submit_record(session, valid, provenance="api", submitted_by="ana")
    record = found.record.id
    review_record(session, record, {"action": "accept", "reason": "ok"}, "maintainer")
    second = {**valid, "runtime_version": "0.5.11", "notes": "a second run"}
    other = submit_record(session, second, provenance="api", submitted_by="bo").record.id
    session.commit()
    pages = {
        "home": "/",
        "fit-table": f"/models/{GLM}",
        "detail": f"/models/{GLM}/hardware/{h200}/profiles/balanced",
        "detail-offloaded": "/models/gpt-oss-120b/hardware/rtx-4090-24gb/profiles/balanced",
        "estimate": "/estimate?model=llama-3.1-8b-instruct&hardware=rtx-4090-24gb&concurrency=8",
        "estimate-described": "/estimate?params_b=32&quant=Q4_K_XL&hardware=custom"
        "&memory_gb_per_gpu=24&platform=cuda",
        "plan": f"/plan?model={GLM}&users=32&min_decode_tokens_per_s=20&max_ttft_ms=3000"
        "&price_per_gpu_hour=2.5",
        "plan-absurd": ABSURD_PLAN,
        "accuracy": "/accuracy",
        "records": "/records",
        "record": f"/records/{record}",
        "compare": f"/records/compare?a={record}&b={other}",
        "calibrate": "/calibrate?hardware=h100-80gb&model=llama-3.1-8b-instruct&runtime=vllm",
        "record-form": "/records/new",
        "benchmarks": "/benchmarks",
    }
    seen = 0
    for name, path in pages.items():
        open_at(page, PHONE, path, language)
        seen += len(check_tables(page, f"{name}-{language}", PHONE))
    assert seen >= 14  # the pages above show tables: a check that found none checked nothing
    # The detail page's "Speed at load" is four figures per row: on a phone, labelled cards.
    open_at(page, PHONE, pages["detail"], language)
    assert (
        page.locator("#load-lines tbody tr").first.evaluate(
            "(row) => getComputedStyle(row).display"
        )
        == "block"
    )
    assert page.js_errors == []


def test_the_fit_table_lists_what_runs_first_on_a_phone(page, live_server: LiveServer) -> None:
    open_at(page, PHONE, f"/models/{GLM}", "en")
    shown = page.evaluate(
        """() => Array.from(document.querySelectorAll('#fit-table tbody tr'))
             .filter((row) => row.getBoundingClientRect().height > 0)
             .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
             .map((row) => row.dataset.verdict)"""
    )
    runs = [v not in ("exceeds_memory", "cannot_estimate") for v in shown]
    assert any(runs) and not all(runs)
    assert runs == sorted(runs, reverse=True), shown  # every card that runs before the rest


def test_the_plan_holds_an_absurd_first_token_at_a_laptops_width(
    page, live_server: LiveServer
) -> None:
    open_at(page, LAPTOP, ABSURD_PLAN, "en")
    tables = check_tables(page, "plan-absurd-en", LAPTOP)
    assert [t for t in tables if t["name"] == "plan-options"] and not tables[0]["cards"]
    cells = page.locator("#plan-options .plan-ttft").all_inner_texts()
    assert "over 10 min" in cells
    assert not [c for c in cells if re.search(r"\d{6,}", c.replace(",", ""))], cells
