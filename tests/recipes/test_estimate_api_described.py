"""`POST /api/estimate` and `servebook estimate` for models and cards outside the catalog:
numbers, configs, safetensors indexes, GGUF files and Hub repo ids, on catalog hardware,
named GPUs or described machines, with bad input refused field by field."""

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from app.cli import main
from app.config import Settings
from app.main import create_app
from tests.estimate.gguf_files import write_tiny_llama_gguf

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
NUMBERS = {"params_b": 32, "active_params_b": 3, "quant": "Q4_K_M"}


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def estimate(client: TestClient, **body: object):
    return client.post("/api/estimate", json=body)


def test_bare_numbers_on_a_named_gpu_say_the_kv_cache_is_unknown(client: TestClient) -> None:
    response = estimate(
        client, model=NUMBERS, hardware={"gpu": "RTX 5090"}, runtime="llama.cpp", context=4096
    )
    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["runtime"] == "llama-cpp" and data["hardware_name"] == "RTX 5090"
    assert data["kv_cache"] == "unknown" and data["kv_bytes_per_token"] is None
    assert data["max_context"] is None  # no architecture: no largest context, not a guess
    assert "KV cache unknown" in data["warnings"][0]
    assert any(item.startswith("KV cache: unknown") for item in data["assumed"])
    # 32B at Q4_K_M's 4.8944 bits per weight, on a 32 GB card.
    assert data["weights_gb"] == pytest.approx(32 * 4.8944 / 8, abs=0.01)
    # The catalog holds an RTX 5090: its usable figure (30 of 32 GB), not a share of 32 GB.
    assert data["verdict"] == "experimental" and data["usable_gb_per_gpu"] == 30.0
    speed = data["decode_tokens_per_s"]
    assert speed["basis"] == "estimated" and 0 < speed["low"] <= speed["high"]
    assert data["described"]["quant_source"] == "QUANTIZE-README"


def test_a_config_on_catalog_hardware_sizes_the_kv_cache(client: TestClient) -> None:
    data = estimate(
        client, model={"hf_config": config("deepseek-v3"), "quant": "FP8"}, hardware="8x-h200-141gb"
    ).json()
    assert data["kv_cache"] == "estimated" and data["kv_bytes_per_token"] == 2 * 576 * 61
    assert data["verdict"] in ("experimental", "fits", "fits_reduced_context")
    assert data["max_context"] == 163840 and data["tensor_parallel"] == 8
    assert data["described"]["shape"]["attention"] == "mla"
    assert data["described"]["params_total_b"] == pytest.approx(671, rel=0.01)
    assert data["commands"] == []  # a described model has no verified pair


def test_a_multimodal_config_reads_its_text_config(client: TestClient) -> None:
    data = estimate(
        client, model={"hf_config": config("gemma-3-27b-it")}, hardware="h100-80gb", context=8192
    ).json()
    assert data["described"]["shape"]["sliding_window_layers"] == 52
    assert data["described"]["quant"] == "BF16" and data["kv_bytes_per_token"] == 81920


def test_a_safetensors_index_gives_exact_weight_bytes(client: TestClient) -> None:
    index = {"metadata": {"total_size": 16_060_522_496}, "weight_map": {"lm_head.weight": "a"}}
    data = estimate(
        client,
        model={"safetensors_index": index, "hf_config": config("llama-3.1-8b")},
        hardware="h100-80gb",
    ).json()
    assert data["weights_gb"] == 16.06
    assert data["described"]["weights"]["basis"] == "exact"
    assert data["memory"]["breakdown"]["weights"]["basis"] == "exact"


def test_a_safetensors_header_alone_gives_bytes_and_counts_but_no_kv(client: TestClient) -> None:
    # Two BF16 tensors of 4096 x 4096 and 4096: 16,781,312 elements, 2 bytes each.
    header = {
        "__metadata__": {"format": "pt"},
        "a.weight": {"dtype": "BF16", "shape": [4096, 4096], "data_offsets": [0, 33554432]},
        "a.bias": {"dtype": "BF16", "shape": [4096], "data_offsets": [33554432, 33562624]},
    }
    data = estimate(
        client, model={"safetensors_header": header}, hardware="rtx-4090-24gb", context=4096
    ).json()
    described = data["described"]
    assert described["params_total_b"] == round(16_781_312 / 1e9, 3)
    assert described["weights"] == {
        "gb": 0.03,
        "basis": "exact",
        "note": "bytes stated by the safetensors header",
        "note_messages": [
            {
                "code": "weights_stated",
                "params": {"source": "safetensors header"},
                "text": "bytes stated by the safetensors header",
            }
        ],
    }
    assert data["kv_cache"] == "unknown" and data["max_context"] is None


BAD = [
    ({"model": {"params_b": 32, "quant": "Q4_K_N"}, "hardware": "h100-80gb"}, "model.quant"),
    ({"model": {"params_b": -1, "quant": "Q4_K_M"}, "hardware": "h100-80gb"}, "model.params_b"),
    ({"model": {"params_b": 8}, "hardware": "h100-80gb"}, "model.quant"),
    ({"model": {"foo": 1}, "hardware": "h100-80gb"}, "model"),
    (
        {"model": {"hf_config": {"num_hidden_layers": 2}}, "hardware": "h100-80gb"},
        "model.hf_config",
    ),
    ({"model": {"hf_config": [1, 2]}, "hardware": "h100-80gb"}, "model.hf_config"),
    (
        {"model": {"safetensors_index": {"weight_map": {}}}, "hardware": "h100-80gb"},
        "model.safetensors_index",
    ),
    ({"model": NUMBERS, "hardware": {"gpu": "RTX 9999"}}, "hardware.gpu"),
    ({"model": NUMBERS, "hardware": {"gpu": "RTX 4090", "count": 0}}, "hardware.count"),
    ({"model": NUMBERS, "hardware": {"gpu": "RTX 4090"}, "runtime": "nope"}, "runtime"),
    ({"model": NUMBERS, "hardware": "h100-80gb", "context": 10}, "context"),
    ({"model": {"repo": "not a repo"}, "hardware": "h100-80gb"}, "model.repo"),
    (
        {"model": {"safetensors_header": {"t": {"dtype": "BF16"}}}, "hardware": "h100-80gb"},
        "model.safetensors_header",
    ),
    (
        {"model": {"safetensors_header": {}, "safetensors_index": {}}, "hardware": "h100-80gb"},
        "model",
    ),
]


@pytest.mark.parametrize(("body", "field"), BAD)
def test_bad_input_gets_a_422_naming_the_field(client: TestClient, body: dict, field: str) -> None:
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 422, response.json()
    errors = response.json()["errors"]
    assert field in errors, errors


def test_unknown_quant_suggests_close_names(client: TestClient) -> None:
    errors = estimate(client, model={"params_b": 8, "quant": "Q4KM"}, hardware="h100-80gb").json()
    assert "Q4_K_M" in errors["errors"]["model.quant"]


def test_the_openapi_schema_is_the_contract(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/estimate"]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    # Inlined: the only references are to the bounds of a config's free-form fields.
    refs = set(re.findall(r'"\$ref": "([^"]+)"', json.dumps(schema)))
    assert refs and all(ref.startswith("#/components/schemas/FreeFormValue") for ref in refs)
    assert {"model", "hardware"} <= set(schema["properties"])
    described = json.dumps(schema["properties"]["model"])
    for key in ("params_b", "hf_config", "safetensors_index", "repo"):
        assert key in described, key


class _Hub(BaseHTTPRequestHandler):
    """A Hub on 127.0.0.1 serving one repository, counting what it is asked."""

    files: dict[str, object] = {}
    requests: list[str] = []
    gated: set[str] = set()  # answered 401, as the Hub answers a gated repository

    def do_GET(self) -> None:  # noqa: N802
        self.requests.append(self.path)
        if self.path in self.gated:
            self.send_response(401)
            self.end_headers()
            return
        body = self.files.get(self.path.split("?")[0])
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        if body is not None:
            self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub() -> Iterator[str]:
    _Hub.files = {
        "/org/llama/resolve/main/config.json": config("llama-3.1-8b"),
        "/org/llama/resolve/main/model.safetensors.index.json": {
            "metadata": {"total_size": 16_060_522_496},
            "weight_map": {},
        },
    }
    _Hub.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def hub_client(settings: Settings, hub_url: str, cache: Path) -> TestClient:
    return TestClient(
        create_app(settings.model_copy(update={"hub_url": hub_url, "hub_cache_dir": cache}))
    )


def test_a_repo_id_is_fetched_once_then_read_from_the_cache(
    settings: Settings, hub: str, tmp_path: Path
) -> None:
    with hub_client(settings, hub, tmp_path) as client:
        first = estimate(client, model={"repo": "org/llama"}, hardware="h100-80gb").json()
        second = estimate(client, model={"repo": "org/llama"}, hardware="h100-80gb").json()
    assert first["weights_gb"] == second["weights_gb"] == 16.06
    assert first["kv_bytes_per_token"] == 131072
    assert len(_Hub.requests) == 2  # config and index, once
    assert (tmp_path / "org--llama.json").exists()


def test_offline_a_repo_id_says_what_to_paste_instead(settings: Settings, tmp_path: Path) -> None:
    # A port nothing listens on: the same failure as no network at all.
    # The request is well formed and the Hub did not answer it: 502, as the schema says.
    with hub_client(settings, "http://127.0.0.1:9", tmp_path) as client:
        response = estimate(client, model={"repo": "org/llama"}, hardware="h100-80gb")
        plan = client.post(
            "/api/plan",
            json={"model": {"repo": "org/llama"}, "users": 4, "min_decode_tokens_per_s": 10},
        )
    assert response.status_code == 502 and plan.status_code == 502
    message = response.json()["errors"]["model.repo"]
    assert "could not fetch org/llama" in message and "hf_config" in message
    assert plan.json()["errors"]["model.repo"] == message


def test_a_repo_the_hub_does_not_have_is_not_found(
    settings: Settings, hub: str, tmp_path: Path
) -> None:
    with hub_client(settings, hub, tmp_path) as client:
        missing = estimate(client, model={"repo": "org/no-such-model"}, hardware="h100-80gb")
    assert missing.status_code == 404
    assert "answered 404" in missing.json()["errors"]["model.repo"]


def test_a_repo_the_hub_keeps_to_itself_is_forbidden(
    settings: Settings, hub: str, tmp_path: Path
) -> None:
    _Hub.gated = {"/org/gated/resolve/main/config.json"}
    try:
        with hub_client(settings, hub, tmp_path) as client:
            gated = estimate(client, model={"repo": "org/gated"}, hardware="h100-80gb")
    finally:
        _Hub.gated = set()
    assert gated.status_code == 403
    assert "answered 401" in gated.json()["errors"]["model.repo"]


def invoke(*args: str):
    return CliRunner().invoke(main, ["estimate", *args])


@pytest.fixture
def cli(cli_database: Path) -> None:
    """The console script reads the test's database."""


def test_cli_reads_a_config_file(cli: None) -> None:
    path = str(CONFIGS / "qwen3-30b-a3b.json")
    result = invoke("--hf-config", path, "--quant", "Q4_K_M", "--gpu", "RTX 4090", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kv_bytes_per_token"] == 2 * 2 * 4 * 128 * 48 and data["runtime"] == "llama-cpp"
    assert data["described"]["is_moe"] is True


def test_cli_numbers_say_kv_unknown_in_text(cli: None) -> None:
    result = invoke(
        "--params-b",
        "32",
        "--active-params-b",
        "3",
        "--quant",
        "Q4_K_M",
        "--gpu",
        "RTX 5090",
        "--gpu-count",
        "2",
    )
    assert result.exit_code == 0, result.output
    assert "KV cache         unknown" in result.output and "2x RTX 5090" in result.output


def test_cli_reads_a_gguf_header(cli: None, tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    written = write_tiny_llama_gguf(path)
    result = invoke("--gguf", str(path), "--hardware", "rtx-4090-24gb", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["described"]["weights"]["basis"] == "exact"
    assert data["described"]["source"] == "gguf" and data["artifact"].endswith("q8_0")
    assert data["memory"]["breakdown"]["weights"]["gb"] == round(written["bytes"] / 1e9, 2)


def test_cli_refuses_bad_descriptions(cli: None) -> None:
    unknown = invoke("--params-b", "8", "--quant", "Q9_K", "--hardware", "h100-80gb")
    assert unknown.exit_code == 1 and "model.quant" in unknown.output
    no_quant = invoke("--params-b", "8", "--hardware", "h100-80gb")
    assert no_quant.exit_code == 2 and "--quant" in no_quant.output
    two = invoke("--model", "glm-5.3-flash", "--params-b", "8", "--hardware", "h100-80gb")
    assert two.exit_code == 2


def test_an_exposed_server_fetches_nothing_from_the_hub_unless_allowed(
    settings: Settings, hub: str, tmp_path: Path
) -> None:
    from app.db import session_scope
    from app.security import create_token

    exposed = settings.model_copy(
        update={"host": "0.0.0.0", "hub_url": hub, "hub_cache_dir": tmp_path}
    )
    with session_scope(exposed) as session:
        create_token(session, "me", "maintainer")
    with TestClient(create_app(exposed)) as client:
        refused = estimate(client, model={"repo": "org/llama"}, hardware="h100-80gb")
        page = client.get("/estimate", params={"repo": "org/llama", "hardware": "h100-80gb"})
    # Well formed, and not carried out for a remote caller: 403 (the page's form, 422).
    assert refused.status_code == 403 and page.status_code == 422
    assert "does not fetch from the Hub" in refused.json()["errors"]["model.repo"]
    assert _Hub.requests == []
    allowed = exposed.model_copy(update={"hub_fetch_when_exposed": True})
    with TestClient(create_app(allowed)) as client:
        answer = estimate(client, model={"repo": "org/llama"}, hardware="h100-80gb")
    assert answer.status_code == 200 and len(_Hub.requests) == 2


def test_an_unknown_model_and_an_unknown_card_are_refused_together_with_their_codes(
    client: TestClient,
) -> None:
    response = client.post(
        "/api/estimate", json={"model": "gpt-oss-12b", "hardware": {"gpu": "RTX 4095"}}
    )
    assert response.status_code == 422
    body = response.json()
    assert set(body["errors"]) == {"model", "hardware.gpu"}
    codes = {field: said["code"] for field, said in body["error_messages"].items()}
    assert codes == {"model": "catalog.unknown_model", "hardware.gpu": "estimate.close_matches"}
    assert body["error_messages"]["model"]["text"] == body["errors"]["model"]
