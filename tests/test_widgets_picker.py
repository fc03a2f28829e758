"""The campaign picker over the sandbox's account: selections survive filters (the count says
how many are hidden), a pasted list of ids selects them and names the ones not in the
account, and the name filter matches words at their start, not inside them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import toolkit
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox
from toolkit.widgets import BidForm, CampaignPicker


@pytest.fixture(scope="module")
def account() -> Iterator:
    with Sandbox(campaigns=12, seed=11) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
        yield load_account(client, progress=False)


@pytest.fixture(scope="module")
def campaigns(account):
    return account.campaigns


def test_a_selection_survives_a_filter(campaigns):
    picker = CampaignPicker(campaigns)
    first, other = int(campaigns["id"].iloc[0]), int(campaigns["id"].iloc[5])
    picker.campaigns.value = (first,)  # select A
    picker.name.value = str(other)  # filter A out
    assert picker.matching == (other,) and picker.selected == (first,)
    assert "<b>1</b> selected (1 hidden)" in picker.count.value
    picker.campaigns.value = (other,)  # select B
    assert picker.selected == (first, other)
    assert "<b>2</b> selected (1 hidden)" in picker.count.value
    picker.name.value = ""  # both shown, both selected
    assert set(picker.campaigns.value) == {first, other} and "hidden" not in picker.count.value
    picker.campaigns.value = (other,)  # unselecting a shown campaign unselects it
    assert picker.selected == (other,)
    picker.select_none.click()
    assert picker.selected == ()


def test_select_all_matching_adds_to_the_hidden_selection(campaigns):
    picker = CampaignPicker(campaigns)
    first = int(campaigns["id"].iloc[0])
    picker.campaigns.value = (first,)
    fmt = next(f for f in campaigns["ad_format"].astype(str) if f != campaigns["ad_format"].iloc[0])
    picker.format.value = fmt
    picker.select_all.click()
    same = campaigns.loc[campaigns["ad_format"].astype(str) == fmt, "id"].astype(int)
    assert set(picker.selected) == {first, *same}


def test_a_pasted_id_list_is_selected_and_strangers_are_named(campaigns):
    picker = CampaignPicker(campaigns)
    ids = [int(i) for i in campaigns["id"].iloc[[1, 3, 7]]]
    picker.name.value = str(ids[0])  # two of them filtered out: still selected
    picker.paste.value = f"{ids[0]}, {ids[1]}\n{ids[2]} 9999999;x12 {ids[0]}"
    picker.select_pasted.click()
    assert picker.selected == tuple(sorted(ids))
    note = picker.paste_note.value
    assert "3 pasted id(s) selected" in note and "9999999" in note and "x12" in note
    assert "ct-status-error" in note and "(2 hidden)" in picker.count.value
    assert {"ct-paste-ids"} <= set(picker.paste._dom_classes)
    assert {"ct-select-pasted"} <= set(picker.select_pasted._dom_classes)


def test_the_name_filter_matches_words_at_their_start(campaigns):
    named = campaigns.copy()
    named["name"] = named["name"].astype(object)
    named.loc[0, "name"] = "US Push 3"
    named.loc[1, "name"] = "DK+US Push 4"
    picker = CampaignPicker(named)
    push = named["name"].astype(str).str.contains("Push")
    assert push.sum() > 2  # "us" is inside every "Push"
    picker.name.value = "US"
    assert set(picker.matching) == set(named["id"].iloc[[0, 1]].astype(int))
    picker.name.value = "pus"
    assert set(picker.matching) == set(named.loc[push, "id"].astype(int))
    picker.name.value = "10000"  # the start of an id: every id of the account
    assert len(picker.matching) == len(named)


def test_a_form_edits_the_hidden_selected_campaigns_too(account, campaigns, tmp_path):
    form = BidForm(account, journal=tmp_path / "j.db")  # no client: nothing is planned here
    picker = form.picker
    a, b = (int(i) for i in campaigns["id"].iloc[[0, 2]])
    picker.campaigns.value = (a, b)
    picker.name.value = str(a)
    assert set(form.selected) == {a, b}
    assert set(form.rows()["campaign_id"]) == {a, b}
