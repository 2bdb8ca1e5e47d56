"""A/B comparisons: one scene in two or three lanes at once, stepping in lockstep, each lane with its own
world settings, so that a student sees what one setting does (impulse against projection against
penalty, CCD off against on, 1 against 8 sub-steps, warm starting, restitution rules) on the same motion.

Lane A is the session's own world. Every other lane is a copy of it, made with ``World.snapshot`` and
``World.restore`` (bit-identical), whose settings are A's except the ones the lane changes
(``Lane.settings``; a setting changed in A later reaches the lanes that do not change it). The comparison
is one of A's ``Simulation.watchers``: each time A steps, every lane steps once with the same ``dt``, so
the lanes always show the same moment. A lane that changes nothing stays bit-identical to A (the step is
deterministic); ``Lane.diverged_at`` is the first step after which its state differs from A's.

What is done to A directly (bodies spawned, removed, dragged or grabbed) is not copied: ``copy_state``
starts a lane again from A's state as it is. When A's step counter goes back (a timeline restored an
earlier step) each lane goes back too, through its own ``History`` (restored and replayed, bit for bit),
and when it runs ahead without the comparison seeing the steps, the lanes step to catch up.

>>> from sandbox.engine import World, Sphere
>>> from sandbox.session import Simulation
>>> w = World()
>>> ball = w.add_body(Sphere(0.5), position=(0, 2, 0))
>>> a = Simulation(w)
>>> ab = Comparison(a, [ball], check_lanes([{"label": "", "settings": {}},
...                                          {"label": "one sub-step", "settings": {"substeps": 1}}]))
>>> a.watchers.append(ab)
>>> for _ in range(30):
...     a.step()
>>> lane = ab.lanes[0]
>>> lane.world.steps, lane.world.substeps, w.substeps
(30, 1, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .engine import Body, World
from .engine.settings import SETTINGS, check_setting
from .engine.snapshot import History
from .i18n import N_
from .lessons import max_depth
from .session import WAKING_SETTINGS, Simulation

MAX_LANES = 3
LANE_NAMES = ("A", "B", "C")
HISTORY_EVERY = 60
"""Steps between a lane's keyframes: going back costs at most this many replayed steps."""
HISTORY_KEYFRAMES = 120
"""Keyframes a lane keeps (two minutes at 60 steps per second); further back it starts again from A."""
MAX_CATCH_UP = 600
"""The most steps a lane takes at once to catch up with A; further behind, it starts again from A."""


def check_lanes(lanes: Sequence[dict]) -> list[dict]:
    """``lanes`` checked and copied: two or three dicts ``{"label": str, "settings": {name: value}}``,
    each setting a name of the engine's ``SETTINGS`` with a value it accepts (converted as the world
    would store it). ValueError naming the lane and what is wrong."""
    if isinstance(lanes, (str, bytes, dict)) or not isinstance(lanes, Sequence):
        raise ValueError(f"compare lanes must be a list of lanes, got {lanes!r}")
    if not 2 <= len(lanes) <= MAX_LANES:
        raise ValueError(f"a comparison has 2 or {MAX_LANES} lanes, got {len(lanes)}")
    out = []
    for name, lane in zip(LANE_NAMES, lanes, strict=False):
        if not isinstance(lane, dict) or not isinstance(lane.get("settings", {}), dict):
            raise ValueError(f"lane {name} must be a dict with a 'settings' dict, got {lane!r}")
        label = lane.get("label", "")
        if not isinstance(label, str):
            raise ValueError(f"lane {name}: the label must be a string, got {label!r}")
        unknown = set(lane) - {"label", "settings"}
        if unknown:
            raise ValueError(f"lane {name}: unknown keys {sorted(unknown)}; a lane has 'label' and "
                             "'settings'")
        settings = {}
        for key, value in lane.get("settings", {}).items():
            try:
                settings[key] = check_setting(key, value)
            except ValueError as exc:
                raise ValueError(f"lane {name}: {exc}") from None
        out.append({"label": label, "settings": settings})
    return out


def copy_world(world: World) -> World:
    """A new world in ``world``'s exact state (``snapshot``/``restore``), without its grabs: the mouse
    holds bodies of the original only."""
    twin = World()
    twin.restore(world.snapshot())
    for grab in list(twin.grabs):
        twin.release(grab)
    return twin


@dataclass(frozen=True)
class Figures:
    """What the figures table shows for one lane after its last step: the step counter and time (s),
    the total and kinetic energy (J), the deepest overlap (m), the manifolds and contact points, and the
    step's time (ms, the sum of ``world.timings``)."""

    step: int
    time: float
    energy: float
    kinetic: float
    deepest: float
    manifolds: int
    points: int
    step_ms: float

    @classmethod
    def of(cls, world: World) -> Figures:
        """The figures of ``world`` now."""
        ke, pe = world.kinetic_energy(), world.potential_energy()
        c = world.contacts
        return cls(world.steps, world.time, ke + pe, ke, max_depth(world), int(c.count), c.point_count(),
                   float(sum(world.timings.values())))


@dataclass(eq=False)
class Lane:
    """One lane besides A: its ``name`` ("B", "C"), the ``label`` shown over it (empty: the settings
    describe it), the ``settings`` it changes (name → value), its clock ``sim`` (the world is
    ``sim.world``; the clock only keeps the state for drawing between steps), the scene's bodies as
    handles in its world (``bodies``, for the lesson's labels), its ``history`` (for going back with
    A), ``diverged_at`` (see the module's docstring) and a ``note`` on what happened to it (empty, or
    why it started again from A: an English pattern marked for translation, to be filled with
    ``note_values``)."""

    name: str
    label: str
    settings: dict[str, object]
    sim: Simulation
    bodies: list[Body]
    history: History
    diverged_at: int | None = None
    note: str = ""
    note_values: dict[str, object] = field(default_factory=dict)
    _checked: int | None = field(default=None, repr=False)  # the step whose state was compared with A's

    @property
    def world(self) -> World:
        """The lane's world."""
        return self.sim.world


class Comparison:
    """The lanes of an A/B comparison of the simulation ``a`` (see the module's docstring). ``lanes``
    are checked lanes (``check_lanes``): the first is A's (its ``label`` and the ``settings`` it was
    given), the others become ``Lane`` objects started from A's state. ``bodies`` are the scene's
    bodies in A."""

    def __init__(self, a: Simulation, bodies: Sequence[Body], lanes: list[dict]) -> None:
        self.label_a = lanes[0]["label"]
        self.settings_a = dict(lanes[0]["settings"])
        self.lanes: list[Lane] = []
        for name, spec in zip(LANE_NAMES[1:], lanes[1:], strict=False):
            settings = dict(spec["settings"])
            lane = Lane(name, spec["label"], settings, *self._fresh(a, bodies, settings))
            self._compare(lane, a.world)
            self.lanes.append(lane)

    # --- starting -------------------------------------------------------------------------------
    def restart(self, a: Simulation, bodies: Sequence[Body]) -> None:
        """Start every lane again from A's state now (after a reset: from the scene's start); ``bodies``
        are the scene's bodies in A."""
        for lane in self.lanes:
            self._start(lane, a, bodies)

    def copy_state(self, lane: Lane, a: Simulation) -> None:
        """Start ``lane`` again from A's state now, keeping its settings (after A was changed by hand)."""
        self._start(lane, a, [Body(a.world, b.index, b.generation) for b in lane.bodies])

    def _fresh(self, a: Simulation, bodies: Sequence[Body],
               settings: dict[str, object]) -> tuple[Simulation, list[Body], History]:
        """A copy of A's world with ``settings`` changed: its clock, the scene's bodies in it, its
        history."""
        world = copy_world(a.world)
        self._apply_settings(settings, a.world, world)
        return (Simulation(world, a.dt, a.max_steps), [Body(world, b.index, b.generation) for b in bodies],
                History(world, HISTORY_EVERY, HISTORY_KEYFRAMES))

    def _start(self, lane: Lane, a: Simulation, bodies: Sequence[Body], note: str = "",
               **values: object) -> None:
        lane.sim, lane.bodies, lane.history = self._fresh(a, bodies, lane.settings)
        lane.diverged_at = lane._checked = None
        lane.note, lane.note_values = note, values
        self._compare(lane, a.world)

    # --- settings -------------------------------------------------------------------------------
    def set_setting(self, lane: Lane, name: str, value: object) -> None:
        """Make ``lane`` differ from A in the world setting ``name`` (ValueError for an unknown name or a
        value the setting refuses; the lane is then unchanged)."""
        value = check_setting(name, value)
        lane.settings[name] = value
        setattr(lane.world, name, value)
        if name in WAKING_SETTINGS:
            lane.world.wake_all()
        lane.history.mark(lane.world)

    def clear_setting(self, lane: Lane, name: str, a: Simulation) -> None:
        """Let ``lane`` follow A's value of ``name`` again."""
        lane.settings.pop(name, None)
        if self._apply_settings(lane.settings, a.world, lane.world):
            lane.history.mark(lane.world)

    @staticmethod
    def _apply_settings(settings: dict[str, object], a_world: World, world: World) -> bool:
        """Give ``world`` A's settings and gravity, but ``settings`` where they name one; returns whether
        anything changed."""
        changed = False
        for name in SETTINGS:
            want = settings[name] if name in settings else getattr(a_world, name)
            if getattr(world, name) != want:
                setattr(world, name, want)
                changed = True
                if name in WAKING_SETTINGS:
                    world.wake_all()
        if not np.array_equal(world.gravity, a_world.gravity):
            world.gravity = a_world.gravity
            world.wake_all()
            changed = True
        return changed

    def differences(self, lane: Lane, a: Simulation) -> list[tuple[str, object, object]]:
        """``(name, A's value, the lane's value)`` for each setting the lane changes, in ``SETTINGS``
        order."""
        return [(name, getattr(a.world, name), lane.settings[name]) for name in SETTINGS
                if name in lane.settings]

    # --- stepping -------------------------------------------------------------------------------
    def before_step(self, sim: Simulation) -> None:
        """Nothing: the lanes step after A (``after_step``)."""

    def after_step(self, sim: Simulation) -> None:
        """A (``sim``) has stepped: step every lane to A's step."""
        self.follow(sim)

    def follow(self, a: Simulation) -> None:
        """Bring every lane to A's step counter (one step after each of A's; back through the lane's
        history or forward by stepping after a jump of A's) and to A's clock (its ``dt``, pause and the
        fraction of a step drawn), then compare its state with A's if it has not diverged yet."""
        target = a.world.steps
        for lane in self.lanes:
            sim = lane.sim
            sim.dt, sim.paused, sim.accumulator, sim.time_scale = a.dt, a.paused, a.accumulator, a.time_scale
            if self._apply_settings(lane.settings, a.world, lane.world):
                lane.history.mark(lane.world)
            if lane.world.steps > target:
                self._go_back(lane, a, target)
            behind = target - lane.world.steps
            if behind > MAX_CATCH_UP:
                self._start(lane, a, lane.bodies, N_("started again from A at step {step}: it was {behind} "
                                                     "steps behind"), step=target, behind=behind)
                continue
            for _ in range(behind):
                sim.step()
                lane.history.record(lane.world, sim.dt)
            self._compare(lane, a.world)

    def _go_back(self, lane: Lane, a: Simulation, target: int) -> None:
        """Make ``lane`` what it was after step ``target`` (its history replayed), or start it again from
        A when its history does not reach back that far."""
        history = lane.history
        if history.first_step <= target:
            history.seek(lane.world, target)
            lane.sim.sync()
        else:
            self._start(lane, a, lane.bodies, N_("started again from A at step {step}: its history began "
                                                 "at step {first}"), step=target, first=history.first_step)
        if lane.diverged_at is not None and lane.diverged_at > target:
            lane.diverged_at = None
        lane._checked = None

    @staticmethod
    def _compare(lane: Lane, a_world: World) -> None:
        """Note the step at which ``lane`` first differs from A, comparing state hashes once per step
        while both are at the same step."""
        steps = lane.world.steps
        if lane.diverged_at is not None or lane._checked == steps or steps != a_world.steps:
            return
        lane._checked = steps
        if lane.world.state_hash() != a_world.state_hash():
            lane.diverged_at = steps
