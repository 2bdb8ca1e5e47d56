"""The layering between the app, the session, the UI and the renderer, checked on the source.

- Nothing under ``sandbox/ui`` or ``sandbox/render`` imports ``sandbox.app`` (the UI gets a context, never
  the app) or ``sandbox.engine.core`` (the kernels are the engine's inside; the public ``sandbox.engine``
  package exports what the UI and the renderer need).
- ``sandbox/session.py`` imports no window, GL or ImGui library, so the session runs headless.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sandbox"
FORBIDDEN_IN_UI = ("sandbox.app", "sandbox.engine.core")
GUI_LIBRARIES = ("pyglet", "moderngl", "imgui_bundle", "OpenGL")


def module_name(path: Path, root: Path = ROOT) -> str:
    """The dotted module name of a file under ``root`` (``sandbox/ui/panel.py`` → ``sandbox.ui.panel``;
    a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module ``path`` imports, as absolute dotted names: ``import a.b``, ``from a.b import c``
    (also counted as ``a.b.c``, which may be a module) and relative imports resolved against the file's
    own package. Imports under ``if TYPE_CHECKING:`` count too: they are dependencies all the same."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)
    return found


def offending(imports: set[str], forbidden: tuple[str, ...]) -> list[str]:
    """The imports that are, or are inside, one of the ``forbidden`` modules."""
    return sorted(m for m in imports if any(m == f or m.startswith(f + ".") for f in forbidden))


UI_AND_RENDER = sorted([*PACKAGE.glob("ui/**/*.py"), *PACKAGE.glob("render/**/*.py")])


def test_the_import_scanner_resolves_relative_imports(tmp_path):
    """The checker itself: it must see through ``from ..app import App``, ``from ..engine.core import x``
    and ``from ..engine import core``, or the tests below would pass vacuously."""
    fake = tmp_path / "sandbox" / "ui" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ..app import App\nfrom ..engine.core.layout import BOX\nfrom ..engine import core\n"
                    "import sandbox.engine.core.solver\nfrom . import panel\n")
    found = imported_modules(fake, tmp_path)
    assert offending(found, FORBIDDEN_IN_UI) == [
        "sandbox.app", "sandbox.app.App", "sandbox.engine.core", "sandbox.engine.core.layout",
        "sandbox.engine.core.layout.BOX", "sandbox.engine.core.solver"]
    assert "sandbox.ui.panel" in found


@pytest.mark.parametrize("path", UI_AND_RENDER, ids=lambda p: str(p.relative_to(ROOT)))
def test_ui_and_render_do_not_import_the_app_or_the_engine_kernels(path):
    assert offending(imported_modules(path), FORBIDDEN_IN_UI) == []


def test_there_are_ui_and_render_files_to_check():
    names = {p.relative_to(PACKAGE).as_posix() for p in UI_AND_RENDER}
    assert {"ui/panel.py", "ui/interaction.py", "render/renderer.py", "render/camera.py"} <= names


def test_the_session_imports_no_window_gl_or_imgui_library():
    assert offending(imported_modules(PACKAGE / "session.py"), GUI_LIBRARIES) == []


def test_importing_the_session_loads_no_window_gl_or_imgui_library():
    """The same at run time, in a fresh interpreter: nothing the session imports pulls one in."""
    code = ("import sys, sandbox.session\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {GUI_LIBRARIES!r}))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
