"""Named accounts: the config file's profiles, ``connect(profile=)`` and ``toolkit.profiles()``,
against a sandbox of three accounts over real HTTP."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolkit
from toolkit.client.client import read_config
from toolkit.sandbox import Sandbox


@pytest.fixture(scope="module")
def three() -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, accounts=3, seed=3) as sb:
        yield sb


def user_of(client: toolkit.Client) -> int:
    return int(client.account.balance()["user_id"])


@pytest.fixture()
def config(three: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config file naming the sandbox's three accounts, each key given another way."""
    keys = three.api_keys
    key_file = tmp_path / "b.key"
    key_file.write_text(keys[1] + "\n", encoding="utf-8")
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[default]
base_url = "{three.url}"
retries = 1

[profiles.client-a]
api_key_env = "CLIENT_A_KEY"

[profiles.client-b]
api_key_file = "{key_file}"

[profiles."client.c"]
api_key = "{keys[2]}"
retries = 0
""",
        encoding="utf-8",
    )
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    monkeypatch.setenv("CLIENT_A_KEY", keys[0])
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        monkeypatch.delenv(name, raising=False)
    return path


def test_each_profile_connects_to_its_own_account_with_its_own_key(
    config: Path, three: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert toolkit.profiles() == ["client-a", "client-b", "client.c"]
    # the environment's key is another account's: a profile never takes it
    monkeypatch.setenv("CAMPAIGN_API_KEY", three.api_keys[1])
    users = {}
    for name in toolkit.profiles():
        with toolkit.connect(profile=name) as client:
            users[name] = user_of(client)
            assert client.base_url == three.url
            assert name in client.key_source or "config file" in client.key_source
    assert len(set(users.values())) == 3
    with toolkit.connect() as default_client:  # no profile: the environment's key, as before
        assert user_of(default_client) == users["client-b"]


def test_a_profile_takes_the_defaults_options_unless_it_sets_its_own(config: Path) -> None:
    with toolkit.connect(profile="client-a") as a, toolkit.connect(profile="client.c") as c:
        assert a.options.retries == 1
        assert c.options.retries == 0
    assert "profiles" not in read_config()  # [default] alone is connect()'s options


def test_where_each_key_came_from_is_said_and_the_key_is_not(config: Path, three: Sandbox) -> None:
    profiles = toolkit.client.client.read_profiles()
    with toolkit.connect(profile="client-b") as b:
        assert "b.key" in b.key_source and "client-b" in b.key_source
        for text in (b.key_source, repr(b), repr(profiles["client-b"])):
            assert all(key not in text for key in three.api_keys)
    shown = repr(profiles["client.c"]) + repr(list(profiles.values()))
    assert three.api_keys[2] not in shown
    with pytest.raises(TypeError):
        pickle.dumps(profiles["client.c"].key())


def test_an_unknown_profile_is_refused_naming_the_known_ones(config: Path) -> None:
    with pytest.raises(toolkit.ConfigError, match=r"unknown account 'client-d'.*client-a"):
        toolkit.connect(profile="client-d")


def test_a_profile_with_an_api_key_argument_is_refused(config: Path, three: Sandbox) -> None:
    with pytest.raises(toolkit.ConfigError, match="not both"):
        toolkit.connect(api_key=three.api_keys[0], profile="client-a")


def test_a_missing_environment_variable_fails_that_profile_only(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLIENT_A_KEY")
    with pytest.raises(toolkit.ConfigError, match="client-a.*CLIENT_A_KEY is not set"):
        toolkit.connect(profile="client-a")
    with toolkit.connect(profile="client-b") as b:
        assert b.account.balance()


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('[profiles.x]\nbase_url = "http://h"\n', "exactly one of api_key.*none given"),
        ('[profiles.x]\napi_key = "k1234567"\napi_key_env = "E"\n', "api_key and api_key_env"),
        ('[profiles."a b"]\napi_key = "k1234567"\n', "letters, digits"),
        ('[profiles.all]\napi_key = "k1234567"\n', "not 'all'"),
        ("[profiles]\nx = 3\n", r"\[profiles.x\] must be a table"),
    ],
)
def test_a_bad_profile_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, problem: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(table, encoding="utf-8")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    with pytest.raises(toolkit.ConfigError, match=problem) as caught:
        toolkit.profiles()
    assert str(path) in str(caught.value)
    assert "k1234567" not in str(caught.value)


def test_without_any_key_the_profiles_are_the_builtin_sandboxs_accounts(
    own_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    for name in ("CAMPAIGN_API_KEY", "CAMPAIGN_API_URL"):
        monkeypatch.delenv(name, raising=False)
    assert toolkit.profiles() == ["demo", "northwind-media"]
    with toolkit.connect(profile="demo") as demo, toolkit.connect() as default:
        assert user_of(demo) == user_of(default)
        with toolkit.connect(profile="northwind-media") as second:
            assert user_of(second) != user_of(demo)
            ids = {int(c["id"]) for c in second.campaigns.list()}
            assert ids.isdisjoint(int(c["id"]) for c in demo.campaigns.list())


def test_with_a_key_but_no_profiles_naming_one_is_refused_with_what_to_add(
    sandbox_cli: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(toolkit.ConfigError, match=r"add \[profiles.client-a\]"):
        toolkit.connect(profile="client-a")
    with pytest.raises(toolkit.ConfigError, match="no profiles are configured"):
        toolkit.profiles()


# --------------------------------------------------------------------------- the command line


def test_the_command_line_lists_loads_and_saves_the_accounts(
    config: Path, three: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import cli_runner

    run = cli_runner(three, capsys)
    assert run("accounts") == (0, "client-a\nclient-b\nclient.c\n", "")
    code, out, err = run(
        "accounts",
        "--account",
        "client.c,client-a",
        "--load",
        "--quiet",
        "--save",
        str(tmp_path / "set"),
    )
    assert code == 0, err
    assert "client.c: 3 campaigns" in out and "client-a: 6 campaigns" in out
    assert toolkit.AccountSet.load(tmp_path / "set").names == ["client.c", "client-a"]
    assert all(key not in out + err for key in three.api_keys)


def test_the_command_line_reports_an_account_that_could_not_load(
    config: Path,
    three: Sandbox,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.conftest import cli_runner

    monkeypatch.delenv("CLIENT_A_KEY")
    code, out, err = cli_runner(three, capsys)("accounts", "--load", "--quiet")
    assert code == 3
    assert "client-a: not loaded, ConfigError" in out and "1 account(s) not loaded" in err


def test_account_picks_the_profile_of_a_one_account_command(
    config: Path, three: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import cli_runner

    run = cli_runner(three, capsys)
    book = tmp_path / "b.xlsx"
    code, out, err = run("export", "--account", "client-b", str(book))
    assert code == 0, err
    from toolkit.bulk.workbook import read_workbook

    exported = set(read_workbook(book).desired["campaigns"]["id"])
    with toolkit.connect(profile="client-b") as b:
        assert exported == {int(c["id"]) for c in b.campaigns.list()}
    # a one-account workbook is planned for one account: several are refused, naming them
    code, out, err = run("plan", "--account", "all", str(book))
    assert code == 2 and "works on one account" in err
    code, out, err = run("export", "--account", "client-b", "--base-url", three.url, str(book))
    assert code == 2 and "leave out --base-url" in err
