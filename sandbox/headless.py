"""Headless runs: ``sandbox run`` steps a scene without a window and writes what it measured as CSV.

    sandbox run --list
    sandbox run SCENE_OR_FILE --steps N [--dt 1/120] [--set KEY=VALUE ...] [--csv PATH] [--impacts PATH]

``--csv`` writes one row per step (``step_columns``): the step and the time after it, the kinetic,
potential and total energy (J), the momentum (kg·m/s), the broad-phase pairs, manifolds and contact
points of the step, and the milliseconds of each of the world's timed stages (``world.timings``, whatever
stages it has, in the order of the first step). ``--impacts`` writes the restitution ledger
(``sandbox.ledger``), one row per impact. ``-`` as a path means standard output, which then carries
nothing but that CSV.

Bad input (an unknown scene, a malformed scene file, a step count that is not a positive integer, a path
that cannot be written, an unknown ``--set`` key or a bad value) exits with status 2 and one line on
standard error. Files are written under a temporary name in their folder and renamed into place when
the run has finished, so a failed run never leaves a half-written CSV behind.
"""

from __future__ import annotations

import argparse
import csv
import inspect
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

import numpy as np

from . import scenes, session
from .cli_args import positive_int
from .engine import Box, Capsule, ConvexHull, Sphere, World
from .engine.settings import SETTINGS
from .ledger import IMPACT_COLUMNS, RestitutionLedger
from .scene_file import SceneFileError
from .scenes import SCENE_NAMES
from .warmup import cache_is_warm, compile_on_terminal, compile_parallel

PROG = "sandbox run"
DEFAULT_DT = 1.0 / 60.0  # the app's step

MATERIAL_KEYS = ("restitution", "friction")
"""``--set`` keys that set every dynamic body's value instead of a world setting."""


ENERGY_COLUMNS = ("step", "time", "kinetic", "potential", "total", "momentum_x", "momentum_y", "momentum_z",
                  "pairs", "manifolds", "contact_points")
"""The first columns of ``--csv``; one ``ms_<stage>`` column per key of ``world.timings`` follows."""

_TRUE = ("true", "1", "on", "yes")
_FALSE = ("false", "0", "off", "no")


class RunError(Exception):
    """Bad input to a headless run: the message is the one line printed before exiting with status 2."""


# ----------------------------------------------------------------------------------------------------
# scenes


def scene_name(name: str) -> str:
    """A built-in scene's command-line name: its name with spaces turned into hyphens."""
    return name.replace(" ", "-")


def scene_title(builder: Callable) -> str:
    """The first sentence of a scene builder's docstring, on one line, with each ````parameter```` it
    names replaced by the parameter's default value (the value the scene is built with)."""
    try:
        defaults = {k: p.default for k, p in inspect.signature(builder).parameters.items()
                    if p.default is not inspect.Parameter.empty}
    except (TypeError, ValueError):
        defaults = {}

    def value(match: re.Match) -> str:
        v = defaults.get(match.group(1), match.group(1))
        return f"{v:g}" if isinstance(v, float) else str(v)

    text = " ".join(re.sub(r"``([^`]*)``", value, builder.__doc__ or "").split())
    match = re.search(r"(?<=[.!?])\s", text)
    return text[: match.start()] if match else text


def list_scenes() -> list[tuple[str, str]]:
    """(name, title) of every built-in scene, in the order of ``scenes.SCENES``."""
    return [(scene_name(name), scene_title(builder)) for name, builder in scenes.SCENES.items()]


def resolve_scene(text: str) -> tuple[str, Callable[[World], object]]:
    """The display name and builder of ``text``: a built-in scene (by its name, with hyphens or spaces) or
    a JSON scene file, looked up by ``session.resolve_scene``. RunError if it is neither or the file is
    malformed."""
    try:
        name, builder = session.resolve_scene(text)
    except SceneFileError as exc:
        raise RunError(f"bad scene file: {exc}") from None
    except ValueError:
        names = ", ".join(scene_name(n) for n in SCENE_NAMES)
        raise RunError(f"unknown scene {text!r}; choose one of {names} (see --list), "
                       "or give a .json scene file") from None
    return (scene_name(name) if name in SCENE_NAMES else name), builder


# ----------------------------------------------------------------------------------------------------
# arguments


def parse_dt(text: str) -> float:
    """A time step from ``text``: a number (``0.01``) or a fraction (``1/120``); positive and finite."""
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            value = float(num) / float(den)
        else:
            value = float(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"must be a number or a fraction like 1/120, got {text!r}") from None
    if not math.isfinite(value) or value <= 0.0:
        raise argparse.ArgumentTypeError(f"must be a positive time step in seconds, got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: raises RunError instead of printing the usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise RunError(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``sandbox run``."""
    parser = _Parser(prog=PROG, description="Step a scene without a window and write what it measured as "
                     "CSV.", epilog="Exit status 2 on bad input, with one line on standard error.")
    parser.add_argument("scene", nargs="?", metavar="SCENE_OR_FILE",
                        help="a built-in scene (see --list) or a JSON scene file")
    parser.add_argument("--list", action="store_true", help="list the built-in scenes (name, tab, title)")
    parser.add_argument("--steps", type=positive_int, metavar="N", help="how many steps to run")
    parser.add_argument("--dt", type=parse_dt, metavar="DT",
                        help="the time step in seconds, a number or a fraction (default: the scene file's, "
                             "else 1/60)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                        help="change a world setting (restitution_rule=min, substeps=8, gravity=0,-1.62,0, "
                             "...) or every dynamic body's restitution or friction; repeatable")
    parser.add_argument("--csv", metavar="PATH", help="write one row per step to PATH (- for stdout)")
    parser.add_argument("--impacts", metavar="PATH",
                        help="write the restitution ledger, one row per impact, to PATH (- for stdout)")
    return parser


# ----------------------------------------------------------------------------------------------------
# settings


def world_settings(world: World) -> dict[str, object]:
    """The settings ``--set`` can change and their current values: every entry of the engine's
    ``SETTINGS`` table (so settings added there are found without a change here) and ``gravity``."""
    out: dict[str, object] = {name: getattr(world, name) for name in SETTINGS}
    out["gravity"] = world.gravity
    return dict(sorted(out.items()))


def parse_value(key: str, text: str, current: object) -> object:
    """``text`` parsed as the type of ``current``: a bool (true/false, 1/0, on/off, yes/no), an int, a
    finite float, a comma-separated vector of as many numbers, or a string. RunError naming ``key``."""
    t = text.strip()
    if isinstance(current, (bool, np.bool_)):
        if t.lower() in _TRUE:
            return True
        if t.lower() in _FALSE:
            return False
        raise RunError(f"--set {key}: expected true or false (also 1/0, on/off), got {text!r}")
    if isinstance(current, (int, np.integer)):
        try:
            return int(t)
        except ValueError:
            raise RunError(f"--set {key}: expected an integer, got {text!r}") from None
    if isinstance(current, (float, np.floating)):
        try:
            value = float(t)
        except ValueError:
            raise RunError(f"--set {key}: expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise RunError(f"--set {key}: expected a finite number, got {text!r}")
        return value
    if isinstance(current, np.ndarray):
        parts = [p.strip() for p in t.split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != len(current) or not all(math.isfinite(v) for v in values):
            raise RunError(f"--set {key}: expected {len(current)} comma-separated numbers, got {text!r}")
        return np.array(values)
    return t


def apply_settings(world: World, settings: Iterable[str]) -> None:
    """Apply ``KEY=VALUE`` strings to ``world``: a world setting through its (validating) setter, or
    ``restitution``/``friction`` on every dynamic body. RunError naming the key on an unknown key or a
    value the parser or the setter rejects."""
    for item in settings:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise RunError(f"--set expects KEY=VALUE, got {item!r}")
        known = world_settings(world)
        if key in MATERIAL_KEYS:
            value = parse_value(key, text, 0.0)
            try:
                for body in world.bodies:
                    if not body.static:
                        setattr(body, key, value)
            except ValueError as exc:
                raise RunError(f"--set {key}: {exc}") from None
            continue
        if key not in known:
            raise RunError(f"--set: unknown key {key!r}; known: {', '.join([*known, *MATERIAL_KEYS])}")
        value = parse_value(key, text, known[key])
        try:
            setattr(world, key, value)
        except (ValueError, TypeError) as exc:
            raise RunError(f"--set {key}: {exc}") from None


# ----------------------------------------------------------------------------------------------------
# output


class AtomicOutput:
    """A text file written under a temporary name in the folder of ``path`` and moved over ``path``
    only by ``commit`` (flushed, fsynced, then ``os.replace``, which is atomic), so that a run that fails
    leaves no half-written file; ``discard`` removes the temporary file. Opening checks that the file can
    be written (RunError naming ``option`` otherwise)."""

    def __init__(self, path: str, option: str) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise RunError(f"{option}: {path!r} is a directory")
        folder = self.path.parent
        if not folder.is_dir():
            raise RunError(f"{option}: folder {str(folder)!r} does not exist")
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part", dir=folder)
        except OSError as exc:
            raise RunError(f"{option}: cannot write in {str(folder)!r}: {exc.strerror or exc}") from None
        self.tmp = Path(tmp)
        self.file: IO[str] = os.fdopen(fd, "w", newline="", encoding="utf-8")

    def commit(self) -> None:
        """Finish the file and move it into place, with the permissions a new file would get (mkstemp
        makes it private)."""
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.tmp, 0o666 & ~umask)
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        """Close and remove the temporary file (the target path is left as it was)."""
        try:
            self.file.close()
        except OSError:
            pass
        self.tmp.unlink(missing_ok=True)


def step_columns(timing_keys: Iterable[str]) -> list[str]:
    """The ``--csv`` header: ``ENERGY_COLUMNS`` then ``ms_<stage>`` per timed stage."""
    return [*ENERGY_COLUMNS, *(f"ms_{re.sub(r'[^0-9A-Za-z_]', '_', k)}" for k in timing_keys)]


def step_row(world: World, timing_keys: Iterable[str]) -> list[object]:
    """The ``--csv`` row of the step just taken (see ``step_columns``)."""
    ke = world.kinetic_energy()
    pe = world.potential_energy()
    p = world.momentum()
    c = world.contacts
    t = world.timings
    return [world.steps, world.time, ke, pe, ke + pe, float(p[0]), float(p[1]), float(p[2]), len(world.pairs),
            int(c.count), c.point_count(), *(t.get(k, "") for k in timing_keys)]


class Progress:
    """A one-line progress bar on standard error, redrawn with ``\\r`` at most ten times a second; only
    when standard error is a terminal, so that logs and pipes get no control characters."""

    def __init__(self, total: int, label: str, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
        self.total = total
        self.label = label
        self.start = time.perf_counter()
        self.last = 0.0

    def update(self, done: int) -> None:
        """Show ``done`` of ``total`` steps."""
        now = time.perf_counter()
        if not self.enabled or (now - self.last < 0.1 and done < self.total):
            return
        self.last = now
        width = 30
        filled = int(width * done / self.total)
        self.stream.write(f"\r{self.label}: [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
                          f"steps, {now - self.start:.1f} s\033[K")
        self.stream.flush()

    def close(self) -> None:
        """Erase the bar."""
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()


# ----------------------------------------------------------------------------------------------------
# the run


def build_world(builder: Callable[[World], object], settings: Iterable[str]) -> World:
    """A new world with the scene built into it and the ``--set`` settings applied (RunError if bad)."""
    world = World()
    builder(world)
    apply_settings(world, settings)
    return world


def warm_up(args: argparse.Namespace) -> None:
    """Step a small scratch world that holds every shape kind, touching, under the run's settings, so that
    numba has loaded (or, on a cold cache, compiled) the kernels before the measured run: otherwise the
    stage timings of the first step, and of the first contact, would be loading times. It also checks the
    settings before any output file is opened."""
    name = args.scene_builder[0]
    if not cache_is_warm():
        # the first run of a version: every kernel at once in two processes (``sandbox warmup``), about
        # 50 s on two cores, where this process alone would compile what the run needs for longer
        if sys.stderr.isatty():
            compile_on_terminal(f"{PROG} {name}: compiling the physics kernels (first run only)")
        else:
            compile_parallel()
    if sys.stderr.isatty():
        sys.stderr.write(f"\r{PROG} {name}: loading the physics kernels...\033[K")
        sys.stderr.flush()
    try:
        w = World()
        w.add_body(Box((4.0, 0.5, 4.0)), position=(0.0, -0.5, 0.0), mass=0.0)
        gem = ConvexHull(np.array([(0, 0.5, 0), (0.4, 0, 0), (-0.4, 0, 0.1), (0, 0, 0.4), (0, -0.4, -0.3)]))
        for k, shape in enumerate((Sphere(0.3), Box((0.3, 0.3, 0.3)), Capsule(0.2, 0.3), gem)):
            for j in range(2):
                w.add_body(shape, position=(0.5 * k - 0.75, 0.3 + 0.45 * j, 0.1 * j))
        apply_settings(w, args.settings)
        for _ in range(3):
            w.step(args.dt)
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def run(args: argparse.Namespace, outputs: dict[str, IO[str]]) -> tuple[World, RestitutionLedger | None]:
    """Build the scene, apply the settings and step it ``args.steps`` times, writing the step rows to
    ``outputs["csv"]`` (if given) as they come; returns the world and, when impacts were asked for, the
    ledger that watched it."""
    world = build_world(args.scene_builder[1], args.settings)
    ledger = RestitutionLedger(world) if "impacts" in outputs else None
    writer = csv.writer(outputs["csv"], lineterminator="\n") if "csv" in outputs else None
    keys: list[str] = []
    progress = Progress(args.steps, f"{PROG} {args.scene_builder[0]}")
    try:
        for i in range(args.steps):
            if ledger is not None:
                ledger.before_step()
            world.step(args.dt)
            if ledger is not None:
                ledger.after_step()
            if writer is not None:
                if i == 0:
                    # the stages timed now, in a fixed order for the whole file
                    keys = list(world.timings)
                    writer.writerow(step_columns(keys))
                writer.writerow(step_row(world, keys))
            progress.update(i + 1)
    finally:
        progress.close()
    if ledger is not None:
        # written at the end: an impact's "after" values can still change in the step after its own
        w = csv.writer(outputs["impacts"], lineterminator="\n")
        w.writerow(IMPACT_COLUMNS)
        w.writerows(row.row() for row in ledger.impacts)
    return world, ledger


def _open_outputs(args: argparse.Namespace) -> tuple[dict[str, IO[str]], list[AtomicOutput]]:
    """The CSV streams by name ("csv", "impacts"): standard output for ``-``, else an ``AtomicOutput``
    (returned too, to commit or discard)."""
    paths = {name: getattr(args, name) for name in ("csv", "impacts") if getattr(args, name) is not None}
    if list(paths.values()).count("-") > 1:
        raise RunError("only one of --csv and --impacts can go to standard output (-)")
    files = [p for p in paths.values() if p != "-"]
    if len({os.path.abspath(p) for p in files}) < len(files):
        raise RunError("--csv and --impacts name the same file")
    streams: dict[str, IO[str]] = {}
    atomic: list[AtomicOutput] = []
    try:
        for name, path in paths.items():
            if path == "-":
                streams[name] = sys.stdout
            else:
                out = AtomicOutput(path, f"--{name}")
                atomic.append(out)
                streams[name] = out.file
    except RunError:
        for out in atomic:
            out.discard()
        raise
    return streams, atomic


def main(argv: list[str] | None = None) -> int:
    """``sandbox run``: returns the exit status (0 done, 1 the run failed, 2 bad input)."""
    argv = sys.argv[2:] if argv is None else argv
    atomic: list[AtomicOutput] = []
    try:
        args = build_parser().parse_args(argv)
        if args.list:
            for name, title in list_scenes():
                print(f"{name}\t{title}")
            return 0
        if args.scene is None:
            raise RunError("give a scene (a name from --list or a .json file), or --list")
        if args.steps is None:
            raise RunError("--steps N is required")
        args.scene_builder = resolve_scene(args.scene)
        if args.dt is None:
            args.dt = getattr(args.scene_builder[1], "dt", None) or DEFAULT_DT
        warm_up(args)
        streams, atomic = _open_outputs(args)
        start = time.perf_counter()
        world, ledger = run(args, streams)
        for out in atomic:
            out.commit()
        atomic = []
        sys.stdout.flush()
    except RunError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no file written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of standard output went away (e.g. `| head`): stop quietly (Python's advice: point
        # stdout at devnull so that the interpreter's own flush at exit does not complain)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ValueError) as exc:
        print(f"{PROG}: failed: {exc}", file=sys.stderr)
        return 1
    finally:
        for out in atomic:
            out.discard()
    seconds = time.perf_counter() - start
    written = [p for p in (args.csv, args.impacts) if p not in (None, "-")]
    print(f"{PROG}: {args.scene_builder[0]}, {args.steps} steps of {args.dt:g} s ({world.time:g} s "
          f"simulated) in {seconds:.2f} s" + (f"; wrote {', '.join(written)}" if written else ""),
          file=sys.stderr)
    if ledger is not None:
        print(ledger.format_summary(), file=sys.stderr)
    return 0
