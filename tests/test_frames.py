"""Loaders and the Account snapshot, over real HTTP against the sandbox."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pandas.testing as pdt
import pytest

import toolkit
from toolkit import frames, spec
from toolkit.frames.schemas import SCHEMAS, dtype_names
from toolkit.sandbox import Sandbox

DOCS = Path(__file__).resolve().parent.parent / "docs" / "frames.md"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def client(sandbox: Sandbox) -> Any:
    with toolkit.connect(api_key=sandbox.api_keys[0], base_url=sandbox.url) as c:
        yield c


@pytest.fixture(scope="module")
def account(client: Any) -> toolkit.Account:
    return toolkit.load_account(client, progress=False)


@pytest.fixture(scope="module")
def details(client: Any, account: toolkit.Account) -> dict[int, dict[str, Any]]:
    """The raw full detail of every campaign, straight from the client."""
    return {int(cid): client.campaigns.get(int(cid), "full") for cid in account.campaigns["id"]}


def assert_schema(df: pd.DataFrame, name: str) -> None:
    """Columns, their order and their dtypes exactly as declared; a RangeIndex."""
    declared = SCHEMAS[name]
    assert list(df.columns) == list(declared), name
    for col, dtype in declared.items():
        assert df[col].dtype == dtype, f"{name}.{col}: {df[col].dtype} != {dtype}"
        if isinstance(dtype, pd.CategoricalDtype):
            assert list(df[col].cat.categories) == list(dtype.categories), f"{name}.{col}"
    assert isinstance(df.index, pd.RangeIndex)


def na(value: Any) -> Any:
    """Missing values of any kind as None, for comparing cells with raw answers."""
    return None if value is None or pd.isna(value) else value


# --------------------------------------------------------------------------- schemas and docs


def test_docs_list_every_frame_with_its_columns_and_dtypes() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented: dict[str, dict[str, str]] = {}
    for match in re.finditer(r"^### `(\w+)`\n(.*?)(?=^### |\Z)", text, re.M | re.S):
        rows = re.findall(r"^\| (\w+) \| ([^|]+?) \|", match.group(2), re.M)
        documented[match.group(1)] = {c: d for c, d in rows if c != "column"}
    assert set(documented) == set(SCHEMAS)
    for name in SCHEMAS:
        assert documented[name] == dtype_names(name), name


def test_frame_constructor_declares_dtypes_and_keeps_unknown_codes() -> None:
    df = frames.frame(
        "creatives",
        {
            "id": [1, 2],
            "status": ["New", "Approved"],
            "t_created": ["2026-01-05T12:33:40+02:00", None],
        },
    )
    assert str(df["id"].dtype) == "Int64"
    assert df["t_created"].iloc[0] == pd.Timestamp("2026-01-05T10:33:40Z")
    assert pd.isna(df["t_created"].iloc[1])
    with pytest.warns(UserWarning, match="Paused"):
        odd = frames.frame("creatives", {"status": ["New", "Paused?"]})
    assert odd["status"].tolist() == ["New", "Paused?"]
    with pytest.raises(KeyError, match="unknown columns"):
        frames.frame("lists", {"campaign": [1]})


# --------------------------------------------------------------------------- load_account


def test_every_table_of_a_load_has_its_declared_schema(account: toolkit.Account) -> None:
    for name, df in account.tables().items():
        assert_schema(df, name)
        assert len(df) > 0, name
    for kind, df in account.refs.items():
        assert_schema(df, f"ref_{kind}")
        assert len(df) > 0, kind
    assert set(account.refs) == set(spec.DICTIONARY_TYPES)
    assert_schema(account.balance, "balance")
    assert_schema(account.failures, "failures")
    assert account.failures.empty


def test_campaigns_match_the_list_and_the_details(
    client: Any, account: toolkit.Account, details: dict[int, dict[str, Any]]
) -> None:
    listed = client.campaigns.list()
    df = account.campaigns.set_index("id")
    assert list(df.index) == [item["id"] for item in listed]
    for item in listed:
        row = df.loc[item["id"]]
        assert row["ad_format"] == spec.FORMAT_BY_LABEL[item["ad_format"]]
        assert row["t_created"] == pd.Timestamp(item["t_created"])
        for col in (
            "name",
            "mode",
            "status",
            "work_status",
            "status_note",
            "vertical",
            "note",
            "frequency_capping",
            "user_id",
        ):
            assert na(row[col]) == item[col], (item["id"], col)
        detail = details[item["id"]]
        for col in [c for c in SCHEMAS["campaigns"] if c.startswith("limit_")] + ["url"]:
            assert na(row[col]) == detail[col], (item["id"], col)
        assert row["n_subid_black"] == len(detail["subIdBlack"])
        assert row["n_os"] == len(detail["os"])


def test_countries_match_each_country_set(
    account: toolkit.Account, details: dict[int, dict[str, Any]]
) -> None:
    names = dict(zip(account.refs["country"]["code"], account.refs["country"]["name"], strict=True))
    for cid, detail in details.items():
        expected = [
            (
                code,
                entry["price"],
                entry.get("l_d_sum"),
                entry.get("l_d_show"),
                entry.get("l_d_click"),
            )
            for entry in detail["countrySet"]
            for code in entry["geo"].values()
        ]
        rows = account.countries[account.countries["campaign_id"] == cid]
        got = [
            (r.country, r.bid, na(r.l_d_sum), na(r.l_d_show), na(r.l_d_click))
            for r in rows.itertuples()
        ]
        assert got == expected, cid
        assert rows["country_name"].tolist() == [names[c] for c in rows["country"]]
    assert account.countries["country_name"].notna().all()


def test_targets_match_the_full_detail(
    account: toolkit.Account, details: dict[int, dict[str, Any]]
) -> None:
    language = account.refs["language"].set_index("id")["name"]
    for cid, detail in details.items():
        expected = set()
        for field, kind in (
            ("category", "category"),
            ("os", "os"),
            ("browser", "browser"),
            ("ispMobile", "isp_mobile"),
        ):
            raw = detail.get(field) or {}
            expected |= {(kind, str(k), v, None) for k, v in raw.items()}
        for value in detail.get("quality") or []:
            expected.add(("quality", value, None, None))
        for value in detail.get("connectionType") or []:
            expected.add(("connection_type", value, None, None))
        for value in detail.get("language") or []:
            expected.add(("language", str(value), language[value], None))
        for value in detail.get("subsAge") or []:
            expected.add(("subs_age", str(value), spec.SUBS_AGE_GROUPS[value], None))
        for field, kind in (("city", "city"), ("region", "region")):
            expected |= {(kind, str(v), None, None) for v in detail.get(field) or []}
        for field, kind, list_type in (
            ("blackCidr", "cidr", "black"),
            ("whiteCidr", "cidr", "white"),
            ("blackDomain", "domain", "black"),
            ("whiteDomain", "domain", "white"),
        ):
            expected |= {(kind, v, None, list_type) for v in detail.get(field) or []}
        rows = account.targets[account.targets["campaign_id"] == cid]
        got = [(r.kind, r.value, na(r.label), na(r.list_type)) for r in rows.itertuples()]
        assert len(got) == len(set(got))
        assert set(got) == expected, cid
    kinds = set(account.targets["kind"])
    assert {"language", "city", "region", "cidr", "isp_mobile", "os"} <= kinds


def test_lists_match_the_list_read_operations(client: Any, account: toolkit.Account) -> None:
    checked = 0
    for cid in account.campaigns["id"].head(8):
        for name in spec.LISTS:
            rows = account.lists[
                (account.lists["campaign_id"] == cid) & (account.lists["list"] == name)
            ]
            assert rows["item"].tolist() == client.lists.get(int(cid), name), (cid, name)
            checked += len(rows)
    assert checked > 100


def test_rules_and_creatives_match_the_client(client: Any, account: toolkit.Account) -> None:
    for cid in account.campaigns["id"]:
        cid = int(cid)
        expected = [(i, r["bid"]) for r in client.bid_rules.list(cid) for i in r["items"]]
        rows = account.bid_rules[account.bid_rules["campaign_id"] == cid]
        assert list(zip(rows["item"], rows["bid"], strict=True)) == expected
        cpa = account.cpa_rules[account.cpa_rules["campaign_id"] == cid]
        assert cpa.astype(object).to_dict("records") == client.cpa_rules.list(cid)
    listed = client.creatives.list()
    assert account.creatives["id"].tolist() == [c["id"] for c in listed]
    first = account.creatives.iloc[0]
    assert first["title"] == listed[0]["title"]
    assert first["t_created"] == pd.Timestamp(listed[0]["t_created"])
    assert account.balance.iloc[0].to_dict() == client.account.balance()


def test_refs_split_labels_into_name_and_code(client: Any, account: toolkit.Account) -> None:
    raw = client.account.dictionaries()
    for kind in ("country", "language"):
        df = account.refs[kind]
        labels = [f"{n} ({c})" for n, c in zip(df["name"], df["code"], strict=True)]
        assert labels == list(raw[kind].values())
        assert df["id"].tolist() == [int(k) for k in raw[kind]]
    cats = account.refs["category"]
    assert len(cats) == sum(len(v) for v in raw["category"].values())
    pops = cats[cats["ad_format"] == "pops"]
    assert dict(zip(pops["id"].astype(str), pops["name"], strict=True)) == raw["category"]["pops"]


def test_join_merges_campaign_columns(account: toolkit.Account) -> None:
    joined = account.join("countries")
    assert len(joined) == len(account.countries)
    assert list(joined.columns[:7]) == list(account.countries.columns)
    names = account.campaigns.set_index("id")["name"]
    assert (joined["name"] == joined["campaign_id"].map(names)).all()
    assert joined["ad_format"].dtype == SCHEMAS["campaigns"]["ad_format"]
    creatives = account.join("creatives", ["name", "status"])
    assert list(creatives.columns[-2:]) == ["name", "status_campaign"]
    with pytest.raises(KeyError):
        account.join("nothing")


def test_repr_summarises_the_tables(account: toolkit.Account) -> None:
    text = repr(account)
    assert f"{len(account.campaigns)} campaigns" in text
    lines = {line.split()[0]: line.split()[1] for line in text.splitlines()[1:]}
    assert lines["lists"] == f"{len(account.lists):,}"
    assert lines["failures"].rstrip(">") == "0"
    page = account._repr_html_()
    assert "<table>" in page and "bid_rules" in page


# --------------------------------------------------------------------------- standalone loaders


def test_campaign_list_with_every_filter(client: Any) -> None:
    for filters in (
        {},
        {"status": "approved"},
        {"work_status": "paused"},
        {"ad_format": "pops"},
        {"mode": "cpc"},
        {"name": "push"},
        {"url": "example.com"},
    ):
        df = frames.load_campaigns(client, **filters)
        assert_schema(df, "campaign_list")
        assert df["id"].tolist() == [c["id"] for c in client.campaigns.list(**filters)], filters
    pops = frames.load_campaigns(client, ad_format="pops")
    assert set(pops["ad_format"]) == {"pops"} and pops["url"].notna().all()


def test_campaign_details_in_each_mode(client: Any, account: toolkit.Account) -> None:
    ids = [int(i) for i in account.campaigns["id"].head(6)]
    counters = [c for c in SCHEMAS["campaigns"] if c.startswith("n_")]
    short = frames.load_campaign_details(client, ids, mode="short")
    count = frames.load_campaign_details(client, ids, mode="count")
    full = frames.load_campaign_details(client, ids, mode="full", workers=3)
    for df in (short, count, full):
        assert_schema(df, "campaigns")
        assert df["id"].tolist() == ids
    assert short[counters].isna().all().all()
    expected = account.campaigns.head(6).reset_index(drop=True)
    pdt.assert_frame_equal(count, expected)
    pdt.assert_frame_equal(full, expected)
    limits = [c for c in SCHEMAS["campaigns"] if c.startswith("limit_")]
    pdt.assert_frame_equal(short[limits], expected[limits])
    with pytest.raises(ValueError):
        frames.load_campaign_details(client, ids, mode="everything")


def test_targeting_loaders_equal_the_account_tables(client: Any, account: toolkit.Account) -> None:
    refs = account.refs
    pdt.assert_frame_equal(frames.load_countries(client, refs=refs), account.countries)
    pdt.assert_frame_equal(frames.load_targets(client, refs=refs), account.targets)
    pdt.assert_frame_equal(frames.load_lists(client), account.lists)
    ids = [int(i) for i in account.campaigns["id"].head(4)]
    read = frames.load_lists(client, ids, lists=["subid_black", "source_black"], via="read")
    assert_schema(read, "lists")
    wanted = account.lists[
        account.lists["campaign_id"].isin(ids)
        & account.lists["list"].isin(["subid_black", "source_black"])
    ].reset_index(drop=True)
    pdt.assert_frame_equal(read, wanted)
    unlabelled = frames.load_targets(client, ids)
    assert_schema(unlabelled, "targets")


def test_rule_creative_and_account_loaders(client: Any, account: toolkit.Account) -> None:
    pdt.assert_frame_equal(frames.load_bid_rules(client), account.bid_rules)
    pdt.assert_frame_equal(frames.load_cpa_rules(client), account.cpa_rules)
    pdt.assert_frame_equal(frames.load_creatives(client), account.creatives)
    pdt.assert_frame_equal(frames.load_balance(client), account.balance)
    refs = frames.load_refs(client)
    for kind in spec.DICTIONARY_TYPES:
        pdt.assert_frame_equal(refs[kind], account.refs[kind])
        pdt.assert_frame_equal(frames.load_dictionary(client, kind), account.refs[kind])
    one = frames.load_creatives(client, int(account.creatives["campaign_id"].iloc[0]))
    assert_schema(one, "creatives")
    assert one["campaign_id"].nunique() == 1


def test_creative_details_and_video_files(client: Any, account: toolkit.Account) -> None:
    video = account.join("creatives", ["ad_format"])
    ids = video.loc[video["ad_format"] == "video", "id"].tolist()
    assert ids
    details = frames.load_creative_details(client, ids)
    assert_schema(details, "creative_details")
    assert details["id"].tolist() == ids
    files = frames.load_creative_files(client, ids)
    assert_schema(files, "creative_files")
    assert len(files) > 0
    raw = client.creatives.get(int(files["creative_id"].iloc[0]))
    first = files.iloc[0]
    assert first["url"] == raw["files"][0]["url"]
    assert first["bit_rate"] == raw["files"][0]["bit_rate"]
    assert first["t_event"] == pd.Timestamp(raw["files"][0]["t_event"])
    assert (details["convert"].isin(spec.VIDEO_CONVERT_STATES)).all()


def test_search_and_prices(client: Any) -> None:
    cities = frames.load_search(client, "city", "Springfield", limit=5)
    assert_schema(cities, "search")
    raw = client.account.search("city", "Springfield", limit=5)
    assert cities["label"].tolist() == list(raw.values())
    for row in cities.itertuples():
        region = f" - {row.region}" if not pd.isna(row.region) else ""
        assert row.label == f"{row.name} ({row.country}{region})"
    assert cities["region"].notna().any()
    isps = frames.load_search(client, "isp-mobile", "Voda")
    assert set(isps["type"]) == {"isp-mobile"} and isps["country"].notna().all()

    one = frames.load_prices(client, "push", quality=["high"], country=["US"])
    assert_schema(one, "prices")
    answer = client.account.price("push", quality=["high"], country=["US"])
    assert one.iloc[0]["country"] == "US"
    assert one.iloc[0]["minimum_price"] == answer["minimum"]["price"]
    assert one.iloc[0]["recommend_traffic"] == answer["recommend"]["estimated_traffic"]
    many = frames.load_prices(client, "pops", ["US", "DE", "BR"], quality=["high"])
    assert many["country"].tolist() == ["US", "DE", "BR"]
    de = client.account.price("pops", quality=["high"], country=["DE"])
    assert many.iloc[1]["minimum_price"] == de["minimum"]["price"]


# --------------------------------------------------------------------------- snapshots


def test_save_and_load_round_trip(
    account: toolkit.Account, sandbox: Sandbox, tmp_path: Path
) -> None:
    folder = account.save(tmp_path / "snap")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["schema_version"] == frames.SCHEMA_VERSION
    assert manifest["files"]["lists"]["rows"] == len(account.lists)
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert all(key.encode() not in data for key in sandbox.api_keys), path
    back = toolkit.Account.load(folder)
    for name, df in account.tables().items():
        pdt.assert_frame_equal(back.table(name), df)
    for kind, df in account.refs.items():
        pdt.assert_frame_equal(back.refs[kind], df)
    pdt.assert_frame_equal(back.balance, account.balance)
    pdt.assert_frame_equal(back.failures, account.failures)
    assert back.loaded_at == account.loaded_at
    assert (back.mode, back.source) == (account.mode, account.source)
    again = toolkit.Account.load(folder / "manifest.json")
    pdt.assert_frame_equal(again.targets, account.targets)

    manifest["schema_version"] = 0
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(frames.SnapshotError, match="schema version"):
        toolkit.Account.load(folder)
    with pytest.raises(frames.SnapshotError):
        toolkit.Account.load(tmp_path / "nowhere")


# --------------------------------------------------------------------------- failures


def test_a_campaign_of_another_account_fails_alone(
    client: Any, sandbox: Sandbox, account: toolkit.Account
) -> None:
    with toolkit.connect(api_key=sandbox.api_keys[1], base_url=sandbox.url) as other:
        foreign = other.campaigns.list()[0]["id"]
    mine = [int(i) for i in account.campaigns["id"].head(3)]
    loaded = toolkit.load_account(client, [mine[0], foreign, *mine[1:]], progress=False)
    assert loaded.campaigns["id"].tolist() == mine
    failures = loaded.failures
    assert_schema(failures, "failures")
    assert failures[["campaign_id", "operation", "error"]].astype(object).values.tolist() == [
        [foreign, "campaign.item", "NotFoundError"]
    ]
    assert str(foreign) in failures["message"].iloc[0]
    for name, df in loaded.tables().items():
        key = "id" if name == "campaigns" else "campaign_id"
        assert set(df[key]) <= set(mine), name
    expected = account.lists[account.lists["campaign_id"].isin(mine)].reset_index(drop=True)
    pdt.assert_frame_equal(loaded.lists, expected)
    assert "campaign.item NotFoundError 1" in repr(loaded)


def test_failing_calls_keep_the_rest_and_are_reported(
    fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    sb = fresh_sandbox
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0)
    everything = toolkit.load_account(client, progress=False)
    ids = everything.campaigns["id"].tolist()
    sb.faults.configure(
        {
            "rules": [
                {"status": 500, "path": "/api/campaign/bid-rules", "count": 1},
                {"status": 503, "path": "/api/campaign/balance", "count": 1},
            ]
        }
    )
    loaded = toolkit.load_account(client, progress=False)
    sb.faults.clear()
    failures = loaded.failures
    assert len(failures) == 2
    by_op = failures.set_index("operation")
    assert by_op.loc["bid_rule.list", "error"] == "ApiError"
    assert pd.isna(by_op.loc["account.balance", "campaign_id"])
    failed = int(by_op.loc["bid_rule.list", "campaign_id"])
    kept = [i for i in ids if i != failed]
    assert loaded.campaigns["id"].tolist() == kept
    for name, df in loaded.tables().items():
        key = "id" if name == "campaigns" else "campaign_id"
        assert failed not in set(df[key]), name
        assert_schema(df, name)
    assert loaded.balance.empty
    assert_schema(loaded.balance, "balance")
    expected = everything.countries[everything.countries["campaign_id"] != failed]
    pdt.assert_frame_equal(loaded.countries, expected.reset_index(drop=True))
    back = toolkit.Account.load(loaded.save(tmp_path / "partial"))
    pdt.assert_frame_equal(back.failures, loaded.failures)
    assert json.loads((tmp_path / "partial" / "manifest.json").read_text())["failures"][0][
        "operation"
    ] in ("bid_rule.list", "account.balance")


def test_a_timeout_is_a_transport_failure(fresh_sandbox: Sandbox) -> None:
    sb = fresh_sandbox
    client = toolkit.connect(api_key=sb.api_keys[0], base_url=sb.url, retries=0, timeout=(2, 0.3))
    ids = [c["id"] for c in client.campaigns.list()]
    sb.faults.configure({"rules": [{"hang_s": 1, "count": 1, "path": "/api/campaign/cpa-rules"}]})
    loaded = toolkit.load_account(client, ids, progress=False)
    assert loaded.failures[["operation", "error"]].values.tolist() == [
        ["cpa_rule.list", "TransportError"]
    ]
    assert len(loaded.campaigns) == len(ids) - 1


def test_a_bad_key_is_raised(sandbox: Sandbox) -> None:
    client = toolkit.connect(api_key="not-a-key", base_url=sandbox.url, retries=0)
    with pytest.raises(toolkit.AuthError):
        toolkit.load_account(client, progress=False)
    with pytest.raises(toolkit.AuthError):
        toolkit.load_account(client, [1000001, 1000002], progress=False)


# --------------------------------------------------------------------------- edges


def test_progress_false_prints_nothing(client: Any, capfd: pytest.CaptureFixture[str]) -> None:
    ids = [1000001, 1000002]
    toolkit.load_account(client, ids, progress=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    toolkit.load_account(client, ids, progress=True)
    out, err = capfd.readouterr()
    assert "Loading account" in err


def test_an_empty_load_gives_empty_typed_frames(client: Any, sandbox: Sandbox) -> None:
    before = sandbox.stats()
    empty = toolkit.load_account(client, [], progress=False)
    calls = {k: v - before.get(k, 0) for k, v in sandbox.stats().items()}
    assert sum(calls.values()) == 2  # dictionaries and balance only
    for name, df in empty.tables().items():
        assert df.empty
        assert_schema(df, name)
    assert empty.failures.empty
    assert len(empty.refs["country"]) > 0
    assert "0 campaigns" in repr(empty)
    assert empty.join("targets").empty


def test_count_mode_skips_the_contents(client: Any, account: toolkit.Account) -> None:
    ids = [int(i) for i in account.campaigns["id"].head(3)]
    light = toolkit.load_account(client, ids, mode="count", progress=False)
    assert light.loaded_tables == ("campaigns", "bid_rules", "cpa_rules", "creatives")
    for name in ("countries", "targets", "lists"):
        assert light.table(name).empty
        assert_schema(light.table(name), name)
    pdt.assert_frame_equal(light.campaigns, account.campaigns.head(3))
    assert "not loaded (mode=count)" in repr(light)
