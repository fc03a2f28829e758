"""Rules run again: a ``factor`` rule steps an item's bid once per evidence, against the
sandbox's demo account over real HTTP. The same rules over the same statistics plan nothing
the second time (``already``, naming the run that made the step); ``cooldown`` lets new
days of data make one more step; an undone run, or a change that failed, counts no more;
another service's runs are not read. ``as_of`` cuts every rule's data at that day, and a day
outside the statistics is an error naming their range."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

import toolkit
from toolkit.bulk import Journal
from toolkit.errors import RulesError, ValidationError
from toolkit.rules import evaluate_rules, load_rules
from toolkit.sandbox import Sandbox

WINNERS = {"name": "winners", "level": "subid", "when": "p_win >= 0.95", "action": "bid",
           "factor": 1.2}  # fmt: skip
GEO = {"name": "geo", "level": "country", "when": "roi < -50", "action": "bid", "factor": 0.8}
LOSERS = {"name": "losers", "level": "subid", "when": "p_loss >= 0.99 and clicks >= 300",
          "action": "blacklist", "limit": 2}  # fmt: skip
RULES = [WINNERS, GEO, LOSERS]
FACTORS = {"winners": 1.2, "geo": 0.8}
ALLOW = {"allow": {"drop_share"}}


@pytest.fixture()
def journal(tmp_path):
    return Journal(tmp_path / "journal.db")


@pytest.fixture()
def stats(sb, tmp_path):
    """17 days of the demo account's statistics, as a frame."""
    sb.stats_export(tmp_path / "stats.csv", days=17, seed=3)
    return toolkit.read_stats(tmp_path / "stats.csv")


def upto(stats: pd.DataFrame, day: dt.date) -> pd.DataFrame:
    """The statistics up to ``day``: as they were then."""
    return stats[stats["date"] < pd.Timestamp(day + dt.timedelta(days=1), tz="UTC")]


def last(stats: pd.DataFrame) -> dt.date:
    return stats["date"].max().date()


def keyed(decisions: pd.DataFrame, status: str | None = None) -> pd.DataFrame:
    rows = decisions if status is None else decisions[decisions["status"] == status]
    return rows.set_index(["rule", "campaign_id", "key"])


def stepped(decisions: pd.DataFrame) -> pd.DataFrame:
    """The planned decisions of the factor rules."""
    d = keyed(decisions, "planned")
    return d[d.index.get_level_values("rule").isin(list(FACTORS))]


def live_bids(client) -> dict[tuple[str, int, str], float]:
    account = toolkit.load_account(client, progress=False)
    rules, countries = account.table("bid_rules"), account.table("countries")
    out = {
        ("winners", int(c), str(k)): float(b)
        for c, k, b in zip(rules["campaign_id"], rules["item"], rules["bid"], strict=True)
    }
    out |= {
        ("geo", int(c), str(k)): float(b)
        for c, k, b in zip(
            countries["campaign_id"], countries["country"], countries["bid"], strict=True
        )  # fmt: skip
    }
    return out


# --------------------------------------------------------------------------- the same run twice


def test_the_same_rules_on_the_same_statistics_step_each_bid_once(client, stats, journal):
    plan, first = evaluate_rules(RULES, stats, client, journal=journal, **ALLOW)
    steps = stepped(first)
    assert set(steps.index.get_level_values("rule")) == set(FACTORS) and len(steps) > 20
    result = plan.apply(client, progress=False, journal=journal)
    assert result.ok
    after = live_bids(client)
    for (rule, cid, key), d in steps.iterrows():
        assert after[(rule, cid, key)] == pytest.approx(float(d["new"]))

    again, second = evaluate_rules(RULES, stats, client, journal=journal, **ALLOW)
    assert len(again) == 0 and again.provenance == []
    assert "Plan: nothing to do." in again.summary()
    redone = keyed(second).loc[steps.index]
    assert set(redone["status"]) == {"already"}
    assert set(redone["earlier_run"]) == {result.run_id}
    assert redone["old"].astype(float).tolist() == pytest.approx(
        steps["new"].astype(float).tolist()
    )
    assert redone["target"].tolist() == steps["target"].tolist()
    # a list the account holds is "already" because the account is so, not from the journal
    listed = keyed(second)
    listed = listed[listed.index.get_level_values("rule") == "losers"]
    assert len(listed) and listed["earlier_run"].isna().all()
    assert set(listed["status"]) <= {"already", "over limit"}
    assert live_bids(client) == after

    # the journal is what remembers: without it the same rules would step every bid again
    _, forgetful = evaluate_rules(RULES, stats, client, journal=None, **ALLOW)
    twice = stepped(forgetful).loc[steps.index]
    for (rule, _, _), d in twice.iterrows():
        assert float(d["new"]) == pytest.approx(round(float(d["old"]) * FACTORS[rule], 4))


def test_the_journal_holds_the_rule_item_window_evidence_and_value_of_each_step(
    client, stats, journal
):
    rules = [{**WINNERS, "window": 7}, GEO]
    plan, decisions = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    result = plan.apply(client, progress=False, journal=journal)
    rows = journal.provenance()
    planned = keyed(decisions, "planned")
    assert len(rows) == len(planned) == len(plan.provenance)
    assert set(rows["run_id"]) == {result.run_id}
    assert set(rows["evidence"]) == {last(stats).isoformat()}
    window = dict(zip(rows["rule"], rows["window"], strict=False))
    assert window["winners"] == 7 and pd.isna(window["geo"])
    got = {(r.rule, int(r.campaign_id), r.key): (r.target, float(r.value)) for r in
           rows.itertuples()}  # fmt: skip
    want = {k: (d["target"], float(d["new"])) for k, d in planned.iterrows()}
    assert got == want


# --------------------------------------------------------------------------- cooldown


def test_a_cooldown_lets_new_days_of_data_make_one_more_step(client, stats, journal):
    end = last(stats)
    rules = [{**WINNERS, "cooldown": 3}, GEO]
    plan, first = evaluate_rules(rules, upto(stats, end - dt.timedelta(days=3)), client,
                                 journal=journal, **ALLOW)  # fmt: skip
    run1 = plan.apply(client, progress=False, journal=journal).run_id
    one = stepped(first)

    # two more days: too soon for another step
    plan, soon = evaluate_rules(rules, upto(stats, end - dt.timedelta(days=1)), client,
                                journal=journal, **ALLOW)  # fmt: skip
    seen = keyed(soon).index.intersection(one.index)
    assert len(seen) > 10
    assert set(keyed(soon).loc[seen, "status"]) == {"already"}
    assert set(keyed(soon).loc[seen, "earlier_run"]) == {run1}

    # three more days: the rule with a cooldown steps once more, the one without does not
    plan, later = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    now = keyed(later)
    both = now.index.intersection(one.index)
    winners = [k for k in both if k[0] == "winners"]
    geo = [k for k in both if k[0] == "geo"]
    assert len(winners) > 10 and geo
    assert set(now.loc[winners, "status"]) == {"planned"}
    assert set(now.loc[geo, "status"]) == {"already"}
    for key in winners:
        old = float(one.loc[key, "new"])
        assert float(now.loc[key, "old"]) == pytest.approx(old)
        assert float(now.loc[key, "new"]) == pytest.approx(round(old * 1.2, 4))
    run2 = plan.apply(client, progress=False, journal=journal).run_id
    bids = live_bids(client)
    for key in winners:
        assert bids[key] == pytest.approx(round(float(one.loc[key, "new"]) * 1.2, 4))

    # and once more on the same data: nothing, the last step named
    plan, same = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    assert len(plan) == 0
    assert set(keyed(same).loc[winners, "earlier_run"]) == {run2}


def test_a_limit_counts_per_campaign_and_evidence_not_per_run(client, stats, journal):
    rules = [{**LOSERS, "limit": 1}]
    data = upto(stats, last(stats) - dt.timedelta(days=1))
    plan, first = evaluate_rules(rules, data, client, journal=journal, **ALLOW)
    per = keyed(first, "planned").groupby("campaign_id").size()
    assert len(per) >= 2 and set(per) == {1}
    assert (first["status"] == "over limit").sum() >= 2
    plan.apply(client, progress=False, journal=journal)
    # the same data again: the limit is taken by the changes already made on it
    plan, same = evaluate_rules(rules, data, client, journal=journal, **ALLOW)
    assert len(plan) == 0 and "planned" not in set(same["status"])
    _, forgetful = evaluate_rules(rules, data, client, journal=None, **ALLOW)
    assert set(keyed(forgetful, "planned").groupby("campaign_id").size()) == {1}
    # a new day of data: the limit again
    plan, later = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    per = keyed(later, "planned").groupby("campaign_id").size()
    assert len(per) and set(per) == {1}


def test_a_fixed_bid_set_already_says_so_and_takes_no_place_in_the_limit(client, stats, journal):
    rule = {"name": "fixed", "level": "subid", "when": "p_win >= 0.95", "action": "bid",
            "bid": 0.05, "limit": 1, "scope": {"campaigns": [1000001]}}  # fmt: skip
    plan, first = evaluate_rules([rule], stats, client, journal=journal)
    planned = keyed(first, "planned")
    assert len(planned) == 1 and (first["status"] == "over limit").sum() >= 1
    plan.apply(client, progress=False, journal=journal)
    plan, again = evaluate_rules([rule], stats, client, journal=journal)
    assert len(plan) == 0
    done = keyed(again).loc[planned.index[0]]
    assert done["status"] == "already" and float(done["old"]) == 0.05
    assert done["target"] == "bid_rule" and pd.isna(done["earlier_run"])  # the account is so
    assert (again["status"] == "over limit").sum() == (first["status"] == "over limit").sum()


def test_cooldown_is_a_field_of_factor_rules_only():
    (rule,) = load_rules([{**WINNERS, "cooldown": 7}])
    assert rule.cooldown == 7 and rule.to_dict()["cooldown"] == 7
    assert load_rules([rule.to_dict()]) == [rule]
    bad = [
        {**LOSERS, "cooldown": 3},
        {**WINNERS, "name": "fixed", "factor": None, "bid": 0.05, "cooldown": 3},
        {**GEO, "cooldown": 0},
    ]
    with pytest.raises(RulesError) as caught:
        load_rules(bad)
    found = {(p.name, p.field) for p in caught.value.problems}
    assert found == {("losers", "cooldown"), ("fixed", "cooldown"), ("geo", "cooldown")}
    assert "only a bid rule with a factor steps again" in str(caught.value)


# --------------------------------------------------------------------------- undone, failed


def test_an_undone_run_counts_no_more_and_its_steps_are_planned_again(client, stats, journal):
    plan, first = evaluate_rules(RULES, stats, client, journal=journal, **ALLOW)
    before = live_bids(client)
    result = plan.apply(client, progress=False, journal=journal)
    undone = toolkit.undo(client, result.run_id, journal=journal, progress=False)
    assert undone.ok and live_bids(client) == before
    plan, again = evaluate_rules(RULES, stats, client, journal=journal, **ALLOW)
    steps, redo = stepped(first), stepped(again)
    assert set(redo.index) == set(steps.index)
    assert redo.loc[steps.index, "new"].astype(float).tolist() == pytest.approx(
        steps["new"].astype(float).tolist()
    )
    assert redo["earlier_run"].isna().all()
    # the redo is remembered like any run
    plan.apply(client, progress=False, journal=journal)
    plan, third = evaluate_rules(RULES, stats, client, journal=journal, **ALLOW)
    assert len(plan) == 0


def test_a_change_that_failed_is_planned_again_and_one_applied_is_not(sb, client, stats, journal):
    # 1000001 has no bid rules: each winner's step is the add of a new bid rule, refused here
    rules = [{**WINNERS, "scope": {"campaigns": [1000001]}}, GEO]
    plan, first = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    sb.faults.configure({"rules": [{"status": 500, "path": "/api/campaign/add-bid-rule"}]})
    try:
        result = plan.apply(client, progress=False, journal=journal)
    finally:
        sb.faults.clear()
    outcomes = result.to_frame()
    assert set(outcomes.loc[outcomes["target"] == "bid_rule", "outcome"]) == {"failed"}
    assert set(outcomes.loc[outcomes["target"] == "country", "outcome"]) == {"applied"}
    plan, again = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    steps, redo = stepped(first), keyed(again)
    winners = steps[steps.index.get_level_values("rule") == "winners"]
    geo = steps[steps.index.get_level_values("rule") == "geo"]
    assert len(winners) > 3 and len(geo)
    assert set(redo.loc[winners.index, "status"]) == {"planned"}
    assert redo.loc[winners.index, "new"].astype(float).tolist() == pytest.approx(
        winners["new"].astype(float).tolist()
    )
    assert set(redo.loc[geo.index, "status"]) == {"already"}
    assert set(redo.loc[geo.index, "earlier_run"]) == {result.run_id}
    # the run repaired: its steps landed, and count
    assert toolkit.repair(client, result.run_id, journal=journal, progress=False).ok
    plan, repaired = evaluate_rules(rules, stats, client, journal=journal, **ALLOW)
    assert len(plan) == 0
    assert set(keyed(repaired).loc[winners.index, "earlier_run"]) == {result.run_id}


def test_runs_on_another_service_are_not_remembered(client, stats, journal, tmp_path):
    plan, _ = evaluate_rules(RULES, stats, client, journal=journal, **ALLOW)
    plan.apply(client, progress=False, journal=journal)
    with Sandbox(campaigns=12, seed=11) as other:  # the same demo account, another service
        there = toolkit.connect(api_key=other.api_keys[0], base_url=other.url, retries=0)
        elsewhere, decisions = evaluate_rules(RULES, stats, there, journal=journal, **ALLOW)
    assert len(stepped(decisions)) > 20 and decisions["earlier_run"].isna().all()


# --------------------------------------------------------------------------- the journal's word


URL = "http://127.0.0.1:9"
STEP = ("winners", 1000001, "subid", "bid_rule", "abc")


def journaled(
    book: Journal,
    outcomes: list[str],
    undoes: str | None = None,
    *,
    step: bool = False,
    finished: bool = True,
    repairs: str | None = None,
) -> str:
    """A run of the bid rule ``abc`` of 1000001 with these outcomes (and its provenance)."""
    from types import SimpleNamespace

    from toolkit.bulk import ApplyResult, Outcome, Plan
    from toolkit.bulk.provenance import Provenance

    plan = Plan()
    plan.repairs = repairs
    run_id = book.start_run(SimpleNamespace(base_url=URL), plan, undoes)
    if step:
        book.add_provenance(run_id, [Provenance(*STEP, None, dt.date(2026, 1, 31), "0.36")])
    item = dict(step="add", action="add", target="bid_rule", list_type=None)
    item |= dict(campaign_id=1000001, item="abc", bid=0.36)
    book.record(run_id, [Outcome(seq=0, **item, outcome=o) for o in outcomes])
    if finished:
        book.finish_run(run_id, ApplyResult(run_id=run_id))
    return run_id


def remembered(book: Journal) -> str | None:
    from toolkit.rules.memory import Memory

    (rule,) = load_rules([WINNERS])
    memory = Memory.read(book, [rule], URL, None, dt.date(2026, 1, 31))
    step = memory.blocking(rule, 1000001, "subid", "abc")
    return None if step is None else step.run_id


@pytest.mark.parametrize(
    ("outcomes", "counts"),
    [
        (["applied"], True),
        (["already"], True),
        (["unknown"], True),  # it may have landed: not risked twice
        (["failed"], False),
        (["applied", "failed", "restored"], False),  # the old value put back
        (["failed", "lost"], False),
        ([], False),  # never sent: a run cut off before its call
    ],
)
def test_a_step_counts_when_its_item_landed(tmp_path, outcomes, counts):
    book = Journal(tmp_path / "journal.db")
    run = journaled(book, outcomes, step=True)
    assert remembered(book) == (run if counts else None)


def test_undos_and_repairs_of_a_run_decide_whether_its_step_stands(tmp_path):
    book = Journal(tmp_path / "journal.db")
    run = journaled(book, ["applied"], step=True)
    failed_undo = journaled(book, ["failed"], undoes=run)
    assert remembered(book) == run  # the undo did not put it back
    undo = journaled(book, ["applied"], undoes=run)
    assert remembered(book) is None
    journaled(book, ["applied"], undoes=undo)  # the undo undone: the step stands again
    assert remembered(book) == run
    assert failed_undo
    other = Journal(tmp_path / "other.db")
    skipped = journaled(other, ["applied"], step=True)
    journaled(other, [], undoes=skipped)  # a finished undo that had nothing to do for it
    assert remembered(other) is None
    cut = Journal(tmp_path / "cut.db")
    run = journaled(cut, ["applied"], step=True)
    journaled(cut, [], undoes=run, finished=False)  # an undo cut off before its call
    assert remembered(cut) == run
    repaired = Journal(tmp_path / "repaired.db")
    run = journaled(repaired, ["failed"], step=True)
    assert remembered(repaired) is None
    journaled(repaired, ["applied"], repairs=run)  # the repair made the step
    assert remembered(repaired) == run


# --------------------------------------------------------------------------- as of


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A sandbox only read: its account snapshot, its statistics as a file and a frame."""
    path = tmp_path_factory.mktemp("asof") / "stats.csv"
    with Sandbox(campaigns=12, seed=11) as sb:
        sb.stats_export(path, days=14, seed=3)
        client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
        yield toolkit.load_account(client, progress=False), path, toolkit.read_stats(path)


ALL_DAYS = {"name": "every day", "level": "subid", "when": "clicks >= 1", "action": "blacklist",
            "scope": {"campaigns": [1000001]}}  # fmt: skip


def expected_clicks(frame: pd.DataFrame, day: dt.date) -> dict[str, float]:
    rows = upto(frame, day)
    rows = rows[(rows["campaign_id"] == 1000001) & (rows["level"] == "subid")]
    return rows.groupby(rows["key"].astype(str))["clicks"].sum().astype(float).to_dict()


@pytest.mark.parametrize("source", ["frame", "file"])
def test_as_of_cuts_a_rule_without_a_window_at_that_day(demo, source):
    account, path, frame = demo
    stats = frame if source == "frame" else path
    end = last(frame)
    day = end - dt.timedelta(days=4)
    _, whole = evaluate_rules([ALL_DAYS], stats, account, journal=None)
    _, cut = evaluate_rules([ALL_DAYS], stats, account, as_of=day, journal=None)
    for decisions, until in ((whole, end), (cut, day)):
        got = dict(zip(decisions["key"], decisions["clicks"].astype(float), strict=True))
        assert got == expected_clicks(frame, until)
        assert set(decisions["until"]) == {until} and decisions["since"].isna().all()
    assert sum(whole["clicks"]) > sum(cut["clicks"]) > 0


@pytest.mark.parametrize("source", ["frame", "file"])
def test_an_as_of_day_outside_the_statistics_is_an_error_naming_their_range(demo, source):
    account, path, frame = demo
    stats = frame if source == "frame" else path
    end = last(frame)
    start = frame["date"].min().date()
    span = f"({start} to {end})"
    for day in (start - dt.timedelta(days=1), end + dt.timedelta(days=1), "2025-06-01"):
        with pytest.raises(ValidationError) as caught:
            evaluate_rules([ALL_DAYS, {**GEO, "window": 7}], stats, account, as_of=day,
                           journal=None)  # fmt: skip
        message = str(caught.value)
        assert "\n" not in message and span in message and "outside the statistics" in message
    for day in (start, end):  # the first and the last day are in it
        evaluate_rules([ALL_DAYS], stats, account, as_of=day, journal=None)
    with pytest.raises(ValidationError, match="'yesterday' is not a date"):
        evaluate_rules([ALL_DAYS], stats, account, as_of="yesterday", journal=None)
