"""The figures of a world step by step, for the plots window: recorded while a session runs, indexed by
the step they were taken after, cut back when the world goes back in time, and written to CSV.

The columns (``COLUMNS``) are those of the headless run's ``--csv`` (``headless.step_columns`` over the
engine's ``STAGES``): ``step`` and ``time`` (s) after the step, the ``kinetic``, ``potential`` and
``total`` energy (J), ``momentum_x/y/z`` (kg·m/s), the broad-phase ``pairs``, the ``manifolds`` and the
``contact_points`` of the step, and ``ms_<stage>`` per timed stage; then

- ``ms_total``: the sum of the stages (ms),
- ``angular_momentum_x/y/z``: Σ (x × m·v) + I·ω about the origin (kg·m²/s),
- ``deepest``: the deepest overlap among the step's contact points (m),
- ``body``: the row of the body selected in the app (−1: none), and its ``body_height`` (the y of its
  centre of mass, m), ``body_speed`` (|v|, m/s) and ``body_spin`` (|ω|, rad/s), NaN when none is.

A ``Recorder`` is one of a ``Simulation``'s watchers (it is told before and after every step). While
``series_on`` it records a row after each step; while some window uses the ledger (``ledger_users``) it
runs a ``RestitutionLedger`` around each step. When the world is replaced (a reset, another scene) it
starts afresh. Its rows and impacts are read up to the world's current step, so that they follow a timeline
that restores earlier steps; when the world steps on from an earlier step, what was recorded after it is
dropped and the new steps are recorded instead. Recording costs a few numpy
reductions per step (about 2 ms for a thousand bodies, most of it the energies' I·ω), the ledger more where
many bodies touch (17 ms for the settling pile of a thousand), so each runs only while a window shows it.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .engine import STAGES, Body, World
from .headless import AtomicOutput, RunError, step_columns, step_row
from .ledger import IMPACT_COLUMNS, Impact, RestitutionLedger, RestitutionSummary
from .lessons import max_depth

if TYPE_CHECKING:
    from .session import Simulation

EXTRA_COLUMNS = ("ms_total", "angular_momentum_x", "angular_momentum_y", "angular_momentum_z", "deepest",
                 "body", "body_height", "body_speed", "body_spin")
COLUMNS: tuple[str, ...] = (*step_columns(STAGES), *EXTRA_COLUMNS)
"""Every column a ``StepSeries`` keeps, in order (see the module's docstring)."""
STAGE_COLUMNS = tuple(step_columns(STAGES)[-len(STAGES):])
"""The ``ms_<stage>`` columns, in the order of ``STAGES``."""
MAX_ROWS = 36_000
"""Rows kept (ten minutes at 60 steps per second, 10 MB); beyond it the oldest half is dropped."""


class CsvExportError(Exception):
    """A CSV file could not be written; the message says which and why (for a red line in the panel)."""


def write_csv(path: str | Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> int:
    """Write ``header`` and ``rows`` to the CSV file ``path`` atomically (a temporary file in the same
    folder, moved over ``path`` once complete, ``headless.AtomicOutput``): on any failure no file, or
    the previous one, is left. Returns the number of rows; ``CsvExportError`` naming the path if the
    file cannot be written."""
    try:
        out = AtomicOutput(str(path), "CSV")
    except RunError as exc:
        raise CsvExportError(str(exc)) from None
    try:
        writer = csv.writer(out.file, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        out.commit()
    except OSError as exc:
        out.discard()
        raise CsvExportError(f"CSV: cannot write {str(path)!r}: {exc.strerror or exc}") from None
    except BaseException:
        out.discard()
        raise
    return len(rows)


def file_stem(text: str) -> str:
    """``text`` made safe for a file name: letters, digits, ``-`` and ``_`` (others become ``-``)."""
    return re.sub(r"[^0-9A-Za-z_-]+", "-", text).strip("-") or "scene"


def _float(value: object) -> float:
    """A row value as a float: the empty cells of ``step_row`` (a stage the step did not time) are NaN."""
    return float(value) if value != "" else math.nan


class StepSeries:
    """Rows of ``COLUMNS``, one per recorded step, in increasing step order (at most ``max_rows``)."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        if not isinstance(max_rows, int) or max_rows < 2:
            raise ValueError(f"max_rows must be an integer of at least 2, got {max_rows!r}")
        self.max_rows = max_rows
        self._data = np.empty((min(256, max_rows), len(COLUMNS)))
        self.count = 0
        self._index = {name: k for k, name in enumerate(COLUMNS)}

    @staticmethod
    def row(world: World, body: Body | None = None) -> list[float]:
        """The values of ``COLUMNS`` for ``world`` after its last step, ``body`` the selected body."""
        values = [_float(v) for v in step_row(world, STAGES)]
        stage_ms = [v for v in values[-len(STAGES):] if not math.isnan(v)]
        angular = world.angular_momentum()
        if body is not None and body.alive:
            v, w = body.linear_velocity, body.angular_velocity
            chosen = [float(body.index), float(body.center_of_mass[1]), float(np.linalg.norm(v)),
                      float(np.linalg.norm(w))]
        else:
            chosen = [-1.0, math.nan, math.nan, math.nan]
        return [*values, sum(stage_ms), *(float(x) for x in angular), max_depth(world), *chosen]

    def record(self, world: World, body: Body | None = None) -> None:
        """Add the row of ``world``'s last step; rows of that step or later (a future that the world
        went back from) are dropped first."""
        self.cut(world.steps)
        if self.count == len(self._data):
            if self.count >= self.max_rows:
                keep = self.max_rows // 2
                self._data[:keep] = self._data[self.count - keep:self.count]
                self.count = keep
            else:
                grown = np.empty((min(2 * len(self._data), self.max_rows), len(COLUMNS)))
                grown[:self.count] = self._data[:self.count]
                self._data = grown
        self._data[self.count] = self.row(world, body)
        self.count += 1

    def cut(self, step: int) -> None:
        """Drop the rows of step ``step`` and later."""
        self.count = int(np.searchsorted(self._data[:self.count, 0], step, side="left"))

    def until(self, step: int | None = None) -> np.ndarray:
        """The rows up to and including step ``step`` (all when None), a read-only ``(k, len(COLUMNS))``
        view."""
        rows = self._data[:self.count]
        if step is not None:
            rows = rows[:int(np.searchsorted(rows[:, 0], step, side="right"))]
        view = rows.view()
        view.flags.writeable = False
        return view

    def column(self, name: str, step: int | None = None) -> np.ndarray:
        """Column ``name`` of ``until(step)``, contiguous (what a plot takes)."""
        if name not in self._index:
            raise ValueError(f"unknown column {name!r}; known: {', '.join(COLUMNS)}")
        return np.ascontiguousarray(self.until(step)[:, self._index[name]])

    def write_csv(self, path: str | Path, columns: Sequence[str], step: int | None = None) -> int:
        """Write ``step`` and ``time`` and then ``columns`` of ``until(step)`` to ``path`` (atomically,
        see ``write_csv``); returns the number of rows."""
        names = ["step", "time", *(c for c in columns if c not in ("step", "time"))]
        for name in names:
            if name not in self._index:
                raise ValueError(f"unknown column {name!r}; known: {', '.join(COLUMNS)}")
        rows = self.until(step)[:, [self._index[n] for n in names]]
        counts = ("step", "pairs", "manifolds", "contact_points", "body")
        ints = {k for k, n in enumerate(names) if n in counts}
        out = [[int(v) if k in ints else float(v) for k, v in enumerate(r)] for r in rows.tolist()]
        return write_csv(path, names, out)


def write_impacts_csv(path: str | Path, impacts: Sequence[Impact]) -> int:
    """Write the ledger's rows (``ledger.IMPACT_COLUMNS``, the headless ``--impacts`` file) to ``path``
    atomically; returns the number of rows."""
    return write_csv(path, IMPACT_COLUMNS, [row.row() for row in impacts])


class Recorder:
    """A ``Simulation`` watcher that records the figures of its world (see the module's docstring).

    ``selected()`` gives the body whose height, speed and spin go into the rows (the app's selection).
    ``series`` holds the rows; ``ledger`` the restitution ledger (None until one of ``ledger_users``, the
    names of the windows showing it, asks for it); ``since`` and ``ledger_since`` the world's step when
    each began (they miss the steps before)."""

    def __init__(self, selected: Callable[[], Body | None] = lambda: None) -> None:
        self.selected = selected
        self.series_on = False
        self.ledger_users: set[str] = set()
        self.series = StepSeries()
        self.ledger: RestitutionLedger | None = None
        self.since: int | None = None
        self.ledger_since: int | None = None
        self._world: World | None = None

    def follow(self, world: World) -> None:
        """Start afresh if ``world`` is not the world recorded so far (a reset, another scene). Called
        before each step and before each look at the rows."""
        if world is not self._world:
            self._world = world
            self.series = StepSeries(self.series.max_rows)
            self.ledger = None
            self.since = self.ledger_since = None

    def _branch(self, world: World) -> None:
        """The world is about to step on from step ``world.steps``: forget what was recorded after it
        (another branch's future)."""
        steps = world.steps
        self.series.cut(steps + 1)
        if self.ledger is not None and self.ledger.impacts and self.ledger.impacts[-1].step > steps:
            # an impact whose contact was still closing cannot be finished on another branch: a new
            # ledger, with the impacts of the steps kept
            kept = [row for row in self.ledger.impacts if row.step <= steps]
            self.ledger = RestitutionLedger(world)
            self.ledger.impacts = kept
        if self.since is not None and self.since > steps:
            self.since = steps
        if self.ledger_since is not None and self.ledger_since > steps:
            self.ledger_since = steps

    @property
    def ledger_on(self) -> bool:
        """Whether the ledger runs: some window shows it."""
        return bool(self.ledger_users)

    def before_step(self, sim: Simulation) -> None:
        """Before ``sim`` steps: keep the ledger's view of the state the step starts from."""
        world = sim.world
        self.follow(world)
        self._branch(world)
        if self.ledger_on:
            if self.ledger is None:
                self.ledger = RestitutionLedger(world)
                self.ledger_since = world.steps
            self.ledger.before_step()
        if self.series_on and self.since is None:
            self.since = world.steps

    def after_step(self, sim: Simulation) -> None:
        """After ``sim`` stepped: the ledger's impacts of the step, the step's row."""
        world = sim.world
        if self.ledger_on and self.ledger is not None:
            self.ledger.after_step()
        if self.series_on:
            self.series.record(world, self.selected())

    def impacts(self, step: int | None = None) -> list[Impact]:
        """The ledger's impacts up to and including step ``step`` (all when None)."""
        if self.ledger is None:
            return []
        return [row for row in self.ledger.impacts if step is None or row.step <= step]

    def summary(self, step: int | None = None) -> list[RestitutionSummary]:
        """Measured against configured e (``RestitutionLedger.summary``) over ``impacts(step)``."""
        if self.ledger is None:
            return []
        view = RestitutionLedger(self.ledger.world)
        view.impacts = self.impacts(step)
        return view.summary()
