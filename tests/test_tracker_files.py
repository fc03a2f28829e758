"""Tracker export files as trackers write them (``tests/trackers/files/``, made by
``tests/trackers/make_files.py`` from the samples' generators): each read by ``read_stats``
(pandas) and by ``aggregate`` (DuckDB) and compared to the truth stated by hand; every file
reads right or is refused in one clear line, none is read silently wrong, and the command
line refuses every refused file with exit code 2 and one line, never 70."""

from __future__ import annotations

import math
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from toolkit.errors import StatsError
from toolkit.stats import aggregate, read_stats

from .trackers import layouts as layout_samples
from .trackers.make_files import FILES, samples

SAMPLES = samples()
MINE = set(layout_samples.SAMPLES)
#: The expectation's keys that are the read's arguments.
ARGUMENTS = ("layout", "campaign_map", "date_format", "decimal")
RULES = """\
rules:
  - name: losing
    level: source
    when: clicks > 1000000
    action: blacklist
"""


def test_the_committed_files_are_what_the_script_makes():
    on_disk = {p.name: p.read_bytes() for p in FILES.iterdir()}
    assert sorted(on_disk) == sorted(SAMPLES), "run: python tests/trackers/make_files.py"
    changed = [name for name, (data, _) in SAMPLES.items() if on_disk[name] != data]
    assert changed == [], "run: python tests/trackers/make_files.py"


def _read(name: str, exp: dict, how: str) -> pd.DataFrame:
    kwargs = {k: exp[k] for k in ARGUMENTS if k in exp}
    columns = exp.get("columns")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if how == "pandas":
            frame = read_stats(FILES / name, columns, **kwargs)
        else:
            by = ("date", "campaign_id", "level", "key")
            frame = aggregate(FILES / name, by=by, columns=columns, **kwargs)
    notes = [str(w.message) for w in caught if "totals" in str(w.message)]
    skipped = frame.attrs.get("skipped", [])
    if skipped:  # the note names the lines the frame lists
        assert notes and all(f"{line}" in notes[0] for line, _ in skipped[:5]), notes
    return frame


def _differences(frame: pd.DataFrame, exp: dict, how: str) -> list[str]:
    """What the frame gets wrong against the expectation (nothing: read right)."""
    level = exp.get("level", "source")
    rows = frame[frame["level"].astype(str) == level]
    out = []
    for metric, total in exp["sums"].items():
        got = float(rows[metric].astype(float).sum())
        if not math.isclose(got, total, abs_tol=1e-6):
            out.append(f"{metric}: {got} (truth {total})")
    checks: dict[str, Any] = {
        "keys": sorted(frame["key"].astype(str).unique()),
        "campaign_ids": sorted(int(c) for c in frame["campaign_id"].unique()),
        "skipped": len(frame.attrs.get("skipped", [])),
    }
    if how == "pandas":
        checks["rows"] = len(frame)
        checks["campaigns"] = [int(c) for c in frame["campaign_id"]]
        checks["days"] = [str(d.date()) for d in frame["date"]]
    else:
        checks["campaigns"] = sorted({int(c) for c in frame["campaign_id"]})
        checks["days"] = sorted({str(d.date()) for d in frame["date"]})
        exp = {**exp, "campaigns": sorted(set(exp.get("campaigns", []))) or None}
        exp["days"] = sorted(set(exp.get("days", []))) or None
    for key, got in checks.items():
        want = exp.get(key, 0 if key == "skipped" else None)
        if want is not None and got != want:
            out.append(f"{key}: {got} (truth {want})")
    return out


def judge(name: str, exp: dict, how: str) -> tuple[str, str]:
    """``("right" | "refused" | "wrong", detail)`` of reading one file one way."""
    try:
        frame = _read(name, exp, how)
    except StatsError as exc:
        text = str(exc)
        clear = str(FILES / name) in text and "Traceback" not in text
        if "refused" in exp and exp["refused"] in text and clear:
            return "right", text
        if "refused" not in exp and clear:
            return "refused", text
        return "wrong", f"refused with {text!r}"
    if "refused" in exp:
        return "wrong", f"read {len(frame)} rows; should be refused ({exp['refused']!r})"
    differences = _differences(frame, exp, how)
    return ("wrong", "; ".join(differences)) if differences else ("right", "")


def test_every_file_reads_right_or_is_refused_in_one_clear_line():
    tally: Counter[str] = Counter()
    wrong, refused_mine = [], []
    for name, (_, exp) in sorted(SAMPLES.items()):
        for how in ("pandas", "duckdb"):
            verdict, detail = judge(name, exp, how)
            tally["tried"] += 1
            tally[verdict] += 1
            if verdict == "wrong":
                wrong.append(f"{name} ({how}): {detail}")
            if verdict == "refused" and name in MINE and not exp.get("values"):
                refused_mine.append(f"{name} ({how}): {detail}")
    print(
        f"\ntracker files: {tally['tried']} reads tried, {tally['right']} read right"
        f" (or refused as they must be), {tally['refused']} refused with a clear line,"
        f" {tally['wrong']} silently wrong"
    )
    assert wrong == [], "\n".join(wrong)
    assert refused_mine == [], "\n".join(refused_mine)
    assert tally["right"] + tally["refused"] == tally["tried"] == 2 * len(SAMPLES)


@pytest.fixture()
def cli(sandbox_cli):
    return sandbox_cli


def test_the_command_line_refuses_each_refused_file_in_one_line_with_exit_code_2(cli, tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES, encoding="utf-8")
    refused = [n for n, (_, e) in SAMPLES.items() if "refused" in e and not set(ARGUMENTS) & set(e)]
    assert len(refused) >= 10
    for name in sorted(refused):
        code, out, err = cli("rules", str(rules), str(FILES / name))
        assert code == 2, (name, code, err)
        assert err.startswith("campaign-toolkit: ") and err.strip().count("\n") == 0, (name, err)
        assert SAMPLES[name][1]["refused"] in err, (name, err)


def test_the_samples_cover_each_quirk():
    names = set(layout_samples.SAMPLES)
    for wanted in (
        "excel-unicode-text-le.txt",
        "excel-unicode-text-be.txt",
        "cp1252-cafe-euro.csv",
        "semicolon-decimal-comma.csv",
        "quoted-header-comma.csv",
        "empty.csv",
        "header-only.csv",
        "workbook-renamed.csv",
        "totals-row.csv",
        "binom-grouped.csv",
        "keitaro-ru-cp1251.csv",
        "redtrack-total-conversions.csv",
        "voluum-template-names.csv",
        "voluum-no-map.csv",
    ):
        assert wanted in names, wanted
    assert Path(FILES).is_dir()
