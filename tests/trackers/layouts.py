"""Tracker export files as trackers (and the programs users open them in) write them: one file
per layout and per quirk of encoding, separator, header, totals row and campaign id, each with
the truth stated by hand.

``SAMPLES``: file name -> ``(bytes, expectation)``. An expectation is either
``{"refused": fragment}`` (the read must fail with a message holding ``fragment``) or
``{"sums": {metric: total of the frame's rows of level "source"}, "rows": rows of the frame}``
with, optionally, ``"level"`` (the level summed, when not ``source``), ``"keys"`` (every key
of the frame, sorted), ``"campaign_ids"`` (every campaign id, sorted), ``"skipped"`` (totals
rows left out), ``"columns"``, ``"layout"`` and ``"campaign_map"`` (the read's arguments), and
``"values": True`` for a file whose values are the value parser's to read (a clear refusal
counts as refused, not as wrong). ``tests/trackers/make_files.py`` writes the files.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import zipfile

from toolkit.stats.schema import STATS

#: The truth of the three rows below, for the source level: each sample holds them.
SUMS = {"impressions": 3500, "clicks": 130, "cost": 4.0, "conversions": 4.0, "revenue": 20.0}
NO_IMPRESSIONS = {**SUMS, "impressions": 0}
ZERO = {"impressions": 0, "clicks": 0, "cost": 0.0, "conversions": 0.0, "revenue": 0.0}
CAMPAIGNS = [1000001, 1000002]

# day, network campaign, zone, subId, country, impressions, clicks, cost, conversions, revenue
ROWS = [
    ("2026-01-01", "1000001", "z1", "s1", "US", "1000", "40", "1.25", "1", "5.00"),
    ("2026-01-01", "1000002", "z2", "", "DE", "500", "10", "0.50", "0", "0"),
    ("2026-01-02", "1000001", "z1", "s2", "", "2000", "80", "2.25", "3", "15.00"),
]
KEYS = ["s1", "s2", "z1", "z2"]

#: The trackers' own campaign ids of the two campaigns, and the maps to the network's.
UUIDS = {
    "1000001": "7f3c2a10-0c1e-4b7e-9a53-0d5f2b1c9e11",
    "1000002": "0b9d4e22-5a6f-4c1d-8e2b-3f4a5b6c7d8e",
}
OBJECT_IDS = {"1000001": "65a1f0c2e4b0a1b2c3d4e5f6", "1000002": "65a1f0c2e4b0a1b2c3d4e5f7"}
NUMBERS = {"1000001": "12", "1000002": "13"}


def mapping(ids: dict[str, str]) -> dict[str, int]:
    """The campaign map of a tracker's ids: tracker id -> network id."""
    return {tracker: int(network) for network, tracker in ids.items()}


def table(header: list[str], rows: list[tuple], sep: str = ",") -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator="\r\n").writerows([header, *rows])
    return out.getvalue()


def generic_rows(rows: list[tuple] = ROWS) -> list[tuple]:
    """One row per level a tracker row names (the generic layout)."""
    out = []
    for day, cid, zone, sub, _country, *nums in rows:
        out.append((day, cid, "source", zone, *nums))
        if sub:
            out.append((day, cid, "subId", sub, *nums))
    return out


GENERIC = list(STATS)  # the generic layout is the frame's columns
GENERIC_TEXT = table(GENERIC, generic_rows())
READ = {"sums": SUMS, "rows": 5, "keys": KEYS, "campaign_ids": CAMPAIGNS}


def tracker_rows(
    ids: dict[str, str], country: bool = False, rows: list[tuple] = ROWS
) -> list[tuple]:
    """``(day, tracker campaign, zone, subId[, country], impressions, clicks, cost, conv, rev)``."""
    out = []
    for day, cid, zone, sub, cc, *nums in rows:
        out.append((day, ids.get(cid, cid), zone, sub, *([cc] if country else []), *nums))
    return out


def voluum(
    ids: dict[str, str], zone: str = "Custom variable 1", sub: str = "Custom variable 2"
) -> str:
    header = [
        "Day",
        "Campaign ID",
        zone,
        sub,
        "Impressions",
        "Visits",
        "Cost",
        "Conversions",
        "Revenue",
    ]
    return table(header, tracker_rows(ids))


def encodings() -> dict[str, tuple[bytes, dict]]:
    voluum_read = {**READ, "campaign_map": mapping(UUIDS)}
    unicode_text = voluum(UUIDS).replace(",", "\t")
    cafe = GENERIC_TEXT.replace(",z1,", ",Café,").replace(",z2,", ",Zone €2,")
    return {
        "generic-utf8.csv": (GENERIC_TEXT.encode("utf-8"), READ),
        "generic-utf8-bom.csv": (codecs.BOM_UTF8 + GENERIC_TEXT.encode("utf-8"), READ),
        # Excel's "Unicode text": UTF-16 with a BOM, tab separated
        "excel-unicode-text-le.txt": (unicode_text.encode("utf-16"), voluum_read),
        "excel-unicode-text-be.txt": (
            codecs.BOM_UTF16_BE + unicode_text.encode("utf-16-be"),
            voluum_read,
        ),
        # saved by Excel on a western Windows: cp1252, € is the byte 0x80
        "cp1252-cafe-euro.csv": (
            cafe.encode("cp1252"),
            {**READ, "keys": ["Café", "Zone €2", "s1", "s2"]},
        ),
        "tab-separated.csv": (GENERIC_TEXT.replace(",", "\t").encode("utf-8"), READ),
    }


def separators() -> dict[str, tuple[bytes, dict]]:
    semi = table(GENERIC, generic_rows(), sep=";")
    decimal = table(
        GENERIC,
        [(*r[:6], r[6].replace(".", ","), r[7], r[8].replace(".", ",")) for r in generic_rows()],
        ";",
    )
    quoted = GENERIC_TEXT.replace(",cost,", ',"cost, USD",', 1)
    long_key = "key (zone, placement, site, app, widget, feed, publisher, channel, sub, source)"
    commas = semi.replace(";key;", f';"{long_key}";', 1)
    return {
        "semicolon.csv": (semi.encode("utf-8"), READ),
        # a ;-separated file whose quoted header holds more commas than it has columns
        "semicolon-quoted-header-commas.csv": (
            commas.encode("utf-8"),
            {**READ, "columns": {long_key: "key"}},
        ),
        # a ;-separated file whose decimals are commas: more commas than ; in every row
        "semicolon-decimal-comma.csv": (decimal.encode("utf-8"), {**READ, "values": True}),
        # a quoted header holding the separator
        "quoted-header-comma.csv": (
            quoted.encode("utf-8"),
            {**READ, "columns": {"cost, USD": "cost"}},
        ),
    }


def _zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in entries.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return out.getvalue()


def not_exports() -> dict[str, tuple[bytes, dict]]:
    workbook = _zip(
        {
            "[Content_Types].xml": b'<?xml version="1.0"?><Types/>',
            "xl/workbook.xml": b'<?xml version="1.0"?><workbook/>',
        }
    )
    return {
        "empty.csv": (b"", {"refused": "the file is empty"}),
        "bom-only.csv": (codecs.BOM_UTF8 + b"\r\n", {"refused": "the file is empty"}),
        "header-only.csv": (
            (",".join(GENERIC) + "\r\n").encode(),
            {"sums": ZERO, "rows": 0, "keys": [], "campaign_ids": []},
        ),
        "zipped.csv": (_zip({"stats.csv": GENERIC_TEXT.encode()}), {"refused": "zip archive"}),
        "gzipped.csv": (gzip.compress(GENERIC_TEXT.encode(), mtime=0), {"refused": "gzip archive"}),
        "report.csv": (
            b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
            {"refused": "PDF document"},
        ),
        "chart.csv": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(13), {"refused": "PNG image"}),
        "workbook-renamed.csv": (workbook, {"refused": "this is an Excel workbook; name it .xlsx"}),
        "binary.csv": (bytes(range(256)) * 4, {"refused": "binary file"}),
        # a row wider than the header: neither reader guesses which cells are which
        "ragged-rows.csv": (
            (GENERIC_TEXT + "2026-01-03,1000001,source,z3,1,1,0.1,0,0,7,7\r\n").encode(),
            {"refused": "cannot be read as CSV"},
        ),
        "text-named.xlsx": (GENERIC_TEXT.encode(), {"refused": "this is a text file"}),
    }


def totals() -> dict[str, tuple[bytes, dict]]:
    total = GENERIC_TEXT + "Total,,,,3500,130,4.00,4,20.00\r\n"
    grand = GENERIC_TEXT + ",,source,Grand Total,3500,130,4.00,4,20.00\r\n"
    bemob_header = [
        "Date",
        "Campaign ID",
        "Var 1",
        "Var 2",
        "Impressions",
        "Visits",
        "Cost",
        "Conversions",
        "Revenue",
    ]
    bemob = table(
        bemob_header, [*tracker_rows(UUIDS), ("", "", "", "", "3500", "130", "4.00", "4", "20.00")]
    )
    return {
        "totals-row.csv": (total.encode(), {**READ, "skipped": 1}),
        "totals-grand-total-key.csv": (grand.encode(), {**READ, "skipped": 1}),
        # BeMob: UUIDs, and a last row of sums with no date, campaign or key
        "bemob-sums-row.csv": (
            bemob.encode(),
            {**READ, "skipped": 1, "campaign_map": mapping(UUIDS)},
        ),
    }


KEITARO_RU = [
    "Дата",
    "ID кампании",
    "Кампания",
    "Sub ID 1",
    "Sub ID 2",
    "Страна",
    "Клики",
    "Расход",
    "Конверсии",
    "Доход",
]


def keitaro_ru(total: str, subs: tuple[str, str] = ("s1", "s2")) -> str:
    rows = []
    for day, cid, zone, sub, cc, _imp, *nums in ROWS:
        sub = {"s1": subs[0], "s2": subs[1]}.get(sub, sub)
        rows.append((day, NUMBERS[cid], f"Кампания {NUMBERS[cid]}", zone, sub, cc, *nums))
    rows.append((total, "", "", "", "", "", "130", "4.00", "4", "20.00"))
    return table(KEITARO_RU, rows, ";")


def layouts() -> dict[str, tuple[bytes, dict]]:
    binom_map = mapping(NUMBERS)
    ru = {
        "sums": NO_IMPRESSIONS,
        "rows": 7,
        "campaign_ids": CAMPAIGNS,
        "campaign_map": binom_map,
        "skipped": 1,
    }
    keitaro_en = [
        "Date",
        "Campaign ID",
        "Sub ID 1",
        "Sub ID 2",
        "Clicks",
        "Cost",
        "Conversions",
        "Revenue",
    ]
    flat = [(d, NUMBERS[c], z, s, c, *n[1:]) for d, c, z, s, _cc, *n in ROWS]
    redtrack = [
        "Date",
        "Campaign ID",
        "sub1",
        "sub2",
        "Impressions",
        "Clicks",
        "Cost",
        "Total conversions",
        "Total revenue",
    ]
    return {
        "voluum.csv": (voluum(UUIDS).encode(), {**READ, "campaign_map": mapping(UUIDS)}),
        # Voluum's custom variables named after the traffic source template's tokens
        "voluum-template-names.csv": (
            voluum(UUIDS, "Zone ID", "Sub ID").encode(),
            {**READ, "campaign_map": mapping(UUIDS)},
        ),
        "redtrack-total-conversions.csv": (
            table(redtrack, tracker_rows(OBJECT_IDS)).encode(),
            {**READ, "campaign_map": mapping(OBJECT_IDS)},
        ),
        # Binom: its own campaign ids; the network's id passed in token 3; the cost is "Spend"
        "binom-spend-token3.csv": (
            table(
                [
                    "Date",
                    "Campaign ID",
                    "Token 1",
                    "Token 2",
                    "Token 3",
                    "Clicks",
                    "Leads",
                    "Revenue",
                    "Spend",
                ],
                [
                    (d, cid, z, s, net, clicks, conv, rev, cost)
                    for d, cid, z, s, net, clicks, cost, conv, rev in flat
                ],
            ).encode(),
            {**READ, "sums": NO_IMPRESSIONS, "columns": {"Token 3": "campaign_id"}},
        ),
        "binom-grouped.csv": (
            binom_grouped().encode(),
            {
                "sums": NO_IMPRESSIONS,
                "rows": 3,
                "keys": ["z1", "z2"],
                "campaign_ids": CAMPAIGNS,
                "columns": {"Level 1": "date", "Level 2": "tracker_campaign", "Level 3": "source"},
                "campaign_map": binom_map,
                "skipped": 1,
            },
        ),
        "keitaro-ru-utf8.csv": (keitaro_ru("Итого").encode(), {**ru, "keys": ["DE", "US", *KEYS]}),
        # the same export saved by Excel on a Russian Windows: cp1251
        "keitaro-ru-cp1251.csv": (
            keitaro_ru("Всего:", ("саб1", "саб2")).encode("cp1251"),
            {**ru, "keys": ["DE", "US", "z1", "z2", "саб1", "саб2"]},
        ),
        "keitaro-by-name-map.csv": (
            keitaro_ru("Итого").replace(";ID кампании;", ";ID;").encode(),
            {**ru, "campaign_map": {"Кампания 12": 1000001, "Кампания 13": 1000002}},
        ),
        "keitaro-own-ids.csv": (
            table(
                keitaro_en, [(d, NUMBERS[c], z, s, *n[1:]) for d, c, z, s, _cc, *n in ROWS]
            ).encode(),
            {"refused": "are Keitaro's own ids, not the network's: pass campaign_map="},
        ),
    }


def binom_grouped() -> str:
    """Binom's report grouped by day, campaign and token 1: each row holds its children's
    sums, a totals row last."""
    header = [
        "Level",
        "Name",
        "Clicks",
        "LP Clicks",
        "LP CTR",
        "Leads",
        "CR",
        "EPC",
        "CPC",
        "Revenue",
        "Spend",
        "Profit",
        "ROI",
    ]

    def row(level: int, name: str, clicks: int, leads: int, rev: float, spend: float) -> tuple:
        return (
            level,
            name,
            clicks,
            0,
            "0.00%",
            leads,
            "",
            "",
            "",
            f"{rev:.2f}",
            f"{spend:.2f}",
            "",
            "",
        )

    rows = [
        row(1, "2026-01-01", 50, 1, 5.0, 1.75),
        row(2, "12", 40, 1, 5.0, 1.25),
        row(3, "z1", 40, 1, 5.0, 1.25),
        row(2, "13", 10, 0, 0.0, 0.5),
        row(3, "z2", 10, 0, 0.0, 0.5),
        row(1, "2026-01-02", 80, 3, 15.0, 2.25),
        row(2, "12", 80, 3, 15.0, 2.25),
        row(3, "z1", 80, 3, 15.0, 2.25),
        ("", "Total", 130, 0, "", 4, "", "", "", "20.00", "4.00", "", ""),
    ]
    return table(header, rows)


def campaign_ids() -> dict[str, tuple[bytes, dict]]:
    some = {UUIDS["1000001"]: 1000001}
    generic_uuid = GENERIC_TEXT.replace(",1000001,", f",{UUIDS['1000001']},")
    return {
        "voluum-no-map.csv": (
            voluum(UUIDS).encode(),
            {"refused": "look like Voluum/BeMob ids (UUIDs), not the network's"},
        ),
        "redtrack-no-map.csv": (
            table(
                ["Date", "Campaign ID", "sub1", "sub2", "Clicks", "Cost", "Conversions", "Revenue"],
                [(d, c, z, s, *n[1:]) for d, c, z, s, *n in tracker_rows(OBJECT_IDS)],
            ).encode(),
            {"refused": "look like RedTrack ids (24 hex digits)"},
        ),
        "generic-uuid-campaign-id.csv": (
            generic_uuid.encode(),
            {"refused": "look like Voluum/BeMob ids (UUIDs)"},
        ),
        "voluum-map-lacks-one.csv": (
            voluum(UUIDS).encode(),
            {
                "refused": f"tracker campaign '{UUIDS['1000002']}' is not in the campaign map",
                "campaign_map": some,
            },
        ),
        "binom-grouped-levels-unnamed.csv": (
            binom_grouped().encode(),
            {"refused": "say what each level of its grouping is"},
        ),
    }


SAMPLES: dict[str, tuple[bytes, dict]] = {
    **encodings(),
    **separators(),
    **not_exports(),
    **totals(),
    **layouts(),
    **campaign_ids(),
}
