"""The kernel cache (``sandbox/engine/core/kernel_cache.py``): one folder per version of the kernels'
sources, which any copy of the same sources finds (a fresh clone or a reinstall compiles nothing), and
which any change to a kernel file replaces (no kernel compiled from other sources is ever loaded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.engine.core import kernel_cache

ROOT = Path(__file__).resolve().parent.parent

# a step of a small world in a fresh process, counting the kernels numba had to compile (it reports a
# compile event only when a kernel is not in the cache)
SCRIPT = """
import json
from numba.core import event
import sandbox
from sandbox.engine import Box, Sphere, World
from sandbox.engine.core import kernel_cache

compiled = []

class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass

event.register("numba:compile", Count())
w = World()
w.add_body(Box((2.0, 0.5, 2.0)), position=(0.0, -0.5, 0.0), mass=0.0)
w.add_body(Sphere(0.3), position=(0.0, 0.29, 0.0))
w.add_body(Box((0.2, 0.2, 0.2)), position=(0.5, 0.19, 0.0))
for _ in range(3):
    w.step(1 / 60)
print(json.dumps({"package": sandbox.__file__, "folder": str(kernel_cache.cache_folder()),
                  "compiled": compiled}))
"""


def _run(pythonpath: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                         cwd=pythonpath, check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_key_follows_every_kernel_source(tmp_path):
    core = tmp_path / "core"
    core.mkdir()
    for source in kernel_cache.CORE.glob("*.py"):
        shutil.copy2(source, core / source.name)
    assert kernel_cache.sources_key(core) == kernel_cache.KEY  # where the files are does not matter
    vecmath = core / "vecmath.py"
    vecmath.write_text(vecmath.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    edited = kernel_cache.sources_key(core)
    assert edited != kernel_cache.KEY  # an edit to a callee's file changes every kernel's folder
    (core / "extra.py").write_text("X = 1\n", encoding="utf-8")
    assert kernel_cache.sources_key(core) not in (edited, kernel_cache.KEY)


def test_a_copy_of_the_same_sources_compiles_nothing(tmp_path):
    if os.environ.get("NUMBA_CACHE_DIR"):
        pytest.skip("NUMBA_CACHE_DIR is set: numba's own cache rules apply")
    _run(ROOT)  # fills the cache if the warm-up has not
    here = _run(ROOT)  # what a warm launch still compiles: only what numba never caches (a clock in objmode)
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "sandbox", clone / "sandbox", ignore=shutil.ignore_patterns("__pycache__"))
    there = _run(clone)  # as a fresh clone or a reinstall: another path, new file times
    assert Path(there["package"]).resolve().is_relative_to(clone.resolve())
    assert there["folder"] == here["folder"] == str(kernel_cache.cache_folder())
    assert len(here["compiled"]) <= 2, here["compiled"]
    assert there["compiled"] == here["compiled"]


def test_prune_keeps_this_version_and_the_most_recent(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("SANDBOX_KERNEL_CACHE", str(tmp_path))
    for age, name in enumerate(("a", "b", "c", "d", "e")):
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (1e9 - age, 1e9 - age))  # a is the most recently used
    (tmp_path / kernel_cache.KEY).mkdir()
    os.utime(tmp_path / kernel_cache.KEY, (1.0, 1.0))  # this version's, however old
    gone = kernel_cache.prune(keep=3)
    assert sorted(p.name for p in gone) == ["c", "d", "e"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a", "b", kernel_cache.KEY])
