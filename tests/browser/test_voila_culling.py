"""Voila's kernels go away with their pages: ``notebooks/voila.json`` (read by Voila from the
folder it is started in) culls the kernels nobody is connected to.

Without it, every visit and every reload leaves a kernel running (Voila's shutdown on leaving
the page does not always reach it). The test starts Voila with a copy of the shipped file whose
timeouts are cut to seconds, opens a page, reloads it twice and opens a second page it then
closes, and counts the kernel processes Voila has started: the stale ones go, the open page's
stays (and still answers a click), and it goes once that page closes. Every wait is bounded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, Voila, start_voila, voila_env

pytestmark = pytest.mark.browser

SHIPPED = ROOT / "notebooks" / "voila.json"
#: The test's timeouts (seconds): idle before a kernel is culled, and how often Voila looks.
IDLE, INTERVAL = 3, 1
#: Longest wait for the kernels to go.
WAIT = 20
#: A page as light as a page with a kernel gets: a Button that changes a Label.
LIGHT_PAGE = """import ipywidgets as w

label = w.Label("not clicked")
label.add_class("ct-smoke-label")
button = w.Button(description="Say hello")
button.on_click(lambda _b: setattr(label, "value", "hello 1"))
w.VBox([button, label])"""


def wait_for(what: Callable[[], int], want: int, seconds: float = WAIT) -> int:
    """Poll ``what()`` until it is ``want`` (or ``seconds`` pass); its last value."""
    deadline = time.monotonic() + seconds
    got = what()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.25)
        got = what()
    return got


def test_the_shipped_settings_cull_idle_kernels_only():
    config = json.loads(SHIPPED.read_text(encoding="utf-8"))["MappingKernelManager"]
    assert 60 <= config["cull_idle_timeout"] <= 3600
    assert 0 < config["cull_interval"] <= config["cull_idle_timeout"]
    assert config["cull_connected"] is False  # an open page keeps its kernel
    assert config["cull_busy"] is False  # a run in flight is never cut


@pytest.fixture()
def culling_voila(browser_sandbox, tmp_path: Path) -> Iterator[Voila]:
    """Voila serving a light notebook, with the shipped voila.json at short timeouts."""
    import nbformat

    served = tmp_path / "notebooks"
    served.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(LIGHT_PAGE)])
    nbformat.write(notebook, served / "light.ipynb")
    config = json.loads(SHIPPED.read_text(encoding="utf-8"))
    config["MappingKernelManager"].update(cull_idle_timeout=IDLE, cull_interval=INTERVAL)
    (served / "voila.json").write_text(json.dumps(config), encoding="utf-8")
    server = start_voila(served, voila_env(tmp_path, browser_sandbox), tmp_path / "voila.log")
    try:
        server.wait_serving()
        yield server
    finally:
        server.stop()


def open_light(page: Any, server: Voila) -> None:
    page.goto(server.page("light.ipynb"), wait_until="domcontentloaded")
    page.locator(".ct-smoke-label").wait_for(state="visible")


def test_kernels_of_reloaded_and_closed_pages_go_away(culling_voila, browser):
    from playwright.sync_api import expect

    context = browser.new_context()
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        open_light(page, culling_voila)
        for _ in range(2):
            page.reload()
            page.locator(".ct-smoke-label").wait_for(state="visible")
        other = context.new_page()
        open_light(other, culling_voila)
        other.close()
        started = culling_voila.output().count("Kernel started")
        assert started == 4, culling_voila.output()
        left = wait_for(culling_voila.kernels, 1)
        assert left == 1, f"{left} kernel(s) after {WAIT} s:\n{culling_voila.output()}"
        time.sleep(IDLE + 2 * INTERVAL)  # idle longer than the timeout, but connected
        assert culling_voila.kernels() == 1
        page.get_by_role("button", name="Say hello").click()
        expect(page.locator(".ct-smoke-label")).to_have_text("hello 1")
        page.close()
        left = wait_for(culling_voila.kernels, 0)
        assert left == 0, f"{left} kernel(s) after the last page closed"
    finally:
        context.close()
