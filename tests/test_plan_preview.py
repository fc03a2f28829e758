"""The plan preview as the user thinks of a change: words, names, old -> new values, grouped
by call, in text, HTML and frames; against the sandbox over real HTTP."""

from __future__ import annotations

import html

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import make_plan
from toolkit.bulk.preview import money, shown
from toolkit.frames import load_account
from toolkit.sandbox import Sandbox

TABLES = ("campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules")


@pytest.fixture(scope="module")
def sb():
    with Sandbox(campaigns=12, seed=21) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def client(sb):
    return toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)


@pytest.fixture()
def state(client):
    account = load_account(client, progress=False)
    return account, {name: account.table(name).copy() for name in TABLES}


def add_rows(df: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    extra = pd.DataFrame(rows, columns=df.columns).astype(df.dtypes.to_dict())
    return pd.concat([df, extra], ignore_index=True)


def multi_country(tables: dict[str, pd.DataFrame]) -> tuple[int, pd.DataFrame]:
    """A campaign with at least two countries, and its rows."""
    countries = tables["countries"]
    sizes = countries.groupby("campaign_id").size()
    cid = int(sizes[sizes >= 2].index[0])
    return cid, countries[countries["campaign_id"] == cid]


def name_of(tables: dict[str, pd.DataFrame], cid: int) -> str:
    campaigns = tables["campaigns"]
    return str(campaigns.loc[campaigns["id"] == cid, "name"].iloc[0])


def test_country_edits_read_as_bid_add_and_drop_with_old_values(client, state):
    account, tables = state
    cid, rows = multi_country(tables)
    changed, gone = rows.index[0], rows.index[1]
    code, old = str(rows.loc[changed, "country"]), float(rows.loc[changed, "bid"])
    dropped, was = str(rows.loc[gone, "country"]), float(rows.loc[gone, "bid"])
    new_code = next(c for c in ("CA", "NZ", "IE", "NO") if c not in set(rows["country"]))
    countries = tables["countries"].drop(index=gone)
    countries.loc[changed, "bid"] = old + 0.03
    countries = add_rows(countries, [{"campaign_id": cid, "country": new_code, "bid": 0.31}])
    plan = make_plan(
        client, {"countries": countries}, base=tables, live=account, allow={"drop_share"}
    )
    text = plan.summary()
    assert f"bid {code} {money(old)} -> {money(old + 0.03)}" in text
    assert f"add country {new_code} 0.31" in text
    assert f"drop country {dropped} (was {money(was)})" in text
    assert f'{cid} "{name_of(tables, cid)}"' in text
    assert f"drop country {code}" not in text  # the bid change is not shown as a drop
    changes = plan.changes()
    assert len(changes) == 3
    bid = changes[changes["what"] == "bid"].iloc[0]
    assert (bid["campaign_id"], bid["key"], bid["campaign_name"]) == (
        cid,
        code,
        name_of(tables, cid),
    )
    assert bid["old"] == pytest.approx(old) and bid["new"] == pytest.approx(old + 0.03)
    drop_call = next(n for n, c in enumerate(plan.calls, 1) if c.action == "drop")
    add_call = next(n for n, c in enumerate(plan.calls, 1) if c.action == "add")
    assert bid["call"] == add_call and bid["calls"] == (drop_call, add_call)
    assert str(bid["step"]) == "add"
    assert f"call {drop_call}" in text and f"bid changes in call {add_call}" in text
    # one row per call; a country add with one bid shows it
    frame = plan.to_frame()
    assert list(frame["call"]) == list(range(1, len(plan) + 1))
    adds = frame[frame["action"] == "add"].iloc[0]
    assert adds["bids"][new_code] == 0.31
    single = make_plan(
        client,
        {
            "countries": add_rows(
                tables["countries"], [{"campaign_id": cid, "country": new_code, "bid": 0.31}]
            )
        },
        base=tables,
        live=account,
    )
    assert single.to_frame()["bid"].tolist() == [0.31]


def test_settings_moves_and_lists_read_as_the_user_thinks(client, state):
    account, tables = state
    campaigns = tables["campaigns"].copy()
    started = campaigns.index[campaigns["work_status"] == "Started"]
    first, second = started[0], started[1]
    old_name = str(campaigns.loc[first, "name"])
    old_limit = campaigns.loc[first, "limit_day_sum"]
    campaigns.loc[first, "name"] = "New name"
    campaigns.loc[first, "limit_day_sum"] = 80.0
    campaigns.loc[second, "work_status"] = "Paused"
    cid = int(campaigns.loc[first, "id"])
    sources = [
        {"campaign_id": cid, "list": "source_black", "item": str(12345 + i)} for i in range(10)
    ]
    plan = make_plan(
        client,
        {"campaigns": campaigns, "lists": add_rows(tables["lists"], sources)},
        base=tables,
        live=account,
    )
    text = plan.summary()
    assert f'rename "{old_name}" -> "New name"' in text
    assert f"limit_day_sum {shown(old_limit)} -> 80" in text
    assert "pause (was Started)" in text
    assert "blacklist source 12345, 12346, 12347 (+7 more)" in text
    changes = plan.changes()
    rename = changes[changes["what"] == "rename"].iloc[0]
    assert (rename["old"], rename["new"], rename["step"]) == (old_name, "New name", "update")
    pause = changes[changes["what"] == "pause"].iloc[0]
    assert pause["campaign_id"] == int(campaigns.loc[second, "id"])
    assert (pause["old"], pause["new"]) == ("Started", "Paused")
    listed = changes[changes["target"] == "source_black"]
    assert len(listed) == 10 and set(listed["what"]) == {"add"}
    assert listed["key"].tolist()[:2] == ["12345", "12346"]
    # the pause is sent first, and the text lists calls in the order they are sent
    assert text.index("pause (was Started)") < text.index("rename")


def test_html_preview_escapes_names_and_values(client, state):
    account, tables = state
    campaigns = tables["campaigns"].copy()
    campaigns.loc[campaigns.index[0], "name"] = "<script>alert(1)</script> & co"
    plan = make_plan(client, {"campaigns": campaigns}, base=tables, live=account)
    page = plan._repr_html_()
    assert "<script>" not in page
    assert html.escape('"<script>alert(1)</script> & co"') in page
    assert "<table" in page and "rename" in page


def test_large_plans_stay_readable(client, state):
    account, tables = state
    ids = [int(i) for i in tables["campaigns"]["id"]]
    shared = [{"campaign_id": c, "list": "subid_black", "item": "feedbeef"} for c in ids]
    own = [
        {"campaign_id": c, "list": "subid_white", "item": f"{c:x}{i:02x}"}
        for c in ids
        for i in range(20)
    ]
    plan = make_plan(
        client, {"lists": add_rows(tables["lists"], shared + own)}, base=tables, live=account
    )
    assert len(plan) == len(ids) + 1
    text = plan.summary(max_calls=4)
    assert f"... and {len(plan) - 4} more call(s) on" in text
    assert len(text.splitlines()) <= 1 + 4 * 6 + 1
    assert "(+17 more)" in text  # 20 subIds of one campaign: three shown
    line = plan.summary(max_calls=len(plan)).splitlines()
    title = next(x for x in line if f"add subid_black on {len(ids)} campaigns (batch)" in x)
    shown_line = line[line.index(title) + 1]
    assert f"(+{len(ids) - 3} more campaigns): blacklist subId feedbeef" in shown_line
    assert len(plan.changes()) == len(shared) + len(own)
    html_rows = plan._repr_html_()
    assert html_rows.count("<tr>") <= 201 + 1


def test_empty_plan_and_money_format(client, state):
    account, tables = state
    plan = make_plan(client, tables, base=tables, live=account)
    assert plan.summary() == "Plan: nothing to do."
    assert plan.changes().empty and list(plan.to_frame().columns)[-1] == "call"
    assert "nothing to do" in plan._repr_html_()
    assert [money(v) for v in (0.3, 0.30610000000000004, 1.5, 0.000001)] == [
        "0.30",
        "0.3061",
        "1.50",
        "0.000001",
    ]


def test_drop_halves_of_bid_changes_fold_into_one_line(client, state):
    account, tables = state
    countries = tables["countries"].copy()
    countries["bid"] = (countries["bid"] * 1.1).round(4)
    plan = make_plan(client, {"countries": countries}, base=tables, live=account)
    drops = [n for n, c in enumerate(plan.calls, 1) if c.action == "drop"]
    adds = [n for n, c in enumerate(plan.calls, 1) if c.action == "add"]
    assert len(drops) > 3
    lines = plan.summary().splitlines()
    assert lines[1].startswith(f"  calls {drops[0]}-{drops[-1]}")
    assert f"(the old bids of the bid changes in calls {adds[0]}-{adds[-1]})" in lines[1]
    changes = plan.changes()
    assert set(changes["what"]) == {"bid"} and len(changes) == len(countries)
    assert not any(" drop country " in line for line in lines[2:])


def test_the_preview_in_docs_is_what_the_planner_prints():
    """docs/bulk.md shows a real preview: this plan, on this seeded sandbox."""
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "bulk.md").read_text()
    start = doc.index("```\nPlan: 6 calls") + 4
    expected = doc[start : doc.index("```", start)].rstrip("\n")
    with Sandbox(campaigns=6, seed=3) as sandbox:
        client = toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url)
        account = load_account(client, progress=False)
        base = {n: account.table(n).copy() for n in ("campaigns", "countries", "lists")}
        countries = base["countries"].copy()
        rows = countries.index[countries["campaign_id"] == 1000003]
        countries.loc[rows[0], "bid"] = 0.33
        countries = add_rows(
            countries.drop(index=rows[1]), [{"campaign_id": 1000003, "country": "CA", "bid": 0.31}]
        )
        campaigns = base["campaigns"].copy()
        campaigns.loc[0, "name"] = "Antivirus push, US only"
        campaigns.loc[3, "work_status"] = "Paused"
        campaigns.loc[1, "limit_day_sum"] = 80.0
        sources = [
            {"campaign_id": cid, "list": "source_black", "item": str(12345 + i)}
            for cid in campaigns["id"]
            for i in range(10)
        ]
        desired = {
            "campaigns": campaigns,
            "countries": countries,
            "lists": add_rows(base["lists"], sources),
        }
        plan = make_plan(client, desired, base=base, live=account, allow={"drop_share"})
    assert plan.summary() == expected
