"""Rules files that fight back: a YAML alias bomb, nesting thousands of levels deep, numbers
far past what a rule means (a window of 10^23 days, a factor of 1e300), a file that is not
UTF-8 or is far too big. Each is one RulesError naming the place, exit code 2 from
``campaign-toolkit rules`` with nothing sent, and fast: the bomb is refused in a child process
under a memory limit in well under a second."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from toolkit.errors import RulesError
from toolkit.rules import load_rules
from toolkit.rules.files import MAX_BYTES, MAX_DEPTH
from toolkit.sandbox import Sandbox

from .conftest import cli_runner

ROOT = Path(__file__).resolve().parents[1]
MEMORY_LIMIT = 3 << 30
RULE = "rules:\n  - name: cheaper\n    level: country\n    when: roi < -50\n    action: bid\n"


def bomb(levels: int = 9) -> str:
    """ "Billion laughs": each anchor a list of nine aliases of the one before (9^9 values)."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    rule = f"{{name: laughs, level: subid, action: blacklist, when: *a{levels - 1}}}"
    return "\n".join(lines) + f"\nrules: [{rule}]\n"


#: ``name -> (file name, content, field the problem names or None for the file, words)``.
CASES: dict[str, tuple[str, bytes, str | None, str]] = {
    "alias bomb": ("r.yaml", bomb().encode(), None, "aliases (*name) are expanded"),
    "deep flow": ("r.yaml", ("rules: " + "[" * 5000 + "]" * 5000).encode(), None, "levels deep"),
    "deep blocks": (
        "r.yaml",
        ("rules:\n" + "".join(" " * i + "- \n" for i in range(1, 60)) + " " * 60 + "x\n").encode(),
        None,
        "levels deep",
    ),
    "deep json": ("r.json", ("[" * 5000 + "]" * 5000).encode(), None, "levels deep"),
    "alias to itself": ("r.yaml", b"a: &a [*a]\nrules: []\n", None, "refers to the value it is in"),
    "latin-1": ("r.yaml", (RULE + "    factor: 0.8\n# caf\xe9\n").encode("latin-1"), None, "0xe9"),
    "too big": ("r.yaml", b"# " + b"x" * MAX_BYTES, None, f"larger than {MAX_BYTES:,} bytes"),
    "window 10^23": (
        "r.yaml",
        (RULE + "    factor: 0.8\n    window: 99999999999999999999999\n").encode(),
        "window",
        "at most 3,650",
    ),
    "factor 1e300": ("r.yaml", (RULE + "    factor: 1.0e+300\n").encode(), "factor", "0.1 to 10"),
    "factor 1e-300": ("r.yaml", (RULE + "    factor: 1.0e-300\n").encode(), "factor", "0.1 to 10"),
    "bid 5000": ("r.yaml", (RULE + "    bid: 5000\n").encode(), "bid", "at most 1,000"),
    "limit 10^12": (
        "r.yaml",
        (RULE + "    factor: 0.8\n    limit: 1000000000000\n").encode(),
        "limit",
        "at most 1e+06",
    ),
    "cooldown 10^6": (
        "r.yaml",
        (RULE + "    factor: 0.8\n    cooldown: 1000000\n").encode(),
        "cooldown",
        "at most 3,650",
    ),
    "payout 1e20": (
        "r.yaml",
        (RULE + "    factor: 0.8\n    payout: 1.0e+20\n").encode(),
        "payout",
        "at most 1e+06",
    ),
    "clause 1e999": (
        "r.yaml",
        (RULE.replace("roi < -50", "cost > 1e999") + "    factor: 0.8\n").encode(),
        "when",
        "past 1e+15",
    ),
}


def write(tmp_path: Path, name: str) -> Path:
    file_name, content, _, _ = CASES[name]
    path = tmp_path / file_name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_each_hostile_file_is_one_problem_naming_its_place(name: str, tmp_path: Path) -> None:
    _, _, field, words = CASES[name]
    path = write(tmp_path, name)
    with pytest.raises(RulesError) as caught:
        load_rules(path)
    (problem,) = caught.value.problems
    assert caught.value.source == str(path)
    assert problem.field == field and words in problem.message, problem
    assert "\n" not in str(problem) and len(str(problem)) < 300
    if field is not None:
        assert problem.rule == 1 and problem.name == "cheaper", problem


def test_anchors_used_as_a_person_would_still_load(tmp_path: Path) -> None:
    """Defaults shared through an anchor and merge keys: well inside every bound."""
    path = tmp_path / "rules.yaml"
    path.write_text(
        "common: &common {level: country, action: bid, window: 3650, limit: 1000000}\n"
        "rules:\n"
        + "".join(
            f"  - {{<<: *common, name: r{i}, when: 'roi < -{i}', factor: {f}}}\n"
            for i, f in enumerate((0.1, 0.5, 10), start=1)
        ),
        encoding="utf-8",
    )
    with pytest.raises(RulesError) as caught:  # 'common' is not a field: one problem, no more
        load_rules(path)
    assert [p.field for p in caught.value.problems] == ["common"]
    path.write_text(
        "rules:\n"
        + "".join(
            f"  - {{name: r{i}, level: country, action: bid, when: 'roi < -{i}', factor: {f},"
            f" window: 3650, limit: 1000000, payout: 1000000}}\n"
            for i, f in enumerate((0.1, 0.5, 10), start=1)
        ),
        encoding="utf-8",
    )
    assert [r.factor for r in load_rules(path)] == [0.1, 0.5, 10.0]


def test_a_sheet_of_rules_gets_the_same_bounds(tmp_path: Path) -> None:
    path = tmp_path / "rules.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "rules"
    sheet.append(["name", "level", "when", "action", "factor", "window"])
    sheet.append(["cheaper", "country", "roi < -50", "bid", 1e300, 99999999])
    book.save(path)
    with pytest.raises(RulesError) as caught:
        load_rules(path)
    assert {p.field for p in caught.value.problems} == {"factor", "window"}


def test_a_hostile_sheet_of_rules_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """A rules sheet whose cell says it is in column CYWOQVJ: refused by the workbook
    checks, one line, before openpyxl makes a row of billions of cells."""
    import zipfile

    path = tmp_path / "rules.xlsx"
    book = openpyxl.Workbook()
    book.active.title = "rules"
    book.active.append(["name", "level"])
    book.save(path)
    hostile = tmp_path / "hostile.xlsx"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(hostile, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'r="B1"', b'r="CYWOQVJ1"')
            zout.writestr(info, data)
    with pytest.raises(RulesError) as caught:
        load_rules(hostile)
    (problem,) = caught.value.problems
    assert "rules row 1" in problem.message and "CYWOQVJ1" in problem.message, problem


def test_the_bomb_is_refused_fast_under_a_memory_limit(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb(12), encoding="utf-8")  # 9^12 values once expanded

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    code = (
        "import sys, time\n"
        "from toolkit.errors import RulesError\n"
        "from toolkit.rules import load_rules\n"
        "started = time.perf_counter()\n"
        "try:\n"
        "    load_rules(sys.argv[1])\n"
        "except RulesError as exc:\n"
        "    print(f'{time.perf_counter() - started:.3f}', exc.problems[0].message)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        preexec_fn=limit,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    elapsed, message = proc.stdout.split(" ", 1)
    assert "aliases (*name) are expanded" in message
    assert float(elapsed) < 1.0


# --------------------------------------------------------------------------- the command


@pytest.fixture(scope="module")
def sb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with Sandbox(campaigns=6, seed=3) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def stats(sb: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stats") / "stats.csv"
    sb.stats_export(path, days=7, seed=3)
    return path


@pytest.mark.parametrize("name", ["alias bomb", "deep flow", "latin-1", "window 10^23"])
def test_campaign_toolkit_rules_says_one_line_exits_2_and_sends_nothing(
    name: str,
    sb: Sandbox,
    stats: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    monkeypatch.setenv("CAMPAIGN_API_KEY", sb.api_keys[0])
    monkeypatch.setenv("CAMPAIGN_API_URL", sb.url)
    monkeypatch.setenv("CAMPAIGN_TOOLKIT_CONFIG", str(tmp_path / "missing.toml"))
    path = write(tmp_path, name)
    before = dict(sb.stats())
    code, out, err = cli_runner(sb, capsys)("rules", str(path), str(stats), "--apply", "--yes")
    assert code == 2, out + err
    words = CASES[name][3]
    lines = [line for line in err.splitlines() if words in line]
    assert len(lines) == 1, err
    assert str(path) in err and "internal error" not in err
    assert sb.stats() == before  # not even a read


def test_the_depth_bound_is_the_documented_one() -> None:
    assert MAX_DEPTH == 20 and "20 levels" in (ROOT / "docs" / "rules.md").read_text()
