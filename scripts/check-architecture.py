#!/usr/bin/env python3
"""Fails when Docs/architecture.md's module table and Package.swift disagree.

Every non-test target of the package must have a row (its name in backticks in the first
column of the "Modules" table), and every backticked name in that column must still be a
target, so the one-page map cannot drift from the package it describes.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "Docs" / "architecture.md"


def package_targets() -> set[str]:
    """Names of the package's non-test targets, from `swift package dump-package`."""
    dump = subprocess.run(
        ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return {t["name"] for t in json.loads(dump)["targets"] if t["type"] != "test"}


def documented_targets(text: str) -> set[str]:
    """Backticked names in the first column of the table under `## Modules`."""
    section = text.split("## Modules", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        first = line.split("|")[1]
        names.update(re.findall(r"`([A-Za-z][\w-]*)`", first))
    return names


def main() -> int:
    targets = package_targets()
    documented = documented_targets(DOC.read_text())
    missing = sorted(targets - documented)
    stale = sorted(documented - targets)
    for name in missing:
        print(f"{DOC.relative_to(ROOT)}: target {name} has no row in the Modules table", file=sys.stderr)
    for name in stale:
        print(f"{DOC.relative_to(ROOT)}: {name} is in the Modules table but not a target", file=sys.stderr)
    if missing or stale:
        return 1
    print(f"architecture: {len(targets)} targets, each with its row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
