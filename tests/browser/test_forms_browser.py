"""The notebook forms in a real browser: ``forms.ipynb`` (``toolkit.widgets.open`` on the
sandbox) served by Voila, driven in headless Chromium the way a media buyer clicks.

Each test picks campaigns in the picker, edits in one tab, previews, applies, reads the sandbox
to see the change landed, undoes and reads it again. A screenshot of each form goes to a
temporary folder, and to ``docs/img/widgets_*.png`` when ``$CAMPAIGN_TOOLKIT_DOCS_IMG`` is set
(``python tests/browser/test_forms_browser.py`` sets it and runs these tests).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit import spec

from .steps import country_bids, open_tab, pick_started, started, status

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DOCS_IMG = ROOT / "docs" / "img"
#: Set (to anything but empty): the screenshots also go to docs/img/widgets_*.png.
ENV_DOCS_IMG = "CAMPAIGN_TOOLKIT_DOCS_IMG"
#: Largest docs picture, in bytes.
MAX_DOCS_PNG = 150_000
VIEWPORT_WIDTH = 1280
SCROLL_TOP = """() => {
    for (const e of document.querySelectorAll("*")) if (e.scrollTop) e.scrollTop = 0;
    window.scrollTo(0, 0);
}"""
NEW_BID = 0.5
SUBIDS = ["c0ffee01", "c0ffee02"]


# --------------------------------------------------------------------------- helpers


def targets(client: Any, ids: list[int], kind: str) -> dict[int, set[str]]:
    t = toolkit.load_account(client, ids, progress=False).targets
    t = t[t["kind"].astype(str) == kind]
    out: dict[int, set[str]] = {i: set() for i in ids}
    for r in t.itertuples(index=False):
        out[int(r.campaign_id)].add(str(r.value))
    return out


def list_items(client: Any, ids: list[int], name: str) -> dict[int, set[str]]:
    lists = toolkit.load_account(client, ids, progress=False).lists
    lists = lists[lists["list"].astype(str) == name]
    out: dict[int, set[str]] = {i: set() for i in ids}
    for r in lists.itertuples(index=False):
        out[int(r.campaign_id)].add(str(r.item))
    return out


def expect_pending(form: Any, note: str) -> None:
    """The form lists ``note`` among its edits not applied."""
    from playwright.sync_api import expect

    expect(form.get_by_role("listitem").filter(has_text=note)).to_be_visible()


def fill_number(box: Any, value: float) -> None:
    """A FloatText's value: typed, then Enter (it sends its value on change)."""
    box.fill(str(value))
    box.press("Enter")


def preview_apply(form: Any) -> str:
    """Preview (the plan shows), then Apply; the run id the status names."""
    from playwright.sync_api import expect

    form.get_by_role("button", name="Preview").click()
    expect(status(form)).to_contain_text("Apply sends them")
    expect(form.locator(".ct-plan")).not_to_be_empty()
    form.get_by_role("button", name="Apply").click()
    expect(status(form)).to_contain_text("applied:")
    expect(form.locator(".ct-status-ok")).to_be_visible()
    expect(form.locator(".ct-result table")).to_be_visible()
    text = status(form).inner_text()
    found = re.search(r"run (\S+)", text)
    assert found, text
    return found.group(1)


def undo(form: Any, run_id: str) -> None:
    from playwright.sync_api import expect

    form.get_by_role("button", name="Undo last run").click()
    expect(status(form)).to_contain_text(f"undone run {run_id}")
    expect(form.locator(".ct-status-ok")).to_be_visible()


def screenshot(page: Any, name: str, folder: Path, docs: bool = True) -> Path:
    """The picker and the form's tab in ``folder``, and (``docs``) in docs/img when asked
    (made small)."""
    app = page.locator(".ct-app")
    # Voila's page scrolls inside an element, not the window: what lies outside the window
    # would come out blank, so the window is made as tall as the page, scrolled to the top
    page.evaluate(SCROLL_TOP)
    box = app.bounding_box()
    assert box is not None
    page.set_viewport_size({"width": VIEWPORT_WIDTH, "height": int(box["y"] + box["height"]) + 40})
    page.evaluate(SCROLL_TOP)
    path = folder / f"widgets_{name}.png"
    app.screenshot(path=path)
    if docs and os.environ.get(ENV_DOCS_IMG):
        small_png(path, DOCS_IMG / path.name)
    return path


def small_png(source: Path, target: Path) -> None:
    """``source`` as a palette PNG (text and flat colours lose nothing visible)."""
    from PIL import Image

    with Image.open(source) as im:
        small = im.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(target, optimize=True)
    size = target.stat().st_size
    assert size < MAX_DOCS_PNG, f"{target.name}: {size:,} bytes"


# --------------------------------------------------------------------------- tests


def test_bid_form_changes_a_country_bid_and_undoes_it(
    open_notebook, client, screenshots, browser_sandbox
):
    from playwright.sync_api import expect

    ids = started(client)
    before = country_bids(client, ids)
    by_country: dict[str, list[int]] = {}
    for cid, code in before:
        by_country.setdefault(code, []).append(cid)
    # the country most of the started campaigns bid on
    code = max(sorted(by_country), key=lambda c: len(by_country[c]))
    changed = by_country[code]
    assert all(before[(c, code)] != NEW_BID for c in changed)

    page = open_notebook("forms.ipynb")
    pick_started(page, ids)
    form = open_tab(page, "Country bids", "ct-bid-form")
    form.get_by_label("Countries").select_option(code)
    rows = form.locator(".ct-bid-table tbody tr")
    expect(rows).to_have_count(len(changed))
    form.get_by_role("button", name="Get prices").click()
    expect(status(form)).to_contain_text(re.compile(r"prices of \d+ row\(s\) asked in \d+ price"))
    for zone in rows.locator("td:last-child").all():
        expect(zone).not_to_be_empty()
    form.get_by_label("Edit").select_option(label="set to (USD)")
    fill_number(form.get_by_label("Value"), NEW_BID)
    form.get_by_role("button", name="Change bids of the rows").click()
    expect_pending(form, f"bids set to (USD) {NEW_BID:g}: {len(changed)} of {len(changed)} row")
    expect(form.locator(".ct-bid-table")).to_contain_text(f"→ {NEW_BID:g}")

    # a bid cut or raised more than 3x is a fat finger until the user says otherwise
    assert any(before[(c, code)] > 3 * NEW_BID or 3 * before[(c, code)] < NEW_BID for c in changed)
    form.get_by_role("button", name="Preview").click()
    expect(status(form)).to_contain_text("Refused by the guard bid_jump")
    expect(status(form)).to_contain_text("tick 'allow bid_jump' to go ahead")
    form.get_by_label("allow bid_jump").check()
    run_id = preview_apply(form)
    after = country_bids(client, ids)
    for cid in changed:
        assert after[(cid, code)] == NEW_BID
    assert {k: v for k, v in after.items() if k[1] != code} == {
        k: v for k, v in before.items() if k[1] != code
    }
    screenshot(page, "bids", screenshots)

    undo(form, run_id)
    assert country_bids(client, ids) == before
    content = page.content()
    assert browser_sandbox.api_keys[0] not in content
    assert "model not found" not in content  # every widget shown has its model


def test_targeting_form_adds_a_value_and_undoes_it(open_notebook, client, screenshots):
    from playwright.sync_api import expect

    kind = spec.target_kind("quality")
    ids = started(client)
    before = targets(client, ids, kind.column)
    # a quality level some started campaign lacks
    value = next(v for v in kind.values if any(v not in have for have in before.values()))
    missing = [c for c in ids if value not in before[c]]

    page = open_notebook("forms.ipynb")
    pick_started(page, ids)
    form = open_tab(page, "Targeting", "ct-targeting-form")
    form.get_by_label("Target kind").select_option(label=kind.title)
    editor = form.locator(f".ct-kind-{kind.name}")
    expect(editor).to_contain_text(f"{len(ids)} selected campaign(s)")
    editor.get_by_label("To add").select_option(value)
    editor.get_by_role("button", name=f"Add {kind.title}").click()
    expect_pending(form, f"add {kind.title} {value} on {len(ids)} campaign(s)")

    run_id = preview_apply(form)
    after = targets(client, ids, kind.column)
    assert after == {c: before[c] | {value} for c in ids}
    assert missing, "the value was new to some campaign"
    screenshot(page, "targeting", screenshots)

    undo(form, run_id)
    assert targets(client, ids, kind.column) == before


def test_list_form_checks_pasted_items_adds_them_and_undoes(open_notebook, client, screenshots):
    from playwright.sync_api import expect

    name = "subid_black"
    ids = started(client)
    before = list_items(client, ids, name)
    assert not any(set(SUBIDS) & have for have in before.values())

    page = open_notebook("forms.ipynb")
    pick_started(page, ids)
    form = open_tab(page, "Lists and rules", "ct-list-form")
    form.get_by_label("List", exact=True).select_option(name)
    items = form.get_by_label("Items", exact=True)
    items.fill("\n".join([*SUBIDS, "not-hex!", SUBIDS[0]]))
    check = form.locator(".ct-paste-check")
    expect(check).to_contain_text("2 item(s), 1 duplicate(s) left out")
    expect(check).to_contain_text("1 bad: line 3: 'not-hex!'")
    form.get_by_role("button", name="Add to list").click()
    expect(status(form)).to_contain_text("nothing taken")
    items.fill("\n".join(SUBIDS))
    expect(check).to_have_text("2 item(s)")
    form.get_by_role("button", name="Add to list").click()
    expect_pending(form, f"add 2 item(s) on {name} of {len(ids)} campaign(s)")

    run_id = preview_apply(form)
    assert list_items(client, ids, name) == {c: before[c] | set(SUBIDS) for c in ids}
    screenshot(page, "lists", screenshots)

    undo(form, run_id)
    assert list_items(client, ids, name) == before


if __name__ == "__main__":
    # The docs' pictures: run these tests with the screenshots also going to docs/img.
    os.environ[ENV_DOCS_IMG] = "1"
    sys.exit(pytest.main([__file__, "-p", "no:cacheprovider", *sys.argv[1:]]))
