"""Item tables diffed over whole columns give the very plan the diff over dicts gives.

Random edits of every table of the sandbox account (adds, drops, bid changes, a repeated
key), with live changed since export on some of the same keys (conflicts),
planned with each side preferred and without a base, once by each path.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest

from toolkit.bulk import diff, make_plan
from toolkit.frames import load_account

TABLES = ("campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules")
GUARDS = {"drop_share", "empty_whitelist", "bulk_archive", "bid_jump"}


def edited(tables: dict[str, pd.DataFrame], rng: random.Random, tag: str) -> dict:
    """A random edit of every table: some rows dropped, some bids changed, rows added."""
    out = {}
    for name, df in tables.items():
        df = df.copy()
        keep = [rng.random() > 0.1 for _ in range(len(df))]
        if "bid" in df.columns:
            changed = [rng.random() < 0.3 for _ in range(len(df))]
            df.loc[changed, "bid"] = [round(rng.uniform(0.01, 2.0), 3) for _ in range(sum(changed))]
        if name in ("countries", "lists", "bid_rules", "targets"):
            out[name] = pd.concat([df[keep], added(name, df, rng, tag)], ignore_index=True)
        else:
            out[name] = df[keep] if name == "cpa_rules" else df
    campaigns = out["campaigns"]
    campaigns.loc[campaigns.index[0], "name"] = f"renamed {tag}"
    cpa = out["cpa_rules"]
    if len(cpa):
        cpa.loc[cpa.index[0], "amount"] = float(cpa["amount"].iloc[0] or 0) + 1.0
    return out


def added(name: str, df: pd.DataFrame, rng: random.Random, tag: str) -> pd.DataFrame:
    """New rows: existing rows moved to another campaign or given a new item, a repeated
    key with another bid."""
    ids = sorted({int(c) for c in df["campaign_id"].dropna()})
    rows = df.sample(n=min(len(df), 8), random_state=rng.randrange(1000)).copy()
    rows["campaign_id"] = [rng.choice(ids) for _ in range(len(rows))]
    if name in ("lists", "bid_rules"):
        rows["item"] = [f"{tag}{n}" for n in range(len(rows))]
    if "bid" in rows.columns:
        rows = pd.concat([rows, rows.iloc[:1].assign(bid=0.77)])
    return rows.astype(df.dtypes.to_dict())


def plans(client, desired, base, live, prefer):  # noqa: ANN001, ANN201
    """The plan of each path: over whole columns (every table), over dicts (none)."""
    out = []
    for rows in (0, 10**12):
        diff_rows = diff.FRAME_DIFF_ROWS
        diff.FRAME_DIFF_ROWS = rows
        try:
            plan = make_plan(client, desired, base=base, live=live, prefer=prefer, allow=GUARDS)
        finally:
            diff.FRAME_DIFF_ROWS = diff_rows
        out.append(plan)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_column_diff_plans_as_the_dict_diff(client, seed):
    rng = random.Random(seed)
    exported = load_account(client, progress=False)
    base = {name: exported.table(name).copy() for name in TABLES}
    desired = edited(base, rng, f"s{seed}x")
    # live moves on after the export, on some of the keys the edit changes too: conflicts
    elsewhere = edited(base, random.Random(seed + 100), f"s{seed}x")
    make_plan(client, elsewhere, base=base, allow=GUARDS).apply(
        client, progress=False, journal=None, verify=False
    )
    live = load_account(client, progress=False)
    for prefer in (None, "desired", "live"):
        for b in (base, None):
            by_columns, by_dicts = plans(client, desired, b, live, prefer)
            assert repr(by_columns.calls) == repr(by_dicts.calls)
            assert by_columns.warnings == by_dicts.warnings
            pd.testing.assert_frame_equal(by_columns.conflicts, by_dicts.conflicts)
            assert by_columns.scope == by_dicts.scope
            assert len(by_dicts.calls) > 10
            if b is not None and prefer is None:
                assert len(by_dicts.conflicts) > 0


def test_whole_column_diff_plans_as_the_dict_diff_with_live_as_exported(client):
    """Live unchanged since export: the whole-column diff takes live's key codes from the
    base's (and those of the edited rows from the scope step) instead of coding them again;
    the plan is still the one the dict diff makes."""
    exported = load_account(client, progress=False)
    base = {name: exported.table(name).copy() for name in TABLES}
    desired = edited(base, random.Random(3), "s3x")
    for prefer in (None, "desired"):
        by_columns, by_dicts = plans(client, desired, base, exported, prefer)
        assert repr(by_columns.calls) == repr(by_dicts.calls)
        assert by_columns.warnings == by_dicts.warnings
        assert by_columns.scope == by_dicts.scope
        assert len(by_dicts.calls) > 10
