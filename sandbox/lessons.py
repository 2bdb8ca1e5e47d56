"""Lessons: what each built-in scene teaches, as data the app and the docs read.

A ``Lesson`` names its scene (a key of ``scenes.SCENES``) and carries the text a student reads (concept,
formula, what to try, what to look at, what to expect), one-click presets of world settings, a camera that
frames what matters, 3D labels (a function of the world, since some follow the bodies or the settings),
the engine files and functions that compute the concept, and a ``check``: the scene's own experiment.

The lessons live in the scene files (``assets/scenes/<name>.json``, key ``lesson``), where a teacher edits
them; this module holds what must be Python: the checks (``CHECKS``) and the labels (``LABELS``), which a
file names, and the ``Lesson`` record that ``scene_file`` makes of a file's lesson. ``LESSONS`` are the
built-in scenes' lessons, in the order of the scene list.

``check(world, bodies)`` takes a freshly built scene (``bodies`` as its builder returned them, with any
preset already applied), steps it as long as its measurement needs (at most a few hundred steps of
``DT``), and returns a one-line verdict that starts with ``"PASS: "`` or ``"FAIL: "`` and quotes the
measured figures against the formula's. The tests run every check; the app may run one on a fresh copy.

The docs pages in ``docs/lessons/`` are written by ``lesson_markdown`` from the same data
(``python -m sandbox.lessons docs/lessons`` rewrites them), so the text cannot drift from the app's.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import scenes
from .engine import Body, World
from .engine.broadphase import BroadPhase
from .engine.core.friction import combine_friction
from .engine.core.restitution import combine_restitution
from .engine.world import FRICTION_RULES, RESTITUTION_RULES
from .i18n import LANGUAGES, N_, join, translate

DT = 1.0 / 60.0
G = 9.81

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class Camera:
    """Where the app's camera starts for a lesson: the ``eye`` point looking at ``target`` (y up), with a
    vertical field of view of ``fov_y_deg`` degrees."""

    eye: Vec3
    target: Vec3
    fov_y_deg: float = 60.0

    def orbit(self) -> dict[str, float | Vec3]:
        """The same view as an orbit camera's parameters (``sandbox/render/camera.py``'s convention: the eye
        is target + distance·(cos p·sin y, sin p, cos p·cos y) for yaw y and pitch p), with the field of
        view in radians: ``{"target", "distance", "yaw", "pitch", "fov_y"}``."""
        offset = np.subtract(self.eye, self.target)
        distance = float(np.linalg.norm(offset))
        return {"target": self.target, "distance": distance, "yaw": math.atan2(offset[0], offset[2]),
                "pitch": math.asin(offset[1] / distance), "fov_y": math.radians(self.fov_y_deg)}


DEFAULT_CAMERA = Camera((0.0, 6.0, 12.0), (0.0, 0.0, 0.0))
"""The camera of a lesson whose scene file gives none: the ground from 12 m away, 6 m up."""


@dataclass(frozen=True)
class Label:
    """A text to draw in 3D at ``position`` (world frame, metres)."""

    position: Vec3
    text: str


LabelFn = Callable[[World, Sequence[Body]], list[Label]]
CheckFn = Callable[[World, Sequence[Body]], str]


def no_labels(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The labels of a lesson that has none (the Lesson window then skips them without a call)."""
    return []


@dataclass(frozen=True)
class Lesson:
    """One scene's lesson. ``presets`` are dicts ``{"label": str, "settings": {world attribute: value}}``,
    applied with ``apply_preset``; ``labels(world, bodies)`` gives the labels to draw now; ``check`` is
    described in the module's docstring."""

    name: str
    title: str
    concept: str
    formula: str
    try_this: str
    look_at: str
    expect: str
    camera: Camera
    engine_refs: tuple[str, ...]
    check: CheckFn
    presets: tuple[dict, ...] = ()
    labels: LabelFn = no_labels

    @property
    def doc_page(self) -> str:
        """The file name of this lesson's page in ``docs/lessons/``."""
        return self.name.replace(" ", "-") + ".md"


def preset_settings(preset: dict) -> dict:
    """The world settings a preset gives the session's world: its ``settings``, or for a side-by-side
    preset those of its first lane (lane A is the session's world)."""
    return preset["compare"][0]["settings"] if "compare" in preset else preset["settings"]


def apply_preset(world: World, preset: dict) -> None:
    """Set each of the preset's world settings (``preset_settings``); an unknown name is an error rather
    than a silent no-op."""
    for key, value in preset_settings(preset).items():
        if not hasattr(world, key):
            raise AttributeError(f"World has no setting {key!r}")
        setattr(world, key, value)


# ----------------------------------------------------------------------------------------------------
# measuring helpers


def verdict(ok: bool, text: str) -> str:
    """The check's one-line verdict (a ``Message``: English text the app shows in the current language)."""
    return N_("PASS: {text}", text=text) if ok else N_("FAIL: {text}", text=text)


def run(world: World, steps: int) -> None:
    """Step the world ``steps`` times with the app's fixed time step."""
    for _ in range(steps):
        world.step(DT)


def finite(world: World) -> bool:
    """True when no live body's position or velocity is NaN or infinite."""
    d = world.data
    live = d.alive[: d.n]
    return bool(np.isfinite(d.pos[: d.n][live]).all() and np.isfinite(d.vel[: d.n][live]).all())


def max_depth(world: World) -> float:
    """The deepest overlap (m) among the last step's contact points (0 when nothing overlaps)."""
    c = world.contacts
    m = c.count
    if m == 0:
        return 0.0
    # one pass over every manifold's used points (a Python loop cost 3 ms for a 700-manifold pile)
    used = np.arange(c.depth.shape[1])[None, :] < c.npoints[:m, None]
    return max(0.0, float(np.where(used, c.depth[:m], -np.inf).max()))


def ground_manifold_points(world: World, body: Body) -> int:
    """How many points the last step's manifold between ``body`` and a static body has (0 if none)."""
    c = world.contacts
    d = world.data
    for i in range(c.count):
        a, b = int(c.body_a[i]), int(c.body_b[i])
        if body.index in (a, b) and (d.static[a] or d.static[b]):
            return int(c.npoints[i])
    return 0


def pair_restitution(world: World, ea: float, eb: float) -> float:
    """The pair's restitution under the world's combine rule (the engine's own function)."""
    return float(combine_restitution(ea, eb, RESTITUTION_RULES.index(world.restitution_rule)))


def pair_friction(world: World, mu_a: float, mu_b: float) -> float:
    """The pair's friction coefficient under the world's combine rule (the engine's own function)."""
    return float(combine_friction(mu_a, mu_b, FRICTION_RULES.index(world.friction_rule)))


def first_apexes(world: World, balls: Sequence[Body], radius: float, floor: Sequence[float],
                 steps: int) -> list[float]:
    """Step ``steps`` times and return, per ball, the highest bottom height above its ``floor`` between its
    first impact and the top of its first rebound (0 for a ball that never leaves the surface)."""
    state = [0] * len(balls)  # 0 falling, 1 hit (waiting to rise), 2 rising, 3 done
    apex = [0.0] * len(balls)
    for _ in range(steps):
        world.step(DT)
        for k, b in enumerate(balls):
            vy = float(b.linear_velocity[1])
            h = float(b.position[1]) - radius - floor[k]
            if state[k] == 0 and vy > -0.05 and h < 0.05:
                state[k] = 1
            if state[k] in (1, 2):
                apex[k] = max(apex[k], h)
                if vy > 0.05:
                    state[k] = 2
                elif state[k] == 2 and vy < 0.0:
                    state[k] = 3
        if all(s == 3 for s in state):
            break
    return apex


def tilt_deg(body: Body) -> float:
    """The angle (degrees) between the body's local y axis and the world's y axis."""
    y_axis = scenes.rotation_matrix(body.orientation)[:, 1]
    return math.degrees(math.acos(max(-1.0, min(1.0, float(y_axis[1])))))


def box_vertices(body: Body) -> np.ndarray:
    """The eight corners (world frame) of a box body."""
    h = np.asarray(body.shape.half_extents, float)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    return body.position + (signs * h) @ scenes.rotation_matrix(body.orientation).T


def fmt(x: float, digits: int = 3) -> str:
    """A number for a verdict, with ``digits`` significant figures."""
    return f"{x:.{digits}g}"


def ball_labels(balls: Sequence[Body], texts: Sequence[str], lift: float = 0.8) -> list[Label]:
    """A label above each ball, following it."""
    return [Label(tuple(b.position + (0.0, lift, 0.0)), t) for b, t in zip(balls, texts, strict=True)]


# ----------------------------------------------------------------------------------------------------
# checks: one experiment per scene


def check_showcase(world: World, bodies: Sequence[Body]) -> str:
    """Run 4 s: every body settles with overlaps under 2 cm."""
    run(world, 240)
    depth = max_depth(world)
    return verdict(finite(world) and depth < 0.02,
                   N_("after 4 s the deepest overlap is {mm:.1f} mm (< 20 mm)", mm=depth * 1000))


def check_empty(world: World, bodies: Sequence[Body]) -> str:
    """A ray cast straight down meets the static ground's top face at y = 0; no dynamic bodies."""
    hit = world.raycast((1.0, 10.0, 2.0), (0.0, -1.0, 0.0))
    y = float(hit.point[1]) if hit else float("nan")
    return verdict(hit is not None and abs(y) < 1e-6 and not bodies,
                   N_("a ray straight down meets the ground's top at y = {y:.2g} m", y=y))


def check_pile(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no body's centre sinks more than 1 cm below 0.5 m (S1's ground penetration bar)."""
    run(world, 300)
    pen = max(max(0.0, 0.5 - float(b.position[1])) for b in bodies)
    return verdict(finite(world) and pen < 0.01,
                   N_("ground penetration {mm:.1f} mm (bar: 10 mm)", mm=pen * 1000))


def check_pyramid(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no cube drifts more than 2 cm from its start (S2's bar)."""
    start = np.array([b.position for b in bodies])
    run(world, 300)
    drift = float(np.linalg.norm(np.array([b.position for b in bodies]) - start, axis=1).max())
    return verdict(finite(world) and drift < 0.02,
                   N_("largest drift of a cube {cm:.2f} cm (bar: 2 cm)", cm=drift * 100))


def check_spheres(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no two spheres overlap by 1 cm or more, and none leaves the 10 × 10 m box (S3)."""
    run(world, 300)
    p = np.array([b.position for b in bodies])
    r = bodies[0].shape.radius
    deepest = 0.0
    for i in range(len(p)):  # pairwise overlap of spheres, row by row (no n² matrix for 4000 spheres)
        dist = np.linalg.norm(p[i + 1:] - p[i], axis=1)
        if len(dist):
            deepest = max(deepest, float((2 * r - dist).max()))
    escaped = int((np.abs(p[:, [0, 2]]) > 5.0).any(axis=1).sum())
    return verdict(finite(world) and deepest < 0.01 and escaped == 0,
                   N_("deepest sphere–sphere overlap {mm:.1f} mm (bar: 10 mm), {escaped} escaped",
                      mm=max(deepest, 0.0) * 1000, escaped=escaped))


def check_bullet(world: World, bodies: Sequence[Body]) -> str:
    """Run 1 s: with CCD the bullet stops at the wall; without it, it passes through (S4)."""
    ball = bodies[0]
    run(world, 60)
    passed = float(ball.position[0]) > 0.1
    if world.ccd:
        return verdict(not passed, N_("CCD on: the bullet stopped at x = {x:.3f} m, before the wall's face "
                                      "at x = 0", x=ball.position[0]))
    return verdict(passed, N_("CCD off: the bullet {what} the wall (x = {x:.2f} m)",
                              what=N_("went through") if passed else N_("stopped at"), x=ball.position[0]))


def check_bounce(world: World, bodies: Sequence[Body]) -> str:
    """The first rebound of the bottom of the ball against e²·h, e under the world's rule (S5)."""
    ball = bodies[0]
    e = pair_restitution(world, ball.restitution, 0.8)
    h = 2.0
    apex = first_apexes(world, [ball], 0.5, [0.0], 150)[0]
    want = e * e * h
    err = abs(apex - want) / want
    return verdict(err < 0.03, N_("rebound {apex:.3f} m against e²·h = {e:.2f}²·{h:g} = {want:.3f} m "
                                  "({off:.1f} % off)", apex=apex, e=e, h=h, want=want, off=err * 100))


def bounce_row_expected(world: World, bodies: Sequence[Body]) -> list[float]:
    """e²·h for each ball of the line-up, e being the pair's under the world's rule (ground e = 1)."""
    return [pair_restitution(world, b.restitution, 1.0) ** 2 * 3.0 for b in bodies]


def check_bounce_row(world: World, bodies: Sequence[Body]) -> str:
    """Each ball's first rebound against e²·h (within 3 % or 1 cm), e = rule(e_ball, 1)."""
    want = bounce_row_expected(world, bodies)
    got = first_apexes(world, bodies, 0.4, [0.0] * len(bodies), 240)
    ok = all(abs(g - w) <= max(0.03 * w, 0.01) for g, w in zip(got, want, strict=True))
    pairs = ", ".join(f"{g:.3f}/{w:.3f}" for g, w in zip(got, want, strict=True))
    return verdict(ok, N_("rebound/e²·h (m): {pairs} (within 3 % or 1 cm)", pairs=pairs))


def check_cradle(world: World, bodies: Sequence[Body]) -> str:
    """Run 1.5 s: the last ball leaves with at least 95 % of the first one's speed, the middle ones stay
    nearly still."""
    first = last = 0.0
    middle = 0.0
    for _ in range(90):
        world.step(DT)
        first = max(first, float(np.linalg.norm(bodies[0].linear_velocity)))
        last = max(last, float(np.linalg.norm(bodies[-1].linear_velocity)))
    middle = max(float(np.linalg.norm(b.linear_velocity)) for b in bodies[1:-1])
    ok = first > 1.0 and last >= 0.95 * first and middle < 0.1 * first
    return verdict(ok, N_("first ball {first:.2f} m/s, last ball leaves at {last:.2f} m/s ({percent:.0f} %), "
                          "the middle ones at most {middle:.2f} m/s", first=first, last=last,
                          percent=last / first * 100, middle=middle))


def incline_expected(world: World, mu_box: float) -> float:
    """The acceleration down the ramp that Coulomb's law predicts for a box of ``mu_box`` (0 if it holds)."""
    theta = math.radians(scenes.RAMP_ANGLE)
    mu = pair_friction(world, mu_box, 1.0)
    return max(0.0, G * (math.sin(theta) - mu * math.cos(theta)))


def check_incline(world: World, bodies: Sequence[Body]) -> str:
    """Each box's acceleration down the ramp between 0.5 s and 1.5 s against g(sin θ − μ cos θ) (3 %), or
    below 0.02 m/s² where μ ≥ tan θ."""
    _, _, down = scenes.ramp_frame(scenes.RAMP_ANGLE)
    run(world, 30)
    v0 = [float(b.linear_velocity @ down) for b in bodies]
    run(world, 60)
    got = [(float(b.linear_velocity @ down) - v) / 1.0 for b, v in zip(bodies, v0, strict=True)]
    ok = True
    parts = []
    for b, a in zip(bodies, got, strict=True):
        want = incline_expected(world, b.friction)
        ok &= abs(a - want) <= 0.03 * want if want > 0 else abs(a) < 0.02
        parts.append(f"μ {b.friction:g}: {a:.2f}/{want:.2f}")
    return verdict(ok, N_("a/g(sin θ − μ cos θ) in m/s²: {parts}", parts=", ".join(parts)))


def check_dominoes(world: World, bodies: Sequence[Body]) -> str:
    """Run up to 8 s: the last domino falls (tilts past 45°)."""
    for step in range(1, 481):
        world.step(DT)
        if tilt_deg(bodies[-1]) > 45.0:
            return verdict(True, N_("the last of {n} dominoes fell after {t:.2f} s", n=len(bodies),
                                    t=step * DT))
    fallen = sum(tilt_deg(b) > 45.0 for b in bodies)
    return verdict(False, N_("only {fallen} of {n} dominoes fell in 8 s", fallen=fallen, n=len(bodies)))


def check_tennis_racket(world: World, bodies: Sequence[Body]) -> str:
    """Run 10 s: the intermediate axis turns over, kinetic energy kept within 1 %."""
    b = bodies[0]
    e0 = world.kinetic_energy()
    axis0 = scenes.rotation_matrix(b.orientation)[:, 1]
    flip = None
    for step in range(1, 601):
        world.step(DT)
        if flip is None and scenes.rotation_matrix(b.orientation)[:, 1] @ axis0 < -0.9:
            flip = step * DT
    drift = abs(world.kinetic_energy() / e0 - 1.0)
    ok = flip is not None and drift < 0.01
    when = N_("after {t:.2f} s", t=flip) if flip is not None else N_("never")
    return verdict(ok, N_("the intermediate axis turned over {when}; kinetic energy kept within "
                          "{percent:.2f} %", when=when, percent=drift * 100))


def check_sphere_sphere(world: World, bodies: Sequence[Body]) -> str:
    """Head-on: velocities swapped; glancing: the balls leave 90° apart; energy kept."""
    v = float(np.linalg.norm(bodies[0].linear_velocity))
    run(world, 90)
    mover, target, g_mover, g_target = (b.linear_velocity for b in bodies)
    head_ok = np.linalg.norm(mover) < 0.01 * v and abs(np.linalg.norm(target) - v) < 0.01 * v
    cosang = float(g_mover @ g_target / (np.linalg.norm(g_mover) * np.linalg.norm(g_target)))
    angle = math.degrees(math.acos(max(-1.0, min(1.0, cosang))))
    energy = float(g_mover @ g_mover + g_target @ g_target) / v**2
    ok = head_ok and abs(angle - 90.0) < 1.0 and abs(energy - 1.0) < 0.01
    return verdict(ok, N_("head-on: {a:.3f} and {b:.3f} m/s (formula 0 and {v:g}); glancing: {angle:.1f}° "
                          "apart (formula 90°), energy kept {percent:.1f} %", a=np.linalg.norm(mover),
                          b=np.linalg.norm(target), v=v, angle=angle, percent=energy * 100))


def check_sphere_box(world: World, bodies: Sequence[Body]) -> str:
    """The locked box keeps its orientation (an AABB), the free one spins (an OBB); each lane keeps its
    momentum."""
    p0 = [bodies[0].linear_velocity * bodies[0].mass + bodies[1].linear_velocity * bodies[1].mass,
          bodies[2].linear_velocity * bodies[2].mass + bodies[3].linear_velocity * bodies[3].mass]
    run(world, 60)
    locked, free = bodies[0], bodies[2]
    turned = float(np.linalg.norm(np.asarray(locked.orientation) - (0.0, 0.0, 0.0, 1.0)))
    spin = float(np.linalg.norm(free.angular_velocity))
    dp = max(float(np.linalg.norm(bodies[2 * k].linear_velocity * bodies[2 * k].mass
                                  + bodies[2 * k + 1].linear_velocity * bodies[2 * k + 1].mass - p0[k]))
             for k in range(2))
    ok = turned < 1e-9 and spin > 0.1 and dp < 1e-6 * np.linalg.norm(p0[0])
    return verdict(ok, N_("locked box turned by {turned:.1g} (an AABB still), free box spins at {spin:.2f} "
                          "rad/s (an OBB now); momentum kept to {dp:.1g} kg·m/s", turned=turned, spin=spin,
                          dp=dp))


def check_box_box(world: World, bodies: Sequence[Body]) -> str:
    """Run 4 s: both boxes rest on their pedestals, no corner more than 1 cm below the top."""
    run(world, 240)
    parts = []
    ok = finite(world)
    for name, b in zip((N_("aligned"), N_("turned")), bodies, strict=True):
        low = float(box_vertices(b)[:, 1].min())
        speed = float(np.linalg.norm(b.linear_velocity))
        ok &= low > 1.0 - 0.01 and speed < 0.05
        parts.append(N_("{name}: lowest corner {low:.3f} m, {speed:.3f} m/s", name=name, low=low,
                        speed=speed))
    return verdict(ok, N_("both rest on their pedestals (top at 1 m): {parts}", parts=join("; ", parts)))


def check_capsules(world: World, bodies: Sequence[Body]) -> str:
    """Run 4 s: no overlap of 1 cm, the upright capsule has toppled, the crossed one lies on the other."""
    run(world, 240)
    depth = max_depth(world)
    toppled = tilt_deg(bodies[2])
    stacked = float(bodies[1].position[1])
    ok = finite(world) and depth < 0.01 and toppled > 60.0 and stacked > 0.85
    return verdict(ok, N_("deepest overlap {mm:.1f} mm; the upright one toppled to {toppled:.0f}°; the "
                          "crossed one rests at {stacked:.2f} m (on the other: 0.9 m)", mm=depth * 1000,
                          toppled=toppled, stacked=stacked))


def check_hulls(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no hull vertex below the ground by 1 cm, no overlap of 1 cm, all at rest."""
    run(world, 300)
    # hull vertices are kept relative to the centre of mass, not to the body's position
    low = min(float((b.center_of_mass + b.shape.vertices @ scenes.rotation_matrix(b.orientation).T)[:, 1]
                    .min()) for b in bodies)
    depth = max_depth(world)
    speed = max(float(np.linalg.norm(b.linear_velocity)) for b in bodies)
    ok = finite(world) and low > -0.01 and depth < 0.01 and speed < 0.1
    return verdict(ok, N_("lowest vertex {low:.1f} mm, deepest overlap {mm:.1f} mm, fastest {speed:.3f} m/s",
                          low=low * 1000, mm=depth * 1000, speed=speed))


def broadphase_pairs(world: World, method: str) -> tuple[np.ndarray, float]:
    """The candidate pairs that broad phase ``method`` finds for the world's current state (every body's
    box enlarged by half the speculative distance), and the milliseconds it took (second run, warm)."""
    d = world.data
    n = d.n
    margins = np.full(max(n, 1), 0.5 * world.speculative_distance)
    bp = BroadPhase(method)
    args = (n, d.alive, d.static, d.kind, d.params, d.pos, d.quat, world.hulls.arrays(), margins)
    bp.update(*args)
    t0 = time.perf_counter()
    pairs = bp.update(*args).copy()
    return pairs, 1e3 * (time.perf_counter() - t0)


def check_broadphase(world: World, bodies: Sequence[Body]) -> str:
    """After 0.75 s the four broad phases find exactly the same pairs; their times."""
    run(world, 45)
    n = world.data.n
    found = {m: broadphase_pairs(world, m) for m in ("brute", "sap", "grid", "octree")}
    ref = {tuple(p) for p in found["brute"][0].tolist()}
    same = all({tuple(p) for p in pairs.tolist()} == ref for pairs, _ in found.values())
    times = ", ".join(f"{m} {ms:.2f} ms" for m, (_, ms) in found.items())
    return verdict(same and len(ref) > 0,
                   N_("{n} bodies with the ground: brute force tests {tests} pairs; all four methods find "
                      "the same {found} ({times})", n=n, tests=n * (n - 1) // 2, found=len(ref), times=times))


def check_manifold(world: World, bodies: Sequence[Body]) -> str:
    """The first step's manifolds under the cube on a face, an edge and a corner: 4, 2, 1 points."""
    world.step(DT)
    got = [ground_manifold_points(world, b) for b in bodies]
    return verdict(got == [4, 2, 1], N_("points on a face, an edge, a corner: {face}, {edge}, {corner} "
                                        "(expected 4, 2, 1)", face=got[0], edge=got[1], corner=got[2]))


def check_responses(world: World, bodies: Sequence[Body]) -> str:
    """Per method: impulses stop the ball and hold the stack; penalty springs hold them too, letting the
    ball sink further; projection keeps the ball on the ground but leaves its velocity alone, so it reads
    the free-fall −g·t while not moving."""
    ball = bodies[0]
    start = np.array([b.position for b in bodies[3:]])
    peak = 0.0
    for _ in range(180):
        world.step(DT)
        peak = max(peak, 0.4 - float(ball.position[1]))
    drift = float(np.linalg.norm(np.array([b.position for b in bodies[3:]]) - start, axis=1).max())
    rest = 0.4 - float(ball.position[1])
    vy = float(ball.linear_velocity[1])
    figures = N_("{response}: the ball sank at most {peak:.1f} mm, rests {rest:.1f} mm deep at v_y = "
                 "{vy:.2f} m/s; the stack drifted {drift:.2f} cm", response=world.response, peak=peak * 1000,
                 rest=rest * 1000, vy=vy, drift=drift * 100)
    if world.response == "projection":
        free_fall = -G * world.time
        return verdict(abs(rest) < 0.01 and abs(vy / free_fall - 1.0) < 0.01,
                       N_("{figures} (free fall: −g·t = {v:.2f} m/s)", figures=figures, v=free_fall))
    bar = 0.02 if world.response == "impulse" else 0.05
    return verdict(finite(world) and abs(rest) < 0.01 and abs(vy) < 0.05 and drift < bar,
                   N_("{figures} (bar {bar:.0f} cm)", figures=figures, bar=bar * 100))


def restitution_expected(world: World) -> list[float]:
    """e²·h for each ball of the restitution scene under the world's combine rule (ground e = 1, pad 0.5)."""
    es = [pair_restitution(world, e, 1.0) for _, e in scenes.RESTITUTION_BALLS]
    es.append(pair_restitution(world, 0.9, scenes.RESTITUTION_PAD))
    return [e * e * scenes.RESTITUTION_HEIGHT for e in es]


def check_restitution(world: World, bodies: Sequence[Body]) -> str:
    """Each ball's first rebound against e²·h (within 3 % or 1 cm), e under the world's rule."""
    want = restitution_expected(world)
    floors = [0.0] * len(scenes.RESTITUTION_BALLS) + [0.5]
    got = first_apexes(world, bodies, 0.3, floors, 200)
    ok = all(abs(g - w) <= max(0.03 * w, 0.01) for g, w in zip(got, want, strict=True))
    pairs = ", ".join(f"{g:.3f}/{w:.3f}" for g, w in zip(got, want, strict=True))
    return verdict(ok, N_("{rule} rule, rebound/e²·h (m): {pairs}", rule=world.restitution_rule, pairs=pairs))


def head_on_expected(m1: float, m2: float, e: float, v: float) -> tuple[float, float]:
    """Final velocities of a head-on impact of m1 at v on m2 at rest with restitution e (momentum kept,
    separation speed = e × approach speed)."""
    return (m1 - e * m2) * v / (m1 + m2), m1 * (1 + e) * v / (m1 + m2)


def check_head_on(world: World, bodies: Sequence[Body]) -> str:
    """Run 1.5 s: each lane's final velocities against the formula (2 % of the speed), momentum kept."""
    run(world, 90)
    ok = True
    parts = []
    for k, (m1, m2, e1, e2) in enumerate(scenes.HEAD_ON_LANES):
        e = pair_restitution(world, e1, e2)
        w1, w2 = head_on_expected(m1, m2, e, scenes.HEAD_ON_SPEED)
        v1, v2 = float(bodies[2 * k].linear_velocity[0]), float(bodies[2 * k + 1].linear_velocity[0])
        p_err = abs(m1 * v1 + m2 * v2 - m1 * scenes.HEAD_ON_SPEED) / (m1 * scenes.HEAD_ON_SPEED)
        ok &= abs(v1 - w1) < 0.02 * scenes.HEAD_ON_SPEED and abs(v2 - w2) < 0.02 * scenes.HEAD_ON_SPEED
        ok &= p_err < 1e-6
        parts.append(f"{m1:g}→{m2:g} e {e:g}: {v1:.2f}, {v2:.2f} ({w1:.2f}, {w2:.2f})")
    return verdict(ok, N_("v1', v2' in m/s (formula): {parts}; momentum kept", parts="; ".join(parts)))


def check_snooker(world: World, bodies: Sequence[Body]) -> str:
    """Momentum across the step of the break: the only horizontal force is the cloth's friction, at most
    μ·m·g on each moving ball, so p_after ≥ p_before − Σ μ·m·g·dt and p_after ≤ p_before."""
    p_before = p_after = bound = None
    for _ in range(300):
        p = float(sum(b.mass * b.linear_velocity[0] for b in bodies))
        world.step(DT)
        if p_after is None and any(np.linalg.norm(b.linear_velocity) > 0.05 for b in bodies[1:]):
            p_before = p
            p_after = float(sum(b.mass * b.linear_velocity[0] for b in bodies))
            moving = [b for b in bodies if np.linalg.norm(b.linear_velocity) > 0.05]
            bound = sum(pair_friction(world, b.friction, 0.2) * b.mass * G * DT for b in moving)
    on_table = all(abs(b.position[0]) < 1.8 and abs(b.position[2]) < 0.9 for b in bodies)
    if p_after is None:
        return verdict(False, N_("the cue ball never reached the pack"))
    ok = p_before - bound - 1e-9 <= p_after <= p_before * 1.001 and on_table and finite(world)
    return verdict(ok, N_("momentum {before:.3f} kg·m/s before the break, {after:.3f} after (cloth friction "
                          "can take at most {bound:.3f}); cue ball {cue:+.2f} m/s at the end; {table}",
                          before=p_before, after=p_after, bound=bound, cue=bodies[0].linear_velocity[0],
                          table=N_("all balls on the table") if on_table else N_("a ball left the table")))


def tunnel_passes(world: World, speed: float) -> bool:
    """Whether a bullet at ``speed`` is expected through the wall: only without CCD, and only when one step
    carries it from beyond the contact margin in front of the wall to beyond the wall's back face."""
    if world.ccd:
        return False
    return speed * DT > scenes.TUNNEL_WALL + 2 * scenes.TUNNEL_RADIUS + world.max_speculative


def check_tunnelling(world: World, bodies: Sequence[Body]) -> str:
    """Run 1.5 s: exactly the bullets that ``tunnel_passes`` predicts end behind the wall."""
    run(world, 90)
    passed = [float(b.position[0]) > scenes.TUNNEL_WALL for b in bodies]
    want = [tunnel_passes(world, v) for v in scenes.TUNNEL_SPEEDS]
    through = [f"{v:g}" for v, p in zip(scenes.TUNNEL_SPEEDS, passed, strict=True) if p]
    state = N_("on") if world.ccd else N_("off")
    if not through:
        return verdict(passed == want, N_("CCD {state}: through the wall at no m/s", state=state))
    return verdict(passed == want, N_("CCD {state}: through the wall at {speeds} m/s", state=state,
                                      speeds=", ".join(through)))


def check_stacking(world: World, bodies: Sequence[Body]) -> str:
    """Everything stands and falls asleep. The heavy-on-light stack (bodies 36–38) is measured apart, with
    the issue's bar for mass ratios (1 cm): the block solver holds it to a fraction of a millimetre, and
    without it the soft contacts under a light body carrying a heavy one settle about 1 cm each."""
    start = np.array([b.position for b in bodies])
    run(world, 300)
    drift = np.linalg.norm(np.array([b.position for b in bodies]) - start, axis=1)
    heavy = slice(36, 39)
    rest = np.r_[drift[:36], drift[39:]]
    upright = all(tilt_deg(b) < 2.0 for b in bodies[heavy])
    asleep = sum(not b.awake for b in bodies)
    ok = (finite(world) and rest.max() < 0.02 and drift[heavy].max() < 0.01 and upright
          and (asleep == len(bodies) or not world.sleeping))
    return verdict(ok, N_("pyramid, wall, cards drift at most {rest:.2f} cm (bar: 2 cm); the 1/10/100 kg "
                          "stack sank {sank:.2f} cm (bar: 1 cm); {asleep} of {n} asleep",
                          rest=rest.max() * 100, sank=drift[heavy].max() * 100, asleep=asleep, n=len(bodies)))


def ray_entry(body: Body, origin: np.ndarray, direction: np.ndarray) -> float:
    """Where a ray enters an unrotated body's shape, by formula (distance along the unit ``direction``)."""
    shape = body.shape
    o = origin - body.position
    if hasattr(shape, "face_normals"):  # a hull: the entry is the latest of the front faces' plane crossings
        o = origin - body.center_of_mass  # its planes are relative to its centre of mass
        dn = shape.face_normals @ direction
        front = dn < 0
        return float(((shape.face_offsets[front] - shape.face_normals[front] @ o) / dn[front]).max())
    if hasattr(shape, "half_extents"):  # a box hit from above on its top face
        return float(o[1] - shape.half_extents[1])
    if hasattr(shape, "half_height"):  # an upright capsule from above: its top cap
        return float(o[1] - shape.half_height - shape.radius)
    return float(o[1] - shape.radius)  # a sphere from straight above its centre


def check_raycasts(world: World, bodies: Sequence[Body]) -> str:
    """Rays straight down onto each shape hit it at the distance its formula gives; a ray upwards misses."""
    worst = 0.0
    down = np.array([0.0, -1.0, 0.0])
    for b in bodies:
        origin = b.position + np.array([0.0, 10.0, 0.0])
        hit = world.raycast(origin, down)
        if hit is None or hit.body != b:
            return verdict(False, N_("the ray down onto body {index} missed it", index=b.index))
        worst = max(worst, abs(hit.distance - ray_entry(b, origin, down)))
    miss = world.raycast((0.0, 5.0, 0.0), (0.0, 1.0, 0.0))
    return verdict(worst < 1e-6 and miss is None,
                   N_("{n} rays straight down: hit distances match the formulas within {worst:.1g} m; a ray "
                      "upwards hits nothing", n=len(bodies), worst=worst))


def check_events(world: World, bodies: Sequence[Body]) -> str:
    """Run 4 s: each ball's first begin event comes within 1.5 steps of √(2h/g); begins and ends balance."""
    first: dict[int, float] = {}
    begins = ends = 0
    for _ in range(240):
        world.step(DT)
        for ev in world.events:
            begins += ev.kind == "begin"
            ends += ev.kind == "end"
            if ev.kind == "begin":
                for b in (ev.body_a, ev.body_b):
                    first.setdefault(b.index, world.time)
    errs = [abs(first.get(b.index, math.inf) - math.sqrt(2 * h / G))
            for b, h in zip(bodies, scenes.EVENT_HEIGHTS, strict=True)]
    ok = max(errs) <= 1.5 * DT and 0 <= begins - ends <= len(bodies)
    return verdict(ok, N_("first touch of each ball within {ms:.0f} ms of √(2h/g); {begins} begin and {ends} "
                          "end events", ms=max(errs) * 1000, begins=begins, ends=ends))


def check_spinning_top(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: the spinning top stays near its 10° lean, the other one falls on its side."""
    run(world, 300)
    spun, still = tilt_deg(bodies[0]), tilt_deg(bodies[1])
    # lying on its side (rim and tip on the ground) the top's axis leans 90° − atan((0.4 − 0.032)/0.6) = 58°
    return verdict(finite(world) and spun < 30.0 and still > 50.0,
                   N_("after 5 s the spinning top leans {spun:.0f}° (it started at 10°), the still one "
                      "{still:.0f}° (on its side: 58°)", spun=spun, still=still))


# ----------------------------------------------------------------------------------------------------
# labels that follow the state


def labels_bullet(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The wall with the CCD setting, and the bullet's travel per step."""
    state = N_("on") if world.ccd else N_("off")
    return [Label((0.05, 4.4, 0.0), N_("wall 10 cm — CCD {state}", state=state)),
            Label((-7.5, 2.6, 0.0), N_("300 m/s: 5 m per step"))]


def labels_bounce(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The drop height and the predicted rebound height e²·h under the world's rule."""
    e = pair_restitution(world, bodies[0].restitution, 0.8)
    return [Label((1.2, 2.0 * e * e, 0.0), f"e²·h = {e:.2f}²·2 m = {2 * e * e:.2f} m"),
            Label((1.2, 2.0, 0.0), "h = 2 m")]


def labels_bounce_row(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Each ball's e, and its predicted rebound height e²·h above it."""
    want = bounce_row_expected(world, bodies)
    out = [Label((float(b.position[0]), w + 0.4, 0.6), f"e²·h = {w:.2f} m") for b, w in zip(bodies, want,
                                                                                            strict=True)]
    return out + ball_labels(bodies, [f"e = {b.restitution:g}" for b in bodies])


def labels_cradle(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The released ball and the one that leaves."""
    return ball_labels([bodies[0], bodies[-1]], [N_("released"), N_("leaves with the same speed")], lift=0.5)


def labels_incline(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The angle and tan θ; per box its effective μ, critical angle and predicted fate."""
    theta = scenes.RAMP_ANGLE
    out = [Label((-6.0, 3.0, 4.5), N_("θ = {theta:g}°, tan θ = {tan:.3f}", theta=theta,
                                      tan=math.tan(math.radians(theta))))]
    for b in bodies:
        mu = pair_friction(world, b.friction, 1.0)
        a = incline_expected(world, b.friction)
        crit = math.degrees(math.atan(mu))
        fate = N_("slides, a = {a:.2f} m/s²", a=a) if a > 0 else N_("holds")
        out.append(Label(tuple(b.position + (0.0, 0.7, 0.0)),
                         N_("μ = {mu:.2f}, θc = {crit:.1f}°: {fate}", mu=mu, crit=crit, fate=fate)))
    return out


def labels_head_on(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Per lane the masses, the pair's e and the formula's final velocities."""
    out = []
    for k, (m1, m2, e1, e2) in enumerate(scenes.HEAD_ON_LANES):
        e = pair_restitution(world, e1, e2)
        w1, w2 = head_on_expected(m1, m2, e, scenes.HEAD_ON_SPEED)
        z = float(bodies[2 * k + 1].position[2])
        text = N_("{m1:g} kg → {m2:g} kg, e = {e:g}: expect {w1:+.1f}, {w2:+.1f} m/s", m1=m1, m2=m2, e=e,
                  w1=w1, w2=w2)
        out.append(Label((-5.5, 1.0, z), text))
    return out


def labels_sphere_sphere(world: World, bodies: Sequence[Body]) -> list[Label]:
    """What each lane shows."""
    return [Label((-3.0, 3.0, -2.0), N_("head-on: the balls swap velocities")),
            Label((-3.0, 3.0, 2.5), N_("glancing: they leave at 90°"))]


def labels_sphere_box(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Which box is an AABB and which an OBB."""
    return [Label(tuple(bodies[0].position + (0.0, 1.0, 0.0)), N_("rotation locked: an AABB")),
            Label(tuple(bodies[2].position + (0.0, 1.0, 0.0)), N_("free: an OBB once it turns"))]


def labels_box_box(world: World, bodies: Sequence[Body]) -> list[Label]:
    """How many separating axes each pair needs."""
    return [Label((-2.0, 3.3, 0.0), N_("AABB: 3 axes")), Label((2.0, 3.3, 0.0), N_("OBB: 15 axes"))]


def labels_manifold(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The number of contact points under each cube (after the first step)."""
    out = []
    for b, case in zip(bodies, scenes.MANIFOLD_CASES, strict=True):
        k = ground_manifold_points(world, b) if world.steps else "?"
        out.append(Label(tuple(b.position + (0.0, 1.2, 0.0)),
                         N_("on a {case}: {k} points", case=N_(case), k=k)))
    return out


def labels_responses(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The response method and the deepest overlap now."""
    return [Label((0.0, 4.0, 0.0), N_("response: {response}", response=world.response)),
            Label((-3.0, 0.4 - max_depth(world), 0.8),
                  N_("deepest overlap {mm:.1f} mm", mm=max_depth(world) * 1000))]


def labels_restitution(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Each ball's material and pair e under the world's rule, and its e²·h mark."""
    want = restitution_expected(world)
    names = [N_("{material}, e = {e:g}", material=N_(n), e=e) for n, e in scenes.RESTITUTION_BALLS]
    e_pad = pair_restitution(world, 0.9, scenes.RESTITUTION_PAD)
    names.append(N_("0.9 on pad 0.5: {rule} → e = {e:.2f}", rule=world.restitution_rule, e=e_pad))
    floors = [0.0] * len(scenes.RESTITUTION_BALLS) + [0.5]
    out = ball_labels(bodies, names, lift=0.6)
    out += [Label((float(b.position[0]), f + w + 0.3, 0.5), f"e²·h = {w:.2f} m")
            for b, w, f in zip(bodies, want, floors, strict=True)]
    return out


def labels_tunnelling(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The CCD setting and each bullet's travel per step."""
    out = [Label((0.05, 4.3, 0.0), N_("CCD {state}", state=N_("on") if world.ccd else N_("off")))]
    out += [Label((-3.5, 2.3, float(b.position[2])), N_("{v:g} m/s: {step:.2f} m per step", v=v, step=v * DT))
            for b, v in zip(bodies, scenes.TUNNEL_SPEEDS, strict=True)]
    return out


def labels_stacking(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The name of each structure."""
    return [Label((-6.0, 4.4, 0.0), N_("pyramid")), Label((-2.0, 2.8, 0.0), N_("brick wall")),
            Label((1.8, 1.9, 0.0), "1, 10, 100 kg"), Label((5.0, 2.9, 0.0), N_("card house"))]


def labels_raycasts(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The hit distance of a ray cast straight down onto each shape."""
    out = []
    for b in bodies:
        hit = world.raycast(b.position + (0.0, 10.0, 0.0), (0.0, -1.0, 0.0))
        if hit is not None:
            out.append(Label(tuple(hit.point + (0.0, 0.3, 0.0)), f"t = {hit.distance:.2f} m"))
    return out


def labels_events(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Each ball's drop height and the time of its first touch, √(2h/g)."""
    return [Label((float(b.position[0]), h + 1.0, 0.0),
                  N_("h = {h:g} m: first touch at {t:.2f} s", h=h, t=math.sqrt(2 * h / G)))
            for b, h in zip(bodies, scenes.EVENT_HEIGHTS, strict=True)]


def labels_spinning_top(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Each top's lean now."""
    return [Label(tuple(bodies[0].position + (0.0, 0.9, 0.0)),
                  N_("spinning, leans {deg:.0f}°", deg=tilt_deg(bodies[0]))),
            Label(tuple(bodies[1].position + (0.0, 0.9, 0.0)),
                  N_("not spinning, leans {deg:.0f}°", deg=tilt_deg(bodies[1])))]


# ----------------------------------------------------------------------------------------------------
# the checks and labels by the names a scene file's lesson gives them (its "check" and "labels")

CHECKS: dict[str, CheckFn] = {f.__name__.removeprefix("check_"): f for f in (
    check_showcase, check_empty, check_pile, check_pyramid, check_spheres, check_bullet, check_bounce,
    check_bounce_row, check_cradle, check_incline, check_dominoes, check_tennis_racket, check_sphere_sphere,
    check_sphere_box, check_box_box, check_capsules, check_hulls, check_broadphase, check_manifold,
    check_responses, check_restitution, check_head_on, check_snooker, check_tunnelling, check_stacking,
    check_raycasts, check_events, check_spinning_top)}
"""Every lesson check, by its function's name without ``check_`` (``"bounce_row"``: ``check_bounce_row``)."""
LABELS: dict[str, LabelFn] = {f.__name__.removeprefix("labels_"): f for f in (
    labels_bullet, labels_bounce, labels_bounce_row, labels_cradle, labels_incline, labels_head_on,
    labels_sphere_sphere, labels_sphere_box, labels_box_box, labels_manifold, labels_responses,
    labels_restitution, labels_tunnelling, labels_stacking, labels_raycasts, labels_events,
    labels_spinning_top)}
"""Every lesson's labels function, by its name without ``labels_``."""
VISUALS: dict[str, tuple[str, ...]] = {"raycasts": ("cursor_ray",), "tunnelling": ("sweeps",),
                                       "events": ("flashes",)}
"""The teaching visuals (``RenderOptions`` toggles drawn by ``sandbox/ui/lesson_visuals.py``) a lesson turns
on while its scene is loaded, by the name of the lesson's check: a scene file of one's own whose lesson
runs the raycasts check gets the ray from the cursor too."""


def lesson_visuals(lesson: Lesson | None) -> tuple[str, ...]:
    """The ``VISUALS`` of ``lesson`` (none for no lesson, or a check without visuals)."""
    if lesson is None:
        return ()
    return next((VISUALS.get(name, ()) for name, check in CHECKS.items() if check is lesson.check), ())


# ----------------------------------------------------------------------------------------------------
# the lessons of the built-in scenes, read from their files

LESSONS: tuple[Lesson, ...]
"""The lesson of every built-in scene, in the order of ``scenes.SCENE_NAMES``: each scene file's
``lesson`` (read on first use, PEP 562's module ``__getattr__``: the files name this module's checks)."""
LESSONS_BY_NAME: dict[str, Lesson]
"""``LESSONS`` by scene name."""


def built_in_lessons() -> tuple[Lesson, ...]:
    """``LESSONS``, read from the scene files the first time."""
    if "LESSONS" not in globals():
        built = tuple(s.lesson for s in scenes.SCENES.values() if s.lesson is not None)
        globals().update(LESSONS=built, LESSONS_BY_NAME={lesson.name: lesson for lesson in built})
    return globals()["LESSONS"]


def __getattr__(name: str) -> object:
    if name in ("LESSONS", "LESSONS_BY_NAME"):
        built_in_lessons()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------------------------------
# the student's pages


DOC_FOLDERS = {"en": "", "pt_BR": "pt-BR"}
"""Where each language's pages go, under the English pages' folder (``docs/lessons``)."""


def engine_link(ref: str, depth: int = 2) -> str:
    """A Markdown link from a page ``depth`` folders below the repository root to the file of an engine
    reference ``"path: function"``."""
    path, _sep, func = ref.partition(": ")
    return f"[`{path}`]({'../' * depth}{path}): `{func}`"


def language_links(language: str, page: str) -> str:
    """Links from ``page`` in ``language`` to the same page in every other language, each named in
    itself."""
    up = "../" if DOC_FOLDERS[language] else ""
    return " · ".join(f"[{LANGUAGES[other]}]({up}{sub + '/' if sub else ''}{page})"
                      for other, sub in DOC_FOLDERS.items() if other != language)


def lesson_markdown(lesson: Lesson, language: str = "en") -> str:
    """The student's page for ``lesson`` in ``language`` (``docs/lessons/<name>.md``, the Portuguese one
    in ``docs/lessons/pt-BR/``, which shares the English page's screenshot), translated through the app's
    catalogue."""

    def _(text: str) -> str:
        return translate(text, language)

    up = "../" if DOC_FOLDERS[language] else ""
    scene = _("Scene: `{name}` (`python -m sandbox run {command}` runs it headless). [All lessons](index.md)")
    lines = [f"# {_(lesson.title)}", "",
             scene.format(name=lesson.name, command=lesson.name.replace(" ", "-")) + " · "
             + language_links(language, lesson.doc_page), "",
             _("## The idea"), "", _(lesson.concept), "",
             _("## The formula"), "", f"    {_(lesson.formula)}", "",
             _("## Try this"), "", _(lesson.try_this), ""]
    if lesson.presets:
        lines += [_("Presets (one click in the Lesson window):"), ""]
        for p in lesson.presets:
            if "compare" in p:  # lanes side by side
                lanes = "; ".join(f"{_(lane['label'])}: "
                                  + ", ".join(f"`{k} = {v!r}`" for k, v in lane["settings"].items())
                                  for lane in p["compare"])
                lines.append(f"- {_(p['label'])} ({_('A/B lanes, stepping together')}): {lanes}")
                continue
            settings = ", ".join(f"`{k} = {v!r}`" for k, v in p["settings"].items())
            lines.append(f"- {_(p['label'])}: {settings}")
        lines.append("")
    lines += [_("## What to look at"), "", _(lesson.look_at), "",
              _("## What to expect"), "", _(lesson.expect), "",
              _("The scene's own check (run by `tests/test_lessons.py`) measures this against the formula."),
              "", _("## Where the engine computes it"), ""]
    lines += [f"- {engine_link(r, 3 if up else 2)}" for r in lesson.engine_refs]
    shot = up + lesson.doc_page.removesuffix(".md") + ".png"  # by the app at 1280x720, Lesson window shown
    lines += ["", _("## Screenshot"), "",
              _("![The {name} scene in the app, with its Lesson window]({shot})").format(name=lesson.name,
                                                                                       shot=shot), ""]
    return "\n".join(lines)


def index_markdown(language: str = "en") -> str:
    """The index page of the lessons in ``language`` (``docs/lessons/index.md``, the Portuguese one in
    ``docs/lessons/pt-BR/``), linked to the other languages' indexes."""

    def _(text: str) -> str:
        return translate(text, language)

    lines = [_("# Lessons"), "",
             _("Each built-in scene of the sandbox teaches one idea of rigid-body simulation. Every page "
               "gives the idea, its formula, what to try, what to expect and where the engine computes it. "
               "The pages assume the introductory material: collision detection of spheres, AABBs, OBBs and "
               "convex polyhedra (SAT), clipping, impulses with angular terms, restitution and penalty "
               "springs."), "",
             _("Load a scene from the panel's scene list (or run it headless with "
               "`python -m sandbox run NAME`). Its lesson sets the camera, draws labels in the scene (the "
               "predicted heights, the effective friction, the CCD setting, ...) and offers presets: "
               "one-click world settings that change what the scene shows. Reset the scene after a preset to "
               "watch it from the start. Each lesson also has its own check, an experiment that measures the "
               "scene against the formula; `tests/test_lessons.py` runs them all."), "",
             language_links(language, "index.md"), "",
             _("| scene | lesson | formula |"), "|---|---|---|"]
    for lesson in built_in_lessons():
        formula = _(lesson.formula).replace("|", "\\|")  # a bare | would end the table cell
        lines.append(f"| `{lesson.name}` | [{_(lesson.title)}]({lesson.doc_page}) | {formula} |")
    lines.append("")
    return "\n".join(lines)


def write_docs(folder: str | Path) -> list[Path]:
    """Write the index and every lesson's page into ``folder`` in English, and in every other language
    into its subfolder (``DOC_FOLDERS``); return the paths written."""
    written = []
    for language, sub in DOC_FOLDERS.items():
        out = Path(folder) / sub
        out.mkdir(parents=True, exist_ok=True)
        written.append(out / "index.md")
        written[-1].write_text(index_markdown(language), encoding="utf-8")
        for lesson in built_in_lessons():
            path = out / lesson.doc_page
            path.write_text(lesson_markdown(lesson, language), encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    for p in write_docs(sys.argv[1] if len(sys.argv) > 1 else "docs/lessons"):
        print(p)
