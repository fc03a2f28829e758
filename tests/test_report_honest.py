"""What a bid report must not hide: rows whose targeting excludes the country ("no traffic"),
the campaigns it leaves out (live ones by default), money per zone with the unknown rows
counted, the balance counted over live campaigns, per-click spend without a ctr "unknown",
what the estimate ignores, the price drift drawn only from two days of prices, and counts
shown as whole numbers in the PDF and the workbook. Against a sandbox over real HTTP."""

from __future__ import annotations

import math
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import toolkit
from toolkit.reports import files, live, money, plots, view, zones
from toolkit.reports.excel import BIDS_SHEET, SUMMARY_SHEET
from toolkit.reports.style import LABELS, states
from toolkit.sandbox import Sandbox

from .conftest import Api, cli_runner
from .report_frames import synthetic_frame, synthetic_history

PRICE = "GET /api/campaign/price 200"
NO_TRAFFIC_LABEL = LABELS["no traffic"]


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=20, accounts=1, seed=3) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb: Sandbox) -> toolkit.Client:
    return toolkit.Client(sb.url, sb.api_keys[0])


@pytest.fixture(scope="module")
def api(sb: Sandbox) -> Api:
    return Api(sb.url, sb.api_keys[0])


@pytest.fixture(scope="module")
def excluded(api: Api, client: toolkit.Client) -> tuple[int, toolkit.BidReport]:
    """A push campaign targeting a US region, bidding in the US and in Germany (which the
    region excludes), both bids far below any minimum; and its report."""
    found = api.get("/api/campaign/search", type="region", search="California", country=["US"])
    region = int(next(iter(found.json())))
    target = {"country": {"US": "0.0010", "DE": "0.0010"}}
    cid = api.new_campaign("push", targeted=False, target=target, mode="CPC")
    assert client.targeting.add(cid, "region", [region]) == {"status": "ok"}
    report = toolkit.bid_report(client, [cid], progress=False, history=None, include="all")
    return cid, report


@pytest.fixture(scope="module")
def everything(client: toolkit.Client) -> toolkit.BidReport:
    return toolkit.bid_report(client, progress=False, history=None, include="all")


def pdf_text(path: Path) -> str:
    pypdf = pytest.importorskip("pypdf")
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(path).pages)


# --------------------------------------------------------------------------- no traffic


def test_zero_traffic_at_both_prices_is_no_traffic_whatever_the_unit():
    assert zones.ZONES[0] == "no traffic"
    assert zones.zone(0.001, 0.1, 0.2, traffic=(0, 0)) == "no traffic"
    assert zones.zone(0.001, 0.1, 0.2, traffic=(0, 10)) == "below minimum"
    frame = pd.DataFrame(
        {
            "bid": [0.001, 5.0, 0.001],
            "minimum": [0.1, 0.1, 0.1],
            "recommended": [0.2, 0.2, 0.2],
            "minimum_traffic": pd.array([0, 0, 40], dtype="Int64"),
            "recommended_traffic": pd.array([0, 0, 90], dtype="Int64"),
        }
    )
    out = zones.zones(frame, 1.5, 0.02, pd.Series([True, False, True]))
    assert out["zone"].tolist() == ["no traffic", "no traffic", "below minimum"]
    assert out["traffic_estimate"].tolist() == [0.0, 0.0, 0.0]
    assert math.isnan(out["position"][1])  # not comparable: no position, yet no traffic


def test_a_country_the_targeting_excludes_is_no_traffic_and_never_proposed(excluded, tmp_path):
    cid, report = excluded
    rows = report.frame.set_index("country")
    assert rows.loc["DE", "minimum_traffic"] == 0 == rows.loc["DE", "recommended_traffic"]
    assert rows.loc["US", "recommended_traffic"] > 0
    assert rows.loc["DE", "zone"] == "no traffic" and rows.loc["US", "zone"] == "below minimum"
    assert rows.loc["DE", "spend_estimate"] == 0.0  # nothing bought: known, not unknown
    for to in ("minimum", "recommended"):
        assert report.proposals(to)["country"].tolist() == ["US"]
    plan = report.propose("minimum", allow=["bid_jump"])
    assert {(int(c.campaign_id), str(c.key)) for c in plan.changes().itertuples()} == {(cid, "US")}
    assert "no traffic 1" in repr(report)
    text = files.to_html(report, tmp_path / "r.html", max_campaigns=1).read_text("utf-8")
    assert NO_TRAFFIC_LABEL in text and "1 with " + NO_TRAFFIC_LABEL in text
    book = openpyxl.load_workbook(files.to_excel(report, tmp_path / "r.xlsx"))
    header = [c.value for c in book[BIDS_SHEET][1]]
    shown = [r[header.index("zone")] for r in book[BIDS_SHEET].iter_rows(2, values_only=True)]
    assert NO_TRAFFIC_LABEL in shown
    assert NO_TRAFFIC_LABEL in pdf_text(files.to_pdf(report, tmp_path / "r.pdf", max_campaigns=1))
    ranges = plots.ranges(report.frame, cid)
    assert NO_TRAFFIC_LABEL in [t.get_text() for t in ranges.legends[0].get_texts()]
    curve = plots.traffic_curve(report.frame, cid, "DE")
    assert NO_TRAFFIC_LABEL in curve.axes[0].texts[0].get_text()


# --------------------------------------------------------------------------- include


def test_live_campaigns_by_default_and_the_others_counted(client, everything, sb, tmp_path):
    report = toolkit.bid_report(everything.account, client=client, progress=False, history=None)
    frame, every = report.frame, everything.frame
    assert report.include == "live" and len(frame)
    assert (frame["status"] == "Approved").all() and (frame["work_status"] == "Started").all()
    dead = every[~live.is_live(every)]
    assert len(dead), "the sandbox should hold campaigns that are not live"
    assert sorted(report.left_out["campaign_id"]) == sorted(dead["campaign_id"].unique())
    assert len(frame) + int(report.left_out["rows"].sum()) == len(every)
    said = f"{dead['campaign_id'].nunique()} campaigns left out: not started and approved"
    assert said in repr(report) and said not in repr(everything)
    assert said in files.to_html(report, tmp_path / "r.html", max_campaigns=1).read_text("utf-8")
    assert said in pdf_text(files.to_pdf(report, tmp_path / "r.pdf", max_campaigns=1))
    for to in ("minimum", "recommended", "cap"):
        moved = report.proposals(to)["campaign_id"]
        assert moved.isin(frame["campaign_id"]).all()
        assert not moved.isin(dead["campaign_id"]).any()
    assert everything.proposals("minimum")["campaign_id"].isin(dead["campaign_id"]).any()
    before = sb.stats().get(PRICE, 0)
    with pytest.raises(ValueError, match=r"^include must be 'live' .* or 'all', got 'some'$"):
        toolkit.bid_report(everything.account, client=client, include="some", history=None)
    assert sb.stats().get(PRICE, 0) == before  # refused before any call


def test_the_command_line_takes_include(sb, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    run = cli_runner(sb, capsys)
    out = tmp_path / "bids.xlsx"
    code, stdout, _ = run("report", "bids", "-o", str(out), "--no-history")
    assert code == 0 and "left out: not started and approved" in stdout
    code, stdout, _ = run("report", "bids", "-o", str(out), "--no-history", "--include", "all")
    assert code == 0 and "left out" not in stdout
    with pytest.raises(SystemExit) as info:  # argparse's one line: the choices
        run("report", "bids", "-o", str(tmp_path / "x.html"), "--include", "some")
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--include: invalid choice: 'some'" in err
    assert not (tmp_path / "x.html").exists()


# --------------------------------------------------------------------------- money


def test_summary_counts_money_per_zone_and_the_unknown_rows():
    frame = synthetic_frame()
    frame["spend_estimate"] = np.nan
    spend = {"DE": 2.5, "FR": 4.0, "GB": 1.25, "PL": 10.0}  # US, CA, ... unknown
    for code, value in spend.items():
        frame.loc[frame["country"] == code, "spend_estimate"] = value
    table = money.by_zone(frame)
    st = states(frame)
    assert table.loc["between", "bids"] == int((st == "between").sum()) == 3
    # between: 101 DE 2.5, 104 PL 10.0 and 103 US unknown
    assert table.loc["between", "spend_day"] == pytest.approx(12.5)
    assert table.loc["between", "spend_unknown"] == 1
    assert math.isnan(table.loc["overpaying", "spend_day"])  # every row unknown: not 0
    # DE three times (campaigns 101, 102, 104), FR, GB, PL: the 8 others unknown
    assert table.loc["all", "spend_day"] == pytest.approx(3 * 2.5 + 4.0 + 1.25 + 10.0)
    assert table.loc["all", "spend_unknown"] == len(frame) - 6 == 8
    assert "profit_day" not in table.columns
    frame["profit_day_now"] = np.where(frame["country"] == "DE", 3.0, np.nan)
    table = money.by_zone(frame)
    assert table.loc["all", "profit_day"] == pytest.approx(9.0)
    assert table.loc["all", "profit_unknown"] == len(frame) - 3
    assert "USD 22.75 a day (8 bids with spend unknown, not counted)" in money.totals_line(frame)


def test_a_reports_summary_and_per_click_spend_without_a_ctr(everything, tmp_path):
    frame = everything.frame
    table = everything.summary()
    assert table.loc["all", "spend_day"] == pytest.approx(frame["spend_estimate"].sum())
    unknown = frame["spend_estimate"].isna()
    assert table.loc["all", "spend_unknown"] == int(unknown.sum())
    per_click = frame["comparable"] & (frame["mode"] == "CPC") & (frame["traffic_estimate"] > 0)
    assert per_click.any() and unknown[per_click].all()  # no ctr: unknown, never 0
    assert list(everything.summary("ad_format").columns[:2]) == ["no traffic", "below minimum"]
    with pytest.raises(ValueError, match="by must be"):
        everything.summary("country")
    with_ctr = toolkit.bid_report(
        everything.account, client=everything.client, ctr=0.01, history=None, progress=False,
        include="all",
    )  # fmt: skip
    assert with_ctr.frame.loc[per_click, "spend_estimate"].notna().all()
    proposed = everything.proposals("recommended")
    cpc = proposed[proposed["mode"] == "CPC"]
    assert len(cpc) and cpc["spend_new"].isna().all()
    at_new = frame["spend_estimate"].copy()  # the campaign's spend with the moved bids
    for row in proposed.itertuples():
        moved = (frame["campaign_id"] == row.campaign_id) & (frame["country"] == row.country)
        at_new[moved] = row.spend_new
    unknown_by_campaign = at_new.isna().groupby(frame["campaign_id"]).sum()
    assert proposed["campaign_spend_unknown"].tolist() == [
        int(unknown_by_campaign[c]) for c in proposed["campaign_id"]
    ]
    text = files.to_html(everything, tmp_path / "r.html", max_campaigns=1).read_text("utf-8")
    assert f"{int(unknown.sum())} bids with spend unknown, not counted" in text
    book = openpyxl.load_workbook(files.to_excel(everything, tmp_path / "r.xlsx"))
    bids = book[BIDS_SHEET]
    header = [c.value for c in bids[1]]
    spend = [r[header.index("spend_estimate")] for r in bids.iter_rows(2, values_only=True)]
    assert spend.count("unknown") == int(unknown.sum()) and None not in spend


def test_over_the_day_limit_is_unknown_when_some_spend_is():
    frame = synthetic_frame()
    frame["mode"] = frame["mode"].cat.set_categories(["CPM", "CPC"])
    frame["ctr"] = np.nan
    frame["spend_estimate"] = [10.0, 20.0, np.nan, 5.0, 300.0, np.nan, 0.0] + [1.0] * 7
    limits = pd.Series([100.0, 100.0, 100.0, 100.0], index=[101, 102, 103, 104])
    proposed = toolkit.reports.proposals.proposals(frame, "minimum", limits, 50.0)
    # campaign 101: FR and BR unknown, and US moved to the minimum, per click, no ctr
    us = proposed.set_index("country").loc["US"]
    assert math.isnan(us["spend_new"]) and us["campaign_spend_unknown"] == 3
    assert us["campaign_spend_new"] == pytest.approx(20 + 5 + 300 + 0)
    assert bool(us["over_day_limit"]) is True  # the known spend alone passes 100
    frame.loc[4, "spend_estimate"] = 1.0  # campaign 101 now 26 known, 3 unknown
    proposed = toolkit.reports.proposals.proposals(frame, "minimum", limits, 50.0)
    assert proposed.set_index("country").loc["US", "over_day_limit"] is pd.NA


def test_balance_days_count_only_live_campaigns(everything):
    frame = everything.frame
    proposed = everything.proposals("minimum")
    assert len(proposed)
    spend = frame["spend_estimate"].copy()
    for row in proposed.itertuples():
        at = frame.index[
            (frame["campaign_id"] == row.campaign_id) & (frame["country"] == row.country)
        ]
        spend.loc[at] = row.spend_new
    alive = live.is_live(frame)
    assert (~alive).any() and spend[~alive].sum() > 0  # the dead spend would count
    expected = everything.balance / spend[alive].sum()
    assert proposed["balance_days"].iloc[0] == pytest.approx(expected)
    assert proposed["spend_unknown_bids"].iloc[0] == int(spend[alive].isna().sum())


# --------------------------------------------------------------------------- notes and drift


def test_every_face_says_what_the_estimate_ignores_and_the_ctr_used(everything, tmp_path):
    ignored = "ignores whitelists, blacklists and frequency caps"
    html = files.to_html(everything, tmp_path / "r.html", max_campaigns=1).read_text("utf-8")
    assert ignored in html and "ctr used: none" in html
    assert ignored in pdf_text(files.to_pdf(everything, tmp_path / "r.pdf", max_campaigns=1))
    book = openpyxl.load_workbook(files.to_excel(everything, tmp_path / "r.xlsx"))
    notes = [c.value for c in book[SUMMARY_SHEET]["A"] if isinstance(c.value, str)]
    assert any(ignored in n for n in notes) and any(n.startswith("ctr used") for n in notes)
    assert ignored in view.repr_html(everything.frame)


def test_the_price_drift_needs_two_days_of_prices(tmp_path):
    frame = synthetic_frame()
    one_day = synthetic_history(days=1)
    assert plots.drift_days(one_day) == 1 and plots.drift_days(synthetic_history(3)) == 3
    text = files.to_html(frame, tmp_path / "one.html", history=one_day, max_campaigns=1).read_text(
        "utf-8"
    )
    assert "Price drift not drawn" in text and 'aria-label="Price drift"' not in text
    assert "Price drift not drawn" in pdf_text(
        files.to_pdf(frame, tmp_path / "one.pdf", history=one_day, max_campaigns=1)
    )
    fig = plots.price_drift(one_day)
    assert "not drawn" in fig.axes[0].texts[0].get_text()
    two = synthetic_history(days=2)
    text = files.to_html(frame, tmp_path / "two.html", history=two, max_campaigns=1).read_text(
        "utf-8"
    )
    assert 'aria-label="Price drift"' in text and "not drawn" not in text


# --------------------------------------------------------------------------- formatting


def test_counts_are_whole_numbers_and_headers_fit_in_the_pdf_and_workbook(everything, tmp_path):
    text = pdf_text(files.to_pdf(everything, tmp_path / "r.pdf", max_campaigns=1))
    totals = files.proposal_totals({to: everything.proposals(to) for to in files.PROPOSALS})
    first = totals.iloc[0]
    line = f"{first['proposal']} {first['bids']} {first['campaigns']} "
    assert line + f"{first['bids with spend unknown']} " in text  # not 3.00
    book = openpyxl.load_workbook(files.to_excel(everything, tmp_path / "r.xlsx"))
    ws = book[SUMMARY_SHEET]
    heads = {c.value: c for row in ws.iter_rows() for c in row if c.font and c.font.b}
    for name in ("bids", "campaigns", "bids with spend unknown", "rows", "no traffic"):
        head = heads[name]
        below = ws.cell(row=head.row + 1, column=head.column)
        assert below.number_format == "#,##0" and isinstance(below.value, int), name
        assert head.alignment.wrap_text, name
    spend = heads["spend (USD a day)"]
    assert ws.cell(row=spend.row + 1, column=spend.column).number_format == "#,##0.00"
    for head in heads.values():  # wrapped at the column's width, the row tall enough
        width = ws.column_dimensions[head.column_letter].width
        words = str(head.value).split()
        assert max(len(w) for w in words) <= width - 2, head.value
        height = ws.row_dimensions[head.row].height
        if head.alignment.wrap_text and len(str(head.value)) > width - 2:
            assert height and height >= 30, head.value


def test_libreoffice_renders_the_summary_headers_whole(everything, tmp_path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    path = files.to_excel(everything, tmp_path / "r.xlsx")
    profile = (tmp_path / "profile").as_uri()
    done = subprocess.run(
        [soffice, f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf",
         "--outdir", str(tmp_path / "lo"), str(path)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    rendered = tmp_path / "lo" / "r.pdf"
    assert rendered.exists(), done.stdout + done.stderr
    pypdf = pytest.importorskip("pypdf")
    first = pypdf.PdfReader(rendered).pages[0].extract_text()
    # the whole summary on the first page, every header word whole, counts without decimals
    for words in ("spend (USD a", "bids with", "spend", "unknown", "recommended", "comparable"):
        assert words in first, words
    assert "ignores whitelists, blacklists and frequency caps" in first
    rows = [line for line in first.splitlines() if line.startswith("all ")]
    assert rows and all(".00" not in line.split()[1] for line in rows)
