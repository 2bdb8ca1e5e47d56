"""The session between the app and the engine: one world, the fixed-step clock that advances it, the
current scene and the settings the user changed in it, and the commands that the panel, the mouse and
the keyboard give (load a scene, reset, pause, step, select, grab, delete, change a world setting).

It imports only the engine, the scenes, the scene files and the lessons: no window, no OpenGL, no ImGui,
so it runs (and is tested) headless. The app owns the window and calls the session; the session never
calls back into the app.

The clock follows Fiedler's "Fix your timestep!" (2004): real time accumulates, the world advances in
whole steps of ``dt`` (at most ``max_steps`` per frame, so that a slow step slows the simulation down
instead of freezing the app), and the frame is drawn between the last two states, at
``alpha = accumulator / dt``. Because that cap (and the cap on a frame's length) can drop time, the clock
also measures the rate it really achieves, in simulated seconds per wall-clock second.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import scenes
from .engine import Body, Grab, World
from .engine.validate import positive_float
from .i18n import N_, join
from .lessons import Camera, Lesson
from .scene_file import SceneFile, load_scene_file, save_scene_file
from .scenes import SCENE_FOLDER, built_in_name
from .timeline import Timeline

if TYPE_CHECKING:
    from .compare import Comparison

DEFAULT_DT = 1.0 / 60.0
MAX_STEPS_PER_FRAME = 4
MAX_FRAME_SECONDS = 0.25
"""Longer frames (a window drag, a breakpoint) count as this long, so the backlog stays bounded."""
RATE_SECONDS = 0.5
"""Time constant (wall-clock seconds) of the smoothing of the measured simulation rate."""
BEHIND_FRACTION = 0.03
"""The clock counts as behind when the caps drop more than this fraction of the scaled time."""
IDLE_FPS = 2.0
"""Frame rate while nothing moves and the user does nothing (paused, or every body asleep): the picture
cannot change, so a low rate only keeps the overlay's clock ticking. Low, because on a software OpenGL
(Mesa's llvmpipe) one frame costs a core for a tenth of a second or more."""
INPUT_GRACE_SECONDS = 0.5
"""After the last input event, frames keep coming at full rate this long (hover highlights, ImGui)."""
WAKING_SETTINGS = ("gravity", "sleeping")
"""World settings whose change must wake the sleeping bodies to be seen."""
MAX_ERRORS = 5
"""How many error messages the session keeps for the panel."""

SceneSource = str | Callable[[World], object]


class Simulation:
    """A world advanced at a fixed time step, with the state before the last step kept for drawing
    in between (positions lerped, orientations nlerped).

    ``time_scale`` slows or speeds the simulation against the wall clock; ``paused`` stops it (``step``
    still advances by one step); ``steps_last_frame`` and ``step_ms`` report the last frame's work.
    ``real_rate`` is the measured rate, simulated seconds per wall-clock second (smoothed over about
    ``RATE_SECONDS``); it equals ``time_scale`` while the machine keeps up. ``behind`` says it does not,
    and ``slowed_by`` why: "step cap" (steps per frame capped) or "long frames" (frames longer than
    ``MAX_FRAME_SECONDS``).

    ``watchers`` are told of every step: ``before_step(sim)`` just before it and ``after_step(sim)`` just
    after (the plots' recorder, an A/B comparison stepping its other worlds in lockstep)."""

    def __init__(self, world: World, dt: float = DEFAULT_DT, max_steps: int = MAX_STEPS_PER_FRAME) -> None:
        self.world = world
        self.dt = positive_float("dt", dt)
        self.max_steps = max_steps
        self.time_scale = 1.0
        self.paused = False
        self.accumulator = 0.0
        self.time = 0.0
        self.steps = 0
        self.steps_last_frame = 0
        self.step_ms = 0.0
        self.real_rate: float | None = None
        self._cap_loss = 0.0  # smoothed fraction of wall time the step cap dropped
        self._long_loss = 0.0  # smoothed fraction of wall time the frame-length cap dropped
        self.watchers: list = []
        self.sync()

    def sync(self) -> None:
        """Forget the previous state: draw the current one as is (after a teleport, a spawn, a load)."""
        d = self.world.data
        self._prev_pos = d.pos[: d.n].copy()
        self._prev_quat = d.quat[: d.n].copy()
        self._prev_gen = d.generation[: d.n].copy()

    def step(self) -> None:
        """Advance the world by exactly one step of ``dt``, keeping the state before it."""
        self.sync()
        for watcher in self.watchers:
            watcher.before_step(self)
        self.world.step(self.dt)
        self.time += self.dt
        self.steps += 1
        for watcher in self.watchers:
            watcher.after_step(self)

    def advance(self, real_seconds: float) -> int:
        """Account ``real_seconds`` of wall-clock time and take the whole steps it pays for (at most
        ``max_steps``; the rest of a larger backlog is dropped). Returns the number of steps taken."""
        self.steps_last_frame = 0
        if self.paused:
            return 0
        real = max(real_seconds, 0.0)
        counted = min(real, MAX_FRAME_SECONDS)
        before = self.time + self.accumulator
        self.accumulator += counted * self.time_scale
        start = time.perf_counter()
        while self.accumulator >= self.dt and self.steps_last_frame < self.max_steps:
            self.step()
            self.accumulator -= self.dt
            self.steps_last_frame += 1
        capped = 0.0
        if self.accumulator >= self.dt:
            capped = self.accumulator - self.accumulator % self.dt
            self.accumulator -= capped
        if self.steps_last_frame:
            self.step_ms = 1000.0 * (time.perf_counter() - start) / self.steps_last_frame
        self._measure(real, self.time + self.accumulator - before, capped, (real - counted) * self.time_scale)
        return self.steps_last_frame

    def _measure(self, real: float, simulated: float, capped: float, cut: float) -> None:
        """Fold one frame into the smoothed rate: ``simulated`` seconds of simulated time (the steps
        taken plus what the accumulator gained) over ``real`` wall seconds, of which ``capped`` and
        ``cut`` simulated seconds were dropped by the step cap and the frame-length cap."""
        if real <= 0.0:
            return
        # an exponential moving average weighted by the frame's length: frame-rate independent
        w = 1.0 - math.exp(-real / RATE_SECONDS)
        rate = simulated / real
        self.real_rate = rate if self.real_rate is None else self.real_rate + w * (rate - self.real_rate)
        self._cap_loss += w * (capped / real - self._cap_loss)
        self._long_loss += w * (cut / real - self._long_loss)

    @property
    def behind(self) -> bool:
        """Whether the simulation runs measurably slower than ``time_scale`` × real time: the caps
        drop more than ``BEHIND_FRACTION`` of it. (Judged on the dropped time, not on ``real_rate``
        against ``time_scale``: right after the time scale changes the smoothed rate lags behind it,
        though nothing is lost.)"""
        return not self.paused and self._cap_loss + self._long_loss > BEHIND_FRACTION * self.time_scale

    @property
    def slowed_by(self) -> str:
        """What drops the time while ``behind``: "step cap" or "long frames"."""
        return "step cap" if self._cap_loss >= self._long_loss else "long frames"

    @property
    def alpha(self) -> float:
        """Where the drawn state lies between the previous step (0) and the current one (1)."""
        return 1.0 if self.paused else min(self.accumulator / self.dt, 1.0)

    def interpolated(self) -> tuple[np.ndarray, np.ndarray]:
        """Centre-of-mass positions ``(n, 3)`` and unit quaternions ``(n, 4)`` of rows ``[:n]`` at
        ``alpha``: rows that are new or were reused since the last step are drawn where they are."""
        d = self.world.data
        n = d.n
        pos, quat = d.pos[:n].copy(), d.quat[:n].copy()
        a = self.alpha
        m = min(n, len(self._prev_pos))
        if a >= 1.0 or m == 0:
            return pos, quat
        same = self._prev_gen[:m] == d.generation[:m]
        p0, q0 = self._prev_pos[:m], self._prev_quat[:m].copy()
        # q and -q are the same rotation: blend along the shorter arc
        q0[np.einsum("ij,ij->i", q0, quat[:m]) < 0.0] *= -1.0
        blend_p = p0 + (pos[:m] - p0) * a
        blend_q = q0 + (quat[:m] - q0) * a
        blend_q /= np.linalg.norm(blend_q, axis=1, keepdims=True)
        pos[:m] = np.where(same[:, None], blend_p, pos[:m])
        quat[:m] = np.where(same[:, None], blend_q, quat[:m])
        return pos, quat


class LessonCheck:
    """The state of one run of a lesson's check: ``running`` while its thread works, then ``verdict``
    (the check's line, "PASS: ..." or "FAIL: ...", or "ERROR: ..." when the check itself failed)."""

    def __init__(self, running: bool = False, scene: str = "") -> None:
        self.running = running
        self.scene = scene
        self.verdict: str | None = None
        self.thread: threading.Thread | None = None

    def wait(self, timeout: float | None = None) -> str | None:
        """Wait for the check's thread (at most ``timeout`` seconds) and return the verdict so far."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.verdict


class FramePacer:
    """Decides when the next frame is due. While anything moves, or within ``grace`` seconds of the
    last input, frames follow each other as fast as the display takes them; once everything rests
    (paused, or every dynamic body asleep) and the user is idle, at ``idle_fps`` at most, so that the
    app stops spending its cores on drawing the same picture again. Input wakes it at once."""

    def __init__(self, idle_fps: float = IDLE_FPS, grace: float = INPUT_GRACE_SECONDS) -> None:
        self.idle_interval = 1.0 / positive_float("idle_fps", idle_fps)
        self.grace = grace
        self._last_input = -math.inf

    def input(self, now: float) -> None:
        """Note an input event at time ``now`` (seconds, the caller's clock)."""
        self._last_input = now

    def wait(self, now: float, last_frame: float, resting: bool) -> float:
        """Seconds from ``now`` until the next frame is due, the last one having started at
        ``last_frame``: 0 while not ``resting`` or just after input; else what is left of the idle
        interval."""
        if not self.idle(now, resting):
            return 0.0
        return max(0.0, last_frame + self.idle_interval - now)

    def idle(self, now: float, resting: bool) -> bool:
        """Whether frames come at the idle rate: everything ``resting`` and no input for ``grace`` s."""
        return resting and now - self._last_input >= self.grace


def scene_files(folder: str | Path = SCENE_FOLDER) -> list[Path]:
    """The JSON scene files in ``folder`` (the sandbox's ``assets/scenes`` by default) that are not the
    file of a built-in scene (those are listed by their scene's name), sorted by name; an empty list
    when the folder is missing."""
    folder = Path(folder)
    return sorted(p for p in folder.glob("*.json") if built_in_name(p) is None) if folder.is_dir() else []


def resolve_scene(scene: SceneSource) -> tuple[str, Callable[[World], object]]:
    """The name and builder of ``scene``: the one place where a scene's name is looked up (the app, the
    command line and ``sandbox run`` all come here).

    A built-in scene is named with spaces or hyphens alike (``"bounce row"``, ``"bounce-row"``) or by the
    path of its file, and comes back under its name in ``scenes.SCENES``, read again if its file changed
    since it was read; any other ``.json`` path (or existing file) is loaded as a scene file, named by its
    file name; a builder ``f(world)`` is returned as it is. ValueError for an unknown name,
    ``SceneFileError`` (a ValueError) for a bad file."""
    if isinstance(scene, SceneFile):
        return built_in_name(scene.path) or scene.path.name, scene
    if callable(scene):
        return getattr(scene, "__name__", "custom"), scene
    name = built_in_name(scene)
    if name is not None:
        return name, scenes.SCENES.current(name)  # read again if edited since (a teacher's change, Reload)
    if str(scene).lower().endswith(".json") or Path(scene).is_file():
        return Path(scene).name, load_scene_file(scene)
    raise ValueError(f"unknown scene {scene!r}: expected one of {', '.join(scenes.SCENE_NAMES)} "
                     "(spaces may be written as hyphens) or a .json file")


class Session:
    """One world and everything the user does to it.

    ``sim`` is the fixed-step clock (``sim.world`` the world); ``scene_name`` the scene it was built
    from; ``selected`` the body the panel edits, ``grab`` the mouse's grab constraint (or None);
    ``errors`` the last few error messages, for the panel. A world's settings come from one place: a
    fresh ``World`` (the defaults), then what the scene sets, then what the user changed through
    ``set_setting`` or a lesson's preset (kept across ``reset``, forgotten by ``load_scene``).

    ``bodies`` are the bodies the scene's builder returned (a lesson's labels and check refer to them);
    ``scene_path`` is the file a scene came from, built-in scenes included (None for a Python builder),
    for the panel's Reload; ``lesson`` the scene's lesson (its file's, ``sandbox.lessons``), if it has
    one, and ``check`` the state of its check, which runs on a fresh copy of the scene in a background
    thread. ``timeline`` keeps the steps taken (``sandbox/timeline.py``: scrub back, branch, the event
    log); it is the first of the simulation's watchers."""

    def __init__(self, world: World | None = None, dt: float = DEFAULT_DT,
                 max_steps: int = MAX_STEPS_PER_FRAME) -> None:
        self.sim = Simulation(world if world is not None else World(), dt, max_steps)
        self.scene_name = ""
        self.selected: Body | None = None
        self.grab: Grab | None = None
        self.errors: list[str] = []
        self.bodies: list[Body] = []
        self.scene_path: str | None = None
        self.check = LessonCheck()
        self.compare: Comparison | None = None
        """The A/B comparison (``open_compare``): the scene in lanes side by side, or None."""
        self._builder: Callable[[World], object] | None = None
        self._changed: dict[str, object] = {}
        self.timeline = Timeline(self)

    @property
    def world(self) -> World:
        """The world being simulated (replaced by ``load_scene`` and ``reset``)."""
        return self.sim.world

    # --- scenes ---------------------------------------------------------------------------------
    def load_scene(self, scene: SceneSource) -> bool:
        """Build ``scene`` into a fresh world (every setting the scene does not set at the ``World``
        default) and switch to it; the clock's settings (time scale, pause, and the step unless the scene
        file sets one) carry over. On any error the current world stays as it was and the error is
        reported; returns success."""
        try:
            name, builder = resolve_scene(scene)
            world, bodies = self._build(builder, {})
        except Exception as exc:  # noqa: BLE001 - a scene is user code: any failure is shown, not fatal
            self.report(N_("loading scene {scene!r}", scene=getattr(scene, "__name__", str(scene))), exc)
            return False
        self.close_compare()  # its lanes were copies of the old scene
        self._switch(world, bodies, name, builder, {})
        self.scene_path = str(builder.path) if isinstance(builder, SceneFile) else None
        if isinstance(builder, SceneFile) and builder.dt is not None:
            self.sim.dt = builder.dt  # the file's time step; Reset keeps the one the user set since
        return True

    def reset(self) -> bool:
        """Rebuild the current scene, keeping the settings the user changed in it; returns success."""
        if self._builder is None:
            return False
        try:
            world, bodies = self._build(self._builder, self._changed)
        except Exception as exc:  # noqa: BLE001
            self.report(N_("resetting scene {scene!r}", scene=self.scene_name), exc)
            return False
        self._switch(world, bodies, self.scene_name, self._builder, self._changed)
        if self.compare is not None:
            self.compare.restart(self.sim, self.bodies)  # every lane from the new start
        return True

    @staticmethod
    def _build(builder: Callable[[World], object], changed: dict[str, object]) -> tuple[World, list[Body]]:
        """A fresh world built by ``builder`` with the settings ``changed`` applied after it, and the
        bodies the builder returned (an empty list for a builder that returns something else)."""
        world = World()
        made = builder(world)
        for name, value in changed.items():
            setattr(world, name, value)
        bodies = [b for b in made if isinstance(b, Body)] if isinstance(made, (list, tuple)) else []
        return world, bodies

    def _switch(self, world: World, bodies: list[Body], name: str, builder: Callable[[World], object],
                changed: dict[str, object]) -> None:
        """Make ``world`` the session's, dropping every reference into the old one."""
        self.release_grab()
        self.selected = None
        self.bodies = bodies
        if name != self.scene_name:
            self.check = LessonCheck()  # a verdict belongs to its scene
        old = self.sim
        sim = Simulation(world, old.dt, old.max_steps)
        sim.time_scale, sim.paused = old.time_scale, old.paused
        sim.watchers = old.watchers
        self.sim = sim
        self.scene_name, self._builder, self._changed = name, builder, dict(changed)
        self.timeline.attach()

    def set_setting(self, name: str, value: object) -> None:
        """Set the world setting ``name`` (a ``World`` attribute such as "gravity", "substeps",
        "broadphase", "contact_cache") to ``value``, through the world's own validation, and keep it
        for ``reset``. Gravity and sleeping changes wake the bodies, so that they are seen."""
        known = getattr(self.world, name, None)
        if name.startswith("_") or not isinstance(known, (bool, int, float, str, np.ndarray)):
            raise ValueError(f"unknown world setting {name!r}")
        setattr(self.world, name, value)
        current = getattr(self.world, name)
        self._changed[name] = current.copy() if isinstance(current, np.ndarray) else current
        if name in WAKING_SETTINGS:
            self.world.wake_all()

    # --- the lesson -----------------------------------------------------------------------------
    @property
    def lesson(self) -> Lesson | None:
        """The current scene's lesson (its file's ``lesson``), or None (a file without one, a builder)."""
        return getattr(self._builder, "lesson", None)

    @property
    def scene_camera(self) -> Camera | None:
        """Where the current scene's camera starts: its lesson's camera, else its file's ``camera``, else
        None (the app frames the bodies)."""
        lesson = self.lesson
        return lesson.camera if lesson is not None else getattr(self._builder, "camera", None)

    def apply_preset(self, preset: dict) -> None:
        """Set each of a lesson preset's world settings through ``set_setting`` (validated, kept across
        ``reset``). A preset with ``"compare"`` lanes opens them side by side from the scene's start
        instead (``open_compare``)."""
        if "compare" in preset:
            self.open_compare(preset["compare"], from_start=True)
            return
        for name, value in preset["settings"].items():
            self.set_setting(name, value)

    # --- A/B ------------------------------------------------------------------------------------
    def open_compare(self, lanes: Sequence[dict] = ({"label": "", "settings": {}},
                                                    {"label": "", "settings": {}}),
                     from_start: bool = False) -> Comparison:
        """Show the scene in two or three lanes that step in lockstep (``sandbox.compare``): ``lanes``
        are dicts ``{"label": str, "settings": {world setting: value}}``. The first lane is this world,
        given its settings through ``set_setting``; the others start as bit-identical copies of it that
        differ in their own settings. ``from_start`` resets the scene first (a lesson's comparison),
        else the lanes start from the current state. ValueError for a bad lane, before anything
        changes."""
        from .compare import Comparison, check_lanes  # here: the comparison's module imports this one

        lanes = check_lanes(lanes)
        self.close_compare()
        for name, value in lanes[0]["settings"].items():
            self.set_setting(name, value)
        if from_start:
            self.reset()
        self.compare = Comparison(self.sim, self.bodies, lanes)
        self.sim.watchers.append(self.compare)
        return self.compare

    def close_compare(self) -> None:
        """Back to one world: drop the comparison's other lanes (nothing happens without one)."""
        if self.compare is not None:
            self.sim.watchers.remove(self.compare)
            self.compare = None

    def run_check(self) -> str:
        """Run the lesson's check on a fresh copy of the scene (the settings the user changed and the
        presets applied, not the live world, which stays untouched) and return its verdict line."""
        lesson = self.lesson
        if lesson is None or self._builder is None:
            raise ValueError(f"scene {self.scene_name!r} has no lesson to check")
        world, bodies = self._build(self._builder, self._changed)
        return lesson.check(world, bodies)

    def start_check(self) -> None:
        """Start ``run_check`` in a background thread (a check steps a few hundred times, up to a few
        seconds for the big scenes, which must not freeze the window); ``check`` shows its progress and
        its verdict. Does nothing while a check runs."""
        if self.check.running:
            return
        check = self.check = LessonCheck(running=True, scene=self.scene_name)

        def work() -> None:
            try:
                check.verdict = self.run_check()
            except Exception as exc:  # noqa: BLE001 - shown as the verdict, never a traceback in the UI
                check.verdict = N_("ERROR: {error}", error=f"{type(exc).__name__}: {exc}")
            finally:
                check.running = False

        check.thread = threading.Thread(target=work, name="lesson check", daemon=True)
        check.thread.start()

    def save(self, path: str | Path) -> str:
        """Write the world to the JSON scene file ``path``; returns a line saying what was saved (a
        ``Message``: the panel shows it in the current language)."""
        save_scene_file(self.world, path)
        return N_("saved {n} bodies to {path}", n=len(self.world.bodies), path=str(path))

    # --- the clock --------------------------------------------------------------------------------
    def toggle_pause(self) -> None:
        """Pause a running simulation, run a paused one."""
        self.sim.paused = not self.sim.paused

    def single_step(self) -> None:
        """Pause, then advance exactly one step."""
        self.sim.paused = True
        self.sim.step()

    def set_step_rate(self, hz: int) -> None:
        """Step the world ``hz`` times per simulated second (dt = 1/hz), starting the backlog afresh."""
        self.sim.dt = 1.0 / max(int(hz), 1)
        self.sim.accumulator = 0.0

    @property
    def resting(self) -> bool:
        """Whether the picture can only change through input: paused, or every dynamic body asleep and
        nothing grabbed."""
        if self.timeline.playing_back:
            return False
        if self.sim.paused:
            return True
        d = self.world.data
        n = d.n
        moving = d.alive[:n] & ~d.static[:n] & d.awake[:n]
        return self.grab is None and not moving.any()

    # --- bodies -----------------------------------------------------------------------------------
    def select(self, body: Body | None) -> None:
        """Make ``body`` (or nothing) the selected body."""
        self.selected = body

    def delete_selected(self) -> bool:
        """Remove the selected body from the world (letting go of it first); returns whether one was."""
        body = self.selected
        removed = body is not None and body.alive
        if removed:
            if self.grab_body == body:
                self.release_grab()
            self.world.remove_body(body)
        self.forget_removed()
        return removed

    def forget_removed(self) -> None:
        """Drop the selection and the grab of bodies that are no longer in the world."""
        if self.selected is not None and not self.selected.alive:
            self.selected = None
        if self.grab is not None and not self.grab.body.alive:
            self.grab = None

    @property
    def grab_body(self) -> Body | None:
        """The body the grab holds, or None."""
        return self.grab.body if self.grab is not None else None

    def start_grab(self, body: Body, point, max_force: float, frequency: float,
                   damping_ratio: float) -> Grab:
        """Grab ``body`` at world ``point`` with a spring (``frequency`` Hz, ``damping_ratio``, force
        capped at ``max_force`` N) whose target the caller moves; an earlier grab is let go."""
        self.release_grab()
        self.grab = self.world.grab(body, point, max_force=max_force, frequency=frequency,
                                    damping_ratio=damping_ratio)
        return self.grab

    def release_grab(self) -> None:
        """Let go of the grab, if any."""
        if self.grab is not None:
            self.world.release(self.grab)
        self.grab = None

    # --- errors ---------------------------------------------------------------------------------
    def report(self, what: str, exc: BaseException) -> None:
        """Keep an error for the panel (the last ``MAX_ERRORS``) and print its traceback. ``what`` says
        what was being done, best as a ``Message`` (``N_``), so that the panel can show the error in the
        language current when it is drawn; the exception's own text stays as the engine wrote it."""
        message = join(": ", [what, type(exc).__name__, str(exc)])
        self.errors = [*self.errors[-(MAX_ERRORS - 1):], message]
        print(f"sandbox: error while {message}", file=sys.stderr)
        traceback.print_exception(exc, file=sys.stderr)
