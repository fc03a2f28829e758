"""Property tests of the bulk round trip on the sandbox (hypothesis, few examples each)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.workbook import export_workbook, read_workbook
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox

KEYS = {
    "campaigns": ["id", "note", "frequency_capping"],
    "cpa_rules": ["id", "campaign_id", "amount", "lead_amount"],
    "countries": ["campaign_id", "country", "bid"],
    "lists": ["campaign_id", "list", "item"],
    "bid_rules": ["campaign_id", "item", "bid"],
    "targets": ["campaign_id", "kind", "value", "list_type"],
}
QUICK = settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def world():
    with Sandbox(campaigns=8, seed=21, accounts=1) as sb:
        yield sb, toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


def canon(df: pd.DataFrame, cols: list[str]) -> list[tuple]:
    out = df[cols].astype(object).where(df[cols].notna(), None)
    return sorted(
        tuple(round(v, 6) if isinstance(v, float) else str(v) for v in row)
        for row in out.itertuples(index=False)
    )


def test_export_then_read_without_edit_plans_nothing(world, tmp_path):
    _sb, client = world
    account = load_account(client, progress=False)
    path = export_workbook(account, tmp_path / "account.xlsx")
    plan = make_plan(client, read_workbook(path))
    assert len(plan) == 0, plan.summary()


edits = st.fixed_dictionaries(
    {
        "drop_lists": st.lists(st.integers(0, 10_000), max_size=4),
        "add_subids": st.lists(
            st.tuples(st.integers(0, 7), st.text("0123456789abcdef", min_size=4, max_size=10)),
            max_size=5,
        ),
        "rebid": st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 500)), max_size=3),
        "add_os": st.lists(st.tuples(st.integers(0, 7), st.integers(1, 12)), max_size=3),
        "drop_targets": st.lists(st.integers(0, 10_000), max_size=2),
        "notes": st.lists(
            st.tuples(st.integers(0, 7), st.text("abc xyz=+-@", min_size=1, max_size=12)),
            max_size=2,
        ),
        "capping": st.lists(st.tuples(st.integers(0, 7), st.integers(0, 20)), max_size=2),
        "cpa_amounts": st.lists(st.tuples(st.integers(0, 100), st.integers(1, 900)), max_size=2),
        "add_rules": st.lists(
            st.tuples(
                st.integers(0, 7),
                st.text("0123456789abcdef", min_size=4, max_size=8),
                st.integers(1, 300),
            ),
            max_size=3,
        ),
    }
)


def _append(df: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    added = pd.DataFrame(rows, columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, added], ignore_index=True)


def edit_lists(lists: pd.DataFrame, edit: dict, ids: list[int]) -> pd.DataFrame:
    if len(lists):
        drop = sorted({i % len(lists) for i in edit["drop_lists"]})
        lists = lists.drop(index=lists.index[drop])
    new = [
        {"campaign_id": ids[c % len(ids)], "list": "subid_black", "item": item}
        for c, item in edit["add_subids"]
    ]
    return _append(lists, new).drop_duplicates(["campaign_id", "list", "item"])


def edit_bid_rules(rules: pd.DataFrame, edit: dict, ids: list[int]) -> pd.DataFrame:
    taken = set(zip(rules["campaign_id"].astype(int), rules["item"].astype(str), strict=True))
    extra = [
        {"campaign_id": ids[c % len(ids)], "item": item, "bid": cents / 100}
        for c, item, cents in edit["add_rules"]
        if (ids[c % len(ids)], item) not in taken
    ]
    return _append(rules, list({(r["campaign_id"], r["item"]): r for r in extra}.values()))


def edit_targets(targets: pd.DataFrame, edit: dict, ids: list[int]) -> pd.DataFrame:
    """Drops targets of any kind, adds OS targets."""
    if len(targets):
        drop = sorted({i % len(targets) for i in edit["drop_targets"]})
        targets = targets.drop(index=targets.index[drop])
    new = [
        {"campaign_id": ids[c % len(ids)], "kind": "os", "value": str(os_id)}
        for c, os_id in edit["add_os"]
    ]
    return _append(targets, new).drop_duplicates(["campaign_id", "kind", "value"])


def edit_campaigns(campaigns: pd.DataFrame, edit: dict, ids: list[int]) -> pd.DataFrame:
    """New notes and frequency capping."""
    row_of = {int(cid): i for i, cid in zip(campaigns.index, campaigns["id"], strict=True)}
    for c, note in edit["notes"]:
        campaigns.loc[row_of[ids[c % len(ids)]], "note"] = note
    for c, capping in edit["capping"]:
        campaigns.loc[row_of[ids[c % len(ids)]], "frequency_capping"] = capping
    return campaigns


def edit_cpa_rules(rules: pd.DataFrame, edit: dict) -> pd.DataFrame:
    for i, amount in edit["cpa_amounts"]:
        if len(rules):
            rules.loc[rules.index[i % len(rules)], "amount"] = float(amount)
    return rules


def edited(base: dict[str, pd.DataFrame], edit: dict, ids: list[int]) -> dict[str, pd.DataFrame]:
    desired = {name: df.copy() for name, df in base.items()}
    desired["lists"] = edit_lists(desired["lists"], edit, ids)
    countries = desired["countries"]
    for i, cents in edit["rebid"]:
        countries.loc[countries.index[i % len(countries)], "bid"] = cents / 100
    desired["bid_rules"] = edit_bid_rules(desired["bid_rules"], edit, ids)
    desired["targets"] = edit_targets(desired["targets"], edit, ids)
    desired["campaigns"] = edit_campaigns(desired["campaigns"], edit, ids)
    desired["cpa_rules"] = edit_cpa_rules(desired["cpa_rules"], edit)
    return desired


@QUICK
@given(edit=edits)
def test_random_edits_applied_equal_the_edited_tables(world, edit):
    _sb, client = world
    account = load_account(client, progress=False)
    base = {name: account.table(name) for name in KEYS}
    ids = sorted(int(i) for i in account.table("campaigns")["id"])
    desired = edited(base, edit, ids)
    plan = make_plan(
        client,
        desired,
        base=base,
        live=account,
        allow={"drop_share", "empty_whitelist", "bulk_archive", "bid_jump"},
    )
    result = plan.apply(client, progress=False, journal=None)
    assert result.ok, result.summary()
    after = load_account(client, progress=False)
    for name, cols in KEYS.items():
        assert canon(after.table(name), cols) == canon(desired[name], cols), name
