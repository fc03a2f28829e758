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
assert zoned["comparable"].all() and zoned["error"].isna().all()
assert (below == (zoned["bid"] < zoned["minimum"])).all()
assert (zoned.loc[below, "traffic_estimate"] == 0).all()  # below the minimum buys nothing
between = zoned[zoned["zone"] == "between"]
assert between["position"].between(0, 1).all()
""",
        "c11": """\
assert len(fig.axes) == 1
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
assert len(plan_actions(client, actions).changes()) == len(proposal)
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
    "07-performance-rules.ipynb": {
        "c05": """\
assert days == 28 and len(truth) > 0
""",
        "c11": """\
assert loser["p_below_break_even"] > 0.95 > winner["p_below_break_even"]
""",
        "c15": """\
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
        "c40": """\
assert len(inside) >= 2 and (inside["revenue_lost"].to_numpy() < thr_lost).all()
""",
    },
}
