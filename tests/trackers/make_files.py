"""Write every sample export of ``tests/trackers/layouts.py`` and, when present,
``tests/trackers/value_quirks.py`` (their ``SAMPLES``) to ``tests/trackers/files/``.

    python tests/trackers/make_files.py

``tests/test_tracker_files.py`` checks that the committed files are what this script makes.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = HERE / "files"
#: The modules holding ``SAMPLES`` (a missing one is skipped).
MODULES = ("layouts", "value_quirks")


def samples() -> dict[str, tuple[bytes, dict]]:
    """Every sample of every module present: file name -> (bytes, expectation)."""
    root = str(HERE.parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    out: dict[str, tuple[bytes, dict]] = {}
    for name in MODULES:
        try:
            module = importlib.import_module(f"tests.trackers.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tests.trackers.{name}":
                raise
            continue
        twice = set(out) & set(module.SAMPLES)
        if twice:
            raise ValueError(f"{name}: file names already taken: {sorted(twice)}")
        out.update(module.SAMPLES)
    return out


def main() -> int:
    FILES.mkdir(exist_ok=True)
    made = samples()
    for name, (data, _) in sorted(made.items()):
        (FILES / name).write_bytes(data)
    stale = sorted(p.name for p in FILES.iterdir() if p.name not in made)
    for name in stale:
        (FILES / name).unlink()
    print(f"{len(made)} files in {FILES}" + (f" ({len(stale)} stale removed)" if stale else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
