"""Tracker exports whose values are written the way trackers' UIs write them: day-first and
month-first dates, times with a zone offset, money with currency signs, thousands separators
and decimal commas, chargebacks in parentheses, and values out of range or not numbers at
all. Each with the truth stated by hand.

``SAMPLES``: file name -> ``(bytes, expectation)``, in the shape of
``tests/trackers/layouts.py``: ``{"refused": fragment}`` or ``{"sums": {metric: total},
"rows": rows of the frame}`` (every file here is in the generic layout, one ``source`` row
per line), with ``"days"`` (the days of the rows, in order) where the dates are the point,
``"campaigns"`` (the campaign ids, in order) where the ids are, and ``"date_format"`` /
``"decimal"`` where the read takes them.
"""

from __future__ import annotations

HEADER = ["date", "campaign_id", "level", "key", "impressions", "clicks", "cost"]
HEADER += ["conversions", "revenue"]
NBSP, NNBSP = "\u00a0", "\u202f"


def export(rows: list[tuple[str, ...]], sep: str = ",") -> bytes:
    """A generic-layout CSV (UTF-8, CRLF) of ``(date, campaign, key, impressions, clicks,
    cost, conversions, revenue)`` rows; a cell holding the separator is quoted."""

    def cell(value: str) -> str:
        return f'"{value}"' if sep in value or '"' in value else value

    lines = [sep.join(HEADER)]
    for day, cid, key, *nums in rows:
        lines.append(sep.join(cell(c) for c in (day, cid, "source", key, *nums)))
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def sums(impressions: int, clicks: int, cost: float, conversions: float, revenue: float) -> dict:
    return {
        "impressions": impressions,
        "clicks": clicks,
        "cost": cost,
        "conversions": conversions,
        "revenue": revenue,
    }


def plain(day: str, cid: str = "7", clicks: str = "10", cost: str = "1.50") -> tuple[str, ...]:
    """A row of ordinary values: 100 impressions, 1 conversion, revenue 2 (whole, so that
    only ``cost`` can settle the decimal separator)."""
    return (day, cid, "s1", "100", clicks, cost, "1", "2")


SAMPLES: dict[str, tuple[bytes, dict]] = {
    # ------------------------------------------------------------------ dates
    # 13/01 can only be day-first: the whole file is read day-first (05/01 is Jan 5).
    "dates-day-first-slash.csv": (
        export([plain("05/01/2026"), plain("13/01/2026"), plain("31/01/2026")]),
        {
            "sums": sums(300, 30, 4.5, 3, 6),
            "rows": 3,
            "days": ["2026-01-05", "2026-01-13", "2026-01-31"],
        },
    ),  # fmt: skip
    "dates-day-first-dots-time.csv": (
        export([plain("05.01.2026 10:30"), plain("28.02.2026 23:59:59")]),
        {"sums": sums(200, 20, 3.0, 2, 4), "rows": 2, "days": ["2026-01-05", "2026-02-28"]},
    ),
    # 01/13 can only be month-first: 02/01 is Feb 1.
    "dates-month-first.csv": (
        export([plain("01/13/2026"), plain("02/01/2026")]),
        {"sums": sums(200, 20, 3.0, 2, 4), "rows": 2, "days": ["2026-01-13", "2026-02-01"]},
    ),
    "dates-both-orders.csv": (
        export([plain("13/01/2026"), plain("01/13/2026")]),
        {"refused": "the dates look day-first and month-first"},
    ),
    "dates-ambiguous.csv": (
        export([plain("05/01/2026"), plain("06/01/2026")]),
        {"refused": "date_format="},
    ),
    "dates-ambiguous-with-format.csv": (
        export([plain("05/01/2026"), plain("06/01/2026")]),
        {
            "sums": sums(200, 20, 3.0, 2, 4),
            "rows": 2,
            "date_format": "%d/%m/%Y",
            "days": ["2026-01-05", "2026-01-06"],
        },
    ),  # fmt: skip
    # The tracker's day is the day in its reporting zone: the offset does not move it.
    "dates-iso-offset.csv": (
        export([plain("2026-01-05T00:30:00+03:00"), plain("2026-01-31T23:30:00-05:00")]),
        {"sums": sums(200, 20, 3.0, 2, 4), "rows": 2, "days": ["2026-01-05", "2026-01-31"]},
    ),
    "dates-iso-mixed-with-ambiguous.csv": (
        export([plain("2026-01-05"), plain("03/01/2026")]),
        {"refused": "date_format="},
    ),
    # ------------------------------------------------------------------ numbers
    # US money: $, thousands commas, a chargeback as -$ and as (...). Revenue:
    # 1,237.02 - 15.00 - 15.00 = 1,207.02; cost 1,237.02 + 0.98; clicks 1,234 + 766.
    "money-us.csv": (
        export(
            [
                ("2026-01-05", "7", "s1", "10,000", "1,234", "$1,237.02", "2", "$1,237.02"),
                ("2026-01-05", "7", "s2", "500", "766", "$0.98", "0", "-$15.00"),
                ("2026-01-06", "7", "s1", "0", "0", "$0.00", "0", "($15.00)"),
            ]
        ),
        {"sums": sums(10500, 2000, 1238.0, 2, 1207.02), "rows": 3},
    ),
    # European money in a ;-separated file: decimal commas, dots and (no-break) spaces as
    # thousands separators, the euro sign before or after.
    "money-eu.csv": (
        export(
            [
                (
                    "2026-01-05",
                    "7",
                    "s1",
                    f"1{NBSP}000",
                    f"1{NNBSP}234",
                    "€12,50",
                    "1,5",
                    "1.234,56",
                ),
                ("2026-01-05", "7", "s2", "1 000", "66", "37,02 €", "0,5", "€-4,56"),
            ],
            sep=";",
        ),
        {"sums": sums(2000, 1300, 49.52, 2.0, 1230.0), "rows": 2},
    ),  # fmt: skip
    "money-swiss.csv": (
        export([("2026-01-05", "7", "s1", "1'000", "10", "1'234.5", "0", "1'000'000.25")]),
        {"sums": sums(1000, 10, 1234.5, 0, 1000000.25), "rows": 1},
    ),
    # Clicks' 1,234 could be either; the cost column's 0.50 settles the file: a point.
    "clicks-comma-settled-by-cost.csv": (
        export([plain("2026-01-05", clicks="1,234", cost="0.50"), plain("2026-01-06")]),
        {"sums": sums(200, 1244, 2.0, 2, 4), "rows": 2},
    ),
    "cost-comma-ambiguous.csv": (
        export([plain("2026-01-05", cost="1,234"), plain("2026-01-06", cost="2,500")]),
        {"refused": "decimal="},
    ),
    "cost-comma-given-decimal.csv": (
        export([plain("2026-01-05", cost="1,234"), plain("2026-01-06", cost="2,500")]),
        {"sums": sums(200, 20, 3.734, 2, 4), "rows": 2, "decimal": ","},
    ),
    "cost-mixed-decimals.csv": (
        export([plain("2026-01-05", cost="1,234.50"), plain("2026-01-06", cost="12,50")]),
        {"refused": "mixes decimal points and decimal commas"},
    ),
    "cost-mixed-currencies.csv": (
        export([plain("2026-01-05", cost="$1.50"), plain("2026-01-06", cost="€1.50")]),
        {"refused": "mixes currencies"},
    ),
    "cost-chargeback.csv": (
        export([plain("2026-01-05", cost="($15.00)")]),
        {"refused": "not an amount"},
    ),
    "cost-percentage.csv": (
        export([plain("2026-01-05", cost="12.5%")]),
        {"refused": "a percentage"},
    ),
    "cost-nan.csv": (export([plain("2026-01-05", cost="NaN")]), {"refused": "not an amount"}),
    "cost-infinity.csv": (
        export([plain("2026-01-05", cost="Infinity"), plain("2026-01-06", cost="-nan")]),
        {"refused": "not an amount"},
    ),
    "clicks-1e30.csv": (export([plain("2026-01-05", clicks="1e30")]), {"refused": "not a count"}),
    "clicks-2-63.csv": (
        export([plain("2026-01-05", clicks="9223372036854775808")]),
        {"refused": "not a count"},
    ),
    "clicks-not-whole.csv": (
        export([plain("2026-01-05", clicks="1,5", cost="2,50")]),
        {"refused": "not a count"},
    ),
    "campaign-1e20.csv": (
        export([plain("2026-01-05", cid="1e20")]),
        {"refused": "not a campaign id"},
    ),
    "campaign-2-63.csv": (
        export([plain("2026-01-05", cid="9223372036854775808")]),
        {"refused": "not a campaign id"},
    ),
    # The largest id the service has (2**63 - 1), read exactly, next to 2**53 + 1.
    "campaign-largest.csv": (
        export(
            [
                plain("2026-01-05", cid="9223372036854775807"),
                plain("2026-01-05", cid="9007199254740993"),
            ]
        ),
        {
            "sums": sums(200, 20, 3.0, 2, 4),
            "rows": 2,
            "campaigns": [9223372036854775807, 9007199254740993],
        },
    ),  # fmt: skip
}
