"""Payouts: a table per campaign and country, the rule's payout, and items without any payout
said so ("no payout known") instead of left out."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import toolkit
from toolkit.errors import ValidationError
from toolkit.rules import evaluate_rules
from toolkit.rules.decide import decide
from toolkit.rules.payouts import NO_PAYOUT, payout_for, read_payouts
from toolkit.stats import stats_frame

LAST = dt.date(2026, 1, 31)
KEYS = [f"{i:010x}" for i in range(0xA0, 0xAA)]  # 10 subIds, hexadecimal as the service takes
RULE = {"name": "losers", "level": "subid", "when": "p_loss >= 0.95 and clicks >= 1000",
        "action": "blacklist"}  # fmt: skip


def silent(campaign: int) -> pd.DataFrame:
    """10 subIds of ``campaign`` x 2,100 clicks x $63 each, zero conversions."""
    n = len(KEYS)
    return stats_frame(
        {
            "date": [pd.Timestamp(LAST, tz="UTC")] * n,
            "campaign_id": [campaign] * n,
            "level": ["subid"] * n,
            "key": KEYS,
            "impressions": [21_000] * n,
            "clicks": [2100] * n,
            "cost": [63.0] * n,
            "conversions": [0] * n,
            "revenue": [0.0] * n,
        }
    )


def test_silent_subids_are_decided_with_a_payout_and_said_so_without_one():
    stats = silent(7)
    without = decide([RULE], stats)
    assert len(without) == 10 and set(without["status"]) == {NO_PAYOUT}
    assert without["p_loss"].isna().all() and (without["clicks"] == 2100).all()
    why = without["why"].iloc[0]
    assert "no payout known for campaign 7" in why and "payouts table" in why
    assert "--payouts" in why and "clicks 2100" in why
    # a payout in the rule: cpc 0.03 / payout 10 = break-even 0.003; 2,100 clicks without one
    with_rule = decide([{**RULE, "payout": 10}], stats)
    assert set(with_rule["status"]) == {"decided"} and len(with_rule) == 10
    assert with_rule["break_even"].tolist() == pytest.approx([0.003] * 10)
    assert (with_rule["p_loss"] > 0.99).all()
    # or a payouts table
    table = pd.DataFrame({"campaign_id": [7], "country": [""], "payout": [10.0]})
    with_table = decide([RULE], stats, payouts=table)
    pd.testing.assert_frame_equal(with_table, with_rule)


def test_the_expected_roi_is_the_posterior_rate_at_the_payout_over_the_cpc():
    stats = silent(7)
    # with one subId converting, the others' posterior rate is drawn up from zero
    stats.loc[0, ["conversions", "revenue"]] = [30, 300.0]
    rule = {**RULE, "when": "roi_expected < -50", "payout": 10}
    got = decide([rule], stats).set_index("key")
    assert set(got["status"]) == {"decided"} and KEYS[0] not in got.index
    for key, row in got.iterrows():
        # by hand: payout 10 x the posterior rate / cpc 0.03, less 100 %
        expected = (10 * row["posterior_cr"] / 0.03 - 1) * 100
        assert -100 < expected < -50
        shown = float(row["why"].split("roi_expected ")[1].split(",")[0])
        assert shown == pytest.approx(expected, rel=1e-3), key
    # the raw ROI of a silent subId is -100 %; the expected one is not
    assert (got["posterior_cr"] > 0).all()
    # without a payout it is not known either
    silent_only = silent(7)
    said = decide([{**rule, "payout": None}], silent_only)
    assert set(said["status"]) == {NO_PAYOUT}


def test_an_item_that_misses_the_other_clauses_is_not_listed_without_a_payout():
    stats = silent(7)
    few = decide([{**RULE, "when": "p_loss >= 0.95 and clicks >= 5000"}], stats)
    assert few.empty  # 2,100 clicks: the condition could not hold whatever the payout
    plain = decide([{**RULE, "when": "cost > 50 and conversions = 0"}], stats)
    assert set(plain["status"]) == {"decided"}  # needs no payout


def test_the_table_comes_before_the_rule_and_a_country_before_its_campaign(tmp_path):
    path = tmp_path / "payouts.csv"
    path.write_text(
        "campaign_id,country,payout\n7,,2.5\n7,us,4\n7,Germany,3\n8,,1.5\n", encoding="utf-8"
    )
    table = read_payouts(path)
    assert table.to_dict("records")[1] == {"campaign_id": 7, "country": "US", "payout": 4.0}
    items = pd.DataFrame(
        {
            "campaign_id": [7, 7, 7, 7, 8, 9, 10],
            "level": ["country", "country", "country", "subid", "country", "subid", "subid"],
            "key": ["US", "DE", "FR", "US", "US", "ab", "cd"],
            "revenue": [0.0, 0, 0, 0, 0, 0, 12.0],
            "conversions": [0, 0, 0, 0, 0, 0, 4],
        }
    )
    got = payout_for(items, table, None)
    # own country, own country, the campaign's, a subId called US is no country, campaign 8's
    assert got[:5].tolist() == [4.0, 3.0, 2.5, 2.5, 1.5]
    assert np.isnan(got[5]) and got[6] == 3.0  # nothing known; revenue over conversions
    ruled = payout_for(items, table, 5.0)
    assert ruled[:5].tolist() == got[:5].tolist() and ruled[5:].tolist() == [5.0, 5.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("campaign_id,payout\n7,abc\n", "line 2: payout 'abc' is not a number above 0"),
        ("campaign_id,payout\n7,0\n", "line 2: payout '0' is not a number above 0"),
        ("campaign_id,country,payout\n7,,1\nx7,,2\n", "line 3: campaign_id 'x7' is not"),
        ("campaign_id,country,payout\n7,Atlantis,1\n", "country 'Atlantis' is not a country"),
        ("campaign_id,country,payout\n7,us,1\n7,US,2\n", "campaign 7, US has more than one"),
        ("campaign,payout\n7,1\n", "no campaign_id column"),
    ],
)
def test_a_bad_payouts_table_is_refused_with_its_file_and_line(tmp_path, text, message):
    path = tmp_path / "payouts.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError, match="payouts.csv") as caught:
        read_payouts(path)
    assert message in str(caught.value)


def _account_subids(client, stats_path):
    account = toolkit.load_account(client, progress=False)
    campaign = int(account.table("campaigns")["id"].iloc[0])
    stats = silent(campaign)
    stats.assign(date=stats["date"].dt.strftime("%Y-%m-%d")).to_csv(stats_path, index=False)
    return campaign


def test_evaluate_rules_and_the_command_line_take_a_payouts_table(
    sb, client, tmp_path, capsys, monkeypatch
):
    from toolkit.cli import main

    stats = tmp_path / "stats.csv"
    campaign = _account_subids(client, stats)
    payouts = tmp_path / "payouts.csv"
    payouts.write_text(f"campaign_id,country,payout\n{campaign},,10\n", encoding="utf-8")
    plan, decisions = evaluate_rules([RULE], stats, client, journal=None, payouts=payouts)
    assert set(decisions["status"]) == {"planned"} and len(plan.changes()) == 10
    result = evaluate_rules([RULE], stats, client, journal=None)
    assert set(result.decisions["status"]) == {NO_PAYOUT} and not len(result.plan)
    assert any("10 item(s) with no payout known" in w for w in result.plan.warnings)
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "rules:\n  - name: losers\n    level: subid\n    when: p_loss >= 0.95 and clicks >= 1000\n"
        "    action: blacklist\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    assert main(["rules", str(rules), str(stats)]) == 0
    out = capsys.readouterr().out
    assert "10 no payout known" in out and "item(s) with no payout known" in out
    assert main(["rules", str(rules), str(stats), "--payouts", str(payouts)]) == 0
    assert "10 planned" in capsys.readouterr().out
    missing = ["rules", str(rules), str(stats), "--payouts", str(tmp_path / "none.csv")]
    assert main(missing) == 2  # a file that is not there: one line, nothing read or sent
    assert "none.csv: no such file (the payouts table" in capsys.readouterr().err
