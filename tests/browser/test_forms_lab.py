"""The forms inside JupyterLab, light and dark theme: the notebook opened and run as a person
does (Run All), an amount typed with a decimal comma applied and undone, and the status line
readable on both themes (its colour and background as Chromium renders them).
"""

from __future__ import annotations

import pytest

from . import lab, steps
from .steps import status
from .test_forms_browser import screenshot

pytestmark = pytest.mark.browser

#: WCAG AA for text of normal size.
MIN_CONTRAST = 4.5


def test_forms_in_jupyterlab_light_and_dark(jupyter_lab, page, client, screenshots):
    from playwright.sync_api import expect

    ids = steps.started(client)
    code, changed = steps.busiest_country(steps.country_bids(client, ids))
    before = steps.country_bids(client, ids)
    runs_before = steps.applied(jupyter_lab.journal)
    lab.run_notebook(page, jupyter_lab.page("forms.ipynb"))
    assert page.evaluate("() => document.body.dataset.jpThemeLight") == "true"
    form = steps.bids_form(page, ids, code)
    seen: dict[str, float] = {}

    steps.set_bids(form, "abc")
    expect(form.locator(".ct-status-error")).to_contain_text('Value: "abc"')
    seen["light error"] = steps.status_contrast(form)[0]
    steps.set_bids(form, "0,5")
    expect(form.get_by_role("listitem").filter(has_text="set to (USD) 0.5:")).to_be_visible()
    form.get_by_label("allow bid_jump").check()
    form.get_by_role("button", name="Apply").click()
    expect(form.locator(".ct-status-ok")).to_contain_text("applied:")
    seen["light ok"] = steps.status_contrast(form)[0]
    after = steps.country_bids(client, ids)
    assert {c: after[(c, code)] for c in changed} == {c: 0.5 for c in changed}
    assert len(steps.applied(jupyter_lab.journal)) == len(runs_before) + 1
    screenshot(page, "lab_light", screenshots, docs=False)

    lab.set_theme(page, lab.DARK)
    try:
        seen["dark ok"] = steps.status_contrast(form)[0]
        steps.sync(form)
        seen["dark info"] = steps.status_contrast(form)[0]
        steps.set_bids(form, "abc")
        expect(form.locator(".ct-status-error")).to_be_visible()
        seen["dark error"] = steps.status_contrast(form)[0]
        screenshot(page, "lab_dark", screenshots)
        form.get_by_role("button", name="Undo last run").click()
        expect(status(form)).to_contain_text("undone run")
        assert steps.country_bids(client, ids) == before
    finally:
        lab.set_theme(page, lab.LIGHT)
    low = {k: round(v, 2) for k, v in seen.items() if v < MIN_CONTRAST}
    assert not low, f"status text under {MIN_CONTRAST}:1: {low}"
