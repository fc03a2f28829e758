"""The editable workbook: export, read back, round trips, sheet features and validation."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolkit
from toolkit import spec
from toolkit.bulk.workbook import (
    COLUMNS,
    EDITABLE,
    READ_ONLY,
    WorkbookError,
    export_workbook,
    read_workbook,
)
from toolkit.bulk.workbook.layout import MONEY_FORMAT, SHEETS, TEXT_FORMAT
from toolkit.errors import ToolkitError, WorkbookProblem
from toolkit.frames import TABLES, Account, frame
from toolkit.sandbox import Sandbox

ENGINES = ("calamine", "openpyxl")
HIDDEN = [f"_base_{t}" for t in TABLES] + ["_lists", "_refs", "_meta"]


@pytest.fixture(scope="module")
def client(sandbox: Sandbox) -> Any:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as c:
        yield c


@pytest.fixture(scope="module")
def account(client: Any) -> Account:
    return toolkit.load_account(client, progress=False)


@pytest.fixture(scope="module")
def exported(account: Account, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_workbook(account, tmp_path_factory.mktemp("wb") / "account.xlsx")


def shown(account: Account, table: str) -> pd.DataFrame:
    return account.table(table)[list(COLUMNS[table])].reset_index(drop=True)


def edit(src: Path, dst: Path, change: Any) -> Path:
    """Open with openpyxl (as another program would), change, save elsewhere."""
    wb = openpyxl.load_workbook(src)
    change(wb)
    wb.save(dst)
    return dst


def header(ws: Any) -> dict[str, int]:
    return {c.value: c.column for c in ws[1]}


def styled(ws: Any, row: int, column: int) -> Any:
    """The cell if it was written, else its column (whose style an empty cell shows)."""
    if (row, column) in ws._cells:
        return ws._cells[(row, column)]
    return ws.column_dimensions[openpyxl.utils.get_column_letter(column)]


def problems_of(path: Path, engine: str | None = None) -> list[WorkbookProblem]:
    with pytest.raises(WorkbookError) as info:
        read_workbook(path, engine=engine)
    return info.value.problems


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("engine", ENGINES)
def test_round_trip_without_edit(account: Account, exported: Path, engine: str) -> None:
    tables = read_workbook(exported, engine=engine)
    assert set(tables.desired) == set(TABLES) == set(tables.base)
    assert tables.missing == set()
    assert tables.has_base
    for name in TABLES:
        pd.testing.assert_frame_equal(tables.desired[name], tables.base[name])
        pd.testing.assert_frame_equal(tables.desired[name], shown(account, name))
    assert tables.meta["format"] == "campaign-toolkit workbook"
    for kind, ref in account.refs.items():
        pd.testing.assert_frame_equal(tables.refs[kind], ref.reset_index(drop=True))


def test_export_from_client_keeps_the_campaigns_asked(client: Any, tmp_path: Path) -> None:
    ids = [1000001, 1000002, 1000005]
    tables = read_workbook(export_workbook(client, tmp_path / "three.xlsx", campaign_ids=ids))
    assert tables.desired["campaigns"]["id"].tolist() == ids
    for name in TABLES[1:]:
        assert set(tables.desired[name]["campaign_id"].dropna()) <= set(ids)
    assert len(tables.desired["countries"]) > 0


def test_only_loaded_tables_get_a_sheet(account: Account, tmp_path: Path) -> None:
    short = dataclasses.replace(account, mode="short")
    tables = read_workbook(export_workbook(short, tmp_path / "short.xlsx"))
    assert tables.missing == {"countries", "targets", "lists"}
    assert set(tables.base) == set(tables.desired)


@pytest.mark.parametrize("engine", ENGINES)
def test_formula_like_strings_stay_text(account: Account, tmp_path: Path, engine: str) -> None:
    tricky = ["=1+1", "@x", "+49 30", "-5", "\tindented", "\rcarriage", '=HYPERLINK("x")']
    campaigns = account.campaigns.copy()
    campaigns.loc[: len(tricky) - 1, "note"] = tricky
    path = export_workbook(
        dataclasses.replace(account, campaigns=campaigns), tmp_path / "formulas.xlsx"
    )
    ws = openpyxl.load_workbook(path)["campaigns"]
    col = header(ws)["note"]
    for row, text in enumerate(tricky, start=2):
        cell = ws.cell(row=row, column=col)
        assert cell.data_type == "s"
        assert cell.value == "'" + text  # what a spreadsheet shows; read back without the '
        assert cell.quotePrefix
    assert not ws.cell(row=2, column=header(ws)["name"]).quotePrefix
    notes = read_workbook(path, engine=engine).desired["campaigns"]["note"]
    assert notes.iloc[: len(tricky)].tolist() == tricky


@pytest.mark.parametrize("engine", ENGINES)
def test_awkward_text_round_trips(account: Account, tmp_path: Path, engine: str) -> None:
    awkward = [
        "a_x0041_b",
        "_x005F_",
        "\x01ctl\x1f",
        " lead",
        "trail ",
        "two\nlines",
        "cr\r\nlf",
        "<b>&amp;</b>",
        "emoji \U0001f600",
        "\u00a0nbsp",
    ]
    campaigns = account.campaigns.copy()
    campaigns.loc[: len(awkward) - 1, "name"] = awkward
    path = export_workbook(
        dataclasses.replace(account, campaigns=campaigns), tmp_path / "awkward.xlsx"
    )
    names = read_workbook(path, engine=engine).desired["campaigns"]["name"]
    assert names.iloc[: len(awkward)].tolist() == awkward


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_saved_by_libreoffice(account: Account, exported: Path, tmp_path: Path) -> None:
    out = tmp_path / "lo"
    subprocess.run(
        ["soffice", "--headless", "--convert-to", "xlsx", "--outdir", str(out), str(exported)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    tables = read_workbook(out / exported.name)
    for name in TABLES:
        pd.testing.assert_frame_equal(tables.desired[name], shown(account, name))
        pd.testing.assert_frame_equal(tables.base[name], shown(account, name))


# --------------------------------------------------------------------------- sheet features


def test_sheets_order_and_visibility(exported: Path) -> None:
    wb = openpyxl.load_workbook(exported)
    assert wb.sheetnames[0] == "README"
    assert wb.sheetnames[1:8] == list(TABLES)
    for name in TABLES:
        assert wb[name].sheet_state == "visible"
    for name in HIDDEN:
        assert wb[name].sheet_state == "hidden", name
    text = " ".join(str(c.value) for row in wb["README"].iter_rows() for c in row if c.value)
    for words in ("delete the row to drop", "no change", "read-only", "Editable"):
        assert words in text
    for name in TABLES:
        assert ", ".join(EDITABLE[name]) in text


def test_sheet_features(exported: Path, account: Account) -> None:
    wb = openpyxl.load_workbook(exported)
    for name in TABLES:
        ws, sheet = wb[name], SHEETS[name]
        rows = len(account.table(name)) + 1
        assert ws.freeze_panes in ("A2", "B2", "C2")
        last = openpyxl.utils.get_column_letter(len(sheet.columns))
        assert ws.auto_filter.ref == f"A1:{last}{rows}"
        p = ws.protection
        assert p.sheet and not p.password
        assert not (p.insertRows or p.deleteRows or p.sort or p.autoFilter)
        cols = header(ws)
        assert list(cols) == list(COLUMNS[name])
        for col, index in cols.items():
            head = ws.cell(row=1, column=index)
            letter = openpyxl.utils.get_column_letter(index)
            assert ws.column_dimensions[letter].width >= 8
            if col in READ_ONLY[name]:
                assert head.comment is not None and "Read-only" in head.comment.text
                assert head.fill.fgColor.rgb.endswith("BFBFBF")
                for cell in (styled(ws, 2, index), ws.column_dimensions[letter]):
                    assert cell.fill.fgColor.rgb.endswith("D9D9D9")
                    assert cell.protection.locked == sheet.locked
            else:
                assert not styled(ws, 2, index).protection.locked
                assert not ws.column_dimensions[letter].protection.locked
    countries = wb["countries"]
    bid = countries.cell(row=2, column=header(countries)["bid"])
    assert bid.number_format == TEXT_FORMAT  # +10% typed stays text (not the number 0.1)
    assert isinstance(bid.value, float)  # the exported bid is still a number
    campaigns = wb["campaigns"]
    for col in ("limit_sum", "limit_day_sum"):
        assert styled(campaigns, 2, header(campaigns)[col]).number_format == MONEY_FORMAT
    assert styled(campaigns, 2, header(campaigns)["id"]).number_format == "0"
    assert wb["campaigns"].freeze_panes == "C2"
    rules = {str(dv.sqref): dv.formula1 for dv in countries.data_validations.dataValidation}
    assert "_lists" in rules[f"B2:B{1_048_576}"]


# --------------------------------------------------------------------------- reading edits


def test_edits_are_read(exported: Path, account: Account, tmp_path: Path) -> None:
    pops = int(account.campaigns.loc[account.campaigns["ad_format"] == "pops", "id"].iloc[0])

    def change(wb: openpyxl.Workbook) -> None:
        ws = wb["countries"]
        cols = header(ws)
        ws.cell(row=2, column=cols["bid"], value=1.2345)
        ws.delete_rows(3)
        ws.append({cols["campaign_id"]: pops, cols["country"]: "de", cols["bid"]: 0.5})
        lists = wb["lists"]
        lists.append([pops, "Source_Black", 123456])
        rules = wb["cpa_rules"]
        c = header(rules)
        rules.append(
            {
                c["campaign_id"]: pops,
                c["type"]: "sum",
                c["cond"]: "greater",
                c["amount"]: 10,
                c["lead_type"]: "lead",
                c["lead_cond"]: "less",
                c["lead_amount"]: 1,
            }
        )

    tables = read_workbook(edit(exported, tmp_path / "edited.xlsx", change))
    countries = tables.desired["countries"]
    before = shown(account, "countries")
    assert countries["bid"].iloc[0] == 1.2345
    assert len(countries) == len(before)  # one dropped, one added
    added = countries.iloc[-1]
    assert (added["campaign_id"], added["country"]) == (pops, "DE")
    assert added["country_name"] == "Germany"
    lists = tables.desired["lists"]
    assert lists.iloc[-1].tolist() == [pops, "source_black", "123456"]
    assert str(lists["list"].dtype) == "category"
    assert pd.isna(tables.desired["cpa_rules"]["id"].iloc[-1])
    for name in TABLES:
        pd.testing.assert_frame_equal(tables.base[name], shown(account, name))


def test_deleted_sheet_means_no_change(exported: Path, tmp_path: Path) -> None:
    def change(wb: openpyxl.Workbook) -> None:
        wb.remove(wb["creatives"])
        wb.remove(wb["lists"])

    tables = read_workbook(edit(exported, tmp_path / "fewer.xlsx", change))
    assert tables.missing == {"creatives", "lists"}
    assert "creatives" not in tables.desired and "lists" not in tables.desired
    assert "creatives" in tables.base


def test_workbook_without_state(tmp_path: Path) -> None:
    path = tmp_path / "action.xlsx"
    rows = pd.DataFrame(
        {"campaign_id": [7, 7], "list": ["subid_black", "source_white"], "item": ["ab12", "99"]}
    )
    rows.to_excel(path, sheet_name="lists", index=False)
    tables = read_workbook(path)
    assert tables.base == {} and not tables.has_base
    assert tables.missing == set(TABLES) - {"lists"}
    expected = frame(
        "lists",
        {"campaign_id": [7, 7], "list": ["subid_black", "source_white"], "item": ["ab12", "99"]},
    )
    pd.testing.assert_frame_equal(tables.desired["lists"], expected)


# --------------------------------------------------------------------------- validation


def test_every_problem_is_listed(exported: Path, account: Account, tmp_path: Path) -> None:
    pops = int(account.campaigns.loc[account.campaigns["ad_format"] == "pops", "id"].iloc[0])
    expected: set[tuple[str, int, str, Any]] = set()

    def change(wb: openpyxl.Workbook) -> None:
        ws = wb["countries"]
        c = header(ws)
        ws.cell(row=2, column=c["country"], value="XX")
        ws.cell(row=3, column=c["bid"], value="abc")
        ws.cell(row=5, column=c["country_name"], value="Atlantis")
        expected.update(
            {
                ("countries", 2, "country", "XX"),
                ("countries", 3, "bid", "abc"),
                ("countries", 5, "country_name", "Atlantis"),
            }
        )
        dup = [cell.value for cell in ws[4]]
        ws.append(dup)
        expected.add(("countries", ws.max_row, "country", dup[c["country"] - 1]))
        ws.append({c["campaign_id"]: 999, c["country"]: "FR", c["bid"]: -1})
        expected.update(
            {("countries", ws.max_row, "campaign_id", 999), ("countries", ws.max_row, "bid", -1)}
        )
        targets = wb["targets"]
        t = header(targets)
        targets.append({t["campaign_id"]: pops, t["kind"]: "subs_age", t["value"]: "1"})
        expected.add(("targets", targets.max_row, "kind", "subs_age"))
        targets.append({t["campaign_id"]: pops, t["kind"]: "cidr", t["value"]: "10.0.0.1/8"})
        expected.add(("targets", targets.max_row, "value", "10.0.0.1/8"))
        targets.append({t["campaign_id"]: pops, t["kind"]: "planet", t["value"]: "1"})
        expected.add(("targets", targets.max_row, "kind", "planet"))
        lists = wb["lists"]
        lists.append([pops, "subid_black", "xyz!"])
        expected.add(("lists", lists.max_row, "item", "xyz!"))
        lists.append([pops, "source_white", "-3"])
        expected.add(("lists", lists.max_row, "item", "-3"))
        creatives = wb["creatives"]
        k = header(creatives)
        creatives.cell(row=2, column=k["title"], value="t" * 66)
        creatives.cell(row=3, column=k["text"], value="x" * 161)
        creatives.cell(row=4, column=k["work_status"], value="Running")
        expected.update(
            {
                ("creatives", 2, "title", "t" * 66),
                ("creatives", 3, "text", "x" * 161),
                ("creatives", 4, "work_status", "Running"),
            }
        )
        campaigns = wb["campaigns"]
        m = header(campaigns)
        campaigns.cell(row=2, column=m["name"]).value = None
        expected.add(("campaigns", 2, "name", None))

    path = edit(exported, tmp_path / "broken.xlsx", change)
    for engine in ENGINES:
        found = problems_of(path, engine)
        assert {(p.sheet, p.row, p.column, p.value) for p in found} == expected, engine
        assert all(p.message for p in found)
    with pytest.raises(WorkbookError) as info:
        read_workbook(path)
    assert isinstance(info.value, ToolkitError)
    text = str(info.value)
    assert f"{len(expected)} problems" in text
    assert "countries row 3 [bid]: 'abc': not a number" in text
    assert "subs_age is not allowed for pops campaigns" in text
    frame_ = info.value.to_frame()
    assert list(frame_.columns) == ["sheet", "row", "column", "value", "message"]


def test_exported_rows_are_taken_as_they_are(tmp_path: Path) -> None:
    """Odd values the service returned are not refused on reading (only edits are checked)."""
    account = Account(
        campaigns=frame(
            "campaigns",
            {
                "id": [1],
                "name": ["a"],
                "ad_format": ["push"],
                "work_status": ["Paused"],
                "limit_click": [5],
            },
        ),
        targets=frame(
            "targets",
            {
                "campaign_id": [1],
                "kind": ["domain"],
                "value": ["example.com"],
                "list_type": ["black"],
            },
        ),
        lists=frame("lists", {"campaign_id": [1], "list": ["subid_black"], "item": ["not hex"]}),
    )
    path = export_workbook(account, tmp_path / "odd.xlsx")
    tables = read_workbook(path)
    for name in ("campaigns", "targets", "lists"):
        pd.testing.assert_frame_equal(tables.desired[name], shown(account, name))

    def change(wb: openpyxl.Workbook) -> None:
        wb["lists"].append([1, "subid_black", "also not hex"])

    found = problems_of(edit(path, tmp_path / "odd2.xlsx", change))
    assert [(p.sheet, p.row, p.value) for p in found] == [("lists", 3, "also not hex")]


def test_missing_column(exported: Path, tmp_path: Path) -> None:
    def change(wb: openpyxl.Workbook) -> None:
        ws = wb["bid_rules"]
        ws.cell(row=1, column=header(ws)["bid"], value="price")

    found = problems_of(edit(exported, tmp_path / "nobid.xlsx", change))
    assert [(p.sheet, p.row, p.column, p.message) for p in found] == [
        ("bid_rules", 1, "bid", "missing column")
    ]


def test_message_shows_fifty_problems() -> None:
    problems = [WorkbookProblem("lists", i, "item", "z", "bad") for i in range(2, 62)]
    text = str(WorkbookError(problems, "x.xlsx"))
    assert text.startswith("60 problems in the workbook x.xlsx:")
    assert "lists row 51 [item]" in text and "lists row 52 [item]" not in text
    assert text.endswith("... and 10 more")


# --------------------------------------------------------------------------- properties

_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\ufffe\uffff"),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() != "")


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(_text, min_size=1, max_size=4),
    notes=st.lists(st.one_of(st.none(), _text), min_size=4, max_size=4),
    bids=st.lists(
        st.floats(min_value=1e-9, max_value=1e6, allow_nan=False), min_size=1, max_size=4
    ),
)
def test_values_round_trip(
    tmp_path: Path, names: list[str], notes: list[str | None], bids: list[float]
) -> None:
    n = len(names)
    ids = list(range(1, n + 1))
    account = Account(
        campaigns=frame(
            "campaigns",
            {
                "id": ids,
                "name": names,
                "ad_format": ["push"] * n,
                "work_status": ["Paused"] * n,
                "note": notes[:n],
                "t_created": [pd.Timestamp("2026-01-02 03:04:05.678", tz="UTC")] * n,
                "limit_sum": bids[:1] * n,
            },
        ),
        countries=frame(
            "countries",
            {
                "campaign_id": [1] * len(bids),
                "country": list(spec_countries(len(bids))),
                "bid": bids,
            },
        ),
    )
    path = export_workbook(account, tmp_path / "prop.xlsx")
    for engine in ENGINES:
        tables = read_workbook(path, engine=engine)
        for name in ("campaigns", "countries"):
            pd.testing.assert_frame_equal(tables.desired[name], shown(account, name))
            pd.testing.assert_frame_equal(tables.base[name], shown(account, name))


def spec_countries(n: int) -> list[str]:
    return ["US", "DE", "FR", "GB"][:n]


def test_spec_vocabulary_is_in_the_drop_downs(exported: Path) -> None:
    ws = openpyxl.load_workbook(exported)["_lists"]
    lists = {
        ws.cell(row=1, column=c).value: [
            v
            for (v,) in ws.iter_rows(min_row=2, min_col=c, max_col=c, values_only=True)
            if v is not None
        ]
        for c in range(1, ws.max_column + 1)
    }
    assert lists["kind"] == [k.column for k in spec.TARGET_KINDS.values() if k.name != "country"]
    assert lists["work_status"] == list(spec.WORK_STATUSES)
    assert "US" in lists["country"] and len(lists["country"]) >= 249
