"""Where the api-key comes from: a refused key says so (argument, environment variable,
config file, key file, standard input, prompt), never showing the key; the command line
reads the key from a file or a prompt so that it stays out of ``ps``.

Everything runs against a sandbox over real HTTP; the command line runs in-process, except
the prompt, which runs in a process of its own without a terminal (``getpass`` then reads
standard input).
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolkit
from toolkit import AuthError, ConfigError, cli
from toolkit.sandbox import Sandbox

WRONG = "feedface" * 4
FINGERPRINT = hashlib.sha256(WRONG.encode()).hexdigest()[:8]


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(campaigns=2) as sandbox:
        yield sandbox


@pytest.fixture()
def env(sb, monkeypatch, tmp_path) -> Path:
    """The sandbox's URL in the environment, no key there, a config file that is missing."""
    monkeypatch.delenv("CAMPAIGN_API_KEY", raising=False)
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_JOURNAL", str(tmp_path / "journal.db"))
    return tmp_path


def write_config(folder: Path, key: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = folder / "config.toml"
    path.write_text(f'[default]\napi_key = "{key}"\n', encoding="utf-8")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    return path


def refused(source: str) -> str:
    return f"the api-key from {source} was refused (32 characters, fingerprint {FINGERPRINT})"


# --------------------------------------------------------------------------- the library


def test_a_refused_key_says_where_it_came_from(sb, env, monkeypatch):
    config = write_config(env, WRONG, monkeypatch)
    sources = {"the config file " + str(config): lambda: toolkit.connect()}
    sources["the api_key argument"] = lambda: toolkit.connect(api_key=WRONG)
    sources["the api_key argument of Client()"] = lambda: toolkit.Client(sb.url, WRONG)
    for source, make in sources.items():
        with make() as c, pytest.raises(AuthError) as info:
            c.account.balance()
        assert str(info.value) == f"account.balance: Invalid api-key; {refused(source)}"
        assert info.value.key_source == source and WRONG not in repr(info.value)
        assert c.key_source.startswith(source)
    monkeypatch.setenv("CAMPAIGN_API_KEY", WRONG)
    with toolkit.connect() as c, pytest.raises(AuthError) as info:
        c.campaigns.list()
    assert refused("the environment variable CAMPAIGN_API_KEY") in str(info.value)
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])  # the right key still works
    with toolkit.connect() as c:
        assert c.account.balance()["currency"] == "USD"


def test_a_key_that_cannot_be_one_is_a_config_error_naming_its_source(sb, env, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_API_KEY", "abc def")
    with pytest.raises(ConfigError, match="CAMPAIGN_API_KEY holds a space"):
        toolkit.connect()
    monkeypatch.delenv("CAMPAIGN_API_KEY")
    path = env / "config.toml"
    path.write_text("[default]\napi_key = 12345\n", encoding="utf-8")
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(path))
    with pytest.raises(ConfigError, match=f"config file {path} is a int, not a string"):
        toolkit.connect(base_url=sb.url)


# --------------------------------------------------------------------------- the command line


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_refused_key_names_each_source(sb, env, monkeypatch, capsys):
    book = str(env / "account.xlsx")
    key_file = env / "key.txt"
    key_file.write_text(WRONG + "\n", encoding="utf-8")
    cases = {
        "the --api-key option": ["--api-key", WRONG],
        f"the file {key_file} (--api-key-file)": ["--api-key-file", str(key_file)],
        "standard input (--api-key-file -)": ["--api-key-file", "-"],
    }
    for source, options in cases.items():
        monkeypatch.setattr(sys, "stdin", io.StringIO(WRONG + "\n"))
        code, out, err = run(["export", book, *options], capsys)
        assert code == 2 and refused(source) in err, err
        assert WRONG not in out + err and "Traceback" not in err
        assert ("visible to other users" in err) == (options[0] == "--api-key")
    monkeypatch.setenv("CAMPAIGN_API_KEY", WRONG)
    code, _out, err = run(["export", book], capsys)
    assert code == 2 and refused("the environment variable CAMPAIGN_API_KEY") in err
    monkeypatch.delenv("CAMPAIGN_API_KEY")
    config = write_config(env, WRONG, monkeypatch)
    code, _out, err = run(["export", book], capsys)
    assert code == 2 and refused(f"the config file {config}") in err
    assert not Path(book).exists()


def test_cli_reads_the_key_from_a_file(sb, env, capsys):
    book = env / "account.xlsx"
    key_file = env / "key.txt"
    key_file.write_text(f"  {sb.api_keys[0]}  \n", encoding="utf-8")
    code, out, err = run(["export", str(book), "--api-key-file", str(key_file)], capsys)
    assert code == 0 and "Exported" in out and err == ""
    assert book.exists()
    problems = {
        "no such file": env / "missing.txt",
        "is empty": env / "empty.txt",
        "holds a space": env / "two.txt",
        "is a folder": env,
    }
    (env / "empty.txt").write_text("\n")
    (env / "two.txt").write_text(f"{sb.api_keys[0]} {sb.api_keys[0]}\n")
    for words, path in problems.items():
        code, _out, err = run(["export", str(book), "--api-key-file", str(path)], capsys)
        assert code == 2 and words in err and str(path) in err, err
        assert sb.api_keys[0] not in err and "Traceback" not in err


def test_cli_key_options_keep_the_key_hidden_and_exclusive(capsys):
    parser = cli.build_parser()
    args = parser.parse_args(["export", "x.xlsx", "--api-key", WRONG])
    assert WRONG not in repr(args) and WRONG not in str(vars(args))
    assert args.api_key.reveal() == WRONG
    with pytest.raises(SystemExit):
        parser.parse_args(["export", "x.xlsx", "--api-key", WRONG, "--ask-api-key"])
    assert "not allowed with" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--api-key-file PATH" in text and "--ask-api-key" in text
    assert "see it in ps" in text


def test_cli_asks_for_the_key_at_a_prompt(sb, env):
    environ = {**os.environ, "PYTHONWARNINGS": "ignore"}

    def export(key: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolkit.cli", "export", str(env / "a.xlsx"), "--ask-api-key"],
            input=key + "\n",
            capture_output=True,
            text=True,
            timeout=120,
            env=environ,
            start_new_session=True,  # no terminal: getpass reads standard input
        )

    bad = export(WRONG)
    assert bad.returncode == 2, bad.stderr
    assert refused("the prompt (--ask-api-key)") in bad.stderr
    assert WRONG not in bad.stdout + bad.stderr
    good = export(sb.api_keys[0])
    assert good.returncode == 0 and "Exported" in good.stdout, good.stderr
    assert sb.api_keys[0] not in good.stdout + good.stderr
