"""The docs follow the code: every file and function that ``docs/architecture.md`` names exists.

A student finds their way in through that page's two tables (the step's stages, each with its file and
function, and the map from every concept to the function that implements it), so a renamed or moved
function must not leave them pointing at nothing. Checked on the source with ``ast``, nothing imported.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
QUALIFIED = re.compile(r"^([\w/]+\.py): (.+)$")  # `core/x.py: a, b`
IDENTIFIER = re.compile(r"^[A-Za-z_][\w.]*$")


def resolve(path: str) -> Path:
    """The source file a doc path names: relative to ``sandbox/engine`` (``core/x.py``, ``world.py``), to
    ``sandbox`` (``session.py``, ``ui/panel.py``) or to the repository (``sandbox/ui/context.py``)."""
    for base in (ROOT / "sandbox" / "engine", ROOT / "sandbox", ROOT):
        if (base / path).is_file():
            return base / path
    raise AssertionError(f"docs/architecture.md names {path}, which is not a file under sandbox/")


@cache
def definitions(path: Path) -> frozenset[str]:
    """The names a module defines at its top level (functions, classes, assignments) and its classes'
    methods as ``Class.method``."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names.update(f"{node.name}.{item.name}" for item in node.body
                         if isinstance(item, ast.FunctionDef))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row (header and rule rows left out)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def references(text: str) -> list[tuple[str, str]]:
    """Every (file, function) pair the page's tables name: ``file: a, b`` inside one pair of backticks,
    and, in the concept map, each backticked name of the function column with the files of the file
    column."""
    found = []
    for cells in table_rows(text):
        quoted = [q for cell in cells for q in re.findall(r"`([^`]+)`", cell)]
        for q in quoted:
            m = QUALIFIED.match(q)
            if m:
                found.extend((m.group(1), name.strip()) for name in m.group(2).split(","))
        if len(cells) == 3:  # the concept map: concept | file | function
            files = [q for q in re.findall(r"`([^`]+)`", cells[1]) if q.endswith(".py")]
            function_cell = re.sub(r"\([^)]*\)", "", cells[2])  # asides such as "(the manifold: …)"
            for name in re.findall(r"`([^`]+)`", function_cell):
                if IDENTIFIER.match(name) and files:
                    found.append((" or ".join(files), name))
    return found


def test_the_tables_name_something():
    refs = references(DOC.read_text(encoding="utf-8"))
    assert len(refs) > 80  # both tables were read, not skipped by a parsing slip
    assert ("core/rounded.py", "sphere_sphere") in refs


def test_every_function_the_architecture_page_names_exists():
    missing = []
    for files, name in references(DOC.read_text(encoding="utf-8")):
        paths = [resolve(f) for f in files.split(" or ")]
        if not any(name in definitions(p) for p in paths):
            missing.append(f"{files}: {name}")
    assert not missing, missing


def test_every_file_the_architecture_page_names_exists():
    text = DOC.read_text(encoding="utf-8")
    paths = {q for q in re.findall(r"`([\w/]+\.py)(?::[^`]*)?`", text)}
    assert paths
    for path in paths:
        resolve(path)


def test_a_missing_function_is_caught():
    """The check itself can fail: a page naming a function that does not exist is reported."""
    page = "| concept | file | function |\n|---|---|---|\n| x | `core/rounded.py` | `no_such_function` |\n"
    refs = references(page)
    assert refs == [("core/rounded.py", "no_such_function")]
    assert "no_such_function" not in definitions(resolve("core/rounded.py"))
