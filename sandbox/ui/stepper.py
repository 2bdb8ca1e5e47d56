"""Step through: take one step of the world apart, stage by stage (the pipeline stepper).

Entering the mode (the S key, or the panel's checkbox) pauses the simulation and takes the next step with
``World.step_traced``, which runs exactly the code of ``World.step`` and records what each stage computed.
The world is then after the step, and the window replays the step from its trace, one stage at a time:

1. **Broad phase**: the bodies' boxes and the selected method's structure (sort-and-sweep intervals, grid
   cells, octree nodes), the candidate pairs as lines between the centres (green: touching, orange: within
   the speculative margin, red: the boxes overlap but the shapes do not), the culled pairs faint;
2. **Narrow phase** and 3. **Manifold**: one pair (the deepest, or the one clicked), taken apart by the
   narrow-phase view (``stepper_pair.PairView``) where there is one, else shown with its points, normal
   and depths from the trace;
4. **Solver**: a scrubber over the passes (each sub-step's warm start, iterations and relax, then
   restitution): every point's normal and friction impulses as arrows scaled by size, the bodies'
   velocities, a table of the accumulated impulses and a plot of the largest change per pass;
5. **Integration**: where the bodies were (outlines) and are (solid), with their velocities before and
   after;
6. **Sleep and events**: the islands that fell asleep and the pairs that began or stopped touching.

Until the integration stage the bodies are drawn where they were before the step (the trace's stages ran
there); from it on, where they are after it. Each stage has a two-line explanation and "Show code", which
shows the source of the functions that computed it, with file and line. Next and Previous walk the stages
and their sub-steps, the stage list jumps; at the end "Next step" takes the next traced step.

Leaving the mode keeps the step: the simulation goes on from the state after it, exactly as after an
ordinary step (``World.step_traced`` is bit for bit ``World.step``), whatever stage was showing; nothing
was half done, so nothing is undone. (A user who left during the broad phase and found the world restored
to before the step would see the clock jump back, and a step taken by O would no longer equal a step taken
apart.) While the mode is on the world is paused; running it (P) leaves the mode. When the world changes
under the stepper (a scene loaded, bodies added, a step taken by O) the window says so and offers to take
the next step apart; when settings change, it offers to take the same step again with them (from the
step's snapshot, so that the world then is what the step with the new settings gives).

The window takes the left of the view (the Lesson window, if shown, steps aside until the mode ends), and
the camera is panned so that the bodies stay in the free part of the view.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from imgui_bundle import imgui, implot

from ..engine import KIND_NAMES, SETTINGS, CollisionEvent, World
from ..engine.snapshot import Snapshot
from ..engine.trace import StepTrace
from ..i18n import N_, _
from ..render import Highlight, body_colors
from ..render.debug_draw import build_debug
from ..render.stepper_draw import body_outlines, fan_vectors
from .context import LESSON_WIDTH, PANEL_WIDTH, UiContext
from .inspector import (
    ContactInspector,
    ContactPoints,
    flatten_contacts,
    pair_keys,
    project_points,
    world_points,
)
from .lesson import TOP

try:  # the narrow-phase view (SAT axes, clipping passes), made by another part of the app
    from .stepper_pair import PairView
except ImportError:  # pragma: no cover - until it exists, the stepper shows what the trace has
    PairView = None

STEPPER_WIDTH = 430.0
"""Width of the stepper window at the left of the view (window points)."""
CULLED_DRAW_LIMIT = 2000
"""The culled pairs are drawn only while the possible pairs number at most this (a 1000-body pile has
half a million: the window gives their count instead)."""
PAIR_TABLE_HEIGHT = 150.0
IMPULSE_TABLE_HEIGHT = 170.0
CODE_HEIGHT = 280.0

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
CODE_BG = imgui.ImVec4(0.07, 0.08, 0.10, 1.0)

TOUCHING, SPECULATIVE, APART = 0, 1, 2
PAIR_COLORS = np.array([(0.20, 0.90, 0.30, 1.0), (1.0, 0.65, 0.15, 1.0), (0.95, 0.20, 0.20, 1.0)], np.float32)
CULLED_COLOR = (0.55, 0.58, 0.62, 0.22)
AABB_COLOR = (0.92, 0.95, 1.0, 0.45)
POINT_COLOR = (0.95, 0.15, 0.10, 1.0)
FAINT_POINT = (0.95, 0.35, 0.25, 0.55)
ON_A_COLOR = (0.20, 0.85, 0.30, 1.0)
NORMAL_IMPULSE_COLOR = (1.0, 0.85, 0.15, 1.0)
FRICTION_COLOR = (1.0, 0.30, 0.85, 1.0)
VELOCITY_COLOR = (0.15, 0.55, 1.0, 1.0)
VELOCITY_BEFORE_COLOR = (0.55, 0.70, 0.95, 0.6)
GHOST_COLOR = (1.0, 1.0, 1.0, 0.8)
PAIR_A_COLOR = (0.20, 0.90, 0.35, 1.0)
PAIR_B_COLOR = (1.0, 0.35, 0.25, 1.0)
ASLEEP_COLOR = (0.55, 0.60, 0.95, 0.9)
BEGIN_COLOR = (0.20, 0.90, 0.30, 1.0)
END_COLOR = (0.95, 0.20, 0.20, 1.0)


@dataclass(frozen=True)
class CodeRef:
    """A function that computes (part of) a stage: its file relative to the ``sandbox`` package and its
    name (``Class.method`` for a method)."""

    path: str
    name: str


@dataclass(frozen=True)
class Stage:
    """One stage of the stepper: its ``key`` (what ``PairView`` is told), its ``title``, the engine stages
    (``world.STAGES``) whose times it sums, its explanation (a line or more) and the functions behind it."""

    key: str
    title: str
    timings: tuple[str, ...]
    explanation: tuple[str, ...]
    code: tuple[CodeRef, ...]


CORE = "engine/core/"
STAGES = (
    Stage("broad phase", N_("Broad phase"), ("find_pairs",),
          (N_("Every body gets a box around it (its AABB, widened by how far it can move in the step); the "
              "broad phase finds the pairs whose boxes overlap, quickly, with the selected method."),
           N_("Only these candidate pairs go on to the exact, costly narrow phase: every other pair is "
              "culled here.")),
          (CodeRef("engine/world.py", "World._find_pairs"),
           CodeRef("engine/broadphase.py", "BroadPhase.update"),
           CodeRef(CORE + "broadphase.py", "compute_aabbs"))),
    Stage("narrow phase", N_("Narrow phase"), ("collide",),
          (N_("Each candidate pair is tested exactly, by the test for its two shape kinds (sphere–box, "
              "box–box, …): do the shapes overlap, and along which normal?"),
           N_("Pairs farther apart than their speculative margin are dropped; the others get a normal "
              "from A to B and a depth (negative: apart, but close enough to be watched).")),
          (CodeRef(CORE + "narrowphase.py", "collide_pairs"), CodeRef(CORE + "narrowphase.py", "_dispatch"),
           CodeRef("engine/world.py", "World._collide"))),
    Stage("manifold", N_("Manifold"), ("collide",),
          (N_("Each touching pair keeps up to four contact points where the shapes overlap (a box face is "
              "clipped against the other's), each with its own depth."),
           N_("A resting pair that hardly moved since the last step reuses its manifold (the contact "
              "cache) instead of being collided again.")),
          (CodeRef(CORE + "clipping.py", "clip_to_face"), CodeRef(CORE + "clipping.py", "reduce_to_four"),
           CodeRef(CORE + "manifold_cache.py", "reuse_rows"))),
    Stage("solver", N_("Solver"), ("prepare_contacts", "warm_start", "solve", "relax", "restitution",
                                   "store_impulses"),
          (N_("Sequential impulses: each pass visits every contact point and changes its accumulated impulse "
              "so that the bodies stop approaching there, and stop sliding within the friction cone."),
           N_("Scrub through the passes and watch the impulses settle: the plot shows the largest change "
              "from pass to pass, which should fall."),
           N_("Where bodies whose masses differ tenfold or more touch (a small island), the block solver "
              "finds all the island's normal impulses at once in each pass, so that a light box under a "
              "heavy one does not sink; friction there stays point by point.")),
          (CodeRef(CORE + "contact_solver_reference.py", "solve_point"),
           CodeRef(CORE + "block_solver.py", "normal_sweep"),
           CodeRef(CORE + "patch.py", "solve_patch"),
           CodeRef(CORE + "contact_solver.py", "warm_start"),
           CodeRef(CORE + "contact_solver.py", "solve_contacts"),
           CodeRef(CORE + "contact_solver.py", "friction_update"),
           CodeRef(CORE + "restitution.py", "apply_restitution"),
           CodeRef(CORE + "contact_prepare.py", "prepare_contacts"),
           CodeRef(CORE + "substeps.py", "run_substeps"),
           CodeRef(CORE + "penalty.py", "penalty_contacts"),
           CodeRef(CORE + "projection.py", "project_contacts"))),
    Stage("integration", N_("Integration"), ("integrate_velocities", "integrate_positions"),
          (N_("Gravity enters the velocities at the start of each sub-step; after the solver, the new "
              "velocities move the bodies: x += h·v, q += ½·h·ω⊗q."),
           N_("The white outlines show where the bodies were before the step, the solid bodies where they "
              "are after it.")),
          (CodeRef(CORE + "integrate.py", "integrate_positions"),
           CodeRef(CORE + "integrate.py", "integrate_velocities"))),
    Stage("sleep and events", N_("Sleep and events"), ("sleep", "events"),
          (N_("Islands of touching bodies that have rested long enough fall asleep together: the step "
              "skips them until something touches them."),
           N_("Pairs that began or stopped touching become collision events, read after the step.")),
          (CodeRef(CORE + "islands.py", "update_sleep"), CodeRef("engine/world.py", "World._emit_events"),
           CodeRef(CORE + "events.py", "diff_touching"))),
)
STAGE_KEYS = tuple(s.key for s in STAGES)
INTEGRATION = STAGE_KEYS.index("integration")
BROADPHASE_NOTES = {
    "sap": N_("Sort and sweep: the boxes' intervals along one axis (the bars beside the scene) are kept "
              "sorted; only bodies whose intervals overlap are compared."),
    "grid": N_("Uniform grid: each box is put in the cells it covers (the cyan cubes); only bodies "
               "sharing a cell are compared."),
    "octree": N_("Octree: each box goes into the smallest node that holds it (red at the root to violet at "
                 "the deepest); only bodies in the same node or its ancestors are compared."),
    "brute": N_("Brute force: every pair of boxes is compared; there is no structure to draw."),
}
PAIR_RESULTS = (N_("touching"), N_("speculative"), N_("apart"))
PASS_WORDS = {"warm start": N_("warm start"), "cold start": N_("cold start (warm starting off)"),
              "relax": N_("relax"), "penalty springs": N_("penalty springs"),
              "restitution": N_("restitution")}
PACKAGE = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=64)
def function_source(ref: CodeRef) -> tuple[str, int, str]:
    """The source of ``ref``'s function as written in its file: ``(path shown, first line, text)``, the
    first line being that of its first decorator. Read from the file with ``ast`` (the same text as
    ``inspect.getsourcelines`` gives for the function, or for a numba kernel's ``.py_func``), so that the
    UI needs no import of the engine's kernels."""
    path = PACKAGE / ref.path
    text = path.read_text(encoding="utf-8")
    body: list[ast.stmt] = ast.parse(text).body
    parts = ref.name.split(".")
    node = None
    for k, part in enumerate(parts):
        wanted = ast.ClassDef if k < len(parts) - 1 else (ast.FunctionDef, ast.AsyncFunctionDef)
        node = next((n for n in body if isinstance(n, wanted) and n.name == part), None)
        if node is None:
            raise ValueError(f"no function {ref.name} in {ref.path}")
        body = node.body
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = text.splitlines()[first - 1:node.end_lineno]
    return f"sandbox/{ref.path}", first, "\n".join(lines)


def pass_label(label: str) -> str:
    """A solver pass's label (``trace.solver_pass_labels``) in the user's language."""
    match = re.fullmatch(r"substep (\d+) / (.+)", label)
    what = match.group(2) if match else label
    solve = re.fullmatch(r"solve (\d+)", what)
    words = _("iteration {i}").format(i=solve.group(1)) if solve else _(PASS_WORDS.get(what, what))
    return _("sub-step {k}: {what}").format(k=match.group(1), what=words) if match else words


def convergence_series(trace: StepTrace) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The largest impulse change per pass (``StepTrace.largest_change``) cut into the series a plot
    shows: per sub-step, its passes after the warm start (iterations, then relax; a warm start applies the
    impulses kept and changes none), and the restitution pass; each as (name, pass numbers, changes)."""
    change = trace.largest_change()
    labels = [p.label for p in trace.solver]
    groups: dict[str, list[int]] = {}
    for i in range(1, len(labels)):
        label = labels[i]
        if label.endswith(("warm start", "cold start")):
            continue
        match = re.fullmatch(r"substep (\d+) / .+", label)
        groups.setdefault(match.group(1) if match else label, []).append(i)
    return [(name, np.array(xs, np.float64), change[np.array(xs) - 1]) for name, xs in groups.items()]


def settings_of(world: World) -> tuple:
    """Every setting of the world and its gravity: what a step depends on besides the bodies."""
    return (*(getattr(world, name) for name in SETTINGS), tuple(world.gravity.tolist()))


@dataclass
class TracedStep:
    """One step taken apart: its ``trace``, the ``world`` and its step count after it (``steps``), the
    session's step ``number``, ``dt`` and the sub-step ``h``; the bodies' rows ``alive`` then, their
    ``before`` and ``after`` states (pos, quat, vel, angvel, (n, ·) each), ``awake_before`` and
    ``awake_after``; the step's contacts (``contacts``, a ``ContactArrays.state()`` copy, and ``flat``,
    its points flattened), each flattened point's solver point (``solver_index``, −1 for a sleeping pair's
    point, which the solver skips); the ``snapshot`` before it and the ``settings`` it ran with; its
    ``events``; how many manifolds came from the cache (``cached_manifolds``); the candidate pairs
    classified (``pair_table``); and the arrows' ``impulse_scale`` (metres per N·s)."""

    trace: StepTrace
    world: World
    steps: int
    number: int
    dt: float
    h: float
    alive: np.ndarray
    before: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    after: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    awake_before: np.ndarray
    awake_after: np.ndarray
    contacts: dict[str, np.ndarray]
    flat: dict[str, np.ndarray]
    solver_index: np.ndarray
    snapshot: Snapshot
    settings: tuple
    events: list[CollisionEvent]
    cached_manifolds: int
    pair_table: dict[str, np.ndarray]
    impulse_scale: float
    cache: dict = field(default_factory=dict)
    """What the views compute from the step once and draw in every frame (outlines, the plot's series)."""

    def memo(self, key: str, make):
        """``make()``, computed on the first call for ``key`` only."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def classify_pairs(pairs: np.ndarray, contacts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The candidate ``pairs`` (P, 2) with the narrow phase's verdict: ``a``, ``b`` (in the manifold's
    order where there is one: its normal points from a to b), ``result`` (``TOUCHING``: a point with depth
    ≥ 0, ``SPECULATIVE``: points all apart but within the margin, ``APART``: no manifold), ``depth`` (the
    deepest point; −inf without a manifold), ``points`` and the manifold ``row`` (−1: none)."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    count = len(pairs)
    lo, hi = pairs.min(axis=1, initial=np.iinfo(np.int64).max), pairs.max(axis=1, initial=-1)
    ma, mb = contacts["body_a"], contacts["body_b"]
    row = np.full(count, -1, np.int64)
    if len(ma) and count:
        mkeys = pair_keys(np.minimum(ma, mb), np.maximum(ma, mb))
        order = np.argsort(mkeys, kind="stable")
        sorted_keys = mkeys[order]
        keys = pair_keys(lo, hi)
        at = np.minimum(np.searchsorted(sorted_keys, keys), len(order) - 1)
        found = sorted_keys[at] == keys
        row[found] = order[at[found]]
    has = row >= 0
    a, b = lo.copy(), hi.copy()
    a[has], b[has] = ma[row[has]], mb[row[has]]
    points = np.zeros(count, np.int64)
    points[has] = contacts["npoints"][row[has]]
    depth = np.full(count, -np.inf)
    if has.any():
        rows = contacts["depth"][row[has]]
        valid = np.arange(rows.shape[1])[None, :] < points[has][:, None]
        depth[has] = np.where(valid, rows, -np.inf).max(axis=1)
    result = np.where(~has, APART, np.where(depth >= 0.0, TOUCHING, SPECULATIVE))
    return {"a": a, "b": b, "result": result, "depth": depth, "points": points, "row": row}


def trace_step(world: World, dt: float, number: int) -> TracedStep:
    """Take one step of ``world`` with ``World.step_traced`` and keep what the stepper shows of it."""
    d = world.data
    n = d.n
    before = tuple(a[:n].copy() for a in (d.pos, d.quat, d.vel, d.angvel))
    awake_before = d.awake[:n].copy()
    snapshot = world.snapshot()
    trace = world.step_traced(dt)
    after = tuple(a[:n].copy() for a in (d.pos, d.quat, d.vel, d.angvel))
    contacts = {k: v.copy() for k, v in world.contacts.state().items()}
    flat = flatten_contacts(contacts)
    lookup = np.full(max(len(contacts["body_a"]), 1) * 4, -1, np.int64)
    lookup[trace.point_manifold * 4 + trace.point_slot] = np.arange(len(trace.point_manifold))
    solver_index = lookup[flat["row"] * 4 + flat["slot"]]
    largest = max((float(np.abs(p.normal).max()) for p in trace.solver if len(p.normal)), default=0.0)
    dynamic = d.alive[:n] & ~d.static[:n]
    size = float(np.median(d.radius[:n][dynamic])) if dynamic.any() else 0.5
    reach = min(max(2.0 * size, 0.3), 3.0)
    return TracedStep(trace, world, world.steps, number, dt, dt / world.substeps, d.alive[:n].copy(), before,
                      after, awake_before, d.awake[:n].copy(), contacts, flat, solver_index, snapshot,
                      settings_of(world), list(world.events), world.cached_manifolds,
                      classify_pairs(trace.pairs, contacts), reach / largest if largest > 0.0 else 0.0)


def culled_pairs(step: TracedStep) -> np.ndarray:
    """The pairs of live bodies that the broad phase could have paired (not both static) but did not,
    (q, 2): build it only for a few bodies (``possible_pair_count``)."""
    d = step.world.data
    rows = np.flatnonzero(step.alive)
    i, j = np.triu_indices(len(rows), 1)
    a, b = rows[i], rows[j]
    static = d.static[: len(step.alive)]
    keep = ~(static[a] & static[b])
    a, b = a[keep], b[keep]
    table = step.pair_table
    candidates = pair_keys(np.minimum(table["a"], table["b"]), np.maximum(table["a"], table["b"]))
    culled = ~np.isin(pair_keys(a, b), candidates)
    return np.stack([a[culled], b[culled]], axis=1)


def possible_pair_count(step: TracedStep) -> int:
    """How many pairs of live bodies the broad phase could have paired (not both static)."""
    d = step.world.data
    live = step.alive
    dynamic = int((live & ~d.static[: len(live)]).sum())
    static = int(live.sum()) - dynamic
    return dynamic * (dynamic - 1) // 2 + dynamic * static


class Stepper:
    """The pipeline stepper over one ``UiContext`` (see the module docstring); ``draw()`` once per frame
    inside the ImGui frame, ``poses`` and ``overlay`` for the renderer, ``click`` for the mouse.

    ``active``: whether the mode is on; ``step``: the step taken apart (``TracedStep``); ``stage`` and
    ``sub``: the stage shown (an index into ``STAGES``) and its sub-step (a solver pass, a step of the
    narrow-phase view); ``pair``: the pair the narrow phase and manifold stages show; ``inspector``: the
    contact inspector (also used in normal running). After each frame ``rect`` is the window's rectangle
    and ``buttons`` the rectangles of its controls by name (tests press them through the mouse)."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.active = False
        self.step: TracedStep | None = None
        self.stage = 0
        self.sub = 0
        self.pair: tuple[int, int] | None = None
        self.inspector = ContactInspector(ctx)
        self.pair_view = PairView() if PairView is not None else None
        self.pair_view_error: str | None = None
        self.show_drawing = True
        self.code_open = False
        self.code_choice = 0
        self.rect: tuple[float, float, float, float] | None = None
        self.buttons: dict[str, tuple[float, float, float, float]] = {}
        self.drawn_stage: str | None = None
        self._was_paused = True
        self._lesson_hidden = False
        # the camera made room for the window: (that camera, pixels panned, its distance before)
        self._shifted: tuple[object, float, float] | None = None
        self._points_cache: tuple[TracedStep, tuple[int, int], ContactPoints | None] | None = None
        self._selected_before = None

    # --- the mode ------------------------------------------------------------------------------------
    def toggle(self) -> None:
        """Enter the mode, or leave it."""
        if self.active:
            self.leave()
        else:
            self.enter()

    def enter(self) -> None:
        """Pause, make room at the left of the view, and take the next step apart."""
        if self.active:
            return
        ctx, sim = self.ctx, self.ctx.session.sim
        self._was_paused = sim.paused
        sim.paused = True
        self.active = True
        if ctx.show_lesson and ctx.session.lesson is not None:
            self._lesson_hidden = True
            ctx.show_lesson = False
            left = LESSON_WIDTH
        else:
            left = 0.0
        self._shift_camera(left)
        self.take_step()

    def leave(self) -> None:
        """End the mode: the world stays after the step taken apart (as after an ordinary step) and runs on
        if it ran before; the Lesson window and the camera come back."""
        if not self.active:
            return
        ctx, sim = self.ctx, self.ctx.session.sim
        self.active = False
        self.step = None
        self.code_open = False
        if not self._was_paused:
            sim.accumulator = 0.0  # no catching up on the time spent looking
            sim.paused = False
        if self._lesson_hidden:
            ctx.show_lesson = True
            self._lesson_hidden = False
        if self._shifted is not None and self._shifted[0] is ctx.camera:
            ctx.camera.pan(-self._shifted[1], 0.0, ctx.window_size[1])
            ctx.camera.distance = self._shifted[2]
        self._shifted = None

    def _shift_camera(self, left: float) -> None:
        """Pan the camera so that what it framed in the part of the view right of ``left`` shows right of
        the stepper window instead, and move it back along its line of sight (in steps of 10 %, at most
        1.6×) until the dynamic bodies fit in that narrower part."""
        ctx = self.ctx
        camera = ctx.camera
        w, h = ctx.window_size
        shift = 0.5 * (STEPPER_WIDTH + 10.0 - left)
        camera.pan(shift, 0.0, h)
        self._shifted = (camera, shift, camera.distance)
        d = ctx.session.world.data
        live = d.alive[: d.n] & ~d.static[: d.n]
        pos, rad = d.pos[: d.n][live], d.radius[: d.n][live]
        points = np.concatenate([pos + s * rad[:, None] * axis for s in (-1.0, 1.0) for axis in np.eye(3)])
        x0, x1 = STEPPER_WIDTH + 30.0, w - (PANEL_WIDTH if ctx.show_panel else 0.0) - 20.0
        start = camera.distance
        while len(points) and camera.distance < 1.6 * start:
            xy, front = project_points(ctx, points)
            if front.all() and np.all((xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= 20.0)
                                      & (xy[:, 1] <= h - 20.0)):
                break
            camera.distance = min(1.1 * camera.distance, 1.6 * start)

    def take_step(self) -> None:
        """Take the next step of the session's world apart (as ``Simulation.step`` does, traced)."""
        sim = self.ctx.session.sim
        world = sim.world
        self.inspector.ages.observe(world)
        sim.sync()
        step = trace_step(world, sim.dt, sim.steps + 1)
        sim.time += sim.dt
        sim.steps += 1
        self._adopt(step)

    def retake(self) -> None:
        """Take the same step again with the world's settings as they are now: back to the step's
        snapshot, the changed settings applied again, the step traced again."""
        step = self.step
        if step is None:
            return
        world = step.world
        now = {name: getattr(world, name) for name in SETTINGS}
        gravity = world.gravity
        world.restore(step.snapshot)
        for name, value in now.items():
            if getattr(world, name) != value:
                setattr(world, name, value)
        if not np.array_equal(world.gravity, gravity):
            world.gravity = gravity
        self.inspector.ages.forget()
        self._adopt(trace_step(world, step.dt, step.number))

    def _adopt(self, step: TracedStep) -> None:
        self.step = step
        self.stage = self.sub = 0
        self.inspector.ages.observe(step.world)
        table = step.pair_table
        if self.pair is not None:
            keys = pair_keys(np.minimum(table["a"], table["b"]), np.maximum(table["a"], table["b"]))
            a, b = self.pair
            if not np.any(keys == pair_keys([min(a, b)], [max(a, b)])):
                self.pair = None
        if self.pair is None:
            self.pair = self._deepest_pair()
        self._choose_in_view()

    def _deepest_pair(self) -> tuple[int, int] | None:
        table = self.step.pair_table
        if len(table["a"]) == 0:
            return None
        k = int(np.argmax(table["depth"]))
        return int(table["a"][k]), int(table["b"][k])

    def choose_pair(self, a: int, b: int) -> None:
        """Show the pair of bodies ``a`` and ``b`` (rows) in the narrow phase and manifold stages."""
        self.pair = (int(a), int(b))
        self._choose_in_view()

    def focus_pair(self) -> None:
        """Point the camera at the chosen pair, close enough to see its contact points."""
        step = self.step
        if step is None or self.pair is None:
            return
        a, b = self.pair
        d = step.world.data
        row = self._pair_row(step)
        if row >= 0:
            c = step.contacts
            centre = c["points_b"][row, : int(c["npoints"][row])].mean(axis=0)
        else:
            centre = 0.5 * (step.before[0][a] + step.before[0][b])
        radius = min(float(r) for r in (d.radius[a], d.radius[b]) if r > 0.0)
        camera = self.ctx.camera
        camera.focus(centre, max(radius, 0.25))
        if self._shifted is not None and self._shifted[0] is camera:
            camera.pan(self._shifted[1], 0.0, self.ctx.window_size[1])  # still clear of the window

    def _choose_in_view(self) -> None:
        if self.pair_view is None or self.step is None:
            return
        try:
            a, b = self.pair if self.pair is not None else (None, None)
            self.pair_view.choose(self.step.trace, a, b)
            self.pair_view_error = None
        except Exception as exc:  # noqa: BLE001 - the view is shown without it, and says why
            self.pair_view_error = f"{type(exc).__name__}: {exc}"

    def stale(self) -> str | None:
        """Why the step shown is no longer the world's last step (the world was replaced, stepped, or
        bodies were added or removed since), or None when it still is."""
        step = self.step
        if step is None:
            return _("No step has been taken apart yet.")
        world = self.ctx.session.world
        if world is not step.world:
            return _("Another scene was loaded (or the scene was reset).")
        if world.steps != step.steps:
            return _("The world has been stepped since.")
        d = world.data
        if d.n != len(step.alive) or not np.array_equal(d.alive[: d.n], step.alive):
            return _("Bodies were added or removed since.")
        return None

    def update(self) -> None:
        """Once per frame, before drawing: leave the mode when the simulation was set running, and keep
        the camera clear of the window after a scene was loaded."""
        if not self.active:
            return
        if not self.ctx.session.sim.paused:
            self._was_paused = False
            self.leave()
            return
        if self._shifted is None or self._shifted[0] is not self.ctx.camera:
            self._shift_camera(0.0)  # a new camera was framed without the (hidden) Lesson window
        selected = self.ctx.session.selected
        if selected is not self._selected_before and selected is not None and self._live() is not None:
            self._pair_of(selected.index)  # a body clicked: its deepest pair
        self._selected_before = selected

    def _pair_of(self, body: int) -> None:
        """Show the deepest candidate pair of ``body``, if it has one."""
        table = self.step.pair_table
        mine = np.flatnonzero((table["a"] == body) | (table["b"] == body))
        if len(mine):
            k = int(mine[np.argmax(table["depth"][mine])])
            self.choose_pair(table["a"][k], table["b"][k])

    # --- where we are ---------------------------------------------------------------------------------
    def substeps(self, stage: int) -> list[str]:
        """The sub-step labels of ``stage`` (at least one)."""
        step = self.step
        key = STAGES[stage].key
        labels: list[str] = []
        if step is not None:
            if key == "solver":
                labels = [pass_label(p.label) for p in step.trace.solver]
            elif key in ("narrow phase", "manifold") and self.pair_view is not None:
                try:
                    labels = list(self.pair_view.substeps(step.trace, key))
                except Exception as exc:  # noqa: BLE001
                    self.pair_view_error = f"{type(exc).__name__}: {exc}"
        return labels or [""]

    def jump(self, stage: int, sub: int = 0) -> None:
        """Show ``stage`` (an index into ``STAGES``) at its sub-step ``sub``."""
        self.stage = min(max(int(stage), 0), len(STAGES) - 1)
        self.sub = min(max(int(sub), 0), len(self.substeps(self.stage)) - 1)

    def at_end(self) -> bool:
        return self.stage == len(STAGES) - 1 and self.sub >= len(self.substeps(self.stage)) - 1

    def next(self) -> None:
        """The next sub-step, else the next stage; after the last stage, the next step taken apart."""
        if self.stale() is not None:
            self.take_step()
        elif self.sub < len(self.substeps(self.stage)) - 1:
            self.sub += 1
        elif self.stage < len(STAGES) - 1:
            self.jump(self.stage + 1)
        else:
            self.take_step()

    def previous(self) -> None:
        """The sub-step or stage before (nothing before the first stage's first)."""
        if self.sub > 0:
            self.sub -= 1
        elif self.stage > 0:
            self.jump(self.stage - 1, len(self.substeps(self.stage - 1)) - 1)

    @staticmethod
    def key_index(key: str) -> int:
        """The index in ``STAGES`` of the stage called ``key``."""
        return STAGE_KEYS.index(key)

    @property
    def key(self) -> str:
        return STAGES[self.stage].key

    def _live(self) -> TracedStep | None:
        """The step shown, when the mode is on and it is still the world's last step."""
        if not self.active or self.stale() is not None:
            return None
        return self.step

    # --- the renderer's hooks --------------------------------------------------------------------------
    def poses(self, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The poses to draw the bodies at: before the step until the integration stage, after it from
        then on; ``pos`` and ``quat`` as given outside the mode."""
        step = self._live()
        if step is None:
            return pos, quat
        state = step.before if self.stage < INTEGRATION else step.after
        return state[0], state[1]

    def overlay(self, batch) -> None:
        """Draw the stage into the renderer's debug ``batch`` (called after the usual debug drawing)."""
        try:
            step = self._live()
            if step is not None and self.show_drawing:
                self._draw_stage(step, batch)
            self.inspector.draw_scene(batch, self._arrow_length())
        except Exception as exc:  # noqa: BLE001 - the scene is drawn without it, the error shown
            self.ctx.session.report(N_("drawing the stepper"), exc)

    def _arrow_length(self) -> float:
        step = self.step
        if step is None:
            return 0.5
        d = step.world.data
        n = len(step.alive)
        dynamic = step.alive & ~d.static[:n]
        return 0.8 * float(np.median(d.radius[:n][dynamic])) if dynamic.any() else 0.5

    def click(self, x: float, y: float, button: int, modifiers: int) -> bool:
        """A left click at pyglet window point ``(x, y)`` on a drawn contact point inspects it (and, in the
        stepper, shows its pair); returns whether it did, so that the click does nothing else."""
        if button != 1 or modifiers & 0x3:  # the left button, without Shift or Ctrl (pyglet's bits)
            return False
        if not self.active and not self.ctx.options.contacts:
            return False  # in normal running only the drawn contact points are picked
        try:
            points = self.current_points()
            if points is None:
                return False
            j = self.inspector.pick(points, x, y)
            if j is None:
                return False
            self.inspector.select(points, j)
            if self._live() is not None:
                self.choose_pair(int(points.body_a[j]), int(points.body_b[j]))
            self.inspector.update(self.ctx.session.world, points)
            return True
        except Exception as exc:  # noqa: BLE001
            self.ctx.session.report(N_("picking a contact point"), exc)
            return False

    # --- contact points as the stage knows them --------------------------------------------------------
    def current_points(self) -> ContactPoints | None:
        """The contact points drawn now, with what is known of them at the stage shown: None when there
        are none to pick (normal running with the contact points hidden, or the broad phase)."""
        step = self._live()
        if step is None:
            return self._points_now(None)
        key = (self.stage, self.sub)
        if self._points_cache is None or self._points_cache[0] is not step or self._points_cache[1] != key:
            self._points_cache = (step, key, self._points_now(step))
        return self._points_cache[2]

    def _points_now(self, step: TracedStep | None) -> ContactPoints | None:
        if step is None:
            if self.active:
                return None
            if not (self.ctx.options.contacts or self.inspector.active):
                return None
            return world_points(self.ctx.session.world, self.ctx.session.sim.dt)
        if self.stage == 0:
            return None
        flat = step.flat
        pos0, _q0, vel0, w0 = step.before
        pos1, _q1, vel1, w1 = step.after
        fields = (flat["row"], flat["slot"], flat["body_a"], flat["body_b"], flat["normal"], flat["point_a"],
                  flat["point_b"], flat["depth"])
        passes = step.trace.solver
        key = self.key
        if key in ("narrow phase", "manifold"):
            return ContactPoints(*fields, None, None, None, pos0, vel0, w0,
                                 _("not computed yet: the solver does that"), step.h)
        if not passes:
            impulse = None if key == "solver" else flat["impulse"]
            return ContactPoints(*fields, impulse, None, None, pos0 if key == "solver" else pos1,
                                 vel0 if key == "solver" else vel1, w0 if key == "solver" else w1,
                                 _("the projection method computes no impulses"), step.h)
        k = self.sub if key == "solver" else len(passes) - 1
        k = min(k, len(passes) - 1)
        normal, friction = self._pass_impulses(step, k)
        warm = self._mapped(step, passes[0].normal, np.nan)
        if key == "solver":
            vel, ang = passes[k].velocity, passes[k].angular_velocity
            note = _("after {label}").format(label=pass_label(passes[k].label))
            return ContactPoints(*fields, normal, friction, warm, pos0, vel, ang, note, step.h)
        return ContactPoints(*fields, normal, friction, warm, pos1, vel1, w1, _("after the step"), step.h)

    def _mapped(self, step: TracedStep, values: np.ndarray, missing) -> np.ndarray:
        """``values`` per solver point, per flattened point (``missing`` where the solver had none)."""
        idx = step.solver_index
        out = np.full((len(idx), *values.shape[1:]), missing, dtype=np.float64)
        has = idx >= 0
        out[has] = values[idx[has]]
        return out

    def _pass_impulses(self, step: TracedStep, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Pass ``k``'s normal impulses (k,) and friction impulses as world vectors (k, 3), per flattened
        point; a sleeping pair's points (no solver point) keep their stored impulse and no friction."""
        return step.memo(f"pass {k}", lambda: self._impulses_after(step, k))

    @staticmethod
    def _impulses_after(step: TracedStep, k: int) -> tuple[np.ndarray, np.ndarray]:
        p = step.trace.solver[k]
        idx = step.solver_index
        has = idx >= 0
        normal = step.flat["impulse"].astype(np.float64).copy()
        normal[has] = p.normal[idx[has]]
        friction = np.zeros((len(idx), 3))
        friction[has] = fan_vectors(step.flat["normal"][has], p.friction[idx[has]])
        return normal, friction

    # --- drawing the stage in the view ----------------------------------------------------------------
    def _draw_stage(self, step: TracedStep, batch) -> None:
        key = self.key
        if key == "broad phase":
            self._draw_broad(step, batch)
        elif key in ("narrow phase", "manifold"):
            self._draw_pair(step, batch, key)
        elif key == "solver":
            self._draw_solver(step, batch)
        elif key == "integration":
            self._draw_integration(step, batch)
        else:
            self._draw_sleep_and_events(step, batch)

    def _draw_broad(self, step: TracedStep, batch) -> None:
        world = step.world
        pos = step.before[0]
        only = replace(self.ctx.options, contacts=False, normals=False, aabbs=False, broadphase=True,
                       velocities=False, grab_spring=False, joints=False)
        build_debug(batch, world, only, Highlight(), pos, body_colors(len(pos)))
        rows = np.flatnonzero(step.alive)
        batch.wire_boxes(world.broad.aabb_min[rows], world.broad.aabb_max[rows], AABB_COLOR, 1.0)
        table = step.pair_table
        if possible_pair_count(step) <= CULLED_DRAW_LIMIT:
            culled = step.memo("culled", lambda: culled_pairs(step))
            batch.lines(pos[culled[:, 0]], pos[culled[:, 1]], CULLED_COLOR, 1.0)
        if len(table["a"]):
            batch.lines(pos[table["a"]], pos[table["b"]], PAIR_COLORS[table["result"]], 2.5)
            centres = np.unique(np.concatenate([table["a"], table["b"]]))
            batch.points(pos[centres], (1.0, 1.0, 1.0, 0.9), 6.0)

    def _draw_pair(self, step: TracedStep, batch, key: str) -> None:
        flat = step.flat
        batch.points(flat["point_b"], FAINT_POINT, 6.0)
        if self.pair_view is not None and self.pair_view_error is None:
            try:
                self.pair_view.draw_scene(step.trace, key, self.sub, batch)
                return
            except Exception as exc:  # noqa: BLE001 - fall back to what the trace has
                self.pair_view_error = f"{type(exc).__name__}: {exc}"
        if self.pair is None:
            return
        a, b = self.pair
        pos, quat = step.before[0], step.before[1]
        starts, ends = body_outlines(step.world, np.array([a]), pos, quat)
        batch.lines(starts, ends, PAIR_A_COLOR, 2.0)
        starts, ends = body_outlines(step.world, np.array([b]), pos, quat)
        batch.lines(starts, ends, PAIR_B_COLOR, 2.0)
        row = self._pair_row(step)
        if row < 0:
            batch.lines(pos[a], pos[b], PAIR_COLORS[APART], 2.0)
            return
        c = step.contacts
        k = int(c["npoints"][row])
        pa, pb, normal = c["points_a"][row, :k], c["points_b"][row, :k], c["normal"][row]
        batch.lines(pa, pb, (1.0, 1.0, 1.0, 0.9), 2.0)
        batch.points(pa, ON_A_COLOR, 9.0)
        batch.points(pb, POINT_COLOR, 11.0)
        centre = pb.mean(axis=0)
        batch.arrows(centre, normal * self._arrow_length() * 1.5, NORMAL_IMPULSE_COLOR, 3.0)
        if key == "manifold" and k >= 3:
            ring = _around(pb, normal)
            batch.lines(ring, np.roll(ring, -1, axis=0), POINT_COLOR, 2.0)

    def _pair_row(self, step: TracedStep) -> int:
        """The manifold row of the chosen pair in the step's contacts, or −1."""
        if self.pair is None:
            return -1
        a, b = self.pair
        c = step.contacts
        same = ((c["body_a"] == a) & (c["body_b"] == b)) | ((c["body_a"] == b) & (c["body_b"] == a))
        rows = np.flatnonzero(same)
        return int(rows[0]) if len(rows) else -1

    def _draw_solver(self, step: TracedStep, batch) -> None:
        points = self.current_points()
        pos = step.before[0]
        batch.points(step.flat["point_b"], FAINT_POINT, 5.0)
        passes = step.trace.solver
        if not passes or points is None:
            return
        has = step.solver_index >= 0
        s = step.impulse_scale
        origin = points.point_b[has]
        batch.arrows(origin, points.normal[has] * (points.normal_impulse[has] * s)[:, None],
                     NORMAL_IMPULSE_COLOR, 2.5)
        batch.arrows(origin, points.friction[has] * s, FRICTION_COLOR, 2.0)
        d = step.world.data
        n = len(step.alive)
        moving = np.flatnonzero(step.alive & ~d.static[:n])
        scale = self.ctx.options.velocity_arrow_scale
        batch.arrows(pos[moving], points.vel[moving] * scale, VELOCITY_COLOR, 2.0)

    def _draw_integration(self, step: TracedStep, batch) -> None:
        d = step.world.data
        n = len(step.alive)
        pos0, quat0, vel0, _w0 = step.before
        pos1, _q1, vel1, _w1 = step.after
        moved = np.flatnonzero(step.alive & ~d.static[:n] & np.any(pos0 != pos1, axis=1))
        starts, ends = step.memo("ghosts", lambda: body_outlines(step.world, moved, pos0, quat0))
        batch.lines(starts, ends, GHOST_COLOR, 1.5)
        scale = self.ctx.options.velocity_arrow_scale
        batch.arrows(pos0[moved], vel0[moved] * scale, VELOCITY_BEFORE_COLOR, 2.0)
        batch.arrows(pos1[moved], vel1[moved] * scale, VELOCITY_COLOR, 2.5)
        batch.lines(pos0[moved], pos1[moved], GHOST_COLOR, 2.0)

    def _draw_sleep_and_events(self, step: TracedStep, batch) -> None:
        d = step.world.data
        pos, quat = step.after[0], step.after[1]
        dynamic = step.alive & ~d.static[: len(step.alive)]
        asleep = np.flatnonzero(step.awake_before & ~step.awake_after & dynamic)
        starts, ends = body_outlines(step.world, asleep, pos, quat)
        batch.lines(starts, ends, ASLEEP_COLOR, 2.0)
        begins = [e for e in step.events if e.kind == "begin" and e.point is not None]
        if begins:
            points = np.array([e.point for e in begins])
            batch.points(points, BEGIN_COLOR, 12.0)
            normals = np.array([e.normal for e in begins])
            batch.arrows(points, normals * self._arrow_length(), BEGIN_COLOR, 2.5)
        ends_ = [e for e in step.events if e.kind == "end"]
        rows = np.array([(e.body_a.index, e.body_b.index) for e in ends_ if e.body_a.index < len(pos)
                         and e.body_b.index < len(pos)], dtype=np.int64).reshape(-1, 2)
        batch.lines(pos[rows[:, 0]], pos[rows[:, 1]], END_COLOR, 2.5)

    # --- the window ------------------------------------------------------------------------------------
    def draw(self) -> None:
        """The stepper window (while the mode is on) and the contact inspector's window."""
        self.drawn_stage = None
        self.rect = None
        self.update()
        world = self.ctx.session.world
        inspector = self.inspector
        if self.active or self.ctx.options.contacts or inspector.active:
            inspector.ages.observe(world)
        points = waiting = None
        if inspector.active:
            points = self.current_points()
            if points is None and self.active:
                waiting = self.stale() or _("The narrow phase (stage 2) makes this step's contacts.")
        inspector.update(world, points, waiting)
        if self.active:
            self._window()
        if not self.active:  # (in the stepper, the inspector is a section of its window)
            lesson = self.ctx.show_lesson and self.ctx.session.lesson is not None
            inspector.draw(LESSON_WIDTH if lesson else 10.0)

    def _button(self, name: str, text: str, size: imgui.ImVec2 | None = None, enabled: bool = True) -> bool:
        if not enabled:
            imgui.begin_disabled()
        pressed = imgui.button(text + "##" + name, size if size is not None else imgui.ImVec2(0, 0))
        if not enabled:
            imgui.end_disabled()
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.buttons[name] = (a.x, a.y, b.x, b.y)
        return pressed and enabled

    def _window(self) -> None:
        w, h = self.ctx.window_size
        imgui.set_next_window_pos(imgui.ImVec2(10.0, TOP), imgui.Cond_.always)
        size = imgui.ImVec2(STEPPER_WIDTH, max(h - TOP - 10.0, 200.0))
        imgui.set_next_window_size(size, imgui.Cond_.always)
        imgui.set_next_window_bg_alpha(0.9)
        flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing)
        step = self.step
        title = (_("Step through: step {n}").format(n=step.number) if step is not None else _("Step through"))
        visible, still_open = imgui.begin(title + "###stepper", True, flags)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        self.ctx.ui_rects.append(self.rect)
        if visible:
            try:
                self._contents()
            except Exception as exc:  # noqa: BLE001 - a failing control is shown, the app goes on
                self.ctx.session.report(N_("the stepper"), exc)
        imgui.end()
        if not still_open:
            self.leave()

    def _contents(self) -> None:
        wrap = imgui.push_text_wrap_pos
        reason = self.stale()
        if reason is not None:
            wrap(0.0)
            imgui.text_colored(YELLOW, reason)
            imgui.text_colored(DIM, _("The step shown is no longer the world's last one."))
            imgui.pop_text_wrap_pos()
            if self._button("take", _("Take the next step apart"), imgui.ImVec2(-1, 0)):
                self.take_step()
            if self._button("leave", _("Leave (S)"), imgui.ImVec2(-1, 0)):
                self.leave()
            return
        step = self.step
        third = imgui.ImVec2((imgui.get_content_region_avail().x - 16.0) / 3.0, 0)
        if self._button("previous", _("◀ Previous"), third, enabled=self.stage > 0 or self.sub > 0):
            self.previous()
        imgui.same_line()
        if self._button("next", _("Next step ▶") if self.at_end() else _("Next ▶"), third):
            self.next()
            step = self.step
        imgui.same_line()
        if self._button("leave", _("Leave (S)"), third):
            self.leave()
            return
        self._stage_list(step)
        stage = STAGES[self.stage]
        labels = self.substeps(self.stage)
        if len(labels) > 1:
            imgui.push_item_width(-1)
            text = f"{self.sub + 1} / {len(labels)}: {labels[self.sub]}".replace("%", "%%")
            changed, sub = imgui.slider_int("##sub", self.sub, 0, len(labels) - 1, text)
            imgui.pop_item_width()
            a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            self.buttons["scrubber"] = (a.x, a.y, b.x, b.y)
            if changed:
                self.sub = min(max(sub, 0), len(labels) - 1)
        wrap(0.0)
        for line in stage.explanation:
            imgui.text_colored(DIM, _(line))
        imgui.pop_text_wrap_pos()
        if self._button("code", _("Hide code") if self.code_open else _("Show code")):
            self.code_open = not self.code_open
            self.code_choice = 0
        imgui.same_line()
        _changed, self.show_drawing = imgui.checkbox(_("Draw in the view") + "##drawing", self.show_drawing)
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.buttons["drawing"] = (a.x, a.y, b.x, b.y)
        if self.code_open:
            self._code(stage)
        if step.settings != settings_of(step.world):
            wrap(0.0)
            imgui.text_colored(YELLOW, _("The settings changed since this step was taken."))
            imgui.pop_text_wrap_pos()
            if self._button("retake", _("Take this step again with them"), imgui.ImVec2(-1, 0)):
                self.retake()
                step = self.step
            imgui.set_item_tooltip(_("Back to the state before this step (changes made to bodies since are "
                                     "undone), then the step again with the settings as they are now.")
                                   .replace("%", "%%"))
        self.inspector.draw_section()
        imgui.separator()
        self.drawn_stage = stage.key
        {"broad phase": self._broad_panel, "narrow phase": self._pair_panel, "manifold": self._pair_panel,
         "solver": self._solver_panel, "integration": self._integration_panel,
         "sleep and events": self._sleep_panel}[stage.key](step)

    def _stage_list(self, step: TracedStep) -> None:
        flags = imgui.TableFlags_.sizing_stretch_same
        if not imgui.begin_table("##stages", 3, flags):
            return
        for k, stage in enumerate(STAGES):
            imgui.table_next_column()
            ms = sum(step.trace.timings.get(name, 0.0) for name in stage.timings)
            text = f"{k + 1}. {_(stage.title)}\n{ms:.2f} ms"
            clicked, _on = imgui.selectable(text + f"##stage{k}", k == self.stage, 0, imgui.ImVec2(0, 34))
            a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            self.buttons[f"stage {stage.key}"] = (a.x, a.y, b.x, b.y)
            if clicked:
                self.jump(k)
        imgui.end_table()

    def _code_refs(self, stage: Stage) -> list[CodeRef]:
        """The stage's functions, the one that computes what is shown first: the selected broad-phase
        method's kernel, the chosen pair's test, the solver pass's function."""
        refs = list(stage.code)
        step = self.step
        if stage.key == "broad phase":
            method = step.world.broadphase
            refs.insert(0, CodeRef(CORE + "broadphase.py", f"{method}_pairs"))
        elif stage.key in ("narrow phase", "manifold") and self.pair is not None:
            kinds = sorted(int(step.world.data.kind[i]) for i in self.pair)
            name = f"{KIND_NAMES[kinds[0]]}_{KIND_NAMES[kinds[1]]}"
            module = "polyhedra.py" if "sphere" not in name and "capsule" not in name else "rounded.py"
            refs.insert(0, CodeRef(CORE + module, name))
        elif stage.key == "solver" and step.trace.solver:
            label = step.trace.solver[min(self.sub, len(step.trace.solver) - 1)].label
            first = None
            if step.world.response == "penalty":
                first = CodeRef(CORE + "penalty.py", "penalty_contacts")
            elif label == "restitution":
                first = CodeRef(CORE + "restitution.py", "apply_restitution")
            elif label.endswith("warm start") and step.world.contact_solver == "wide":
                first = CodeRef(CORE + "contact_solver.py", "warm_start")
            if first is not None:
                refs.remove(first)
                refs.insert(0, first)
        elif stage.key == "solver" and step.world.response == "projection":
            first = CodeRef(CORE + "projection.py", "project_contacts")
            refs.remove(first)
            refs.insert(0, first)
        return refs

    def _code(self, stage: Stage) -> None:
        refs = self._code_refs(stage)
        names = [ref.name for ref in refs]
        self.code_choice = min(self.code_choice, len(refs) - 1)
        imgui.push_item_width(-1)
        changed, choice = imgui.combo("##code function", self.code_choice, names)
        imgui.pop_item_width()
        if changed:
            self.code_choice = choice
        try:
            path, first, text = function_source(refs[self.code_choice])
        except (OSError, ValueError, SyntaxError) as exc:
            imgui.text_colored(RED, _("cannot show the code: {error}").format(error=exc))
            return
        imgui.text_colored(ACCENT, f"{path}:{first}")
        imgui.push_style_color(imgui.Col_.child_bg, CODE_BG)
        imgui.begin_child("##code", imgui.ImVec2(-1, CODE_HEIGHT), imgui.ChildFlags_.borders,
                          imgui.WindowFlags_.horizontal_scrollbar)
        numbered = "\n".join(f"{first + k:5d}  {line}" for k, line in enumerate(text.splitlines()))
        imgui.text_unformatted(numbered)
        imgui.end_child()
        imgui.pop_style_color()

    # --- the stages' panels ----------------------------------------------------------------------------
    @staticmethod
    def _table_rows(rows: list[tuple[str, str]]) -> None:
        if not imgui.begin_table("##facts", 2, imgui.TableFlags_.sizing_fixed_fit | imgui.TableFlags_.row_bg):
            return
        imgui.table_setup_column("label", imgui.TableColumnFlags_.width_fixed, 190.0)
        imgui.table_setup_column("value", imgui.TableColumnFlags_.width_stretch)
        for label, value in rows:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text_colored(DIM, label)
            imgui.table_next_column()
            imgui.text(value)
        imgui.end_table()

    def _broad_panel(self, step: TracedStep) -> None:
        world = step.world
        table = step.pair_table
        possible = possible_pair_count(step)
        candidates = len(table["a"])
        counts = np.bincount(table["result"], minlength=3) if candidates else np.zeros(3, np.int64)
        imgui.push_text_wrap_pos(0.0)
        imgui.text(_(BROADPHASE_NOTES.get(world.broadphase, BROADPHASE_NOTES["brute"])))
        imgui.pop_text_wrap_pos()
        self._table_rows([
            (_("bodies"), str(int(step.alive.sum()))),
            (_("possible pairs"), str(possible)),
            (_("candidate pairs"), str(candidates)),
            (_("culled"), _("{n} ({share:.1f} %)").format(
                n=possible - candidates, share=100.0 * (possible - candidates) / max(possible, 1))),
            (_("candidates touching"), str(int(counts[TOUCHING]))),
            (_("within the margin"), str(int(counts[SPECULATIVE]))),
            (_("boxes overlap, shapes apart"), str(int(counts[APART]))),
        ])
        imgui.push_text_wrap_pos(0.0)
        for color, text in ((PAIR_COLORS[TOUCHING], _("green lines: candidate pairs that touch")),
                            (PAIR_COLORS[SPECULATIVE], _("orange: apart, but within the speculative margin")),
                            (PAIR_COLORS[APART], _("red: the boxes overlap, the shapes do not")),
                            (CULLED_COLOR, _("faint grey: culled pairs"))):
            imgui.text_colored(imgui.ImVec4(*(float(c) for c in color[:3]), 1.0), text)
        if possible > CULLED_DRAW_LIMIT:
            text = _("The {n} culled pairs are too many to draw (the limit is {limit}).")
            imgui.text_colored(DIM, text.format(n=possible - candidates, limit=CULLED_DRAW_LIMIT))
        imgui.text_colored(DIM, _("Pale boxes: the AABBs the broad phase compared."))
        imgui.pop_text_wrap_pos()

    def _pair_table(self, step: TracedStep) -> None:
        """The candidate pairs, deepest first; a click shows that pair."""
        table = step.pair_table
        order = np.argsort(-table["depth"], kind="stable")
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(DIM, _("Candidate pairs, deepest first: click one, a contact point, or a body "
                                  "(its deepest pair)."))
        imgui.pop_text_wrap_pos()
        flags = (imgui.TableFlags_.scroll_y | imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v
                 | imgui.TableFlags_.sizing_stretch_prop)
        if not imgui.begin_table("##pairs", 4, flags, imgui.ImVec2(-1, PAIR_TABLE_HEIGHT)):
            return
        imgui.table_setup_scroll_freeze(0, 1)
        for title in (_("bodies"), _("shapes"), _("result"), _("depth (m)")):
            imgui.table_setup_column(title)
        imgui.table_headers_row()
        kinds = step.world.data.kind
        clipper = imgui.ListClipper()
        clipper.begin(len(order))
        while clipper.step():
            for r in range(clipper.display_start, clipper.display_end):
                k = int(order[r])
                a, b = int(table["a"][k]), int(table["b"][k])
                imgui.table_next_row()
                imgui.table_next_column()
                chosen = self.pair is not None and {a, b} == set(self.pair)
                clicked, _on = imgui.selectable(f"{a} – {b}##pair{k}", chosen,
                                                imgui.SelectableFlags_.span_all_columns)
                if clicked:
                    self.choose_pair(a, b)
                imgui.table_next_column()
                imgui.text(f"{_(KIND_NAMES[int(kinds[a])])}–{_(KIND_NAMES[int(kinds[b])])}")
                imgui.table_next_column()
                result = int(table["result"][k])
                imgui.text_colored(imgui.ImVec4(*(float(c) for c in PAIR_COLORS[result][:3]), 1.0),
                                   _(PAIR_RESULTS[result]))
                imgui.table_next_column()
                depth = float(table["depth"][k])
                imgui.text(f"{depth:.4f}" if np.isfinite(depth) else "—")
        imgui.end_table()

    def _pair_panel(self, step: TracedStep) -> None:
        if not len(step.pair_table["a"]):
            imgui.text_colored(DIM, _("The broad phase found no candidate pairs in this step."))
            return
        self._pair_table(step)
        if self.pair_view is not None and self.pair_view_error is None:
            try:
                self.pair_view.draw_panel(step.trace, self.key, self.sub)
                return
            except Exception as exc:  # noqa: BLE001 - fall back to what the trace has
                self.pair_view_error = f"{type(exc).__name__}: {exc}"
        if self.pair_view_error is not None:
            imgui.push_text_wrap_pos(0.0)
            text = _("the narrow-phase view failed: {error}")
            imgui.text_colored(RED, text.format(error=self.pair_view_error))
            imgui.pop_text_wrap_pos()
        if self.pair is None:
            return
        a, b = self.pair
        kinds = sorted(int(step.world.data.kind[i]) for i in self.pair)
        test = f"{KIND_NAMES[kinds[0]]}_{KIND_NAMES[kinds[1]]}"
        row = self._pair_row(step)
        imgui.separator_text(_("Pair {a} – {b}").format(a=a, b=b))
        if self._button("focus", _("Focus the camera on this pair")):
            self.focus_pair()
        rows = [(_("pair test"), test)]
        if row < 0:
            rows.append((_("result"), _("apart: farther than the margin, no manifold")))
            self._table_rows(rows)
            return
        c = step.contacts
        k = int(c["npoints"][row])
        depths = c["depth"][row, :k]
        rows += [(_("result"), _(PAIR_RESULTS[TOUCHING if depths.max() >= 0.0 else SPECULATIVE])),
                 (_("normal (A → B)"), "(" + ", ".join(f"{x:.3f}" for x in c["normal"][row]) + ")"),
                 (_("A, B"), f"{int(c['body_a'][row])}, {int(c['body_b'][row])}"),
                 (_("points"), str(k)),
                 (_("deepest"), _("{d:.4f} m").format(d=float(depths.max())))]
        if self.key == "manifold":
            rows.append((_("manifolds from the cache"), _("{n} of {m} this step").format(
                n=step.cached_manifolds, m=len(c["body_a"]))))
        self._table_rows(rows)
        if self.key == "manifold":
            imgui.text_colored(DIM, _("Points (green on A, red on B; the white segment is the depth):"))
            flags = imgui.TableFlags_.row_bg | imgui.TableFlags_.sizing_stretch_prop
            if imgui.begin_table("##points", 3, flags):
                for title in ("#", _("point on B (m)"), _("depth (m)")):
                    imgui.table_setup_column(title)
                imgui.table_headers_row()
                for p in range(k):
                    imgui.table_next_row()
                    imgui.table_next_column()
                    imgui.text(str(p + 1))
                    imgui.table_next_column()
                    imgui.text("(" + ", ".join(f"{x:.3f}" for x in c["points_b"][row, p]) + ")")
                    imgui.table_next_column()
                    imgui.text(f"{float(c['depth'][row, p]):.4f}")
                imgui.end_table()

    def _solver_panel(self, step: TracedStep) -> None:
        passes = step.trace.solver
        if not passes:
            imgui.push_text_wrap_pos(0.0)
            imgui.text(_("The projection method computes no impulses: it moves overlapping bodies apart "
                         "directly, once per sub-step."))
            imgui.pop_text_wrap_pos()
            return
        k = min(self.sub, len(passes) - 1)
        solved = int((step.solver_index >= 0).sum())
        if solved < len(step.solver_index):
            imgui.push_text_wrap_pos(0.0)
            text = _("{k} of {n} contact points are solved; the others join sleeping bodies, which the "
                     "solver skips.")
            imgui.text_colored(DIM, text.format(k=solved, n=len(step.solver_index)))
            imgui.pop_text_wrap_pos()
        change = step.memo("change", step.trace.largest_change)
        plot_flags = implot.Flags_.no_mouse_text | implot.Flags_.no_legend
        if len(change) and implot.begin_plot(_("largest impulse change per pass") + "##convergence",
                                             imgui.ImVec2(-1, 130), plot_flags):
            implot.setup_axes(_("pass"), "N·s")
            implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
            # fixed limits with a margin (a fit puts the extreme points on the frame), at least two decades
            moved = change[change > 0.0]
            top = float(moved.max()) * 2.0 if len(moved) else 1.0
            bottom = min(float(moved.min()) * 0.5 if len(moved) else 1e-3, top * 1e-2)
            implot.setup_axis_limits(implot.ImAxis_.x1, 0.5, len(passes) - 0.5, implot.Cond_.always)
            implot.setup_axis_limits(implot.ImAxis_.y1, bottom, top, implot.Cond_.always)
            spec = implot.Spec()
            spec.marker = implot.Marker_.circle
            spec.marker_size = 3.0
            # a log scale: a pass that changed nothing (a resting restitution pass) has no point on it
            for name, xs, ys in step.memo("series", lambda: convergence_series(step.trace)):
                moved = ys > 0.0
                if moved.any():
                    implot.plot_line(name, xs[moved], ys[moved], spec)
            implot.plot_inf_lines("##now", np.array([float(k)]))
            implot.end_plot()
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(DIM, _("One line per sub-step: its iterations, then relax (a warm start changes "
                                  "nothing: it applies the impulses kept)."))
        imgui.pop_text_wrap_pos()
        if step.impulse_scale > 0.0:
            text = _("Arrows: 1 m = {s:.3g} N·s (yellow normal, pink friction); blue: velocity")
            imgui.text_colored(DIM, text.format(s=1.0 / step.impulse_scale))
        points = self.current_points()
        idx = step.solver_index
        rows = np.flatnonzero(idx >= 0)
        rows = rows[np.argsort(idx[rows], kind="stable")]
        previous = self._pass_impulses(step, k - 1)[0] if k > 0 else None
        flags = (imgui.TableFlags_.scroll_y | imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v
                 | imgui.TableFlags_.sizing_stretch_prop)
        imgui.text_colored(DIM, _("Accumulated impulses after this pass (N·s per sub-step):"))
        if imgui.begin_table("##impulses", 5, flags, imgui.ImVec2(-1, IMPULSE_TABLE_HEIGHT)):
            imgui.table_setup_scroll_freeze(0, 1)
            for title in (_("point"), _("bodies"), "λn", "Δλn", "|λt|"):
                imgui.table_setup_column(title)
            imgui.table_headers_row()
            flat = step.flat
            clipper = imgui.ListClipper()
            clipper.begin(len(rows))
            while clipper.step():
                for r in range(clipper.display_start, clipper.display_end):
                    j = int(rows[r])
                    imgui.table_next_row()
                    imgui.table_next_column()
                    chosen = self.inspector.index == j
                    label = f"{int(flat['row'][j])}.{int(flat['slot'][j]) + 1}##point{j}"
                    clicked, _on = imgui.selectable(label, chosen, imgui.SelectableFlags_.span_all_columns)
                    if clicked:
                        self.inspector.select(points, j)
                    imgui.table_next_column()
                    imgui.text(f"{int(flat['body_a'][j])}–{int(flat['body_b'][j])}")
                    imgui.table_next_column()
                    imgui.text(f"{points.normal_impulse[j]:.5f}")
                    imgui.table_next_column()
                    delta = points.normal_impulse[j] - previous[j] if previous is not None else 0.0
                    imgui.text(f"{delta:+.5f}" if previous is not None else "—")
                    imgui.table_next_column()
                    imgui.text(f"{float(np.linalg.norm(points.friction[j])):.5f}")
            imgui.end_table()
        if self.pair is not None:
            vel, ang = passes[k].velocity, passes[k].angular_velocity
            for body in self.pair:
                if body < len(vel) and not step.world.data.static[body]:
                    imgui.text_colored(DIM, _("body {i}: v = {v} m/s, ω = {w} rad/s").format(
                        i=body, v=_fmt(vel[body]), w=_fmt(ang[body])))

    def _integration_panel(self, step: TracedStep) -> None:
        d = step.world.data
        n = len(step.alive)
        pos0, _q0, vel0, w0 = step.before
        pos1, _q1, vel1, w1 = step.after
        dynamic = step.alive & ~d.static[:n]
        moved = np.flatnonzero(dynamic & np.any(pos0 != pos1, axis=1))
        shift = np.linalg.norm(pos1 - pos0, axis=1)
        far = int(moved[np.argmax(shift[moved])]) if len(moved) else -1
        self._table_rows([
            (_("bodies that moved"), str(len(moved))),
            (_("largest move"),
             _("{d:.4f} m (body {i})").format(d=float(shift[far]), i=far) if far >= 0 else "—"),
            (_("time step"), _("{dt:.4f} s in {k} sub-steps").format(dt=step.dt, k=step.world.substeps)),
        ])
        shown: list[int] = []
        selected = self.ctx.session.selected
        if selected is not None and selected.alive and selected.index < n and dynamic[selected.index]:
            shown.append(selected.index)
        if self.pair is not None:
            shown += [i for i in self.pair if i < n and dynamic[i] and i not in shown]
        if far >= 0 and far not in shown:
            shown.append(far)
        for i in shown[:3]:
            imgui.separator_text(_("body {i} ({kind})").format(i=i, kind=_(KIND_NAMES[int(d.kind[i])])))
            self._table_rows([(_("position before"), _fmt(pos0[i])), (_("position after"), _fmt(pos1[i])),
                              (_("velocity before"), _fmt(vel0[i])), (_("velocity after"), _fmt(vel1[i])),
                              (_("spin before"), _fmt(w0[i])), (_("spin after"), _fmt(w1[i]))])

    def _sleep_panel(self, step: TracedStep) -> None:
        d = step.world.data
        n = len(step.alive)
        dynamic = step.alive & ~d.static[:n]
        begins = [e for e in step.events if e.kind == "begin"]
        ends = [e for e in step.events if e.kind == "end"]
        fell = int((dynamic & step.awake_before & ~step.awake_after).sum())
        woke = int((dynamic & ~step.awake_before & step.awake_after).sum())
        self._table_rows([
            (_("asleep before / after"), f"{int((dynamic & ~step.awake_before).sum())} / "
                                         f"{int((dynamic & ~step.awake_after).sum())}"),
            (_("fell asleep / woke up"), f"{fell} / {woke}"),
            (_("begin events"), str(len(begins))),
            (_("end events"), str(len(ends))),
        ])
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(DIM, _("Blue outlines: bodies that fell asleep in this step; green dots: contacts "
                                  "that began; red lines: pairs that stopped touching."))
        imgui.pop_text_wrap_pos()
        for e in (begins + ends)[:12]:
            text = (_("begin: {a} – {b}, impulse {j:.4f} N·s").format(a=e.body_a.index, b=e.body_b.index,
                                                                      j=e.impulse or 0.0)
                    if e.kind == "begin" else _("end: {a} – {b}").format(a=e.body_a.index, b=e.body_b.index))
            imgui.bullet_text(text)
        if len(begins) + len(ends) > 12:
            imgui.text_colored(DIM, _("… and {n} more").format(n=len(begins) + len(ends) - 12))


def _fmt(v: np.ndarray) -> str:
    """A vector for a table: four significant digits, so that small velocities still show."""
    return "(" + ", ".join(f"{float(x):.4g}" for x in v) + ")"


def _around(points: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """``points`` (k, 3) ordered by angle around their centre in the plane across ``normal``: the outline
    of a manifold's (convex) contact polygon."""
    centre = points.mean(axis=0)
    u = points[0] - centre
    u -= normal * float(u @ normal)
    if np.linalg.norm(u) < 1e-12:
        return points
    u /= np.linalg.norm(u)
    v = np.cross(normal, u)
    rel = points - centre
    return points[np.argsort(np.arctan2(rel @ v, rel @ u))]
