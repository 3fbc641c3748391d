"""In a real browser, in each language: a task's results page lists the records that ran
it, two picked records are compared with Fisher's exact test and the prompts that would
tell them apart, and a price per GPU-hour typed on the page (kept in a cookie) costs each
solved task."""

import re

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from tests.live_server import LiveServer
from tests.tasks.test_task_results_api import QWEN_ON_ONE_H200, TASK, record_with_score, submit

pytestmark = pytest.mark.browser

VERDICTS = {
    "en": (
        "GLM-5.3-Flash passed 14/20, Qwen3-32B 9/20: the difference is not significant at 20 "
        "prompts (Fisher's exact test, p = 0.2); run 61 to tell 70% from 45%."
    ),
    "ko": (
        "GLM-5.3-Flash은(는) 14/20, Qwen3-32B은(는) 9/20 통과했습니다: 프롬프트 20개로는 차이가 "
        "유의하지 않습니다(피셔의 정확 검정, p = 0.2). 70%와 45%를 구별하려면 61개를 실행하세요."
    ),
    "ja": (
        "GLM-5.3-Flash は 14/20、Qwen3-32B は 9/20 合格しました: "
        "プロンプト 20 件では差は有意ではありません(フィッシャーの正確検定、p = 0.2)。"
        "70% と 45% を見分けるには 61 件実行してください。"
    ),
}
COMPARE_BUTTONS = {
    "en": "Compare the two checked records",
    "ko": "선택한 두 기록 비교",
    "ja": "選んだ二つの記録を比較",
}


@pytest.mark.parametrize("locale", sorted(VERDICTS))
def test_two_records_are_picked_compared_and_costed(
    page, live_server: LiveServer, client: TestClient, locale: str
) -> None:  # noqa: ANN001
    task = client.post("/api/tasks", json=TASK).json()
    glm = submit(client, record_with_score(task, 14, 20, duration_s=900.0))
    qwen = submit(client, record_with_score(task, 9, 20, duration_s=600.0, **QWEN_ON_ONE_H200))
    page.goto(live_server.url("tasks:results", task_id=task["id"]) + f"?lang={locale}")
    rows = page.locator("#task-results tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator(f'tr[data-record="{glm}"]')).to_contain_text("14/20")
    expect(page.locator(f'tr[data-record="{qwen}"]')).to_contain_text("9/20")
    button = page.get_by_role("button", name=COMPARE_BUTTONS[locale])
    expect(button).to_be_disabled()  # two records, no fewer
    page.locator(f'tr[data-record="{glm}"] input[name=compare]').check()
    page.locator(f'tr[data-record="{qwen}"] input[name=compare]').check()
    button.click()
    page.wait_for_url(re.compile(r"compare="))
    comparison = page.locator("#comparison")
    expect(comparison).to_have_attribute("data-significant", "false")
    expect(comparison).to_have_attribute("data-prompts-needed", "61")
    expect(comparison.locator(".verdict-line")).to_have_text(VERDICTS[locale])
    expect(page.locator("td.cost")).to_have_text(["—", "—"])

    # A price, typed once, costs each solved task: 8 GPUs for 15 minutes over 14 solved.
    page.locator("#gpu-price").fill("3")
    page.locator("#gpu-price-set").click()
    expect(page.locator(f'tr[data-record="{glm}"] td.cost')).to_have_text("0.4286")
    expect(page.locator(f'tr[data-record="{qwen}"] td.cost')).to_have_text("0.0556")
    expect(comparison.locator(".cost-line")).to_contain_text("0.4286")
    expect(page.locator("#gpu-price")).to_have_value("3")
    assert page.js_errors == []


def test_a_bad_pair_is_refused_in_the_readers_language(
    page, live_server: LiveServer, client: TestClient
) -> None:  # noqa: ANN001
    task = client.post("/api/tasks", json=TASK).json()
    glm = submit(client, record_with_score(task, 14, 20))
    response = page.goto(
        live_server.url("tasks:results", task_id=task["id"]) + f"?lang=ja&compare={glm},{glm}"
    )
    assert response is not None and response.status == 422
    expect(page.locator("body")).to_contain_text("異なる記録を二つ指定してください")
