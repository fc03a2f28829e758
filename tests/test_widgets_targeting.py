"""TargetingForm against the sandbox: every target kind of spec.py reachable (the test walks
the table), edits planned, applied and undone, and the values all or some campaigns have."""

from __future__ import annotations

import pandas as pd

from toolkit import spec
from toolkit.bulk import Journal
from toolkit.client import checks
from toolkit.frames import load_account
from toolkit.widgets import TargetingForm
from toolkit.widgets.kinds import OptionsChooser, SearchChooser, TextChooser

#: Candidates typed into a kind's text box or search box; the first that fits is used.
TYPED = ("10.20.0.0/16", "widgets-test.example.com", "4242")
SEARCHED = ("lon", "tel", "san", "ber", "cal", "par")


def targeting(client) -> pd.DataFrame:
    account = load_account(client, progress=False)
    geo = spec.bid_kind().column
    countries = account.countries.rename(columns={geo: "value"})[["campaign_id", "value"]]
    countries["kind"] = geo
    targets = account.targets[["campaign_id", "kind", "value", "list_type"]].astype(object)
    out = pd.concat([targets, countries.astype(object)], ignore_index=True)
    return out.astype(str).sort_values(list(out.columns)).reset_index(drop=True)


def pick(form: TargetingForm, kind: spec.TargetKind) -> None:
    """Pick in the kind's editor one value not every selected campaign has."""
    ed = form.editor(kind.name)
    has = {v for label, (_g, _lt, v) in ed.current.options if label.endswith(" - all")}
    chooser = ed.chooser
    if isinstance(chooser, SearchChooser):
        for text in SEARCHED:
            chooser.text.value = text
            if chooser.options.options:
                break
    if isinstance(chooser, (OptionsChooser, SearchChooser)):
        fresh = [v for _label, v in chooser.options.options if v[1] not in has]
        assert fresh, f"{kind.name}: no value to add"
        chooser.options.value = (fresh[0],)
    else:
        assert isinstance(chooser, TextChooser)
        chooser.text.value = next(t for t in TYPED if not checks.item_problems(kind, t))
        assert not chooser.pasted.problems
    if kind.bids:
        ed.bid.value = 0.5


def test_every_kind_of_the_table_is_reachable_planned_applied_and_undone(client, tmp_path):
    before = targeting(client)
    form = TargetingForm(client, journal=Journal(tmp_path / "journal.db"))
    form.picker.select_all.click()
    shown = dict(form.kind.options)  # label in words -> the kind's name
    assert list(shown.values()) == list(spec.TARGET_KINDS)  # every format selected
    assert all(label == spec.TARGET_KINDS[name].title for label, name in shown.items())
    for kind in spec.TARGET_KINDS.values():
        form.kind.value = kind.name
        pick(form, kind)
        form.editor(kind.name).add_button.click()
        assert form.level == "info", form.message
    form.preview_button.click()
    assert form.level == "info", form.message
    planned = set(form.last_plan.to_frame()["target"].astype(str))
    assert planned == set(spec.TARGET_KINDS), planned ^ set(spec.TARGET_KINDS)
    form.apply_button.click()
    assert form.level == "ok", form.message
    items = len(form.last_result.outcomes)  # the progress counts items, not calls
    assert form.progress.value == form.progress.max == items > len(form.last_plan)
    outcomes = form.last_result.to_frame()
    assert set(outcomes["outcome"]) <= {"applied"}
    after = targeting(client)
    assert len(after) > len(before)
    assert form.notes == [] and form.edited == {}
    assert "applied" in form.result_view.value
    form.undo_button.click()
    assert form.level == "ok", form.message
    pd.testing.assert_frame_equal(targeting(client), before)


def test_values_all_campaigns_have_and_some_have(client, tmp_path):
    form = TargetingForm(client, [1000001, 1000003], journal=tmp_path / "j.db")
    kind = spec.item_kinds()[0]  # the first kind of the targets table
    form.kind.value = kind.name
    ed = form.editor()
    labels = [label for label, _v in ed.current.options]
    assert labels and all(label.endswith((" - all", " - 1 of 2")) for label in labels)
    shared = [v for label, v in ed.current.options if label.endswith(" - all")]
    one = [v for label, v in ed.current.options if label.endswith(" - 1 of 2")]
    assert one, labels
    ed.current.value = (one[0],)
    ed.drop_button.click()
    assert form.message.startswith(f"drop {kind.title}")
    assert one[0] not in [v for _label, v in ed.current.options]
    form.preview_button.click()  # one of two categories: the drop_share guard
    assert form.level == "error" and "allow drop_share" in form.message
    form.allow["drop_share"].value = True
    changes = form.plan().changes()
    assert len(changes) == 1 and changes["what"].iloc[0] == "drop"
    assert shared == [v for _label, v in ed.current.options if _label.endswith(" - all")]


def test_kinds_follow_the_formats_of_the_selection(client, tmp_path):
    form = TargetingForm(client, journal=tmp_path / "j.db")
    formats = form.session.campaign_formats()
    one_format = formats.index[formats == formats.iloc[0]].tolist()
    form.picker.campaigns.value = tuple(one_format)
    fmt = formats.iloc[0]
    assert [name for _label, name in form.kind.options] == [
        k.name for k in spec.TARGET_KINDS.values() if k.allowed_for(fmt)
    ]


def test_a_bad_typed_value_is_one_line_in_the_form_and_nothing_is_edited(client, tmp_path):
    form = TargetingForm(client, journal=tmp_path / "j.db")
    form.picker.select_all.click()
    kind = next(k for k in spec.TARGET_KINDS.values() if k.syntax is not None)
    form.kind.value = kind.name
    ed = form.editor()
    good = next(t for t in TYPED if not checks.item_problems(kind, t))
    ed.chooser.text.value = f"{good}\n{good}\nbad!value"
    assert "1 duplicate" in ed.chooser.note.value and "line 3" in ed.chooser.note.value
    ed.add_button.click()
    assert form.level == "error" and "line 3" in form.message and "\n" not in form.message
    assert form.edited == {}
    assert "Traceback" not in form.status.value


def test_search_asks_from_three_characters(client, tmp_path):
    form = TargetingForm(client, [1000001], journal=tmp_path / "j.db")
    kind = next(k for k in spec.TARGET_KINDS.values() if k.search)
    form.kind.value = kind.name
    chooser = form.editor().chooser
    chooser.text.value = "lo"[: spec.SEARCH_MIN_CHARS - 1]
    assert chooser.options.options == () and "or more" in chooser.note.value
    for text in SEARCHED:
        chooser.text.value = text
        if chooser.options.options:
            break
    assert chooser.options.options
