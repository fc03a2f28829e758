"""The files of a bid report: an HTML page (parsed, self-contained, every row, inline SVG,
escaped), an Excel workbook (read back: rows, the colour scale on position, the chart, the
proposal sheets read by the action workbook's reader), a PDF (its pages), and the notebook
view; on a synthetic report and on a real report of the sandbox (LibreOffice re-saves the
workbook when it is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.bulk.workbook.actions import read_actions
from toolkit.bulk.workbook.actions_templates import COLUMNS as ACTION_COLUMNS
from toolkit.frames.cells import unescape_formula
from toolkit.reports import files, view
from toolkit.reports.excel import BIDS_SHEET, SUMMARY_SHEET
from toolkit.reports.style import BID_ZONES, COLOURS, STATES
from toolkit.sandbox import Sandbox

from .report_frames import CAMPAIGNS, ROWS, C, FakeReport, synthetic_frame, synthetic_history


class Page(HTMLParser):
    """Tags, attributes, text and table rows of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def fake() -> FakeReport:
    return FakeReport()


# --------------------------------------------------------------------------- HTML


def test_the_html_page_is_self_contained_and_holds_every_row(fake, tmp_path):
    path = files.to_html(fake, tmp_path / "bids.html")
    text = path.read_text(encoding="utf-8")
    page = parse(text)
    assert page.tags[0] == "html" and "body" in page.tags
    assert not {"script", "link", "img", "iframe", "object"} & set(page.tags)
    assert 'src="http' not in text and "<link" not in text and "@import" not in text
    external = [(k, v) for k, v in page.attrs if re.match(r"\s*(https?:|//)", v)]
    assert all(k.startswith("xmlns") for k, _ in external), external  # SVG namespaces only
    urls = set(re.findall(r"https?://[^\"'\s<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "<script>alert(1)</script>" not in text  # a campaign's name, escaped
    # plots: zones by format and by country, a range plot per campaign, the price drift
    assert text.count("<svg") == 2 + len(CAMPAIGNS) + 1
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # many SVGs, no clashing ids
    body = [r for r in page.rows if len(r) == len(view.table_columns(fake.frame))]
    bids = {(r[1], r[5]) for r in body[1:]}  # name, country of the "All bids" table
    assert bids == {(CAMPAIGNS[cid][0], code) for cid, code, *_ in ROWS}
    zones = [r[11] for r in body[1:]]
    # every state named in the table (the synthetic report has no "no traffic" row)
    assert sorted(set(zones)) == sorted(s for s in STATES if s != "no traffic")
    joined = " ".join(page.text)
    assert "to recommended: 8 bids" in joined and "an estimate" in joined


def test_a_bare_frame_makes_a_page_and_a_history_adds_the_drift(tmp_path):
    frame = synthetic_frame()
    text = files.to_html(frame, tmp_path / "bare.html").read_text(encoding="utf-8")
    assert "Proposals" not in text and "Price drift" not in text
    assert text.count("<svg") == 2 + len(CAMPAIGNS)
    text = files.to_html(
        frame, tmp_path / "drift.html", history=synthetic_history(), title="Q4 <bids>"
    ).read_text(encoding="utf-8")
    assert "Price drift" in text and "<title>Q4 &lt;bids&gt;</title>" in text
    few = files.to_html(frame, tmp_path / "few.html", max_campaigns=1).read_text("utf-8")
    assert few.count("<svg") == 3 and "1 of 4 campaigns" in few


def test_the_notebook_view_counts_and_colours_zones(fake):
    table = view.summary(fake.frame)
    assert table.loc["all", "rows"] == len(ROWS)
    assert table.loc["push", list(BID_ZONES)].tolist() == [1, 1, 1, 1, 1]
    assert "no traffic" not in table.columns  # shown only when some row has no traffic
    assert table.loc["pops", "not comparable"] == 2
    text = view.repr_html(fake.frame)
    page = parse(text)
    assert "<script>" not in text and f"background:{COLOURS['overpaying']}" in text
    looked = [r for r in page.rows if r and r[0].isdigit() and len(r) > 10]
    assert len(looked) == 4  # below minimum or overpaying, first
    assert "4 campaigns, 14 country bids" in " ".join(page.text)
    pytest.importorskip("jinja2")
    styled = view.styled(fake.frame).to_html()
    assert f"background-color: {COLOURS['error']}" in styled and "&lt;script&gt;" in styled
    assert "<script>" not in styled


# --------------------------------------------------------------------------- XLSX


def _rule_ranges(ws) -> dict[str, list[str]]:
    return {str(cf.sqref): [r.type for r in cf.rules] for cf in ws.conditional_formatting}


def check_workbook(path: Path, frame: pd.DataFrame, proposals: dict[str, pd.DataFrame]) -> None:
    """The workbook as written by to_excel, read back with openpyxl."""
    wb = openpyxl.load_workbook(path)
    sheets = [SUMMARY_SHEET, BIDS_SHEET, *(files.PROPOSALS[to] for to in proposals)]
    assert wb.sheetnames == sheets
    bids = wb[BIDS_SHEET]
    header = [c.value for c in bids[1]]
    assert header == list(frame.columns) and bids.max_row == len(frame) + 1
    col = openpyxl.utils.get_column_letter(header.index("position") + 1)
    assert _rule_ranges(bids) == {f"{col}2:{col}{len(frame) + 1}": ["colorScale"]}
    names = [
        bids.cell(row=r, column=header.index("name") + 1).value for r in range(2, len(frame) + 2)
    ]
    assert [unescape_formula(n) for n in names] == list(frame["name"])
    (chart,) = wb[SUMMARY_SHEET]._charts
    assert chart.tagname == "barChart" and chart.grouping == "stacked"
    assert len(chart.series) >= len(BID_ZONES)
    for to, proposal in proposals.items():
        ws = wb[files.PROPOSALS[to]]
        rows = list(ws.iter_rows(values_only=True))
        assert rows[0][: len(ACTION_COLUMNS)] == ACTION_COLUMNS
        assert len(rows) - 1 == len(files.action_rows(proposal))


def test_the_workbook_has_the_rows_the_colour_scale_the_chart_and_the_proposals(fake, tmp_path):
    path = files.to_excel(fake, tmp_path / "bids.xlsx")
    props = {to: fake.proposals(to) for to in files.PROPOSALS}
    check_workbook(path, fake.frame, props)
    wb = openpyxl.load_workbook(path)
    bids = wb[BIDS_SHEET]
    header = [c.value for c in bids[1]]
    formula = next(r for r in range(2, bids.max_row + 1) if bids.cell(r, 2).value[1:2] == "=")
    assert bids.cell(formula, 2).data_type == "s"  # a name, never a formula
    assert bids.cell(formula, 2).value.startswith("'=")  # kept text when edited or re-saved
    zone = header.index("zone") + 1
    fills = {bids.cell(r, zone).value: bids.cell(r, zone).fill.fgColor.rgb for r in range(2, 16)}
    assert fills["between"] == "00" + COLOURS["between"].lstrip("#")
    assert {"not comparable", "error", "no estimate"} <= set(fills)
    sheet = wb[files.PROPOSALS["recommended"]]
    first = [c.value for c in sheet[2]]
    assert first[:5] == ["set", toolkit.spec.bid_kind().name, 101, "US", 0.12]
    assert [c.value for c in sheet[1]][6:8] == ["name", "old_bid"]


def test_control_characters_and_an_empty_report(tmp_path):
    odd = synthetic_frame()
    odd["name"] = odd["name"].str.replace("friends", "friends\x07", regex=False)
    path = files.to_excel(odd, tmp_path / "odd.xlsx")
    names = [c.value for c in openpyxl.load_workbook(path)[BIDS_SHEET]["B"][1:]]
    assert any("friends" in n and "\x07" not in n for n in names)
    empty = synthetic_frame().iloc[:0]
    wb = openpyxl.load_workbook(files.to_excel(empty, tmp_path / "empty.xlsx"))
    assert wb[BIDS_SHEET].max_row == 1 and not wb[SUMMARY_SHEET]._charts
    assert "No bids in the report" in files.to_html(empty, tmp_path / "e.html").read_text("utf-8")
    assert pdf_pages(files.to_pdf(empty, tmp_path / "e.pdf")) == 3


# --------------------------------------------------------------------------- PDF


def pdf_pages(path: Path) -> int:
    try:
        from pypdf import PdfReader
    except ImportError:
        return len(re.findall(rb"/Type\s*/Page\b", path.read_bytes()))
    return len(PdfReader(path).pages)


def test_the_pdf_has_a_summary_page_and_a_page_per_plot(fake, tmp_path):
    path = files.to_pdf(fake, tmp_path / "bids.pdf")
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and len(data) > 10_000
    assert pdf_pages(path) == 1 + 2 + len(CAMPAIGNS) + 1
    short = files.to_pdf(synthetic_frame(), tmp_path / "short.pdf", max_campaigns=2)
    assert pdf_pages(short) == 1 + 2 + 2


def test_parts_take_a_report_a_frame_or_a_mapping(fake):
    p = files.parts(fake)
    assert list(p.proposals) == list(files.PROPOSALS) and p.history is not None
    assert files.parts({"frame": fake.frame, "title": "T"}).title == "T"
    totals = files.proposal_totals(p.proposals).set_index("proposal")
    assert totals["bids"].tolist() == [2, 8, 2]
    assert totals.loc["to minimum", "spend_new (USD a day)"] == pytest.approx(80 + 1100)
    assert view.cell_text(5.7838, "new_bid") == "5.7838" and view.cell_text(12.0, "bid") == "12.0"
    with pytest.raises(TypeError):
        files.parts(42)


# --------------------------------------------------------------------------- a real report


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> toolkit.BidReport:
    with Sandbox(campaigns=8) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        report = toolkit.bid_report(client, progress=False, history=None)
        client.close()
    return report


def read_back(path: Path, account: toolkit.Account) -> list[tuple[int, str, float]]:
    """The actions the action workbook's reader finds: (campaign, item, bid), one campaign
    each, every one a ``set`` of the bid kind."""
    actions = read_actions(path, account)
    assert all(a.action == "set" and a.target == toolkit.spec.bid_kind().name for a in actions)
    assert all(len(a.campaigns) == 1 for a in actions)
    return [(a.campaigns[0], a.item, a.bid) for a in actions]


def _as_actions(path: Path, sheet: str, out: Path) -> Path:
    """The workbook with ``sheet`` renamed ``actions`` (what a user does to plan it)."""
    wb = openpyxl.load_workbook(path)
    wb[sheet].title = "actions"
    wb.save(out)
    return out


def test_files_of_a_real_report_and_its_proposals_read_as_actions(real, tmp_path):
    assert isinstance(real, files.ReportLike)
    text = files.to_html(real, tmp_path / "real.html").read_text(encoding="utf-8")
    page = parse(text)
    codes = {c for r in page.rows for c in r}
    assert set(real.frame[C]) <= codes and text.count("<svg") >= 3
    assert (
        pdf_pages(files.to_pdf(real, tmp_path / "real.pdf"))
        == 3 + real.frame["campaign_id"].nunique()
    )
    path = files.to_excel(real, tmp_path / "real.xlsx")
    props = {to: real.proposals(to) for to in files.PROPOSALS}
    check_workbook(path, real.frame, props)
    for to, proposal in props.items():
        expected = [(r["campaign"], r["item"], r["bid"]) for r in files.action_rows(proposal)]
        book = _as_actions(path, files.PROPOSALS[to], tmp_path / f"{to}.xlsx")
        got = [(a.campaigns[0], a.item, a.bid) for a in read_actions(book, real.account)]
        assert got == expected and all(
            len(a.campaigns) == 1 for a in read_actions(book, real.account)
        )
        in_place = read_actions(path, real.account, sheet=files.PROPOSALS[to])
        assert [(a.campaigns[0], a.item, a.bid) for a in in_place] == expected
        alone = files.proposal_workbook(proposal, tmp_path / f"{to}-alone.xlsx", to=to)
        assert [
            (a.campaigns[0], a.item, a.bid) for a in read_actions(alone, real.account)
        ] == expected
    assert any(files.action_rows(p) for p in props.values())


def test_libreoffice_resaves_the_workbook_and_it_still_reads(real, tmp_path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    path = files.to_excel(real, tmp_path / "real.xlsx")
    out = tmp_path / "resaved"
    profile = (tmp_path / "profile").as_uri()
    done = subprocess.run(
        [soffice, f"-env:UserInstallation={profile}", "--headless", "--convert-to", "xlsx",
         "--outdir", str(out), str(path)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    resaved = out / "real.xlsx"
    assert resaved.exists(), done.stdout + done.stderr
    props = {to: real.proposals(to) for to in files.PROPOSALS}
    check_workbook(resaved, real.frame, props)
    to = next(to for to, p in props.items() if files.action_rows(p))
    book = _as_actions(resaved, files.PROPOSALS[to], tmp_path / "lo-actions.xlsx")
    expected = [(r["campaign"], r["item"], r["bid"]) for r in files.action_rows(props[to])]
    assert read_back(book, real.account) == expected
