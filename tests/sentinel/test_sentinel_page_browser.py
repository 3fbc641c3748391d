"""In a real browser, in English, Korean and Japanese: the profile page's known-good block
says what its command was verified with, and which runtime version regressed it."""

import copy
from typing import Any

import pytest

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.records.review.steps import review_record
from app.records.storage.service import submit_record
from tests.live_server import LiveServer
from tests.records.conftest import GLM

pytestmark = pytest.mark.browser

DIGEST = "sha256:" + "4f" * 32
REVISION = "abc123def4567890"


def stored(settings: Settings, raw: dict[str, Any], detail: dict[str, Any]) -> int:
    sessions = make_sessionmaker(make_engine(settings))
    with sessions.begin() as session:
        submission = submit_record(
            session, raw, provenance="bench", submitted_by="local", provenance_detail=detail
        )
        return submission.record.id


def accept(settings: Settings, record_id: int) -> None:
    sessions = make_sessionmaker(make_engine(settings))
    with sessions.begin() as session:
        review = {"action": "accept", "reason": "reproduced", "confirm_flags": True}
        review_record(session, record_id, review, "maintainer")


def pinned(version: str, **extra: Any) -> dict[str, Any]:
    reported = {"runtime": "sglang", "version": version, "source": "/get_server_info"}
    return {"server_reported": reported, **extra}


@pytest.mark.parametrize(
    ("lang", "verified", "regressed"),
    [
        ("en", "verified with SGLang 0.5.10", "SGLang 0.5.11 regressed this profile: record"),
        ("ko", "SGLang 0.5.10(으)로 검증됨", "SGLang 0.5.11에서 이 프로필이 나빠졌습니다: 기록"),
        ("ja", "SGLang 0.5.10 で検証済み", "SGLang 0.5.11 でこのプロファイルが悪化しました: 記録"),
    ],
)
def test_profile_page_shows_provenance_and_regression(
    page, live_server: LiveServer, valid: dict, lang: str, verified: str, regressed: str
) -> None:
    from playwright.sync_api import expect

    settings = live_server.settings
    baseline = copy.deepcopy(valid)
    baseline["pinned"] = pinned("0.5.10", image_digest=DIGEST, model_revision=REVISION)
    good = stored(settings, baseline, {"tool": "servebook bench"})
    accept(settings, good)
    upgraded = dict(copy.deepcopy(valid), runtime_version="0.5.11", pinned=pinned("0.5.11"))
    sentinel = {"baseline_record": good, "verdict": "regressed", "changes": []}
    bad = stored(settings, upgraded, {"tool": "servebook sentinel", "sentinel": sentinel})

    url = live_server.url(
        "recipes:detail", model=GLM, hardware=valid["hardware"], profile="balanced"
    )
    page.goto(f"{url}?lang={lang}")
    block = page.locator("#known-good")
    line = block.locator(f"#pinned-{good}")
    expect(line).to_contain_text(verified)
    expect(line).to_contain_text("sha256:" + "4f" * 6 + "…")
    expect(line).to_contain_text(REVISION[:12])
    expect(line).to_contain_text(str(good))
    notice = block.locator(f"#sentinel-regressed-{bad}")
    expect(notice).to_contain_text(regressed)
    expect(notice.locator("a")).to_have_attribute(
        "href", live_server.url("records:detail", record_id=bad)
    )
    # The regressed version, accepted or not, leaves the known-good record in place.
    accept(settings, bad)
    page.goto(f"{url}?lang={lang}")
    expect(page.locator("#known-good-record")).to_have_attribute(
        "href", live_server.url("records:detail", record_id=good)
    )
    # The record's own page says the same of its command.
    page.goto(live_server.url("records:detail", record_id=good) + f"?lang={lang}")
    expect(page.locator(f"#setup #pinned-{good}")).to_contain_text(verified)
