"""BidForm against the sandbox: relative edits (+10 %, to minimum, cap at recommended) give
the right plan, prices only on the button, paging, a guard refusal shown in the form and lifted
with its allow box, apply and undo."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import toolkit
from toolkit import spec
from toolkit.bulk import Journal
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox
from toolkit.widgets import BidForm
from toolkit.widgets.bids import PAGE_ROWS

GEO = spec.bid_kind().column
IDS = [1000001, 1000003, 1000005]


def bids(client, ids=IDS) -> pd.Series:
    c = load_account(client, ids, progress=False).countries
    return c.set_index(["campaign_id", GEO])["bid"].sort_index()


def planned_bids(form: BidForm) -> dict[tuple[int, str], float]:
    ch = form.plan().changes()
    ch = ch[ch["what"] == "bid"]
    return {(int(r.campaign_id), str(r.key)): float(r.new) for r in ch.itertuples()}


def up4(price: float) -> float:
    return math.ceil(round(price * 10_000, 6)) / 10_000


def test_prices_are_asked_on_the_button_only(client, sb, tmp_path):
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    assert form.prices is None and form.rows()["minimum"].isna().all()
    form.how.value = "minimum"
    form.change_button.click()
    assert form.level == "error" and "Get prices" in form.message
    form.prices_button.click()
    assert form.level == "ok", form.message
    rows = form.rows()
    assert rows["minimum"].notna().all() and rows["zone"].notna().all()
    assert "<td>" in form.bids_view.value and "between" in form.bids_view.value


def test_relative_edits_plan_the_right_bids(client, tmp_path):
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    form.allow["bid_jump"].value = True  # +10 % leaves bids below the minimum
    form.prices_button.click()
    rows = form.rows().set_index(["campaign_id", GEO])
    form.how.value, form.amount.value = "percent", 10
    form.change_button.click()
    raised = (rows["bid"] * 1.1).round(4)
    assert planned_bids(form) == pytest.approx(raised.to_dict())
    form.how.value = "minimum"
    form.change_button.click()
    expect = raised.where(raised >= rows["minimum"], rows["minimum"].map(up4))
    assert planned_bids(form) == pytest.approx(expect.to_dict())
    form.how.value = "cap"
    form.change_button.click()
    capped = expect.where(expect <= rows["recommended"].map(up4), rows["recommended"].map(up4))
    assert planned_bids(form) == pytest.approx(capped.to_dict())
    assert (capped < raised).any() and (expect > raised).any()  # both edits moved something


def test_edits_apply_to_the_countries_picked_only(client, tmp_path):
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    country = form.countries.options[0][1]
    form.countries.value = (country,)
    form.how.value, form.amount.value = "set", 0.42
    form.change_button.click()
    planned = planned_bids(form)
    assert planned and {c for _cid, c in planned} == {country}
    assert set(planned.values()) == {0.42}


def test_a_guard_refusal_is_shown_and_lifted_by_its_allow_box(client, tmp_path):
    before = bids(client)
    form = BidForm(client, IDS, journal=Journal(tmp_path / "j.db"))
    form.countries.value = tuple(v for _label, v in form.countries.options)
    form.remove_button.click()
    form.apply_button.click()
    assert form.level == "error"
    assert "drop_share" in form.message and "allow drop_share" in form.message
    assert "Traceback" not in form.status.value and form.last_result is None
    pd.testing.assert_series_equal(bids(client), before)  # nothing sent
    form.allow["drop_share"].value = True
    form.apply_button.click()
    assert form.level == "ok", form.message
    assert bids(client).empty
    form.undo_button.click()
    assert form.level == "ok", form.message
    pd.testing.assert_series_equal(bids(client), before)


def test_add_a_country_apply_and_undo(client, tmp_path):
    before = bids(client)
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    form.new_country.value = "NZ" if "NZ" not in before.index.get_level_values(1) else "IS"
    form.new_bid.value = 0.25
    form.add_button.click()
    form.apply_button.click()
    assert form.level == "ok", form.message
    after = bids(client)
    assert len(after) == len(before) + len(IDS)
    assert form.rows()[GEO].eq(form.new_country.value).sum() == len(IDS)  # account reloaded
    form.undo_button.click()
    pd.testing.assert_series_equal(bids(client), before)


def test_a_bid_of_zero_is_refused_in_one_line(client, tmp_path):
    form = BidForm(client, IDS, journal=tmp_path / "j.db")
    form.new_country.value = form.new_country.options[0][1]
    form.new_bid.value = 0
    form.add_button.click()
    assert form.level == "error" and "bid must be greater than 0" in form.message
    assert form.edited == {}


def test_the_table_is_paged(tmp_path):
    with Sandbox(campaigns=60, seed=3) as big:
        client = toolkit.connect(api_key=big.api_keys[0], base_url=big.url, retries=0)
        form = BidForm(client, journal=tmp_path / "j.db")
        form.picker.select_all.click()
        n = len(form.rows())
        assert n > PAGE_ROWS
        assert form.bids_view.value.count("<tr>") == PAGE_ROWS + 1  # the header
        form.next_button.click()
        assert form.page == 1 and f"page 2 of {-(-n // PAGE_ROWS)}" in form.page_label.value
