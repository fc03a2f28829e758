"""The pictures of docs/reports.md, made again from a bid report of the sandbox.

Run: ``python tests/benchmarks/report_pictures.py [--out docs/img] [--campaigns 40]``. Not
part of the test suite.

A sandbox of ``--campaigns`` campaigns (the seeded demo account) is asked for a bid report;
the plots are saved as PNG (small: 80 dpi, each under 150 KB): the ranges of the campaign
with the most countries, the traffic curve of one of its comparable bids, zones by format
and by country. The sandbox's prices do not move with time, so the price-drift picture is
drawn from a made-up week of prices (said so in the docs). The HTML, Excel and PDF files
of the report are written beside the pictures' folder in ``--files`` when given.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import toolkit
from toolkit.reports import files, plots
from toolkit.reports.style import BID_ZONES, country_column, states
from toolkit.sandbox import Sandbox

DPI = 80
LIMIT = 150_000


def save(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=DPI)
    size = path.stat().st_size
    print(f"{path} {size / 1000:.0f} KB")
    if size > LIMIT:
        raise SystemExit(f"{path} is over {LIMIT // 1000} KB")


def pick(frame: pd.DataFrame) -> tuple[int, str]:
    """The campaign with the most zones among its bids (then the most countries), and one
    of its bids between the minimum and the recommended price (or any comparable one)."""
    st = states(frame)
    zoned = frame[st.isin(BID_ZONES).to_numpy()]
    score = zoned.groupby("campaign_id")["zone"].agg(lambda z: (z.nunique(), len(z)))
    cid = int(score.sort_values(ascending=False).index[0])
    rows = zoned[zoned["campaign_id"] == cid]
    between = rows[rows["zone"] == "between"]
    return cid, str((between if len(between) else rows)[country_column()].iloc[0])


def made_up_history(frame: pd.DataFrame, days: int = 7) -> pd.DataFrame:
    """A week of prices for three countries of two formats, drifting a little each day
    (an illustration: the sandbox's prices stay put)."""
    rng = np.random.default_rng(7)
    code = country_column()
    recs = []
    for fmt in ("push", "pops"):
        part = frame[(frame["ad_format"] == fmt) & frame["minimum"].notna()]
        base = part.drop_duplicates(code).head(3)
        for _, row in base.iterrows():
            walk = np.cumsum(rng.normal(0.0, 0.03, days))
            for day in range(days):
                at = pd.Timestamp("2026-11-17 08:00", tz="UTC") + pd.Timedelta(days=day)
                lo = float(row["minimum"]) * (1 + walk[day])
                rec = (at, fmt, row[code], "q", lo, lo * 1.4, 10_000, 30_000)
                recs.append(rec)
    columns = ["asked_at", "ad_format", code, "query", "minimum", "recommended"]
    return pd.DataFrame(recs, columns=[*columns, "minimum_traffic", "recommended_traffic"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs/img")
    parser.add_argument("--campaigns", type=int, default=40)
    parser.add_argument("--files", default=None, help="a folder for the HTML, XLSX and PDF")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with Sandbox(campaigns=args.campaigns) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        report = toolkit.bid_report(client, progress=False, history=None)
        client.close()
    frame = report.frame
    print(report)
    cid, code = pick(frame)
    save(plots.ranges(frame, cid), out / "report_ranges.png")
    save(plots.traffic_curve(frame, cid, code), out / "report_traffic.png")
    save(plots.zones_by_format(frame), out / "report_zones_by_format.png")
    save(plots.zones_by_country(frame, top=12), out / "report_zones_by_country.png")
    save(plots.price_drift(made_up_history(frame)), out / "report_price_drift.png")
    if args.files:
        folder = Path(args.files)
        folder.mkdir(parents=True, exist_ok=True)
        for write, name in ((files.to_html, "bids.html"), (files.to_excel, "bids.xlsx")):
            print(write(report, folder / name))
        print(files.to_pdf(report, folder / "bids.pdf"))


if __name__ == "__main__":
    main()
