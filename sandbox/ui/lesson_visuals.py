"""Teaching visuals over the scene, three debug toggles (``RenderOptions``) that the lessons needing them
turn on while their scene is loaded (``lessons.VISUALS``):

- **the ray from the cursor** (``cursor_ray``; the raycasts lesson): the ray ``world.raycast`` casts from
  the eye through the cursor, its hit point, the surface normal there as an arrow and a label with the
  shape's kind and the distance t; a ray that hits nothing is drawn faint to ``MISS_LENGTH``. Seen from
  where it was cast the ray is a single point under the cursor, so it is cast again only while the
  cursor moves (or while the view stays as it was cast): after an orbit (right drag) it stays where it
  was, and the student sees it from the side.
- **swept volumes** (``sweeps``; the tunnelling lesson): each body that moved at least
  ``SWEEP_MIN_FRACTION`` of its bounding radius in the last step, as the outline of the capsule its
  bounding sphere swept from where the step started (a pale circle) to where it ended (an orange one),
  so that a step jumping over a thin wall shows;
- **flashes on collision events** (``flashes``; the events lesson): a body that gets a begin event
  lights up white, fading over ``FLASH_SECONDS`` of simulated time (so a paused world keeps its
  flashes); an end event flashes a cyan ring around it. Static bodies do not flash: the ground touches
  everything, and a flashing floor would hide which ball began.

The bookkeeping is the app's, not the engine's: ``LessonVisuals`` is a watcher of the session's clock
(``Simulation.watchers``) and of each A/B lane's, and keeps per world the positions before each step and
the times of the last events (``Sweep``, ``Flashes``). ``render_extras(world)`` gives ``Renderer.render``
its ``overlay`` and ``tint`` for one world (every lane of an A/B view gets its own sweeps and flashes;
the ray belongs to A, where the mouse acts); ``draw()`` writes the ray's label inside the ImGui frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..engine import KIND_NAMES, RayHit, World
from ..i18n import N_, _
from ..lessons import Lesson, lesson_visuals
from ..render.debug_draw import Batch
from .context import UiContext
from .interaction import Interaction
from .lesson import draw_plates, view_span

RAY_COLOR = (1.0, 0.30, 0.75, 1.0)
MISS_COLOR = (1.0, 0.30, 0.75, 0.35)
HIT_COLOR = (1.0, 1.0, 1.0, 1.0)
RAY_NORMAL_COLOR = (0.25, 1.0, 0.45, 1.0)
RAY_NORMAL_LENGTH = 0.8
"""Length (m) of the surface normal's arrow at the ray's hit point."""
MISS_LENGTH = 50.0
"""How far (m) a ray that hits nothing is drawn."""
LABEL_LIFT = 24.0
"""The ray's label sits this many window points above the hit point, so that it never hides it."""

SWEEP_COLOR = (1.0, 0.60, 0.10, 0.95)
SWEEP_FILL_COLOR = (1.0, 0.60, 0.10, 0.35)
SWEEP_START_COLOR = (0.85, 0.90, 1.0, 0.8)
SWEEP_FILL = np.linspace(-1.0, 1.0, 9)[1:-1]
"""The band of lines that fills a swept volume's outline, as fractions of the radius across it."""
SWEEP_MIN_FRACTION = 0.5
"""A body's last step is drawn when it moved at least this fraction of its bounding radius in it: slower
bodies' swept volumes are hardly larger than the bodies themselves."""
CIRCLE_SEGMENTS = 32

FLASH_SECONDS = 0.4
"""How long (simulated seconds) a flash takes to fade."""
BEGIN_FLASH = (1.0, 1.0, 1.0)
END_FLASH = (0.25, 0.85, 1.0)
FLASH_STRENGTH = 0.9
"""The tint's weight right after a begin event (1 would hide the body's shading)."""
RING_GROWTH = 1.35
"""An end event's ring: this many bounding radii around the body's centre."""


# ----------------------------------------------------------------------------------------------------
# the bookkeeping (pure: world arrays in, arrays out)

@dataclass
class Sweep:
    """The bodies that moved far in one step: their ``rows``, centres of mass at the ``start`` and the
    ``end`` of the step ((k, 3) each), bounding ``radius`` (k,), and the world's step counter after it
    (``step``: the sweep is drawn only while it is still the world's last step)."""

    step: int
    rows: np.ndarray
    start: np.ndarray
    end: np.ndarray
    radius: np.ndarray


def sweep_between(before_pos: np.ndarray, before_generation: np.ndarray, world: World,
                  min_fraction: float = SWEEP_MIN_FRACTION) -> Sweep:
    """The ``Sweep`` of ``world``'s last step, from the centres of mass ``before_pos`` (rows
    ``[:n]`` as they were before it) to the current ones: live dynamic bodies that were the same body
    before the step (same generation) and moved at least ``min_fraction`` of their bounding radius."""
    d = world.data
    n = min(d.n, len(before_pos))
    same = d.alive[:n] & ~d.static[:n] & (d.generation[:n] == before_generation[:n])
    moved = np.linalg.norm(d.pos[:n] - before_pos[:n], axis=1)
    rows = np.flatnonzero(same & (moved > 0.0) & (moved >= min_fraction * d.radius[:n]))
    return Sweep(int(world.steps), rows, before_pos[rows].copy(), d.pos[rows].copy(), d.radius[rows].copy())


def fade(age: np.ndarray, seconds: float = FLASH_SECONDS) -> np.ndarray:
    """A flash's strength ``age`` seconds after its event: 1 at the event, falling linearly to 0 after
    ``seconds``; 0 before the event (a world whose time went back) and for no event (age ∞)."""
    age = np.asarray(age, dtype=float)
    return np.where(age >= 0.0, np.clip(1.0 - age / seconds, 0.0, 1.0), 0.0)


class Flashes:
    """Per body row of one world, the world time of its last begin event and of its last end event
    (−∞: none) and the generation of the body they happened to (a row reused by a new body forgets
    them). Static bodies are left out (see the module's docstring)."""

    def __init__(self) -> None:
        self.begin = np.zeros(0)
        self.end = np.zeros(0)
        self.generation = np.zeros(0, np.int64)

    def _grow(self, n: int) -> None:
        if len(self.begin) >= n:
            return
        extra = n - len(self.begin)
        self.begin = np.concatenate([self.begin, np.full(extra, -np.inf)])
        self.end = np.concatenate([self.end, np.full(extra, -np.inf)])
        self.generation = np.concatenate([self.generation, np.full(extra, -1, np.int64)])

    def record(self, world: World) -> None:
        """Note the events of ``world``'s last step (``world.events``) at the world's time now."""
        d = world.data
        self._grow(d.n)
        for event in world.events:
            times = self.begin if event.kind == "begin" else self.end
            for body in (event.body_a, event.body_b):
                i = body.index
                if i >= d.n or d.static[i]:
                    continue
                if self.generation[i] != body.generation:
                    self.begin[i] = self.end[i] = -np.inf
                    self.generation[i] = body.generation
                times[i] = world.time

    def strengths(self, world: World) -> tuple[np.ndarray, np.ndarray]:
        """The begin and the end flash's strength (``fade``) of rows ``[:n]`` now, 0 for rows whose body
        is gone or was replaced since its events."""
        d = world.data
        n = d.n
        self._grow(n)
        same = d.alive[:n] & (d.generation[:n] == self.generation[:n])
        now = world.time
        return (np.where(same, fade(now - self.begin[:n]), 0.0),
                np.where(same, fade(now - self.end[:n]), 0.0))


# ----------------------------------------------------------------------------------------------------
# geometry for the batch

def facing_circles(centres: np.ndarray, radii: np.ndarray, eye: np.ndarray,
                   segments: int = CIRCLE_SEGMENTS) -> tuple[np.ndarray, np.ndarray]:
    """Circles of ``radii`` around ``centres`` ((k, 3)) in the planes facing ``eye`` (a sphere's outline
    as seen from there), as segment end points ``(a, b)``, each (k·segments, 3)."""
    centres = np.asarray(centres, dtype=float).reshape(-1, 3)
    w = centres - eye
    w /= np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-12)
    # any vector across the line of sight: up, or x where the line of sight is vertical
    hint = np.where((np.abs(w[:, 1]) > 0.9)[:, None], np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    u = np.cross(w, hint)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(w, u)
    theta = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    ring = (np.cos(theta)[None, :, None] * u[:, None, :] + np.sin(theta)[None, :, None] * v[:, None, :])
    points = centres[:, None, :] + np.asarray(radii, dtype=float).reshape(-1, 1, 1) * ring
    return points[:, :-1].reshape(-1, 3), points[:, 1:].reshape(-1, 3)


def sweep_band(sweep: Sweep, eye: np.ndarray, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Lines from start to end along each swept capsule as seen from ``eye``, moved across both the motion
    and the line of sight by each of ``offsets`` (fractions of the radius: ±1 are the outline's two
    sides), as ``(a, b)``, each (len(offsets)·k, 3)."""
    axis = sweep.end - sweep.start
    side = np.cross(axis, 0.5 * (sweep.start + sweep.end) - eye)
    side *= (sweep.radius / np.maximum(np.linalg.norm(side, axis=1), 1e-12))[:, None]
    f = np.asarray(offsets, dtype=float)[:, None, None]
    return (sweep.start + f * side).reshape(-1, 3), (sweep.end + f * side).reshape(-1, 3)


# ----------------------------------------------------------------------------------------------------
# the app's side

@dataclass
class CursorRay:
    """One ray cast from the cursor into ``world``: ``origin`` (the eye), unit ``direction``, and the
    ``hit`` (``world.raycast``'s answer; None: nothing hit)."""

    world: World
    origin: np.ndarray
    direction: np.ndarray
    hit: RayHit | None

    @property
    def end(self) -> np.ndarray:
        """Where the drawn ray ends: the hit point, else ``MISS_LENGTH`` along the ray."""
        if self.hit is not None:
            return np.asarray(self.hit.point)
        return self.origin + MISS_LENGTH * self.direction

    def text(self) -> str:
        """The label, in the current language: the shape's kind and the distance t, or that it missed."""
        if self.hit is None:
            return _("no hit")
        kind = KIND_NAMES[int(self.world.data.kind[self.hit.body.index])]
        return _("{kind} · t = {t:.2f} m").format(kind=_(kind), t=self.hit.distance)


class _Marks:
    """What the visuals keep about one world: the positions before the step under way, the last
    step's ``Sweep`` and the ``Flashes``."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.before: tuple[np.ndarray, np.ndarray] | None = None
        self.sweep: Sweep | None = None
        self.flashes = Flashes()


class LessonVisuals:
    """The three visuals over one ``UiContext`` and its mouse ``Interaction`` (see the module's
    docstring). The app calls ``update()`` once per frame before drawing the scene, passes
    ``render_extras(world)`` to the renderer for each world it draws, and calls ``draw()`` inside the
    ImGui frame. After a frame ``ray`` is the ray drawn (None: none) and ``label`` its label as drawn,
    ``(x, y, text)`` at the plate's centre (window points, top-left origin), or None."""

    def __init__(self, ctx: UiContext, interaction: Interaction) -> None:
        self.ctx = ctx
        self.interaction = interaction
        self.ray: CursorRay | None = None
        self.label: tuple[float, float, str] | None = None
        self._marks: dict[int, _Marks] = {}
        self._lesson: Lesson | None = None
        self._turned_on: tuple[str, ...] = ()
        self._moved = False
        self._cast_view: tuple | None = None
        ctx.session.sim.watchers.append(self)  # the session hands its watchers from world to world

    # --- the clock's watcher --------------------------------------------------------------------------
    def _of(self, world: World) -> _Marks:
        marks = self._marks.get(id(world))
        if marks is None or marks.world is not world:
            marks = self._marks[id(world)] = _Marks(world)
        return marks

    def before_step(self, sim) -> None:
        """Keep the positions the step starts from (only while swept volumes are drawn)."""
        if self.ctx.options.sweeps:
            d = sim.world.data
            self._of(sim.world).before = (d.pos[: d.n].copy(), d.generation[: d.n].copy())

    def after_step(self, sim) -> None:
        """Make the step's ``Sweep`` and note its events; after a step of A, make sure every A/B lane is
        watched too (before the comparison steps them: it watches A after this)."""
        options, world = self.ctx.options, sim.world
        marks = self._of(world)
        if options.sweeps and marks.before is not None:
            marks.sweep = sweep_between(*marks.before, world)
        marks.before = None
        if options.flashes:
            marks.flashes.record(world)
        if sim is self.ctx.session.sim:
            self._watch_lanes()

    def _watch_lanes(self) -> None:
        compare = self.ctx.session.compare
        for lane in compare.lanes if compare is not None else ():
            if self not in lane.sim.watchers:
                lane.sim.watchers.append(self)

    # --- the frame --------------------------------------------------------------------------------------
    def worlds(self) -> list[World]:
        """The worlds drawn now: the session's and those of its A/B lanes."""
        compare = self.ctx.session.compare
        return [self.ctx.session.world, *(lane.world for lane in (compare.lanes if compare else ()))]

    def update(self) -> None:
        """Once per frame: follow the lesson (turn its visuals on when its scene is loaded, off again when
        it is left), forget the worlds no longer drawn, watch new lanes and cast the cursor's ray."""
        self._follow_lesson()
        current = {id(w): w for w in self.worlds()}
        self._marks = {k: m for k, m in self._marks.items() if current.get(k) is m.world}
        self._watch_lanes()
        self._cast()

    def _follow_lesson(self) -> None:
        """Turn on the visuals of the session's lesson when it changes, and off again those the previous
        lesson turned on (a visual the user had on already stays on)."""
        lesson = self.ctx.session.lesson
        if lesson is self._lesson:
            return
        options = self.ctx.options
        for name in self._turned_on:
            setattr(options, name, False)
        self._turned_on = tuple(name for name in lesson_visuals(lesson) if not getattr(options, name))
        for name in self._turned_on:
            setattr(options, name, True)
        self._lesson = lesson

    def cursor_moved(self) -> None:
        """The cursor moved over the scene with no button held (the app's mouse-motion handler)."""
        self._moved = True

    def _cast(self) -> None:
        """Cast the ray through the cursor again when the cursor moved with no button held, or while the
        view is the one it was cast in; keep it while a button is held (an orbit) and after the view
        changed, so that it is seen from the side. No ray while a body is grabbed (the grab spring is
        drawn) or in another world than it was cast in."""
        ctx, ia = self.ctx, self.interaction
        cursor = ia.cursor
        moved, self._moved = self._moved, False
        world = ctx.session.world
        if not ctx.options.cursor_ray or ctx.session.grab is not None:
            self.ray = None
            return
        if self.ray is not None and self.ray.world is not world:
            self.ray = None
        if cursor is None or ia.busy:
            return
        cam = ctx.camera
        view = (tuple(cam.eye), tuple(cam.target), cam.fov_y, tuple(ctx.window_size),
                getattr(cam, "shift", 0.0))
        if self.ray is None or moved or view == self._cast_view:
            origin, direction = ctx.cursor_ray(*cursor)
            self.ray = CursorRay(world, origin, direction, world.raycast(origin, direction))
            self._cast_view = view

    def sweep(self, world: World) -> Sweep | None:
        """``world``'s swept volumes of its last step (None: none kept, or the world stepped or went back
        since without them being kept)."""
        marks = self._marks.get(id(world))
        sweep = marks.sweep if marks is not None and marks.world is world else None
        return sweep if sweep is not None and sweep.step == world.steps else None

    def render_extras(self, world: World, overlay: Callable[[Batch], None] | None = None) -> dict:
        """``Renderer.render``'s ``overlay`` (``overlay`` first, if given, then the visuals) and ``tint``
        (the flashes; None when none shows) for drawing ``world``."""
        marks = self._marks.get(id(world))
        marks = marks if marks is not None and marks.world is world else None
        tint = None
        ring = None
        if self.ctx.options.flashes and marks is not None:
            begin, end = marks.flashes.strengths(world)
            if begin.any():
                tint = np.zeros((len(begin), 4), np.float32)
                tint[:, :3] = BEGIN_FLASH
                tint[:, 3] = FLASH_STRENGTH * begin
            if end.any():
                ring = end

        def draw(batch: Batch) -> None:
            if overlay is not None:
                overlay(batch)
            try:
                self._draw_scene(batch, world, ring)
            except Exception as exc:  # noqa: BLE001 - the scene is drawn without them, the error shown
                self.ctx.session.report(N_("drawing the lesson visuals"), exc)

        return {"overlay": draw, "tint": tint}

    def _draw_scene(self, batch: Batch, world: World, ring: np.ndarray | None) -> None:
        options, eye = self.ctx.options, self.ctx.camera.eye
        ray = self.ray
        if options.cursor_ray and ray is not None and ray.world is world:
            if ray.hit is None:
                batch.lines(ray.origin, ray.end, MISS_COLOR, 1.5)
            else:
                batch.lines(ray.origin, ray.end, RAY_COLOR, 2.5)
                batch.arrows(ray.end, np.asarray(ray.hit.normal) * RAY_NORMAL_LENGTH, RAY_NORMAL_COLOR, 3.0)
                batch.points(ray.end, HIT_COLOR, 10.0)
        sweep = self.sweep(world)
        if options.sweeps and sweep is not None and len(sweep.rows):
            batch.lines(*sweep_band(sweep, eye, SWEEP_FILL), SWEEP_FILL_COLOR, 2.0)
            batch.lines(*sweep_band(sweep, eye, (-1.0, 1.0)), SWEEP_COLOR, 2.0)
            batch.lines(*facing_circles(sweep.start, sweep.radius, eye), SWEEP_START_COLOR, 2.0)
            batch.lines(*facing_circles(sweep.end, sweep.radius, eye), SWEEP_COLOR, 2.0)
        if ring is not None:
            d = world.data
            rows = np.flatnonzero(ring > 0.0)
            a, b = facing_circles(d.pos[rows], RING_GROWTH * d.radius[rows], eye)
            color = np.empty((len(a), 4), np.float32)
            color[:, :3] = END_FLASH
            color[:, 3] = np.repeat(ring[rows], CIRCLE_SEGMENTS)
            batch.lines(a, b, color, 3.0)

    def draw(self) -> None:
        """The ray's label, on a plate above its hit point (or the end of a miss), under every window."""
        self.label = None
        ray = self.ray
        if not self.ctx.options.cursor_ray or ray is None or ray.world is not self.ctx.session.world:
            return
        cam = self.ctx.camera
        end = ray.end
        if float(np.dot(end - cam.eye, cam.forward)) <= cam.near:
            return
        w, h = self.ctx.window_size
        x, y = cam.project(end, w, h)
        self.label = draw_plates([(x, y - LABEL_LIFT, ray.text())], span=view_span(self.ctx))[0]
