"""Shared bits of the k8s generators: deterministic, readable YAML and --check handling."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings (PromQL reads as written), keys in given order."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(header: str, *docs: Any) -> str:
    body = "---\n".join(
        yaml.dump(d, Dumper=_Dumper, sort_keys=False, width=1000, default_flow_style=False)
        for d in docs
    )
    return "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines()) + body


def write_or_check(files: Mapping[Path, str], owned_dir: Path | None, argv: list[str]) -> int:
    """Write `files`; with --check, report drift instead. Files in `owned_dir` that are not
    in `files` are stale generated output: deleted on write, reported on check."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    check = parser.parse_args(argv).check
    stale = sorted(p for p in owned_dir.glob("*.yaml") if p not in files) if owned_dir else []
    drift: list[str] = [f"{p.relative_to(ROOT)}: not generated any more" for p in stale]
    for path, text in files.items():
        old = path.read_text() if path.exists() else ""
        if old == text:
            continue
        if check:
            diff = difflib.unified_diff(
                old.splitlines(keepends=True),
                text.splitlines(keepends=True),
                str(path.relative_to(ROOT)),
                "generated",
            )
            drift.append("".join(diff))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if check:
        if drift:
            print("\n".join(drift), file=sys.stderr)
            print("stale: re-run the generator without --check", file=sys.stderr)
            return 1
        return 0
    for p in stale:
        p.unlink()
    return 0
