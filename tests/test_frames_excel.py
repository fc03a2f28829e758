"""Frames to Excel: ``Account.to_excel`` and ``frames.write_excel`` / ``excel_ready``, on a
real sandbox account, read back with openpyxl."""

from __future__ import annotations

import datetime as dt

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit import frames
from toolkit.frames import export
from toolkit.sandbox import Sandbox


@pytest.fixture(scope="module")
def account():
    with Sandbox(campaigns=12, seed=11) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        yield toolkit.load_account(client, progress=False)


def _rows(ws) -> list[list]:
    return [list(r) for r in ws.iter_rows(values_only=True)]


def test_plain_to_excel_refuses_time_zones_and_excel_ready_fixes_it(account, tmp_path):
    joined = account.join("countries")
    with pytest.raises(ValueError, match="timezones"):
        joined.to_excel(tmp_path / "plain.xlsx")
    ready = frames.excel_ready(joined)
    assert str(ready["t_created"].dtype) == "datetime64[ns]"
    assert str(joined["t_created"].dtype) == "datetime64[ns, UTC]"  # the input is untouched
    ready.to_excel(tmp_path / "ready.xlsx", index=False)
    ws = openpyxl.load_workbook(tmp_path / "ready.xlsx")["Sheet1"]
    assert ws.max_row == len(joined) + 1


def test_account_to_excel_one_sheet_per_table_read_back(account, tmp_path):
    path = account.to_excel(tmp_path / "account.xlsx", joined=["countries"])
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == [*account.loaded_tables, "countries_joined"]
    for name in account.loaded_tables:
        df = account.table(name)
        rows = _rows(wb[name])
        assert rows[0] == list(df.columns), name
        assert len(rows) == len(df) + 1, name
    # datetimes: UTC, without a zone, to the second as the service gives them
    rows = _rows(wb["campaigns"])
    col = rows[0].index("t_created")
    got = [r[col] for r in rows[1:]]
    want = account.campaigns["t_created"].dt.tz_convert("UTC").dt.tz_localize(None)
    assert got == [t.to_pydatetime() for t in want]
    assert all(isinstance(v, dt.datetime) and v.tzinfo is None for v in got)
    # numbers stay numbers, missing values are empty cells
    rows = _rows(wb["countries"])
    bids = [r[rows[0].index("bid")] for r in rows[1:]]
    assert bids == account.countries["bid"].tolist()
    assert all(r[rows[0].index("l_d_show")] is None for r in rows[1:])
    # the joined sheet carries the campaign's columns
    rows = _rows(wb["countries_joined"])
    assert rows[0][: len(account.countries.columns)] == list(account.countries.columns)
    assert "name" in rows[0] and "ad_format" in rows[0]
    names = dict(zip(account.campaigns["id"], account.campaigns["name"], strict=True))
    cid, name = rows[0].index("campaign_id"), rows[0].index("name")
    assert all(r[name] == names[r[cid]] for r in rows[1:])


def test_account_to_excel_picks_tables_and_join_columns(account, tmp_path):
    path = account.to_excel(
        tmp_path / "two.xlsx", ["campaigns", "lists"], joined=True, join_columns=["name"]
    )
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["campaigns", "lists", "lists_joined"]
    assert _rows(wb["lists_joined"])[0] == ["campaign_id", "list", "item", "name"]
    with pytest.raises(KeyError, match="unknown table"):
        account.to_excel(tmp_path / "bad.xlsx", ["nope"])


def test_text_that_looks_like_a_formula_stays_text(tmp_path):
    df = pd.DataFrame(
        {
            "title": pd.array(["=1+1", "+49 ads", "-5", "@home", "plain", None], dtype="string"),
            "n": pd.array([1, -2, 3, None, 5, 6], dtype="Int64"),
            "mixed": pd.Series(["=A1", -7, 1.5, None, "x", "y"], dtype=object),
        }
    )
    path = frames.write_excel({"t": df}, tmp_path / "f.xlsx")
    ws = openpyxl.load_workbook(path)["t"]
    cells = list(ws.iter_rows(min_row=2))
    assert [r[0].value for r in cells] == ["'=1+1", "'+49 ads", "'-5", "'@home", "plain", None]
    assert all(r[0].data_type == "s" for r in cells[:5])
    assert [r[1].value for r in cells] == [1, -2, 3, None, 5, 6]
    assert [r[2].value for r in cells] == ["'=A1", -7, 1.5, None, "x", "y"]
    assert cells[0][2].data_type == "s" and cells[1][2].data_type == "n"


def test_control_characters_are_escaped_and_long_frames_continue(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "SHEET_ROWS", 4)
    df = pd.DataFrame({"text": pd.array(["a\x01b", "_x0041_", "ok"] * 3, dtype="string")})
    path = frames.write_excel(df, tmp_path / "long.xlsx")
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["Sheet1", "Sheet1 (2)", "Sheet1 (3)"]
    assert [ws.max_row for ws in wb] == [5, 5, 2]
    first = [c.value for c in wb["Sheet1"]["A"]][1:]
    assert first == ["a_x0001_b", "_x005F_x0041_", "ok", "a_x0001_b"]


def test_excel_ready_index_and_object_timestamps():
    stamp = pd.Timestamp("2026-05-10 11:30", tz="Europe/Berlin")
    df = pd.DataFrame({"o": pd.array([stamp, "text"], dtype=object)}, index=[stamp, stamp])
    out = frames.excel_ready(df)
    assert out["o"].tolist() == [pd.Timestamp("2026-05-10 09:30"), "text"]
    assert out.index.tz is None and out.index[0] == pd.Timestamp("2026-05-10 09:30")
    assert df.index.tz is not None  # the input is untouched


def test_sheet_names_are_valid():
    assert export.sheet_name("x" * 40, 2) == "x" * 27 + " (2)"
    assert export.sheet_name("bids: US/CA?") == "bids_ US_CA_"
