"""In a real browser: the record and benchmark forms know the catalog. Picking a model
narrows the model files and runtimes (the server sends the <option>s); a detail page's
links pre-fill what it shows."""

import re

import pytest
from fastapi.testclient import TestClient

from tests.live_server import LiveServer

GLM = "glm-5.3-flash"
DETAIL = {"model": GLM, "hardware": "8x-h200-141gb", "profile": "balanced"}


def options(page, selector: str) -> list[str]:  # noqa: ANN001
    return page.eval_on_selector_all(
        f"{selector} option", "els => els.map(e => e.value).filter(v => v)"
    )


@pytest.mark.browser
def test_record_form_narrows_files_and_runtimes(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("records:new"))
    every_file = options(page, "#record-artifact")
    page.select_option("#record-model", GLM)
    page.wait_for_function(
        f"() => document.querySelectorAll('#record-artifact option').length < {len(every_file)}"
    )
    files = options(page, "#record-artifact")
    assert files and all(f.startswith(GLM) for f in files)
    page.wait_for_function(
        "() => document.querySelectorAll('#record-runtime option').length === 6"
    )  # GLM comes as safetensors, GGUF and MLX: every runtime but none other
    page.select_option("#record-artifact", f"{GLM}-mlx-4bit")
    page.wait_for_function("() => document.querySelectorAll('#record-runtime option').length === 2")
    assert options(page, "#record-runtime") == ["mlx-lm"]
    labels = page.locator("#record-runtime option").all_inner_texts()
    assert labels == ["choose a runtime", "MLX-LM server"]  # the name alone
    assert page.js_errors == []


@pytest.mark.browser
def test_detail_page_link_prefills_command_and_applied_values(
    page, live_server: LiveServer
) -> None:
    page.goto(live_server.url("recipes:detail", **DETAIL))
    command = page.locator('.command-block[data-runtime="sglang"] code').inner_text()
    page.get_by_role("link", name="Submit a record for this page").click()
    page.wait_for_url(re.compile(r"/records/new\?"))
    assert page.locator("#record-model").input_value() == GLM
    assert page.locator("#record-artifact").input_value() == f"{GLM}-fp8"
    assert page.locator("#record-runtime").input_value() == "sglang"
    assert page.locator('textarea[name="command"]').input_value() == command
    applied = page.locator('textarea[name="applied_values"]').input_value()
    assert "tensor_parallel = 8" in applied.splitlines()
    assert "why" not in applied


@pytest.mark.browser
def test_benchmark_form_opens_on_a_model_and_asks_no_slug(page, live_server: LiveServer) -> None:
    page.goto(live_server.url("benchmarks:index"))
    form = page.locator("#job-form")
    first = form.locator("#bench-model option[selected]").get_attribute("value")
    assert first
    assert all(f.startswith(first) for f in options(page, "#bench-artifact"))
    assert form.locator('input[name="artifact"], input[name="profile"]').count() == 0
    page.goto(live_server.url("recipes:detail", **DETAIL))
    page.get_by_role("link", name="Run a benchmark against this server").click()
    page.wait_for_url(re.compile(r"/benchmarks\?"))
    assert page.locator("#bench-model").input_value() == GLM
    assert page.locator("#bench-artifact").input_value() == f"{GLM}-fp8"
    assert page.locator('select[name="profile"]').input_value() == "balanced"
    page.select_option("#bench-model", "llama-3.1-8b-instruct")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#bench-artifact option')]"
        ".every(o => !o.value || o.value.startsWith('llama-3.1-8b'))"
    )
    assert page.js_errors == []


@pytest.mark.browser
def test_a_record_sent_from_the_form_lands_on_its_own_address(
    page, live_server: LiveServer
) -> None:
    """The form is sent through htmx (it swaps itself while errors remain): once the record
    is stored, the address bar holds the record's URL, so a reload or a shared link shows it."""
    page.goto(live_server.url("recipes:detail", **DETAIL))
    page.get_by_role("link", name="Submit a record for this page").click()
    page.wait_for_url(re.compile(r"/records/new\?"))
    page.select_option('select[name="hardware"]', "8x-h200-141gb")
    page.fill('input[name="runtime_version"]', "0.5.10")
    page.fill('input[name="measurements.0.context_length"]', "4096")
    page.fill('input[name="measurements.0.decode_tokens_per_s"]', "-3")  # refused first
    page.click("#submit-record")
    page.wait_for_selector("#form-errors #error-summary")
    assert page.url.split("?")[0].endswith("/records/new")
    page.fill('input[name="measurements.0.decode_tokens_per_s"]', "50")
    page.click("#submit-record")
    page.wait_for_url(re.compile(r"/records/\d+$"))
    record = page.url.rsplit("/", 1)[1]
    assert page.locator("h1").inner_text().startswith(f"Record {record}:")
    assert page.js_errors == []


def test_choices_answer_options_and_refuse_bad_input(client: TestClient) -> None:
    url = client.app.url_path_for("catalog:choices", field="runtime")
    answer = client.get(url, params={"model": GLM, "artifact": f"{GLM}-q4-k-m"})
    assert answer.status_code == 200
    assert re.findall(r'value="([^"]+)"', answer.text) == ["llama-cpp", "ollama"]
    # A model file of another model (the model changed first) does not narrow anything.
    stale = client.get(url, params={"model": GLM, "artifact": "llama-3.1-8b-instruct-q4-k-m"})
    assert len(re.findall(r"<option", stale.text)) == 6
    assert client.get("/choices/hardware").status_code == 422
    assert client.get(url, params={"model": "x" * 200}).status_code == 422
