"""What the forms take from their boxes, against the sandbox: amounts as text (``0,5`` is 0.5,
never 5; ambiguous, non-numeric, empty and negative amounts refused with the field and the
text, nothing pending), the ``bid_jump`` guard on a form's amount, edits refused without a
selected campaign, an empty preview, the kinds' labels in words, each country's code once,
no ``nan`` in the bid table and colours of the theme. Nothing here is applied: the sandbox is
shared by the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import toolkit
from toolkit import spec
from toolkit.sandbox import Sandbox
from toolkit.widgets import BidForm, ListForm, TargetingForm
from toolkit.widgets.money import MoneyText

GEO = spec.bid_kind().column
IDS = [1000001, 1000003, 1000005]
PUSH = 1000001


@pytest.fixture(scope="module")
def shared() -> Iterator[Sandbox]:
    with Sandbox(campaigns=12, seed=11) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def reader(shared):
    return toolkit.connect(api_key=shared.api_keys[0], base_url=shared.url, retries=0)


def planned(form) -> dict[tuple[int, str], float]:
    ch = form.plan().changes()
    ch = ch[ch["what"].isin(["bid", "add"])]
    return {(int(r.campaign_id), str(r.key)): float(r.new) for r in ch.itertuples()}


def test_money_boxes_are_text_boxes(reader, tmp_path):
    bid = BidForm(reader, IDS, journal=tmp_path / "j.db")
    lists = ListForm(reader, IDS, journal=tmp_path / "j.db")
    boxes = [bid.amount, bid.new_bid, lists.rule_bid, lists.cpa["amount"]]
    assert all(isinstance(b, MoneyText) and "ct-money" in b._dom_classes for b in boxes)
    assert all(isinstance(b.value, str) for b in boxes)


@pytest.mark.parametrize("text", ["0,5", "0.5", " 0,5 "])
def test_a_decimal_comma_or_point_sets_half_a_dollar(reader, tmp_path, text):
    form = BidForm(reader, [PUSH], journal=tmp_path / "j.db")
    form.allow["bid_jump"].value = True  # 0.5 is more than 3x these bids
    form.how.value, form.amount.value = "set", text
    form.change_button.click()
    assert form.level == "info", form.message
    new = planned(form)
    assert new and set(new.values()) == {0.5}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("abc", 'Value: "abc" is not an amount in USD; write 0.5 or 0,5'),
        ("1e3", 'Value: "1e3" is not an amount in USD'),
        ("1,000", 'Value: "1,000" could be 1000 or 1.0'),
        ("1.000", 'Value: "1.000" could be 1000 or 1.0'),
        ("1.234,5", 'Value: "1.234,5" has thousands separators'),
        ("", 'Value: "" is empty'),
        ("-0.5", 'Value: "-0.5" is negative'),
        ("0 5", 'Value: "0 5" is not an amount'),
    ],
)
def test_a_bad_amount_is_refused_with_the_field_and_nothing_is_pending(
    reader, tmp_path, text, says
):
    form = BidForm(reader, IDS, journal=tmp_path / "j.db")
    form.how.value, form.amount.value = "set", text
    form.change_button.click()
    assert form.level == "error" and says in form.message, form.message
    assert form.edited == {} and form.notes == []
    assert "ct-status-error" in form.status.value


def test_a_percentage_takes_a_sign_and_a_percent_sign(reader, tmp_path):
    form = BidForm(reader, [PUSH], journal=tmp_path / "j.db")
    old = form.rows().set_index(["campaign_id", GEO])["bid"]
    form.how.value, form.amount.value = "percent", "-10%"
    form.change_button.click()
    assert form.level == "info", form.message
    assert planned(form) == pytest.approx((old * 0.9).round(4).to_dict())


def test_other_money_boxes_read_a_decimal_comma_and_refuse_words(reader, tmp_path):
    form = BidForm(reader, IDS, journal=tmp_path / "j.db")
    form.new_country.value = "NZ"
    form.new_bid.value = "abc"
    form.add_button.click()
    assert form.level == "error" and 'Bid (USD): "abc"' in form.message and form.edited == {}
    form.new_bid.value = "0,25"
    form.add_button.click()
    assert set(planned(form).values()) == {0.25}
    lists = ListForm(reader, IDS, journal=tmp_path / "j.db")
    lists.rule_items.value = "12345"
    lists.rule_bid.value = "0,07"
    lists.rule_set_button.click()
    assert lists.level == "info", lists.message
    bids = lists.plan().to_frame()["bid"].dropna().tolist()
    assert bids and set(bids) == {0.07}
    lists.cpa["amount"].value = "12,5x"
    lists.cpa_add_button.click()
    assert lists.level == "error" and 'amount: "12,5x"' in lists.message
    targeting = TargetingForm(reader, IDS, journal=tmp_path / "j.db")
    targeting.kind.value = spec.bid_kind().name
    ed = targeting.editor()
    ed.chooser.options.value = (("", "NZ"),)
    ed.bid.value = "1,000"
    ed.add_button.click()
    assert targeting.level == "error" and "could be 1000 or 1.0" in targeting.message
    assert targeting.edited == {}


def test_bid_jump_refuses_a_slip_of_the_form_until_allowed(reader, tmp_path):
    form = BidForm(reader, [PUSH], journal=tmp_path / "j.db")
    form.how.value, form.amount.value = "set", "5"  # meant 0,5
    form.change_button.click()
    form.preview_button.click()
    assert form.level == "error" and "Refused by the guard bid_jump" in form.message
    assert "allow bid_jump" in form.message


def test_an_edit_without_a_selected_campaign_is_refused(reader, tmp_path):
    bid = BidForm(reader, journal=tmp_path / "j.db")
    bid.new_country.value, bid.new_bid.value = "NZ", "0.2"
    bid.add_button.click()
    assert bid.level == "error" and "select campaigns first" in bid.message
    bid.how.value, bid.amount.value = "set", "0.2"
    bid.change_button.click()
    assert bid.level == "error" and "select campaigns first" in bid.message
    targeting = TargetingForm(reader, journal=tmp_path / "j.db")
    kind = next(k for k in spec.TARGET_KINDS.values() if k.values)
    targeting.kind.value = kind.name
    ed = targeting.editor()
    ed.chooser.options.value = (ed.chooser.options.options[0][1],)
    ed.add_button.click()
    assert targeting.level == "error" and "select campaigns first" in targeting.message
    assert bid.edited == {} and targeting.edited == {} and targeting.notes == []


def test_an_empty_preview_says_there_is_nothing_to_apply(reader, tmp_path):
    form = BidForm(reader, [PUSH], journal=tmp_path / "j.db")
    old = form.rows()["bid"].iloc[0]
    form.countries.value = (form.rows()[GEO].iloc[0],)
    form.how.value, form.amount.value = "set", str(old)  # the bid it has: no change
    form.change_button.click()
    form.preview_button.click()
    assert form.message.startswith("Nothing to apply") and "Apply sends" not in form.message
    form.apply_button.click()
    assert form.message.startswith("Nothing to apply") and form.last_result is None


def test_kinds_are_named_in_words_with_their_name_in_the_tooltip(reader, tmp_path):
    form = TargetingForm(reader, IDS, journal=tmp_path / "j.db")
    labels = dict(form.kind.options)
    assert all(label == spec.TARGET_KINDS[name].title for label, name in labels.items())
    assert not [label for label in labels if "-" in label or "_" in label]
    kind = next(
        k for k in spec.TARGET_KINDS.values() if "-" in k.name and k.name in labels.values()
    )
    form.kind.value = kind.name
    assert kind.name in form.kind.tooltip and kind.label
    assert form.editor().add_button.description == f"Add {kind.label}"


def test_a_country_shows_its_code_once(reader, tmp_path):
    form = TargetingForm(reader, IDS, journal=tmp_path / "j.db")
    form.kind.value = spec.bid_kind().name
    shown = [label for label, _v in form.editor().current.options]
    assert shown
    for label in shown:
        code = label.rsplit("(", 1)[1][:2]
        assert label.count(f"({code})") == 1, label


def test_the_bid_table_shows_no_nan_and_the_status_follows_the_theme(reader, tmp_path):
    form = BidForm(reader, journal=tmp_path / "j.db")
    form.picker.select_all.click()
    form.prices_button.click()  # CPM and CPC campaigns: some rows have no comparable price
    assert form.level == "ok", form.message
    assert ">nan<" not in form.bids_view.value.lower() and "nan" not in form.bids_view.value
    assert "ct-status-ok" in form.status.value and "style=" not in form.status.value
    sheets = [c.value for c in form.children if "ct-style" in c._dom_classes]
    assert len(sheets) == 1 and "#333" not in sheets[0]
    for variable in ("--jp-ui-font-color1", "--jp-error-color0", "--jp-error-color2"):
        assert variable in sheets[0]  # the theme's, light and dark
    assert "body[data-jp-theme-light='false'] .ct-status-error" in sheets[0]


def test_an_unknown_country_typed_in_find_gets_a_suggestion(reader, tmp_path):
    form = TargetingForm(reader, IDS, journal=tmp_path / "j.db")
    form.kind.value = spec.bid_kind().name
    chooser = form.editor().chooser
    chooser.filter.value = "UK"  # no such code: the United Kingdom is GB
    assert chooser.options.options[0][1] == ("", "GB")
    assert "did you mean GB?" in chooser.note.value and "ct-status-error" in chooser.note.value
    chooser.filter.value = "Atlantis"
    assert chooser.options.options == () and "write its ISO 3166-1" in chooser.note.value
    chooser.filter.value = "Germ"  # a name found as typed: no note
    assert chooser.note.value == "" and ("", "DE") in [v for _l, v in chooser.options.options]
