"""The browser fixtures work: Voila renders a notebook whose kernel reaches the sandbox through
``CAMPAIGN_API_URL``/``CAMPAIGN_API_KEY``, and a click in Chromium runs the kernel's callback."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_a_click_changes_a_label(open_notebook, browser_sandbox, screenshots):
    from playwright.sync_api import expect

    page = open_notebook("smoke.ipynb")
    expect(page.locator(".ct-reached")).to_have_text(browser_sandbox.url)
    label = page.locator(".ct-smoke-label")
    expect(label).to_have_text("not clicked")
    button = page.get_by_role("button", name="Say hello")
    button.click()
    expect(label).to_have_text("hello 1")
    button.click()
    expect(label).to_have_text("hello 2")
    page.screenshot(path=screenshots / "smoke.png")
    assert browser_sandbox.api_keys[0] not in page.content()
