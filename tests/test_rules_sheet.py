"""Rules kept in a workbook: one rule per row of a ``rules`` sheet, read as the YAML file is
read, every problem named by its rule, and the file as LibreOffice saves it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from openpyxl import load_workbook

import toolkit
from toolkit.errors import RulesError
from toolkit.rules.sheet import COLUMNS, write_rules_sheet

ROOT = Path(__file__).resolve().parents[1]


def test_the_rules_template_reads_as_the_yaml_template():
    sheet = toolkit.load_rules(ROOT / "templates" / "rules.xlsx")
    assert sheet == toolkit.load_rules(ROOT / "templates" / "rules.yaml")
    assert any(r.formats for r in sheet) and any(r.factor for r in sheet)


def test_a_sheet_written_by_hand_reads_with_scope_and_blank_cells(tmp_path):
    path = write_rules_sheet([], tmp_path / "rules.xlsx")
    book = load_workbook(path)
    sheet = book["rules"]
    row = dict.fromkeys(COLUMNS)
    row |= {
        "name": "cut",
        "level": "subid",
        "when": "p_loss >= 0.9 and clicks >= 100",
        "action": "blacklist",
        "limit": 5,
        "campaigns": "1000001, 1000002",
        "formats": "push",
        "enabled": "yes",
    }
    sheet.append([row[c] for c in COLUMNS])
    sheet.append([None] * len(COLUMNS))  # an empty row is skipped
    sheet.append(["  "] + [None] * (len(COLUMNS) - 1))
    book.create_sheet("notes").append(["never read"])
    book.save(path)
    (rule,) = toolkit.load_rules(path)
    assert (rule.name, rule.limit, rule.campaigns, rule.formats) == (
        "cut",
        5,
        (1000001, 1000002),
        ("push",),
    )
    assert rule.window is None and rule.enabled


def test_every_problem_of_the_sheet_is_named_by_its_rule(tmp_path):
    rules = [
        {"name": "ok", "level": "subid", "when": "cost > 5", "action": "blacklist"},
        {"name": "bad", "level": "subids", "when": "cost >> 5", "action": "blacklist"},
    ]
    path = write_rules_sheet(rules, tmp_path / "rules.xlsx")
    with pytest.raises(RulesError) as err:
        toolkit.load_rules(path)
    problems = {(p.rule, p.name, p.field) for p in err.value.problems}
    assert problems == {(2, "bad", "level"), (2, "bad", "when")}
    assert str(path) in str(err.value)
    not_a_book = tmp_path / "rules2.xlsx"
    not_a_book.write_text("name,level\n", encoding="utf-8")
    with pytest.raises(RulesError, match="not a readable workbook"):
        toolkit.load_rules(not_a_book)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_the_template_saved_by_libreoffice_reads_the_same(tmp_path):
    source = tmp_path / "in" / "rules.xlsx"
    source.parent.mkdir()
    shutil.copy(ROOT / "templates" / "rules.xlsx", source)
    out = tmp_path / "lo"
    subprocess.run(
        [
            "soffice",
            f"-env:UserInstallation=file://{tmp_path / 'profile'}",
            "--headless",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    assert toolkit.load_rules(out / "rules.xlsx") == toolkit.load_rules(source)
