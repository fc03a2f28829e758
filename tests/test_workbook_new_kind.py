"""A target kind added to :data:`toolkit.spec.TARGET_KINDS` at run time is exported in the
targets sheet, offered in its ``kind`` drop-down list, read back, checked, and named by its
dictionary: the workbook reads the kinds' table, it does not list them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import toolkit
import toolkit.bulk.workbook.actions
import toolkit.bulk.workbook.book  # noqa: F401 - loaded before a kind is added
from toolkit import spec
from toolkit.errors import WorkbookError, WorkbookProblem
from toolkit.frames import Account, frame
from toolkit.frames.dictionaries import empty_refs, ref_frame

#: An int kind without a dictionary: any positive integer id.
CARRIER = spec.TargetKind("carrier", int, "carrier", help="carrier id")
#: An int kind whose ids the ``vertical`` dictionary names.
VERTICAL = spec.TargetKind("vertical", int, "vertical", labels="vertical", help="vertical id")


@pytest.fixture()
def new_kinds() -> Iterator[None]:
    spec.add_target_kind(CARRIER)
    spec.add_target_kind(VERTICAL)
    try:
        yield
    finally:
        spec.remove_target_kind(CARRIER.name)
        spec.remove_target_kind(VERTICAL.name)


def _account() -> Account:
    campaigns = frame(
        "campaigns",
        {
            "id": [501, 502],
            "name": ["first", "second"],
            "ad_format": ["push", "pops"],
            "mode": ["CPC", "CPM"],
            "status": ["Approved", "Approved"],
            "work_status": ["Paused", "Started"],
        },
    )
    targets = frame(
        "targets",
        {
            "campaign_id": [501, 501, 502, 502, 502],
            "kind": ["carrier", "carrier", "carrier", "vertical", "quality"],
            "value": ["7", "12", "7", "3", "high"],
            "label": [None, None, None, "Finance", None],
        },
    )
    refs = empty_refs()
    refs["vertical"] = ref_frame("vertical", {"3": "Finance", "4": "Games"})
    return Account(campaigns=campaigns, targets=targets, refs=refs)


@pytest.fixture()
def exported(new_kinds: None, tmp_path: Path) -> Path:
    return toolkit.export_workbook(_account(), tmp_path / "kinds.xlsx")


def _add_targets(src: Path, rows: list[tuple[int, str, str]]) -> Path:
    book = openpyxl.load_workbook(src)
    ws = book["targets"]
    cols = {c.value: c.column for c in ws[1]}
    for campaign_id, kind, value in rows:
        r = ws.max_row + 1
        ws.cell(r, cols["campaign_id"], campaign_id)
        ws.cell(r, cols["kind"], kind)
        ws.cell(r, cols["value"], value)
    dst = src.with_name("edited.xlsx")
    book.save(dst)
    return dst


def test_the_new_kind_is_a_choice_of_the_kind_column(exported: Path):
    book = openpyxl.load_workbook(exported)
    lists = book["_lists"]
    column = next(c[0].column_letter for c in lists.iter_cols(max_row=1) if c[0].value == "kind")
    kinds = [c.value for c in lists[column][1:] if c.value is not None]
    assert kinds == [k.column for k in spec.item_kinds()]
    assert {"carrier", "vertical"} <= set(kinds)
    ranges = [dv.formula1 for dv in book["targets"].data_validations.dataValidation]
    assert f"'_lists'!${column}$2:${column}${len(kinds) + 1}" in ranges
    readme = {row[0]: row[1] for row in book["README"].iter_rows(values_only=True)}
    assert readme["  carrier"] == "carrier id"


def test_targets_of_the_new_kind_read_back_equal(exported: Path):
    tables = toolkit.read_workbook(exported)
    got = tables.desired["targets"]
    want = _account().targets[list(got.columns)]
    pd.testing.assert_frame_equal(got, want)
    assert "carrier" in list(got["kind"].cat.categories)
    assert tables.base["targets"]["value"].tolist() == ["7", "12", "7", "3", "high"]


def test_a_new_row_of_the_new_kind_is_read_and_labelled_from_its_dictionary(exported: Path):
    path = _add_targets(exported, [(501, "carrier", "31"), (501, "Vertical", "4")])
    got = toolkit.read_workbook(path).desired["targets"]
    new = got.iloc[-2:]
    assert new["kind"].tolist() == ["carrier", "vertical"]
    assert new["value"].tolist() == ["31", "4"]
    assert new["label"].tolist() == [pd.NA, "Games"]


def test_a_bad_value_of_the_new_kind_is_a_problem_of_its_cell(exported: Path):
    path = _add_targets(exported, [(501, "carrier", "abc"), (502, "vertical", "9")])
    with pytest.raises(WorkbookError) as info:
        toolkit.read_workbook(path)
    assert info.value.problems == [
        WorkbookProblem("targets", 7, "value", "abc", "not a carrier id (a positive integer)"),
        WorkbookProblem("targets", 8, "value", "9", "unknown vertical id"),
    ]
    assert "targets row 7 [value]: 'abc': not a carrier id" in str(info.value)


def test_the_kind_removed_is_gone_from_the_next_export(exported: Path, tmp_path: Path):
    spec.remove_target_kind(CARRIER.name)
    try:
        account = Account(refs=empty_refs())
        book = openpyxl.load_workbook(toolkit.export_workbook(account, tmp_path / "e.xlsx"))
        kinds = [r[1] for r in book["_lists"].iter_rows(min_row=2, values_only=True) if r[1]]
        assert "carrier" not in kinds and "vertical" in kinds
    finally:
        spec.add_target_kind(CARRIER)


def test_an_action_row_of_the_new_kind_is_checked_and_planned(new_kinds: None, tmp_path: Path):
    from toolkit.bulk.workbook.actions import check_actions, desired_tables, write_template

    rows = [
        {"action": "add", "target": "carrier", "campaign": "all", "item": 44},
        {"action": "drop", "target": "carrier", "campaign": 501, "item": "12"},
    ]
    account = _account()
    actions, _ = check_actions(write_template(tmp_path / "a.xlsx", "t", [], rows), account)
    targets = desired_tables(actions, account)["targets"]
    carrier = targets[targets["kind"] == "carrier"]
    assert sorted(zip(carrier["campaign_id"], carrier["value"], strict=True)) == [
        (501, "44"),
        (501, "7"),
        (502, "44"),
        (502, "7"),
    ]
    bad = write_template(tmp_path / "b.xlsx", "t", [], [{**rows[0], "item": "abc"}])
    with pytest.raises(WorkbookError) as info:
        check_actions(bad, account)
    assert [(p.row, p.column) for p in info.value.problems] == [(2, "item")]
