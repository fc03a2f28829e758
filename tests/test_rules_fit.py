"""Rules over statistics that do not fit the account or the service, against a sandbox over
real HTTP: items the service does not take are left out of the plan with their status (and
the rest of their batch applies), campaigns the account does not have are named (and the
command line stops when it has none of them), the read options reach the statistics readers,
the rows a reader skipped are told, and a rules file without rules is refused in one line."""

from __future__ import annotations

import secrets

import pandas as pd
import pytest

import toolkit
from toolkit.sandbox import Sandbox

from .conftest import Api, cli_runner

#: Campaigns of the sandbox (12 campaigns, seed 11): a started push campaign without subId
#: lists, and one whose country bids are known.
PUSH = 1000001
BLACK_ALL = {"name": "all", "level": "subid", "when": "clicks >= 1", "action": "blacklist"}
RULES_YAML = """\
rules:
  - name: all
    level: subid
    when: clicks >= 1
    action: blacklist
"""
WRITES = ("/add-", "/drop-", "/update", "/start", "/pause", "/archive", "/create", "/batch")


def stats_csv(path, rows) -> str:
    """A statistics export of ``(campaign_id, level, key)`` rows, 50 clicks each."""
    df = pd.DataFrame(rows, columns=["campaign_id", "level", "key"])
    df.insert(0, "date", "2026-01-30")
    df = df.assign(impressions=500, clicks=50, cost=1.0, conversions=0, revenue=0.0)
    df.to_csv(path, index=False)
    return str(path)


def hex_subids(n: int) -> list[str]:
    return [secrets.token_hex(16) for _ in range(n)]


def writes(sb: Sandbox) -> list[str]:
    return [k for k in sb.stats() if not k.startswith("GET ") or any(w in k for w in WRITES)]


@pytest.fixture()
def cli(sb, tmp_path, monkeypatch, capsys):
    """``cli(*args) -> (exit code, stdout, stderr)`` against ``sb`` (a fresh sandbox)."""
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    (tmp_path / "rules.yaml").write_text(RULES_YAML, encoding="utf-8")
    return cli_runner(sb, capsys)


# --------------------------------------------------------------------------- items not taken


def test_a_non_hex_subid_is_left_out_and_the_other_21_apply(sb, cli, tmp_path):
    good = hex_subids(21)
    stats = stats_csv(tmp_path / "stats.csv", [(PUSH, "subid", k) for k in [*good, "zz-top"]])
    out = tmp_path / "decisions.csv"
    code, text, err = cli(
        "rules", str(tmp_path / "rules.yaml"), stats, "--apply", "--yes", "--decisions", str(out)
    )
    assert code == 0, text + err
    status = "not accepted: a subId is 1 to 64 hexadecimal digits"
    assert "Plan: 1 call, 21 changes on 1 campaign" in text
    assert f"Decisions: 22 (21 planned, 1 {status})" in text
    assert "1 item(s) left out of the plan, the service does not take them" in text
    assert "'zz-top'" in text and "failed" not in text
    decisions = pd.read_csv(out, dtype={"key": str})
    assert decisions.set_index("key").loc["zz-top", "status"] == status
    assert set(decisions.loc[decisions["key"] != "zz-top", "outcome"]) == {"applied"}
    live = Api(sb.url, sb.api_keys[0]).item(PUSH)["subIdBlack"]  # read apart from the toolkit
    assert set(good) <= set(live) and "zz-top" not in live


def test_items_the_service_does_not_take_at_every_level_never_reach_the_plan(account, tmp_path):
    code = account.table("countries").query("campaign_id == @PUSH")["country"].iloc[0]
    rows = [(PUSH, "source", k) for k in ("12345", "0", "abc")]
    rows += [(PUSH, "subid", k) for k in ("ab12", "xxx", "f" * 65)]
    rows += [(PUSH, "country", k) for k in (code, "Atlantis")]
    rules = [
        {"name": "src", "level": "source", "when": "clicks >= 1", "action": "blacklist"},
        {"name": "sub", "level": "subid", "when": "clicks >= 1", "action": "bid", "bid": 0.01},
        {"name": "geo", "level": "country", "when": "clicks >= 1", "action": "bid", "bid": 0.05},
    ]
    stats = toolkit.read_stats(stats_csv(tmp_path / "stats.csv", rows))
    result = toolkit.evaluate_rules(rules, stats, account, allow=["bid_jump"], journal=None)
    plan, decisions = result
    got = dict(zip(decisions["key"], decisions["status"], strict=True))
    source = "not accepted: a source id is a positive integer (at most 9223372036854775807)"
    subid = "not accepted: a subId is 1 to 64 hexadecimal digits"
    country = "not accepted: a country code is ISO 3166-1 alpha-2, upper case"
    assert got == {
        "12345": "planned",
        "0": source,
        "abc": source,
        "ab12": "planned",
        "xxx": subid,
        "f" * 65: subid,
        code: "planned",
        "Atlantis": country,
    }
    assert {str(e.key) for e in plan.edits() if e.what != "drop"} == {"12345", "ab12", code}
    refused = {status: set(keys) for status, keys in result.fit.refused.items()}
    assert refused == {country: {"Atlantis"}, source: {"0", "abc"}, subid: {"xxx", "f" * 65}}
    assert any("2 item(s) left out of the plan" in w for w in plan.warnings)


@pytest.fixture(scope="module")
def shared():
    """A sandbox the tests below only read."""
    with Sandbox(campaigns=12, seed=11) as sandbox:
        yield sandbox


@pytest.fixture()
def account(shared):
    client = toolkit.connect(api_key=shared.api_keys[0], base_url=shared.url, retries=0)
    return toolkit.load_account(client, progress=False)


@pytest.fixture()
def read_cli(shared, tmp_path, monkeypatch, capsys):
    """``cli(...)`` against the shared sandbox (commands that send nothing)."""
    monkeypatch.setenv("CAMPAIGN_API_KEY", shared.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", shared.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    (tmp_path / "rules.yaml").write_text(RULES_YAML, encoding="utf-8")
    return cli_runner(shared, capsys)


# --------------------------------------------------------------------------- campaigns missing


def tracker_ids(n: int) -> list[int]:
    return [7000 + 13 * i for i in range(n)]


def test_statistics_of_no_campaign_of_the_account_stop_the_command(shared, read_cli, tmp_path):
    ids = tracker_ids(41)
    stats = stats_csv(tmp_path / "stats.csv", [(c, "subid", "ab12") for c in ids])
    code, out, err = read_cli("rules", str(tmp_path / "rules.yaml"), stats, "--apply", "--yes")
    shown = ", ".join(map(str, ids[:10]))
    assert code == 2 and out == ""
    assert err == (
        f"campaign-toolkit: none of the 41 campaign(s) of the statistics is in the account:"
        f" {shown} and 31 more; are they the tracker's ids? Name the column with the"
        " network's campaign id (columns=, --column NAME=campaign_id) or give a campaign map"
        " (campaign_map=, --campaign-map FILE)\n"
    )
    assert writes(shared) == []


def test_statistics_with_some_campaigns_missing_name_them_and_plan_the_rest(read_cli, tmp_path):
    ids = tracker_ids(3)
    rows = [(c, "subid", "ab12") for c in [*ids, PUSH]]
    stats = stats_csv(tmp_path / "stats.csv", rows)
    code, out, err = read_cli("rules", str(tmp_path / "rules.yaml"), stats)
    assert code == 0, err
    assert out.startswith("Plan: 1 call, 1 change on 1 campaign")
    assert (
        f"warning: 3 campaign(s) of the statistics are not in the account: {ids[0]}, {ids[1]},"
        f" {ids[2]}; are they the tracker's ids?"
    ) in out
    assert "Decisions: 4 (3 campaign not in the account, 1 planned)" in out


def test_evaluate_rules_tells_the_campaigns_missing(account, tmp_path):
    ids = tracker_ids(2)
    stats = stats_csv(tmp_path / "stats.csv", [(c, "subid", "ab12") for c in [*ids, PUSH]])
    result = toolkit.evaluate_rules([BLACK_ALL], stats, account, journal=None)
    plan, decisions = result
    assert result.fit.missing == tuple(ids) and not result.fit.none_known
    assert result.fit.campaigns == 3
    by_campaign = dict(zip(decisions["campaign_id"], decisions["status"], strict=True))
    assert by_campaign == {ids[0]: "campaign not in the account",
                           ids[1]: "campaign not in the account", PUSH: "planned"}  # fmt: skip
    assert len(plan) == 1
    assert result.fit.missing_line() in plan.warnings
    only = stats_csv(tmp_path / "only.csv", [(c, "subid", "ab12") for c in ids])
    alone = toolkit.evaluate_rules([BLACK_ALL], only, account, journal=None)
    assert alone.fit.none_known and len(alone.plan) == 0
    assert alone.fit.missing_line().startswith("none of the 2 campaign(s) of the statistics")
    # a campaign-level rule of a missing campaign is named the same way, whatever its status
    pause = {
        "name": "stop",
        "level": "campaign",
        "of": "subid",
        "when": "cost > 0",
        "action": "pause",
    }
    _, paused = toolkit.evaluate_rules([pause], only, account, journal=None)
    assert set(paused["status"]) == {"campaign not in the account"}


# --------------------------------------------------------------------------- rules files


@pytest.mark.parametrize(
    "text",
    ["", "# no rules yet\n", "rules: []\n"],
    ids=["empty", "comments only", "empty list"],
)
def test_a_rules_file_without_rules_is_refused_in_one_line(shared, read_cli, tmp_path, text):
    (tmp_path / "empty.yaml").write_text(text, encoding="utf-8")
    stats = stats_csv(tmp_path / "stats.csv", [(PUSH, "subid", "ab12")])
    before = shared.stats()
    path = tmp_path / "empty.yaml"
    code, out, err = read_cli("rules", str(path), stats)
    said = (
        "the rules file holds no rules"
        if text.strip().startswith("rules")
        else (f"{path}: the rules file is empty; write rules in it (see docs/rules.md)")
    )
    assert (code, out, err) == (2, "", f"campaign-toolkit: {said}\n")
    assert shared.stats() == before  # refused before connecting


def test_a_rules_file_of_disabled_rules_is_refused_too(read_cli, tmp_path):
    (tmp_path / "off.yaml").write_text(RULES_YAML + "    enabled: false\n", encoding="utf-8")
    stats = stats_csv(tmp_path / "stats.csv", [(PUSH, "subid", "ab12")])
    code, out, err = read_cli("rules", str(tmp_path / "off.yaml"), stats)
    assert code == 2 and "the rules file holds no enabled rules (1 disabled)" in err


# --------------------------------------------------------------------------- read options

#: A ``;`` export whose dates read two ways (2 January or 1 February) and whose cost reads
#: two ways (1.25 or 1250): the reader refuses it without the read options.
TWO_WAYS = """\
date;campaign_id;level;key;impressions;clicks;cost;conversions;revenue
02/01/2026;{cid};subid;ab12;500;50;1.250;0;0
"""
UUID = "7f3c2a10-0c1e-4b7e-9a53-0d5f2b1c9e11"


def decisions_of(read_cli, tmp_path, stats, *options) -> pd.DataFrame:
    out = tmp_path / "decisions.csv"
    code, text, err = read_cli(
        "rules", str(tmp_path / "rules.yaml"), stats, "--decisions", str(out), *options
    )
    assert code == 0, text + err
    return pd.read_csv(out, dtype={"key": str})


def test_date_format_and_decimal_reach_the_reader_from_the_command_line(read_cli, tmp_path, capsys):
    stats = tmp_path / "stats.csv"
    stats.write_text(TWO_WAYS.format(cid=PUSH), encoding="utf-8")
    code, out, err = read_cli("rules", str(tmp_path / "rules.yaml"), str(stats))
    assert code == 2 and "date_format" in err and out == ""
    day_first = decisions_of(
        read_cli, tmp_path, str(stats), "--date-format", "%d/%m/%Y", "--decimal", ","
    )
    assert day_first[["until", "cost"]].to_dict("records") == [
        {"until": "2026-01-02", "cost": 1250.0}
    ]
    month_first = decisions_of(
        read_cli, tmp_path, str(stats), "--date-format", "%m/%d/%Y", "--decimal", "."
    )
    assert month_first[["until", "cost"]].to_dict("records") == [
        {"until": "2026-02-01", "cost": 1.25}
    ]
    with pytest.raises(SystemExit) as stop:  # the parser refuses it
        read_cli("rules", str(tmp_path / "rules.yaml"), str(stats), "--date-format", "dd/mm")
    assert stop.value.code == 2 and "'dd/mm' is not a date format" in capsys.readouterr().err


def test_a_campaign_map_names_the_networks_campaigns_and_totals_rows_are_told(read_cli, tmp_path):
    stats = tmp_path / "stats.csv"
    stats.write_text(
        "date,campaign_id,level,key,impressions,clicks,cost,conversions,revenue\n"
        f"2026-01-30,{UUID},subid,ab12,500,50,1.5,0,0\n"
        "Total,,,,500,50,1.5,0,0\n",
        encoding="utf-8",
    )
    code, out, err = read_cli("rules", str(tmp_path / "rules.yaml"), str(stats))
    assert code == 2 and "campaign_map" in err
    (tmp_path / "map.csv").write_text(f"tracker,network\n{UUID},{PUSH}\n", encoding="utf-8")
    missing = read_cli(
        "rules", str(tmp_path / "rules.yaml"), str(stats), "--campaign-map", "nowhere.csv"
    )
    assert missing[0] == 2 and "nowhere.csv: no such file (the campaign map" in missing[2]
    code, out, err = read_cli(
        "rules", str(tmp_path / "rules.yaml"), str(stats), "--campaign-map",
        str(tmp_path / "map.csv"),
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith("Plan: 1 call, 1 change on 1 campaign")
    note = f"{stats}: skipped 1 totals row (line 3)"
    assert (out + err).count(note) == 1 and note in out  # once, in the plan's warnings
    assert "Decisions: 1 (1 planned)" in out


def test_evaluate_rules_and_backtest_take_the_read_options(account, tmp_path):
    stats = tmp_path / "stats.csv"
    stats.write_text(TWO_WAYS.format(cid=PUSH), encoding="utf-8")
    read = {"date_format": "%d/%m/%Y", "decimal": ","}
    result = toolkit.evaluate_rules([BLACK_ALL], str(stats), account, journal=None, **read)
    row = result.decisions.iloc[0]
    assert (str(row["until"]), row["cost"], row["status"]) == ("2026-01-02", 1250.0, "planned")
    replay = toolkit.backtest([BLACK_ALL], str(stats), **read)
    assert replay.days == [pd.Timestamp("2026-01-02").date()]
    assert replay.decisions["key"].tolist() == ["ab12"]
    with pytest.raises(toolkit.errors.StatsError, match="date_format"):
        toolkit.backtest([BLACK_ALL], str(stats))
    frame = toolkit.read_stats(stats, **read)
    with pytest.raises(toolkit.errors.ValidationError, match="date_format=: options of reading"):
        toolkit.evaluate_rules([BLACK_ALL], frame, account, journal=None, date_format="%d/%m/%Y")


def test_read_options_given_are_passed_on_and_the_others_not(monkeypatch, tmp_path):
    from toolkit.rules.decide import Stats, read_options
    from toolkit.stats import duck

    seen: list[dict] = []
    real = duck.window_sums

    def recording(path, days, **kwargs):
        seen.append(kwargs)
        return real(path, days, **kwargs)

    monkeypatch.setattr(duck, "window_sums", recording)
    stats = tmp_path / "stats.csv"
    stats.write_text(TWO_WAYS.format(cid=PUSH), encoding="utf-8")
    Stats(stats, date_format="%d/%m/%Y", decimal=",", campaign_map=None).prefetch([None])
    assert set(seen[0]) == {"as_of", "columns", "date_format", "decimal", "per_day"}
    with pytest.raises(toolkit.errors.ValidationError, match="unknown read option"):
        read_options(datefmt="%d")
