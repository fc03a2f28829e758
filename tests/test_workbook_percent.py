"""A bid cell Excel made a percentage of: ``+10%`` typed into a number cell of an account
workbook exported before bid columns were text is the number 0.1 shown 10%, refused with its
cell; the same number shown as a plain number is a bid as before."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest

import toolkit
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.bulk.workbook.sheet_scan import percent_styles
from toolkit.errors import WorkbookError
from toolkit.sandbox import Sandbox

from .conftest import Api
from .test_relative_bids import BIDS, campaign, live_bids


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory):
    """A sandbox, a campaign with a bid rule, and its exported workbook (nothing here changes
    the account: each test only reads)."""
    folder = tmp_path_factory.mktemp("percent")
    with Sandbox(campaigns=3, seed=7, accounts=1) as sb:
        api = Api(sb.url, sb.api_keys[0])
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
        cid = campaign(api)
        client.bid_rules.add(cid, ["ab12"], 0.2)
        yield api, cid, export_workbook(client, folder / "account.xlsx", [cid])


def edited(src: Path, dst: Path, cid: int, table: str, cells: dict[str, tuple[Any, str]]) -> Path:
    """The workbook as an older export edited in Excel: the bid column in a number format,
    and the bid cells of ``cid`` set (key -> (value, number format))."""
    wb = openpyxl.load_workbook(src)
    ws = wb[table]
    head = {c.value: c.column for c in ws[1]}
    key = "country" if table == "countries" else "item"
    for row in range(2, ws.max_row + 1):
        bid = ws.cell(row, head["bid"])
        bid.number_format = "0.0000##"
        here = ws.cell(row, head[key]).value
        if ws.cell(row, head["campaign_id"]).value == cid and here in cells:
            bid.value, bid.number_format = cells[here]
    wb.save(dst)
    return dst


def bid_cell(path: Path, table: str, row: int) -> str:
    ws = openpyxl.load_workbook(path)[table]
    column = next(c.column_letter for c in ws[1] if c.value == "bid")
    return f"{column}{row}"


def test_a_number_shown_as_a_percentage_is_refused_with_its_cell(exported, tmp_path):
    api, cid, path = exported
    cells = {
        "US": (0.1, "0%"),  # +10% typed: refused
        "DE": (-0.05, "0.00%"),  # -5% typed: refused
        "FR": ("+10%", "0%"),  # text in a percent cell: a change of the bid, as before
        "GB": (0.45, "0.00"),  # a number shown as a number: a bid, as before
    }
    book = edited(path, tmp_path / "edited.xlsx", cid, "countries", cells)
    with pytest.raises(WorkbookError) as err:
        read_workbook(book)
    found = {p.value: p for p in err.value.problems}
    assert set(found) == {0.1, -0.05}
    us, de = found[0.1], found[-0.05]
    assert (us.sheet, us.column) == ("countries", "bid")
    assert f"cell {bid_cell(book, 'countries', us.row)}: 10% is a percentage" in us.message
    assert "write +10% as text ('+10%) or the bid in USD" in us.message
    assert "write -5% as text ('-5%)" in de.message and "\n" not in de.message
    assert live_bids(api, cid) == BIDS  # nothing sent


def test_a_custom_percent_format_on_a_bid_rule_is_refused(exported, tmp_path):
    _, cid, path = exported
    book = edited(path, tmp_path / "rule.xlsx", cid, "bid_rules", {"ab12": (1.5, '0.0" pts"%')})
    with pytest.raises(WorkbookError) as err:
        read_workbook(book)
    (problem,) = err.value.problems
    assert (problem.sheet, problem.column, problem.value) == ("bid_rules", "bid", 1.5)
    assert "150% is a percentage Excel made" in problem.message


def test_the_same_number_in_a_number_format_is_a_bid(exported, tmp_path):
    _, cid, path = exported
    book = edited(path, tmp_path / "plain.xlsx", cid, "countries", {"US": (0.1, "0.00")})
    countries = read_workbook(book).desired["countries"]
    mine = countries[countries["campaign_id"] == cid].set_index("country")["bid"]
    assert mine["US"] == 0.1 and mine["DE"] == BIDS["DE"]


def test_an_export_has_no_percent_format_so_reading_scans_no_sheet(exported):
    _, _, path = exported
    with zipfile.ZipFile(path) as archive:
        assert percent_styles(archive) == frozenset()
