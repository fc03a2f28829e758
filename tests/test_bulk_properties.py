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
    "targets": ["campaign_id", "kind", "value"],
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


@QUICK
@given(edit=edits)
def test_random_edits_applied_equal_the_edited_tables(world, edit):
    _sb, client = world
    account = load_account(client, progress=False)
    base = {name: account.table(name) for name in KEYS}
    ids = sorted(int(i) for i in account.table("campaigns")["id"])
    desired = {name: df.copy() for name, df in base.items()}
    lists = desired["lists"]
    if len(lists):
        drop = sorted({i % len(lists) for i in edit["drop_lists"]})
        lists = lists.drop(index=lists.index[drop])
    new = [
        {"campaign_id": ids[c % len(ids)], "list": "subid_black", "item": item}
        for c, item in edit["add_subids"]
    ]
    lists = pd.concat(
        [lists, pd.DataFrame(new, columns=lists.columns).astype(lists.dtypes.to_dict())],
        ignore_index=True,
    )
    desired["lists"] = lists.drop_duplicates(["campaign_id", "list", "item"])
    countries = desired["countries"]
    for i, cents in edit["rebid"]:
        countries.loc[countries.index[i % len(countries)], "bid"] = cents / 100
    rules = desired["bid_rules"]
    taken = set(zip(rules["campaign_id"].astype(int), rules["item"].astype(str), strict=True))
    extra = [
        {"campaign_id": ids[c % len(ids)], "item": item, "bid": cents / 100}
        for c, item, cents in edit["add_rules"]
        if (ids[c % len(ids)], item) not in taken
    ]
    extra = list({(r["campaign_id"], r["item"]): r for r in extra}.values())
    desired["bid_rules"] = pd.concat(
        [rules, pd.DataFrame(extra, columns=rules.columns).astype(rules.dtypes.to_dict())],
        ignore_index=True,
    )
    plan = make_plan(
        client,
        desired,
        base=base,
        live=account,
        allow={"drop_share", "empty_whitelist", "bulk_archive"},
    )
    result = plan.apply(client, progress=False, journal=None)
    assert result.ok, result.summary()
    after = load_account(client, progress=False)
    for name, cols in KEYS.items():
        assert canon(after.table(name), cols) == canon(desired[name], cols), name
