"""Read + plan of a small edit of a big account workbook, with and without the digests of
the exported tables (``_meta``'s ``digests``, :mod:`toolkit.bulk.workbook.digest`).

Run: ``python tests/benchmarks/workbook_edit.py [--campaigns 5000] [--edited 3] [--repeat 1]
[--cache DIR]``. Not part of the test suite.

A :class:`~toolkit.sandbox.Sandbox` of ``--campaigns`` campaigns is loaded and exported; the
edit raises the country bids of ``--edited`` campaigns by 10% (the account exported again with
those bids, its ``_base_`` sheets and ``_meta`` taken from the first export: what Excel would
save). Timed in the same run, on the same file, each the best of ``--repeat``:

- ``raw``: the calamine parse of every sheet a read without digests parses (the baseline);
- ``before``: ``read_workbook`` + ``make_plan`` of the edit with the ``digests`` row taken
  out of ``_meta`` (a workbook exported before digests: every ``_base_`` sheet is parsed);
- ``after``: the same with the digests (only the base sheets of changed tables are parsed).

The two plans must be the same. Target: ``after`` read + plan under 3 s for 5,000 campaigns.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pandas as pd

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.bulk.workbook.layout import META_SHEET
from toolkit.sandbox import Sandbox
from toolkit.xlsx.parts import sheet_parts

sys.path.insert(0, str(Path(__file__).parent))
from workbook_read import best, raw_parse  # noqa: E402

TARGET = 3.0


def edited_copy(account: toolkit.Account, exported: Path, out: Path, campaigns: int) -> Path:
    """``exported`` with the country bids of the first ``campaigns`` campaigns raised 10%."""
    ids = account.campaigns["id"].dropna().astype(int).tolist()[:campaigns]
    countries = account.countries.copy()
    rows = countries["campaign_id"].isin(ids)
    countries.loc[rows, "bid"] = (countries.loc[rows, "bid"] * 1.1).round(4)
    changed = export_workbook(
        dataclasses.replace(account, countries=countries), out.with_suffix(".tmp")
    )
    with zipfile.ZipFile(exported) as old, zipfile.ZipFile(changed) as new:
        keep = {p for n, p in sheet_parts(old).items() if n.startswith("_base_") or n == META_SHEET}
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in new.infolist():
                source = old if info.filename in keep else new
                dst.writestr(info, source.read(info.filename))
    changed.unlink()
    return out


def without_digests(path: Path, out: Path) -> Path:
    """``path`` with the ``digests`` row taken out of ``_meta`` (a workbook of before)."""
    with zipfile.ZipFile(path) as src:
        part = sheet_parts(src)[META_SHEET]
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                data = src.read(info.filename)
                if info.filename == part:
                    text = data.decode()
                    text = re.sub(r"<row [^>]*>(?:(?!</row>).)*>digests<.*?</row>", "", text)
                    data = text.encode()
                dst.writestr(info, data)
    return out


def read_and_plan(client: toolkit.Client, path: Path) -> tuple[float, float, pd.DataFrame]:
    t = time.perf_counter()
    tables = read_workbook(path)
    read = time.perf_counter() - t
    t = time.perf_counter()
    plan = make_plan(client, tables)
    return read, time.perf_counter() - t, plan.to_frame()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=5000)
    parser.add_argument("--edited", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=None, help="keep the workbooks here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Sandbox(campaigns=args.campaigns) as sb:
        folder = args.cache or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url)
        t = time.perf_counter()
        account = toolkit.load_account(client, progress=False)
        exported = export_workbook(account, folder / f"edit-base-{args.campaigns}.xlsx")
        after = edited_copy(account, exported, folder / f"edit-{args.campaigns}.xlsx", args.edited)
        before = without_digests(after, folder / f"edit-nodigest-{args.campaigns}.xlsx")
        print(f"loaded, exported and edited in {time.perf_counter() - t:.1f} s")
        names = list(sheet_parts(zipfile.ZipFile(before)))
        t_raw, cells = best(lambda: raw_parse(before, names), args.repeat)
        runs = {}
        for label, path in (("before", before), ("after", after)):
            runs[label] = min(
                (read_and_plan(client, path) for _ in range(args.repeat)),
                key=lambda r: r[0] + r[1],
            )
        same = runs["before"][2].equals(runs["after"][2])
        print(
            f"{args.campaigns:,} campaigns, {args.edited} edited: "
            f"{after.stat().st_size / 1e6:.1f} MB"
        )
        print(f"  raw calamine parse of every sheet   {t_raw:7.2f} s ({cells:,} cells)")
        for label, (read, plan, frame) in runs.items():
            total = read + plan
            print(
                f"  {label:6s} read {read:6.2f} s + plan {plan:5.2f} s = {total:6.2f} s "
                f"({total / t_raw:.2f}x raw; {len(frame)} plan rows)"
            )
        total = sum(runs["after"][:2])
        print(f"  same plan: {same}; after <= {TARGET} s: {'OK' if total <= TARGET else 'MISSED'}")


if __name__ == "__main__":
    main()
