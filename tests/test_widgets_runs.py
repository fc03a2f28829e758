"""The forms' runs against the sandbox: a double click applies once and undoes once, the
buttons are disabled while a run is in flight, the progress counts items, the guards' allow
boxes are unticked after a run, and Undo finds the form's last run in the journal after a
reload (a new form over the same journal file). The account is read back with the client."""

from __future__ import annotations

import pandas as pd

from toolkit import spec
from toolkit.bulk import Journal
from toolkit.frames import load_account
from toolkit.widgets import BidForm, ListForm

GEO = spec.bid_kind().column
IDS = [1000001, 1000003, 1000005]
SUBID = next(lk for lk in spec.LISTS.values() if lk.item_type is str and lk.list_type == "black")


def bids(client, ids=IDS) -> pd.Series:
    c = load_account(client, ids, progress=False).countries
    return c.set_index(["campaign_id", GEO])["bid"].sort_index()


def add_country(form: BidForm, code: str, bid: str = "0.25") -> None:
    form.new_country.value = code
    form.new_bid.value = bid
    form.add_button.click()
    assert form.level == "info", form.message


def new_code(client) -> list[str]:
    """Two countries none of IDS targets."""
    have = set(bids(client).index.get_level_values(1))
    return [c for c in ("NZ", "IS", "MT", "LU") if c not in have][:2]


def form_runs(path) -> pd.DataFrame:
    runs = Journal(path).runs()
    return runs[runs["undoes"].isna()]


def test_a_double_click_on_apply_applies_once_and_keeps_the_result_shown(client, tmp_path):
    path = tmp_path / "j.db"
    before = bids(client)
    form = BidForm(client, IDS, journal=path)
    add_country(form, new_code(client)[0])
    form.apply_button.click()
    form.apply_button.click()  # the second click of a double click, after the first ran
    assert form.level == "info" and form.message.startswith("Nothing to apply"), form.message
    assert form.last_result is not None and "applied" in form.result_view.value
    assert str(form.last_result.run_id) in form.message  # the run stays named
    assert len(form_runs(path)) == 1 and list(form_runs(path)["source"]) == ["form:bids"]
    assert len(bids(client)) == len(before) + len(IDS)


def test_a_double_click_on_undo_undoes_the_last_run_only(client, tmp_path):
    path = tmp_path / "j.db"
    before = bids(client)
    first, second = new_code(client)
    form = BidForm(client, IDS, journal=path)
    add_country(form, first)
    form.apply_button.click()
    add_country(form, second)
    form.apply_button.click()
    assert form.level == "ok", form.message
    form.undo_button.click()
    assert form.level == "ok", form.message
    form.undo_button.click()  # the second click: that run is undone already
    assert form.level == "info" and "already undone" in form.message, form.message
    live = set(bids(client).index.get_level_values(1))
    assert first in live and second not in live  # the first run stands
    assert len(bids(client)) == len(before) + len(IDS)


def test_undo_after_a_reload_finds_the_forms_last_run_in_the_journal(client, tmp_path):
    path = tmp_path / "j.db"
    before = bids(client)
    form = BidForm(client, IDS, journal=path)
    add_country(form, new_code(client)[0])
    form.apply_button.click()
    assert len(bids(client)) == len(before) + len(IDS)
    lists = ListForm(client, IDS, journal=path)  # another form: not its run
    lists.undo_button.click()
    assert "No run of this form" in lists.message
    assert len(bids(client)) == len(before) + len(IDS)
    reloaded = BidForm(client, IDS, journal=path)  # a new kernel: nothing in memory
    assert reloaded.runs == []
    reloaded.undo_button.click()
    assert reloaded.level == "ok", reloaded.message
    pd.testing.assert_series_equal(bids(client), before)
    again = BidForm(client, IDS, journal=path)
    again.undo_button.click()
    assert "already undone" in again.message
    pd.testing.assert_series_equal(bids(client), before)


def test_buttons_are_disabled_while_a_run_is_in_flight(client, tmp_path):
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    add_country(form, new_code(client)[0])
    seen: list[tuple] = []
    journal = form.session.journal
    sent = journal.call_sent

    def watch(*args, **kwargs):  # what the form shows while a call goes out
        buttons = (form.preview_button, form.apply_button, form.undo_button, form.clear_button)
        seen.append(
            (all(b.disabled for b in buttons), "ct-busy" in form._dom_classes, form.message)
        )
        return sent(*args, **kwargs)

    journal.call_sent = watch
    form.apply_button.click()
    assert seen and all(disabled and busy for disabled, busy, _m in seen), seen
    assert seen[0][2].startswith("Applying") and "item(s)" in seen[0][2]
    assert not form.apply_button.disabled and "ct-busy" not in form._dom_classes
    seen.clear()
    form.undo_button.click()
    assert seen and all(disabled and busy for disabled, busy, _m in seen), seen
    assert seen[0][2].startswith("Undoing run")
    assert not form.undo_button.disabled and form.level == "ok", form.message


def test_the_progress_counts_items(client, tmp_path):
    form = ListForm(client, IDS, journal=tmp_path / "j.db")
    form.list_name.value = SUBID.name
    form.paste.value = "feed01\nfeed02\nfeed03"
    form.add_button.click()
    form.rule_items.value = "12345"
    form.rule_bid.value = "0.07"
    form.rule_set_button.click()
    journal = form.session.journal
    sent, shown = journal.call_sent, []

    def watch(*args, **kwargs):  # the bar as each call goes out
        shown.append((form.progress.value, form.progress.max))
        return sent(*args, **kwargs)

    journal.call_sent = watch
    form.apply_button.click()
    assert form.level == "ok", form.message
    assert form.progress.description == "Items"
    items = len(form.last_result.outcomes)
    assert items == 4 * len(IDS) and len(form.last_plan) == 1 + len(IDS)  # 9 items, then 1
    done = [0, *(3 * len(IDS) + k for k in range(len(IDS)))]  # the first call's 9, then 1 each
    assert shown == [(n, items) for n in done]
    assert form.progress.value == form.progress.max == items


def test_allow_boxes_are_unticked_after_a_run(client, tmp_path):
    before = bids(client)
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    form.countries.value = tuple(v for _label, v in form.countries.options)
    form.remove_button.click()
    form.allow["drop_share"].value = True
    form.apply_button.click()
    assert form.level == "ok", form.message
    assert not any(box.value for box in form.allow.values())
    form.undo_button.click()
    pd.testing.assert_series_equal(bids(client), before)
    form.countries.value = tuple(v for _label, v in form.countries.options)
    form.remove_button.click()
    form.apply_button.click()  # the next run is guarded again
    assert form.level == "error" and "allow drop_share" in form.message
    pd.testing.assert_series_equal(bids(client), before)
