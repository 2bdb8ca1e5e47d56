"""Where numba keeps the compiled kernels: a folder per version of the kernels' sources, in the user's cache.

Numba's own rule caches a kernel beside its source (``__pycache__``) and checks it against that one file.
Two things follow. A fresh clone or a reinstall starts with nothing, so its first launch compiles every
kernel again (about two minutes on a 2-core laptop) although the same sources were compiled before on the
same machine. And a kernel whose own file is unchanged is taken from the cache even when a function it
calls, in another file, has changed: numba compiles the callee into the caller, so the cached caller runs
the old callee (the project's rule was to delete the caches after editing a kernel module by hand).

Here every kernel of this package is cached under ``<cache>/sandbox/kernels/<key>``, ``key`` a hash of all
the package's sources together with the versions of Python, numba and llvmlite (``sources_key``): a copy
of the same sources anywhere on the machine finds its kernels compiled, and a change to any kernel file
gives a new folder, so nothing compiled from other sources is ever loaded. Numba still keys each entry
by the function's bytecode, its argument types and the processor. ``prune`` keeps the few most recently
used folders. ``SANDBOX_KERNEL_CACHE`` names another cache folder; numba's own ``NUMBA_CACHE_DIR``, when
set, wins over both (``bench.compile`` uses it for cold runs), and where no folder is writable numba's
usual places are used.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

import llvmlite
import numba
from numba.core.caching import CacheImpl, _CacheLocator

CORE = Path(__file__).resolve().parent
KEEP = 4
"""How many versions' folders ``prune`` keeps (each some 20 MB)."""


def sources_key(core: Path = CORE) -> str:
    """A hash of every source file of the kernel package ``core`` (names and contents, in name order) and
    of the Python, numba and llvmlite versions: equal exactly when the compiled kernels would be."""
    h = hashlib.sha256(f"{sys.version}|{numba.__version__}|{llvmlite.__version__}".encode())
    for source in sorted(core.glob("*.py")):
        h.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def cache_root() -> Path | None:
    """The folder that holds one folder per version: ``SANDBOX_KERNEL_CACHE`` if set, else
    ``$XDG_CACHE_HOME/sandbox/kernels``, else ``~/.cache/sandbox/kernels``. None, and numba's own places
    are used, when ``NUMBA_CACHE_DIR`` is set (numba's setting wins) or there is no home directory."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    named = os.environ.get("SANDBOX_KERNEL_CACHE")
    if named:
        return Path(named).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).absolute() / "sandbox" / "kernels"
    home = Path(os.path.expanduser("~"))  # left as "~" when the home cannot be found
    return home / ".cache" / "sandbox" / "kernels" if home.is_absolute() else None


KEY = sources_key()


def cache_folder() -> Path | None:
    """This version's folder (None: see ``cache_root``)."""
    root = cache_root()
    return None if root is None else root / KEY


class VersionCacheLocator(_CacheLocator):
    """Numba cache locator for this package's kernels: ``cache_folder()``, the same for every copy of the
    same sources. The source stamp is the version key, which the folder already fixes."""

    def __init__(self, py_func, py_file, folder: Path) -> None:
        self._lineno = py_func.__code__.co_firstlineno
        self._path = str(folder)

    def get_cache_path(self) -> str:
        return self._path

    def get_source_stamp(self) -> str:
        return KEY

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        """A locator for a kernel of this package, or None (numba then tries its own locators): for other
        files, or when the folder has no place (``cache_root``) or cannot be made or written."""
        folder = cache_folder()
        if folder is None or Path(py_file).resolve().parent != CORE:
            return None
        self = cls(py_func, py_file, folder)
        try:
            self.ensure_cache_path()
        except OSError:
            return None
        return self


def install() -> None:
    """Put ``VersionCacheLocator`` first among numba's locators (before any kernel of the package is
    defined: numba picks a kernel's locator when its decorator runs), and mark this version's folder as
    used now (``prune`` keeps the most recently used)."""
    if VersionCacheLocator not in CacheImpl._locator_classes:
        CacheImpl._locator_classes.insert(0, VersionCacheLocator)
    folder = cache_folder()
    if folder is not None and folder.is_dir():
        try:
            os.utime(folder)
        except OSError:
            pass


def prune(keep: int = KEEP) -> list[Path]:
    """Delete all but the ``keep`` most recently used version folders (this version's is always kept);
    returns the folders deleted."""
    root = cache_root()
    if root is None or not root.is_dir():
        return []
    folders = sorted((p for p in root.iterdir() if p.is_dir() and p.name != KEY),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    gone = folders[max(keep - 1, 0):]
    for folder in gone:
        shutil.rmtree(folder, ignore_errors=True)
    return gone
