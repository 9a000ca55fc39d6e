"""Citations of the design documents point at something that exists.

The code, the protos, the READMEs and the notes cite ``docs/DESIGN.md §N`` (also written
``DESIGN §N``) and ``docs/DESIGN-NOTES.md N`` (also ``§N`` and ranges ``23-25``); the two
documents cite the notes as "note N" / "notes N, M". A renumbered section or note, or a
citation of the copy that lived outside the repository, fails here with file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DESIGN = ROOT / "docs" / "DESIGN.md"
NOTES = ROOT / "docs" / "DESIGN-NOTES.md"

#: where citations live: every tracked kind of text outside the generated web bundle
PLACES = ("README.md", "BENCHMARKS.md", "docs", "services", "protos", "tests", "deploy", "k8s")
WEB_PLACES = ("web/src", "web/test", "web/static")
SUFFIXES = {".py", ".pyi", ".proto", ".md", ".ts", ".yaml", ".yml", ".sh", ".mk", ".toml"}
SKIPPED_DIRS = {"node_modules", "__pycache__", ".venv", ".cache", "dist"}

SECTION = re.compile(r"\bDESIGN(?:\.md)?`? §(\d+)")
NOTE = re.compile(r"\bDESIGN-NOTES(?:\.md)?`? §?(\d+)(?:\s*[-–]\s*(\d+))?")
NOTE_IN_DOCS = re.compile(r"\bnotes? (\d+(?:(?:, | and )\d+)*)")
PATH = re.compile(r"([\w.~/-]*/)?(DESIGN(?:-NOTES)?\.md)")


def _files() -> Iterator[Path]:
    for place in (*PLACES, *WEB_PLACES):
        path = ROOT / place
        if path.is_file():
            yield path
        elif path.is_dir():
            for found in sorted(path.rglob("*")):
                if (
                    found.is_file()
                    and found.suffix in SUFFIXES
                    and not SKIPPED_DIRS.intersection(found.relative_to(ROOT).parts)
                ):
                    yield found


@cache
def _lines() -> tuple[tuple[str, str], ...]:
    """(file:line, text) of every line that mentions a design document."""
    return tuple(
        (f"{path.relative_to(ROOT)}:{number}", line)
        for path in _files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if "DESIGN" in line
    )


def _sections() -> set[int]:
    return {int(n) for n in re.findall(r"^## (\d+)\. ", DESIGN.read_text(), re.MULTILINE)}


def _notes() -> set[int]:
    return {int(n) for n in re.findall(r"^(\d+)\. \*\*", NOTES.read_text(), re.MULTILINE)}


def test_the_documents_are_numbered() -> None:
    sections, notes = _sections(), _notes()
    assert sections == set(range(1, len(sections) + 1)) and len(sections) >= 10
    assert notes == set(range(1, len(notes) + 1)) and len(notes) >= 40


def test_every_cited_section_of_the_design_exists() -> None:
    sections = _sections()
    missing = [
        f"{where}: §{n}"
        for where, line in _lines()
        for n in SECTION.findall(line)
        if int(n) not in sections
    ]
    assert not missing, f"docs/DESIGN.md has sections {sorted(sections)}; cited: {missing}"


def test_every_cited_design_note_exists() -> None:
    notes = _notes()
    missing = []
    for where, line in _lines():
        for first, last in NOTE.findall(line):
            cited = range(int(first), int(last or first) + 1)
            missing += [f"{where}: note {n}" for n in cited if n not in notes]
    for document in (DESIGN, NOTES):
        for number, line in enumerate(document.read_text().splitlines(), 1):
            for group in NOTE_IN_DOCS.findall(line):
                for n in re.split(r", | and ", group):
                    if int(n) not in notes:
                        missing.append(f"{document.relative_to(ROOT)}:{number}: note {n}")
    assert not missing, f"docs/DESIGN-NOTES.md has notes 1-{max(notes)}; cited: {missing}"


def test_a_path_to_a_design_document_is_the_one_in_docs() -> None:
    elsewhere = [
        f"{where}: {prefix}{name}"
        for where, line in _lines()
        for prefix, name in PATH.findall(line)
        if prefix not in ("", "docs/")
    ]
    assert not elsewhere, elsewhere


@pytest.mark.parametrize(
    ("line", "sections", "notes"),
    [
        ("(docs/DESIGN.md §4)", ["4"], []),
        ("against DESIGN §1's separate services", ["1"], []),
        ("(`docs/DESIGN-NOTES.md` 23-25)", [], [("23", "25")]),
        ("(docs/DESIGN-NOTES.md §21)", [], [("21", "")]),
    ],
)
def test_the_patterns_read_each_way_of_citing(
    line: str, sections: list[str], notes: list[tuple[str, str]]
) -> None:
    assert SECTION.findall(line) == sections
    assert NOTE.findall(line) == notes
