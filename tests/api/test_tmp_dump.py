import json

import httpx

from tests.live_server import LiveServer


def test_dump(live_server: LiveServer) -> None:
    doc = httpx.get(f"{live_server.base_url}/openapi.json").json()
    open("/tmp/wt3_openapi.json", "w").write(json.dumps(doc))
