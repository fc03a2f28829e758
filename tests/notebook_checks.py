"""What the notebooks in ``notebooks/`` must have done, checked by tests/test_notebooks.py in
the notebook's own kernel: the code of each entry runs right after the cell of that id (the
notebook as a reader sees it holds no ``assert``). A key naming a cell the notebook no longer
has fails the test, so that no check is left behind silently.
"""

from __future__ import annotations

#: notebook -> cell id -> the checks that run right after that cell.
CHECKS: dict[str, dict[str, str]] = {
    "01-getting-started.ipynb": {
        "c05": """\
assert len(account.campaigns) > 0, "the account has no campaigns"
assert account.failures.empty, account.failures
assert set(account.tables()) == {
    "campaigns", "countries", "targets", "lists", "bid_rules", "cpa_rules", "creatives"
}
""",
        "c10": """\
assert campaigns["id"].is_unique
assert str(campaigns["t_created"].dtype) == "datetime64[ns, UTC]"
assert set(campaigns["ad_format"].dropna()) <= {"push", "pops", "video", "inpage"}
""",
        "c12": """\
assert (countries["bid"] > 0).all()
assert countries["country"].str.fullmatch("[A-Z]{2}").all()
""",
        "c20": """\
assert creatives["campaign_id"].isin(campaigns["id"]).all()
""",
        "c25": """\
assert len(bids) == len(countries) and bids["name"].notna().all()
""",
        "c28": """\
assert book.sheetnames == [*account.tables(), "countries_joined"]
assert book["countries"].max_row == len(countries) + 1
""",
        "c27": """\
for name in account.tables():
    pd.testing.assert_frame_equal(same.table(name), account.table(name))
""",
    },
    "02-explore-account.ipynb": {
        "c05": """\
assert status.to_numpy().sum() == len(campaigns)
""",
        "c08": """\
assert (present > 0).all() and present.sum() == len(campaigns)
assert set(present.index) == set(moderation.index)
""",
        "c11": """\
assert limited["spent"].between(0, 1.5).all()
""",
        "c16": """\
assert per_country["campaigns"].sum() == len(bids)
""",
        "c19": """\
assert most.iloc[0] == black.groupby("item").size().max()
""",
        "c22": """\
counters = campaigns.set_index("id")["n_source_black"].fillna(0).astype(int)
counted = sizes["source_black"].reindex(counters.index, fill_value=0)
assert (counters == counted).all(), "the n_source_black counters disagree with the lists"
""",
        "c25": """\
assert by_status.to_numpy().sum() == len(creatives)
""",
    },
    "03-bulk-edit-excel.ipynb": {
        "c09": """\
desired, base = tables.desired["countries"], tables.base["countries"]
assert len(tables.desired["lists"]) == len(tables.base["lists"]) + len(SUBIDS)
assert (desired["bid"] != base["bid"]).sum() == 1
""",
        "c13": """\
assert len(changes) == 1 + len(SUBIDS)
bid_change = changes[changes["what"] == "bid"].iloc[0]
assert (bid_change["key"], bid_change["old"], bid_change["new"]) == (country, old_bid, new_bid)
assert plan.conflicts.empty
""",
        "c17": """\
assert result.ok and (outcomes["outcome"] == "applied").all()
live = toolkit.load_account(client, [campaign_id], progress=False)
live_bid = live.countries.set_index("country").loc[country, "bid"]
assert live_bid == new_bid, live_bid
assert set(SUBIDS) <= set(live.lists.loc[live.lists["list"] == "subid_black", "item"])
""",
        "c19": """\
assert (sheet["outcome"] != "unchanged").sum() == 1
""",
        "c21": """\
assert len(again) == 0
""",
        "c24": """\
live = toolkit.load_account(client, [campaign_id], progress=False)
assert live.countries.set_index("country").loc[country, "bid"] == old_bid
assert not set(SUBIDS) & set(live.lists["item"])
assert runs["run_id"].tolist() == [result.run_id, undone.run_id]
assert (runs["state"] == "finished").all()
""",
        "c29": """\
assert len(blacklist_plan.changes()) == 2 * len(push)
assert blacklist_result.ok and counts.get("applied", 0) == 2 * len(push)
""",
        "c30": """\
assert listed.groupby("campaign_id").size().eq(2).all()
assert listed["campaign_id"].nunique() == len(push)
""",
    },
    "04-bid-report.ipynb": {
        "c06": """\
assert len(frame) > 0 and frame["campaign_id"].isin(report.account.campaigns["id"]).all()
assert report.calls <= report.naive_calls
assert report.history_path == PRICES and PRICES.stat().st_size > 0
assert (frame["zone"] == "below minimum").any(), "no bid below the minimum: nothing to propose"
""",
        "c09": """\
# "no traffic" (the targeting excludes the country) is a zone whatever the unit
priced = zoned[zoned["zone"] != "no traffic"]
assert priced["comparable"].all() and zoned["error"].isna().all()
assert (below[priced.index] == (priced["bid"] < priced["minimum"])).all()
assert (zoned.loc[below, "traffic_estimate"] == 0).all()  # below the minimum buys nothing
between = zoned[zoned["zone"] == "between"]
assert between["position"].between(0, 1).all()
""",
        "c11": """\
assert len(fig.axes) == 1
""",
        "c13": """\
_status = report.account.campaigns.set_index("id").loc[campaign_id, ["status", "work_status"]]
assert _status.tolist() == ["Approved", "Started"], _status  # the featured campaign is live
assert len(report.left_out) > 0
assert not frame["campaign_id"].isin(report.left_out["campaign_id"]).any()
""",
        "c19": """\
assert len(changes) == len(proposal) == len(below_minimum)
assert plan.conflicts.empty
planned = changes.set_index(["campaign_id", "key"])["new"].astype(float).sort_index()
proposed = proposal.set_index(["campaign_id", "country"])["new_bid"].sort_index()
assert planned.tolist() == proposed.tolist()
""",
        "c21": """\
outcomes = result.to_frame()
assert result.ok and (outcomes["outcome"] == "applied").all()
""",
        "c22": """\
still_below = after.frame["comparable"] & (after.frame["zone"] == "below minimum")
assert not still_below.any(), after.frame[still_below]
assert after.proposals("minimum").empty
raised = after.frame.set_index(["campaign_id", "country"]).loc[proposed.index, "bid"]
assert raised.tolist() == proposed.tolist()
""",
        "c24": """\
assert len(prices) == report.calls + after.calls
assert plots.ask_rounds(prices).nunique() == 2
assert len(asked) == 2
""",
        "c26": """\
assert undone.ok
moved = sorted(proposed.index.get_level_values("campaign_id").unique())
live = toolkit.load_account(client, moved, progress=False)
key = ["campaign_id", "country"]
before = report.account.countries
before = before[before["campaign_id"].isin(moved)].set_index(key)["bid"].sort_index()
now = live.countries.set_index(key)["bid"].sort_index()
pd.testing.assert_series_equal(now, before)
assert runs["run_id"].tolist() == [result.run_id, undone.run_id]
""",
        "c28": """\
for path in (html, xlsx, actions):
    assert path.exists() and path.stat().st_size > 0, path
assert {"summary", "bids", "to minimum"} <= set(sheets)
from toolkit.bulk.workbook.actions import plan_actions

assert len(plan_actions(client, actions).changes()) == len(proposal)
""",
        "c31": """\
_f = earning.frame
_stats = toolkit.read_stats(STATS)
_stats = _stats[_stats["level"].astype(str) == "country"].astype({"key": str})
_sums = _stats.groupby(["campaign_id", "key"])[["clicks", "impressions", "revenue"]].sum()
_has = _f[_f["clicks"].notna()]
assert len(_has) > len(_f) / 2, "most live country bids have statistics"
_sums = _sums.reindex(list(zip(_has["campaign_id"], _has["country"]))).astype(float)
assert np.allclose(_has["clicks"], _sums["clicks"])
assert np.allclose(_has["revenue"], _sums["revenue"])
_per_click = (_has["mode"].astype(str) == "CPC").to_numpy()
_rpm = _sums["revenue"] / _sums["impressions"] * 1000
_epc = np.where(_per_click, _sums["revenue"] / _sums["clicks"], _rpm)
assert np.allclose(_has["break_even_bid"], _epc)  # EPC, or revenue per 1,000 impressions
_known = _has[_has["max_profitable_bid"].notna()]
assert len(_known) and (_known["max_profitable_bid_low"] <= _known["max_profitable_bid"]).all()
""",
        "c33": """\
_day = earning.frame["profit_day_now"]
assert zones.loc["all", "bids"] == zones["bids"].drop("all").sum() == len(earning.frame)
assert np.isclose(zones.loc["all", "profit_day_now"], _day.sum())
assert zones.loc["all", "profit_unknown"] == _day.isna().sum() > 0  # unknown, counted apart
assert zones.loc["unprofitable", "profit_day_now"] < 0 < zones.loc["room to grow", "profit_day_now"]
assert zones.loc["all", "profit_day_proposed"] > zones.loc["all", "profit_day_now"]
""",
        "c34": """\
assert len(fig.axes) == 1 and len(fig.axes[0].patches) == 2 * len(shown)
""",
        "c36": """\
assert set(moves["action"]) == {"set bid", "drop country", "pause campaign"}
_set = moves[moves["action"] == "set bid"]
assert (_set["new_bid"] >= _set["minimum"]).all()  # never below the minimum
_cap = np.maximum(_set["max_profitable_bid_low"], _set["minimum"]) + 1e-4
assert (_set["new_bid"] <= _cap).all()  # never above what it is 95 % sure to afford
_gone = moves[moves["action"] != "set bid"]
assert (_gone["max_profitable_bid_low"] < _gone["minimum"]).all()  # cannot pay at the minimum
assert (_gone["profit_day_new"] == 0).all()
""",
        "c37": """\
_changes = profit_plan.changes()
assert len(_changes) > 0 and profit_plan.conflicts.empty
assert len(toolkit.history(JOURNAL)) == len(runs)  # previewed, not applied
""",
        "c39": """\
from toolkit.reports.rule_rows import NO_PRICE

assert rules["note"].str.startswith(NO_PRICE).all()
_ids = set(earning.frame["campaign_id"])
_mine = earning.account.bid_rules["campaign_id"].isin(_ids)
assert len(rules) == _mine.sum() > 0 and set(rules["campaign_id"]) <= _ids
_seen = rules[rules["clicks"] > 0]
_per_click = (_seen["mode"].astype(str) == "CPC").to_numpy()
_rpm = _seen["revenue"] / _seen["impressions_stats"] * 1000
_value = np.where(_per_click, _seen["revenue"] / _seen["clicks"], _rpm)
assert len(_seen) > len(rules) / 2 and np.allclose(_seen["break_even_bid"], _value)
""",
        "c42": """\
_sheets = openpyxl.load_workbook(profit_xlsx, read_only=True).sheetnames
assert _sheets[:3] == ["summary", "bids", "bid rules"]
assert len(sheet) == len(rules) and sheet["key"].astype(str).tolist() == rules["key"].tolist()
assert profit_pdf.stat().st_size > 0
""",
    },
    "05-notebook-forms.ipynb": {
        "c05": """\
assert app.picker.selected == tuple(CAMPAIGNS)
assert list(app.forms) == ["targeting", "bids", "lists"]
""",
        "c07": """\
changes = plan.changes()
raised = (before.xs(country, level=GEO) * 1.1).round(4)
assert changes["key"].eq(country).all() and len(changes) == len(raised)
_new = changes.set_index("campaign_id")["new"].astype(float).sort_index()
assert _new.tolist() == raised.tolist()
""",
        "c09": """\
assert bids.level == "ok", bids.message
now = live("countries").set_index(["campaign_id", GEO])["bid"].sort_index()
assert now.xs(country, level=GEO).tolist() == raised.tolist()
""",
        "c10": """\
assert bids.level == "ok", bids.message
now = live("countries").set_index(["campaign_id", GEO])["bid"].sort_index()
pd.testing.assert_series_equal(now, before)
""",
        "c12": """\
assert targeting.level == "ok", targeting.message
targets = live("targets")
quality = targets[targets["kind"].astype(str) == "quality"]
assert set(quality.loc[quality["value"].astype(str) == level, "campaign_id"]) == set(CAMPAIGNS)
""",
        "c13": """\
assert targeting.level == "ok", targeting.message
key = ["campaign_id", "kind", "value"]
restored = live("targets").astype({"value": str}).sort_values(key).reset_index(drop=True)
_then = before.astype({"value": str}).sort_values(key).reset_index(drop=True)
pd.testing.assert_frame_equal(restored, _then)
""",
        "c15": """\
assert lists.level == "error" and "line 2" in lists.message and "not-hex!" in lists.message
assert "line 2" in lists.paste_check.value and lists.edited == {}  # nothing taken
""",
        "c16": """\
assert lists.level == "ok", lists.message
added = live("lists")
_ours = added["item"].astype(str).str.startswith("c0ffee")
added = added[(added["list"].astype(str) == "subid_black") & _ours]
assert len(added) == 3 * len(CAMPAIGNS)
""",
        "c16-2": """\
now = live("lists")
assert not now["item"].astype(str).str.startswith("c0ffee").any()
""",
        "c18": """\
assert bids.level == "error" and "allow drop_share" in bids.message
assert len(toolkit.history(JOURNAL)) == runs  # nothing was sent
""",
        "c20": """\
assert bids.level == "info" and len(bids.last_plan) > 0
""",
        "c20-2": """\
assert bids.edited == {} and len(toolkit.history(JOURNAL)) == runs
""",
        "c22": """\
assert len(history) == 6 and (history["state"] == "finished").all()
""",
    },
    "06-rehearse-safely.ipynb": {
        "c06": """\
assert len(plan.changes()) == 3 + len(push)
""",
        "c13": """\
by_outcome = outcomes.groupby("outcome", observed=True).size()
assert not result.ok
assert by_outcome.get("failed", 0) == len(push)
assert set(outcomes.loc[outcomes["target"] == "subid_black", "outcome"]) == {"failed"}
assert set(outcomes.loc[outcomes["target"] == "country", "outcome"]) <= {"applied", "already"}
assert by_outcome.get("unknown", 0) == 0 and by_outcome.get("lost", 0) == 0
""",
        "c17": """\
assert len(left.changes()) == len(push)
assert set(left.changes()["target"]) == {"subid_black"}
""",
        "c18": """\
assert repaired.ok and len(repaired.to_frame()) == len(push)
""",
        "c19": """\
assert len(done) == 0
""",
        "c23": """\
assert dropped.ok and len(dropped.to_frame()) == before
after = toolkit.load_account(client, [biggest], progress=False)
assert (after.lists["list"] == "source_black").sum() == 0
""",
        "c24": """\
after = toolkit.load_account(client, [biggest], progress=False)
assert (after.lists["list"] == "source_black").sum() == before
""",
        "c26": """\
assert len(runs) == 4 and (runs["state"] == "finished").all()
""",
        "c21": """\
try:
    toolkit.plan(client, {"lists": kept}, {"lists": live.lists})
    raise AssertionError("the guard did not refuse")
except toolkit.PlanRefused as exc:
    assert exc.guard == "drop_share"
""",
    },
    "08-many-accounts.ipynb": {
        "c02": """\
assert toolkit.profiles() == ["demo", "northwind-media"]
""",
        "c04": """\
assert accounts.names == ["demo", "northwind-media"] and len(accounts.failures) == 0
assert accounts.campaigns.columns[0] == "account"
campaigns_of = {n: len(accounts.account(n).campaigns) for n in accounts.names}
assert campaigns_of == {"demo": 50, "northwind-media": 5}, campaigns_of
""",
        "c10": """\
assert set(bids["account"]) == set(accounts.names) and bids["mode"].notna().all()
assert set(medians.index.get_level_values("mode")) <= {"CPC", "CPM"}
""",
        "c13": """\
live = {int(c["id"]) for c in client.campaigns.list()}
demo_ids = accounts.account("demo").campaigns["id"]
assert live == set(one.campaigns["id"]) and live.isdisjoint(demo_ids)
""",
        "c15": """\
for t in ("campaigns", "countries", "lists", "balance"):
    pd.testing.assert_frame_equal(again.table(t), accounts.table(t))
""",
        "c19": """\
assert plans.names == accounts.names
assert plans.counts()["changes"].tolist() == [1] * len(accounts.names)
""",
        "c20": """\
shown = plans.changes()
for name, (campaign_id, country, bid) in raised.items():
    row = shown[shown["account"] == name].iloc[0]
    assert (row["campaign_id"], row["key"]) == (campaign_id, country)
    assert abs(row["new"] - round(float(bid) * 1.1, 4)) < 1e-3, (row["new"], bid)
""",
        "c22": """\
assert result.ok and set(result.run_ids) == set(accounts.names)
runs = toolkit.history()
assert set(runs.loc[runs["run_set"] == result.set_id, "profile"]) == set(accounts.names)
""",
        "c23": """\
assert back.ok and set(back.run_ids) == set(accounts.names)
for name, (campaign_id, country, bid) in raised.items():
    with toolkit.connect(profile=name) as own:
        live = toolkit.load_account(own, [campaign_id], progress=False).countries
    assert live.set_index("country").loc[country, "bid"] == bid
""",
    },
    "07-performance-rules.ipynb": {
        "c05": """\
assert days == 28 and len(truth) > 0
""",
        "c11": """\
assert loser["p_below_break_even"] > 0.95 > winner["p_below_break_even"]
""",
        "c15": """\
from toolkit.rules import load_rules

assert load_rules(FILES / "rules.yaml") == load_rules(RULES)
""",
        "c20": """\
assert changes["why"].str.contains("p_loss").all()
""",
        "c22": """\
assert len(planned) == len(changes) > 0
assert (planned.groupby(["rule", "campaign_id"]).size() <= 3).all()
""",
        "c23": """\
assert np.isclose(same["p_loss"].iloc[0], loser["p_below_break_even"])
""",
        "c25": """\
assert not keys & before
assert result.ok
assert after == before | keys
""",
        "c26": """\
assert undone.ok
assert back == before
""",
        "c31": """\
assert abs(stat["cost_saved"] - thr["cost_saved"]) < 0.05 * stat["cost_saved"]
assert stat["revenue_lost"] < thr["revenue_lost"] and stat["net"] > thr["net"]
assert stat["winners_stopped"] < thr["winners_stopped"] and stat["precision"] > thr["precision"]
""",
        "c37": """\
# the trade-off's figures are the backtest's: the two tuned rule sets of section 5 again
again = tradeoff(stats, truth, {"statistical": [0.95], "zero_conversion": [x]}, level=LEVELS)
for (_, mine), (_, theirs) in zip(again.iterrows(), both.summary.iterrows(), strict=True):
    for col in ("stopped", "losers_stopped", "winners_stopped"):
        assert mine[col] == theirs[col], (col, mine[col], theirs[col])
    for col in ("cost_saved", "revenue_lost", "precision", "recall"):
        assert np.isclose(mine[col], theirs[col], rtol=1e-9), (col, mine[col], theirs[col])
assert len(curves) == 8 and set(curves["family"]) == {"statistical", "threshold"}
""",
        "c40": """\
assert len(inside) >= 2 and (inside["revenue_lost"].to_numpy() < thr_lost).all()
""",
        "c40c": """\
assert len(at_level) >= 2 and (at_level["difference_%"] < 0).all()
""",
    },
}
