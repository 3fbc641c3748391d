"""Pages that said two opposite things at once: a Mac page without a command telling the
reader to run the command shown, steps "below" that sit above, and a sign-in page on
loopback calling the dashboard shared while signing its reader in as the local maintainer."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

GLM = "glm-5.3-flash"


def page(client: TestClient, url: str) -> BeautifulSoup:
    response = client.get(url)
    assert response.status_code == 200, response.text
    return BeautifulSoup(response.text, "html.parser")


def test_a_mac_page_without_a_command_does_not_say_to_run_one(client: TestClient) -> None:
    mac = page(client, f"/models/{GLM}/hardware/mac-studio-m5-ultra-512gb/profiles/balanced")
    assert mac.select_one("#estimate-only") is not None
    note = mac.select_one("#mac-commands").text
    assert "do not translate them into a Mac procedure" in note
    assert "command shown on this page" not in note and "No command is verified" in note


def test_the_long_context_steps_are_not_called_below(client: TestClient) -> None:
    detail = page(client, f"/models/{GLM}/hardware/8x-h200-141gb/profiles/long-context")
    steps = detail.select_one("#context-steps")
    knob = detail.select_one('dd[data-knob="context"]')
    assert steps is not None and knob is not None
    assert "below" not in knob.text and "Raising the context" in knob.text
    assert steps.find_all_previous("dd", attrs={"data-knob": "context"}) == []


def test_signin_on_loopback_does_not_call_the_dashboard_shared(client: TestClient) -> None:
    signin = page(client, "/signin")
    assert "signed in as" in signin.text.lower() and "maintainer" in signin.text
    assert "shared beyond this machine" not in signin.text
    assert signin.select_one("#signin-local") is not None


def test_every_page_links_to_signin(client: TestClient) -> None:
    for url in ("/", f"/models/{GLM}", "/records", "/estimate"):
        link = page(client, url).select_one("footer a#signin-link")
        assert link is not None and link["href"].endswith("/signin"), url
