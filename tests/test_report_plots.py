"""The plots of a bid report, on a synthetic report frame (every zone, rows not comparable,
failed and without prices) and once on a real report of the sandbox: the artists each plot
draws (points per state, bars per zone, lines per country), legends, axis labels, and a
PNG that is not empty."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from toolkit.reports import plots, zones
from toolkit.reports.style import BID_ZONES, COLOURS, ZONES, states

from .report_frames import CAMPAIGNS, ROWS, C, synthetic_frame, synthetic_history

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return synthetic_frame()


def png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50)
    return buf.getvalue()


def points(fig: Figure, state: str) -> np.ndarray:
    """The offsets of the bids drawn for ``state`` (every axes of the figure)."""
    found = [
        c.get_offsets() for ax in fig.axes for c in ax.collections if c.get_gid() == f"bid:{state}"
    ]
    return np.concatenate(found) if found else np.empty((0, 2))


def legend_texts(fig: Figure) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


# --------------------------------------------------------------------------- ranges


def test_ranges_draws_each_country_once_with_its_zone_colour(frame):
    fig = plots.ranges(frame, 101)
    ax = fig.axes[0]
    rows = [r for r in ROWS if r[0] == 101]
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == sorted(r[1] for r in rows)
    for zone in BID_ZONES:
        (bids,) = [r[2] for r in rows if r[5] == zone]
        drawn = points(fig, zone)
        assert drawn[:, 0].tolist() == [bids], zone
        coll = next(c for c in ax.collections if c.get_gid() == f"bid:{zone}")
        assert np.allclose(coll.get_facecolor()[0][:3], _rgb(COLOURS[zone]))
    assert len(points(fig, "error")) == 1 and len(points(fig, "no estimate")) == 1
    ranges = next(c for c in ax.collections if c.get_gid() == "ranges")
    assert len(ranges.get_segments()) == len(rows)
    labels = legend_texts(fig)
    assert all(z in labels for z in BID_ZONES)
    assert "error (price query failed)" in labels and "no estimate (no price)" in labels
    assert "not comparable (bid in the other unit)" not in labels
    assert ax.get_xlabel() == "price (USD per click)" and ax.get_ylabel() == "country"
    assert "Push <b>tier</b> & friends" in ax.get_title(loc="left")
    notes = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert "bid 0.03: error, HTTP 502 from the price query" in notes
    assert png(fig).startswith(PNG)


def _rgb(hex_colour: str) -> tuple[float, ...]:
    return tuple(int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))


def test_ranges_of_bids_in_the_other_unit_stand_apart(frame):
    fig = plots.ranges(frame, 102)
    assert len(points(fig, "not comparable")) == 2
    assert all(len(points(fig, z)) == 0 for z in ZONES)
    assert "not comparable (bid in the other unit)" in legend_texts(fig)
    assert fig.axes[0].get_xlabel() == "price (USD per 1000 impressions)"
    notes = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert "bid 0.02 CPC: not comparable" in notes


def test_ranges_are_in_the_bids_unit_when_a_ctr_made_them_comparable():
    row = (102, "US", 0.02, 0.018, 0.03, "between", True, None)  # pops prices, CPC campaign
    fig = plots.ranges(synthetic_frame([row]), 102)
    assert fig.axes[0].get_xlabel() == "price (USD per click)"
    assert points(fig, "between")[:, 0].tolist() == [0.02]


def test_ranges_of_an_unknown_campaign_is_an_error(frame):
    with pytest.raises(KeyError, match="campaign 999"):
        plots.ranges(frame, 999)


# --------------------------------------------------------------------------- traffic


def test_traffic_curve_follows_the_reports_curve_and_marks_the_bid(frame):
    fig = plots.traffic_curve(frame, 101, "DE")
    ax = fig.axes[0]
    row = frame[(frame["campaign_id"] == 101) & (frame[C] == "DE")].iloc[0]
    args = [float(row[c]) for c in ("minimum", "recommended")]
    args += [float(row[c]) for c in ("minimum_traffic", "recommended_traffic")]
    curve = ax.get_lines()[0]
    xs, ys = curve.get_xdata(), curve.get_ydata()
    for x, y in list(zip(xs, ys, strict=True))[::20]:
        assert y == pytest.approx(zones.traffic_at(float(x), *args))
    assert ys[xs < args[0]].max() == 0.0 and ys.max() > args[3]  # saturating past recommended
    (bid,) = points(fig, "between")
    assert bid[0] == 0.07 and bid[1] == pytest.approx(zones.traffic_at(0.07, *args))
    vertical = [ln.get_xdata()[0] for ln in ax.get_lines()[1:3]]
    assert vertical == args[:2]
    assert legend_texts(fig) == [
        "estimated traffic (interpolated)",
        "minimum 0.06",
        "recommended 0.09",
    ]
    assert ax.get_xlabel() == "bid (USD per click)"
    assert ax.get_ylabel() == "estimated impressions a day (estimate)"
    assert png(fig).startswith(PNG)


def test_traffic_curve_without_a_comparable_bid_or_a_price(frame):
    fig = plots.traffic_curve(frame, 102, "US")
    assert len(points(fig, "not comparable")) == 0 and all(len(points(fig, z)) == 0 for z in ZONES)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("not comparable" in t and "USD per 1000 impressions" in t for t in texts)
    assert fig.axes[0].get_xlabel() == "bid (USD per 1000 impressions)"
    failed = plots.traffic_curve(frame, 101, "BR")
    assert "error: HTTP 502" in failed.axes[0].texts[0].get_text()
    assert not failed.axes[0].get_lines()
    with pytest.raises(KeyError):
        plots.traffic_curve(frame, 101, "ZZ")


# --------------------------------------------------------------------------- zones


def bars(fig: Figure, state: str) -> list:
    return [p for p in fig.axes[0].patches if p.get_gid() == f"bars:{state}"]


def test_zones_by_format_stacks_every_row_by_state(frame):
    fig = plots.zones_by_format(frame)
    ax = fig.axes[0]
    formats = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(formats) == sorted({c[1] for c in CAMPAIGNS.values()})
    for zone in BID_ZONES:  # every bid zone has a bar per format (zero wide when none)
        assert len(bars(fig, zone)) == len(formats)
    st = states(frame)
    for state in ("not comparable", "error", "no estimate", *ZONES):
        widths = sum(p.get_width() for p in bars(fig, state))
        assert widths == (st == state).sum(), state
    total = sum(p.get_width() for p in ax.patches)
    assert total == len(frame)
    labels = legend_texts(fig)
    assert all(z in labels for z in BID_ZONES)
    assert "not comparable (bid in the other unit)" in labels
    assert ax.get_xlabel() == "rows (campaign x country bids)" and ax.get_ylabel() == "ad format"
    push = formats.index("push")
    assert ax.texts[push].get_text().strip() == "7"  # the bar's total
    assert png(fig).startswith(PNG)


def test_zones_by_country_keeps_the_top_and_sums_the_rest(frame):
    fig = plots.zones_by_country(frame, top=3)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[:2] == ["DE", "US"] and labels[-1] == "other" and len(labels) == 4
    assert sum(p.get_width() for p in fig.axes[0].patches) == len(frame)
    assert fig.axes[0].get_ylabel() == "country"
    assert png(fig).startswith(PNG)


# --------------------------------------------------------------------------- drift


def test_price_drift_draws_both_prices_per_country_and_format():
    history = synthetic_history(days=4)
    fig = plots.price_drift(history)
    assert len(fig.axes) == 2
    push, pops = fig.axes
    assert push.get_ylabel() == "USD per click" and pops.get_ylabel() == "USD per 1000 impressions"
    assert "median of up to 2 queries a country" in push.get_title(loc="left")
    for ax in (push, pops):
        lines = ax.get_lines()
        assert len(lines) == 2 * 3  # recommended and minimum per country
        assert all(len(ln.get_xdata()) == 4 for ln in lines)
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["DE", "FR", "US"]
    us = history[(history["ad_format"] == "pops") & (history[C] == "US")]
    drawn = pops.get_lines()[4].get_ydata()  # US's recommended (third country)
    assert np.allclose(drawn, us.sort_values("asked_at")["recommended"])
    assert fig.axes[-1].get_xlabel() == "asked at (UTC)"
    assert png(fig).startswith(PNG)


def test_price_drift_picks_countries_and_formats_and_says_when_empty():
    fig = plots.price_drift(synthetic_history(), codes=["US"], ad_formats=["push"])
    assert len(fig.axes) == 1 and len(fig.axes[0].get_lines()) == 2
    empty = plots.price_drift(synthetic_history().iloc[:0])
    assert "No price history" in empty.axes[0].texts[0].get_text()


def test_ask_rounds_split_at_a_repeated_query_or_a_pause():
    history = synthetic_history(days=2).iloc[[0, 1, 2, 6, 0, 1]].reset_index(drop=True)
    at = pd.Timestamp("2026-11-20 09:00", tz="UTC")
    seconds = [0, 1, 2, 3, 4, 4000 + 5]  # the last after a pause of more than an hour
    history["asked_at"] = [at + pd.Timedelta(seconds=s) for s in seconds]
    # rows 0-3 are distinct queries; row 4 repeats row 0; row 5 follows a pause
    assert plots.ask_rounds(history).tolist() == [0, 0, 0, 0, 1, 2]


# --------------------------------------------------------------------------- a real report


def test_every_plot_of_a_real_sandbox_report(tmp_path):
    import toolkit
    from toolkit.sandbox import Sandbox

    prices = tmp_path / "prices.db"
    with Sandbox(campaigns=8) as sb:
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        toolkit.bid_report(client, progress=False, history=prices)
        report = toolkit.bid_report(client, progress=False, history=prices)
        client.close()
    df = report.frame
    st = states(df)
    for cid, rows in df.groupby("campaign_id"):
        fig = plots.ranges(df, int(cid))
        drawn = sum(len(points(fig, s)) for s in st.cat.categories)
        assert drawn == len(rows)
        assert png(plots.traffic_curve(df, int(cid), rows.iloc[0][C])).startswith(PNG)
    fig = plots.zones_by_format(df)
    assert sum(p.get_width() for p in fig.axes[0].patches) == len(df)
    assert png(plots.zones_by_country(df)).startswith(PNG)
    history = toolkit.price_history(prices)
    one_day = plots.price_drift(history, frame=df)  # two reports a moment apart: not drift
    assert "not drawn" in one_day.axes[0].texts[0].get_text()
    first = plots.ask_rounds(history) == 0
    history.loc[first, "asked_at"] -= pd.Timedelta(days=1)  # the first report a day earlier
    fig = plots.price_drift(history, frame=df)
    assert len(fig.axes) == df["ad_format"].nunique()
    assert all(len(ln.get_xdata()) == 2 for ax in fig.axes for ln in ax.get_lines())
    assert png(fig).startswith(PNG)
