"""Route paths on pages are found once per router: a page names dozens of routes, and
finding one by name walks every route of every router."""

from fastapi.routing import APIRouter
from fastapi.testclient import TestClient

PAGE = "/models/glm-5.3-flash/hardware/8x-h200-141gb/profiles/balanced"


def test_a_second_render_finds_no_route_path_again(client: TestClient, monkeypatch) -> None:
    looked_up: list[str] = []
    find = APIRouter.url_path_for

    def counted(self, name: str, /, **params):
        looked_up.append(name)
        return find(self, name, **params)

    monkeypatch.setattr(APIRouter, "url_path_for", counted)
    first = client.get(PAGE, params={"fresh": 1})  # a query of its own: rendered afresh
    assert first.status_code == 200
    assert looked_up, "the page names no route"
    looked_up.clear()
    second = client.get(PAGE, params={"fresh": 2})
    assert second.status_code == 200
    assert looked_up == []
    # The same links as the first render wrote.
    assert second.text.count('href="http') == first.text.count('href="http')


def test_kept_paths_are_the_routers_own(client: TestClient) -> None:
    from app.templating import _path_for

    router = client.app.router
    params = (("slug", "glm-5.3-flash"),)
    assert _path_for(router, "catalog:model", params) == router.url_path_for(
        "catalog:model", slug="glm-5.3-flash"
    )
    assert _path_for(router, "catalog:model", params) is _path_for(router, "catalog:model", params)
