"""The demo's first line: where it writes its files, and whether a git checkout would show
them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit.demo import git_checkout, where_line


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_outside_a_checkout_the_line_names_the_folder_and_the_option(tmp_path):
    out = tmp_path / "campaign-toolkit-demo"
    assert git_checkout(out) is None
    assert where_line(out) == (
        f"The demo writes its files into {out}/ (--out DIR to choose another folder)"
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_inside_a_checkout_the_line_says_so_and_how_to_choose_another(tmp_path):
    git(tmp_path, "init", "-q")
    out = tmp_path / "sub" / "campaign-toolkit-demo"
    assert git_checkout(out) == tmp_path
    line = where_line(out)
    assert f"inside the git checkout {tmp_path}" in line and "--out DIR" in line
    assert "would show them as new files" in line and ".gitignore" in line
    (tmp_path / ".gitignore").write_text("campaign-toolkit-demo/\n", encoding="utf-8")
    line = where_line(out)
    assert f"inside the git checkout {tmp_path} (which ignores them" in line


def test_this_repository_ignores_the_demo_folder():
    root = Path(__file__).resolve().parents[1]
    lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "campaign-toolkit-demo/" in lines
