"""The forms in Voila as a person uses them: amounts typed key by key (``0,5``, ``abc``,
``1e3``), double clicks on Apply and Undo, a reload between Apply and Undo, a filter between
two selections, a pasted list of ids, and the dark theme.

Each outcome is read without the form: the bids from the sandbox, the runs from the journal
file the kernels write, the colours from what Chromium renders.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from toolkit.bulk.journal import Journal
from toolkit.bulk.undo import undo

from . import steps
from .steps import status

pytestmark = pytest.mark.browser

#: Text typed into a money box that must be refused (and nothing pending after it).
#: Milliseconds the sandbox waits before each answer while the form reads the account again.
SLOW_MS = 300
REFUSED = {"abc": "is not an amount", "1e3": "", "1,000": "1000"}


def restore(client: Any, journal: Any, run_id: str) -> None:
    """Undo ``run_id`` from the test (not through the form), so the next test finds the
    sandbox as it was."""
    result = undo(client, run_id, journal=Journal(journal), progress=False)
    assert result.ok, result.summary()


def test_typed_amounts_are_read_one_way_and_a_double_click_applies_once(
    open_notebook, client, voila
):
    from playwright.sync_api import expect

    ids = steps.started(client)
    code, changed = steps.busiest_country(steps.country_bids(client, ids))
    before = steps.country_bids(client, ids)
    runs_before = steps.applied(voila.journal)
    page = open_notebook("forms.ipynb")
    form = steps.bids_form(page, ids, code)

    for typed, says in REFUSED.items():
        steps.set_bids(form, typed)
        expect(form.locator(".ct-status-error")).to_contain_text(f'Value: "{typed}"')
        expect(status(form)).to_contain_text(says)
        expect(form).to_contain_text("no edit yet")
    assert steps.applied(voila.journal) == runs_before

    steps.set_bids(form, "0,5")
    expect(form.get_by_role("listitem").filter(has_text="set to (USD) 0.5")).to_be_visible()
    form.get_by_label("allow bid_jump").check()
    steps.watch_busy(form)
    form.get_by_role("button", name="Apply").dblclick()
    expect(form.locator(".ct-result table")).to_be_visible()
    steps.sync(form)

    new_runs = steps.applied(voila.journal)[len(runs_before) :]
    assert len(new_runs) == 1, steps.runs(voila.journal)
    after = steps.country_bids(client, ids)
    assert {c: after[(c, code)] for c in changed} == {c: 0.5 for c in changed}
    assert {k: v for k, v in after.items() if k[1] != code} == {
        k: v for k, v in before.items() if k[1] != code
    }
    expect(form.locator(".ct-result table")).to_be_visible()  # the result stays shown
    expect(form.get_by_label("allow bid_jump")).not_to_be_checked()
    assert steps.saw_busy(form) == "busy, all disabled"

    form.get_by_role("button", name="Undo last run").click()
    expect(status(form)).to_contain_text("undone run")
    assert steps.country_bids(client, ids) == before


def test_after_a_reload_a_double_click_on_undo_undoes_the_last_run_only(
    open_notebook, client, voila
):
    from playwright.sync_api import expect

    ids = steps.started(client)
    code, changed = steps.busiest_country(steps.country_bids(client, ids))
    before = steps.bids_of(client, ids, code)
    undone_before = steps.undos(voila.journal)
    page = open_notebook("forms.ipynb")
    form = steps.bids_form(page, ids, code)
    for typed, value in (("0,5", "0.5"), ("0.6", "0.6")):
        steps.set_bids(form, typed)
        expect(form.get_by_role("listitem").filter(has_text=f"(USD) {value}:")).to_be_visible()
        form.get_by_label("allow bid_jump").check()
        form.get_by_role("button", name="Apply").click()
        expect(status(form)).to_contain_text("applied:")
        # the account is read again after a run: what is typed meanwhile reaches the kernel
        # after a click sent at once (ipywidgets holds back a model's updates while the
        # kernel is busy), so wait as a person waits for the form to settle
        steps.sync(form)
    first, second = steps.applied(voila.journal)[-2:]
    assert steps.bids_of(client, ids, code) == {c: 0.6 for c in changed}

    page.reload()  # a new kernel; the journal file stays
    page.locator(".ct-app").wait_for(state="visible")
    form = steps.open_tab(page, "Country bids", "ct-bid-form")
    form.get_by_role("button", name="Undo last run").dblclick()
    expect(status(form)).to_contain_text(re.compile(rf"undone run {second}|{second} is already"))
    steps.sync(form)

    def new_undos() -> list[str]:
        return [r for u, r in steps.undos(voila.journal).items() if u not in undone_before]

    try:
        assert new_undos() == [second]
        assert steps.bids_of(client, ids, code) == {c: 0.5 for c in changed}
        form.get_by_role("button", name="Undo last run").click()
        expect(status(form)).to_contain_text(f"Run {second} is already undone")
        assert new_undos() == [second]
    finally:
        restore(client, voila.journal, first)
    assert steps.bids_of(client, ids, code) == before


def test_picker_keeps_selections_a_filter_hides_and_takes_pasted_ids(open_notebook, client):
    from playwright.sync_api import expect

    listed = {int(c["id"]): str(c["name"]) for c in client.campaigns.list()}
    page = open_notebook("forms.ipynb")
    picker = page.locator(".ct-picker")
    name = picker.get_by_label("Name", exact=True)
    options = picker.locator("select[multiple] option")

    def shown() -> list[int]:
        return [int(t.split()[0]) for t in options.all_inner_texts()]

    def word_start(text: str) -> list[int]:
        at = re.compile(rf"(?<![0-9a-z]){re.escape(text.lower())}")
        return [i for i, n in listed.items() if at.search(n.lower()) or str(i).startswith(text)]

    steps.type_into(name, "US")
    expect(options).to_have_count(len(word_start("US")))
    assert shown() == word_start("US")
    assert not [i for i in shown() if "US" not in listed[i]]  # not "Push"

    first, second = [i for i in listed if listed[i].startswith(("TR ", "AU "))][:2]
    steps.type_into(name, listed[first].split()[0])
    options.filter(has_text=str(first)).click()
    steps.type_into(name, str(second))
    expect(options).to_have_count(1)
    options.filter(has_text=str(second)).click()
    count = picker.locator(".widget-html-content").filter(has_text="selected")
    expect(count).to_contain_text(re.compile(r"2 selected \(1 hidden\)"))
    name.press("Control+a")
    name.press("Backspace")
    expect(options).to_have_count(len(listed))
    chosen = options.evaluate_all("(os) => os.filter((o) => o.selected).map((o) => o.text)")
    assert sorted(int(t.split()[0]) for t in chosen) == sorted([first, second])

    pasted = [i for i in sorted(listed) if i not in (first, second)][:3]
    box = picker.locator(".ct-paste-ids textarea")
    box.fill(f"{pasted[0]}, {pasted[1]}\n{pasted[2]} 999")
    picker.locator(".ct-select-pasted").click()
    expect(picker.locator(".ct-paste-note")).to_contain_text("not campaigns of this account: 999")
    chosen = options.evaluate_all("(os) => os.filter((o) => o.selected).map((o) => o.text)")
    assert sorted(int(t.split()[0]) for t in chosen) == sorted([first, second, *pasted])


def test_status_is_readable_on_the_dark_theme(open_notebook, client, screenshots):
    from playwright.sync_api import expect

    from .test_forms_browser import screenshot

    ids = steps.started(client)
    code, _changed = steps.busiest_country(steps.country_bids(client, ids))
    page = open_notebook("forms.ipynb?theme=dark")
    body = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert steps.luminance(steps.rgb(body)) < 0.1, f"not a dark page: {body}"
    form = steps.bids_form(page, ids, code)
    seen = {}
    steps.set_bids(form, "abc")
    expect(form.locator(".ct-status-error")).to_be_visible()
    seen["error"] = steps.status_contrast(form)
    form.get_by_role("button", name="Get prices").click()
    expect(form.locator(".ct-status-ok")).to_be_visible()
    seen["ok"] = steps.status_contrast(form)
    form.get_by_role("button", name="Preview").click()
    expect(form.locator(".ct-status-info")).to_be_visible()
    seen["info"] = steps.status_contrast(form)
    steps.set_bids(form, "abc")  # the picture shows the refusal
    expect(form.locator(".ct-status-error")).to_be_visible()
    screenshot(page, "dark", screenshots)
    low = {k: v for k, v in seen.items() if v[0] < 4.5}
    assert not low, f"status text below 4.5:1 on the dark theme: {low}"


def test_an_amount_typed_while_the_form_settles_is_taken_as_shown(
    open_notebook, client, voila, browser_sandbox
):
    """Right after a run the kernel reads the account again (slowly here: every answer of the
    sandbox waits :data:`SLOW_MS`); a person types the next amount and clicks: the edit must
    use the text the box shows, not a part of it."""
    from playwright.sync_api import expect

    ids = steps.started(client)
    code, _changed = steps.busiest_country(steps.country_bids(client, ids))
    before = steps.bids_of(client, ids, code)
    page = open_notebook("forms.ipynb")
    form = steps.bids_form(page, ids, code)
    steps.set_bids(form, "0,5")
    form.get_by_label("allow bid_jump").check()
    runs_before = steps.applied(voila.journal)
    browser_sandbox.faults.configure({"latency_ms": SLOW_MS})
    try:
        form.get_by_role("button", name="Apply").click()
        expect(status(form)).to_contain_text("applied:")
        steps.type_into(form.get_by_label("Value", exact=True), "1.25")
        form.get_by_role("button", name="Change bids of the rows").click()
        taken = (
            form.get_by_role("listitem")
            .filter(has_text="set to (USD)")
            .or_(form.locator(".ct-status-error"))
        )
        expect(taken).to_be_visible()
        assert "set to (USD) 1.25:" in taken.inner_text()
    finally:
        browser_sandbox.faults.clear()
        form.get_by_role("button", name="Clear edits").click()
        for run_id in reversed(steps.applied(voila.journal)[len(runs_before) :]):
            restore(client, voila.journal, run_id)
    assert steps.bids_of(client, ids, code) == before
