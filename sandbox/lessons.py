"""Lessons: what each built-in scene teaches, as data the app and the docs read.

A ``Lesson`` names its scene (a key of ``scenes.SCENES``) and carries the text a student reads (concept,
formula, what to try, what to look at, what to expect), one-click presets of world settings, a camera that
frames what matters, 3D labels (a function of the world, since some follow the bodies or the settings),
the engine files and functions that compute the concept, and a ``check``: the scene's own experiment.

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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import scenes
from .engine import Body, World
from .engine.broadphase import BroadPhase
from .engine.core.friction import combine_friction
from .engine.core.restitution import combine_restitution
from .engine.world import FRICTION_RULES, RESTITUTION_RULES

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


@dataclass(frozen=True)
class Label:
    """A text to draw in 3D at ``position`` (world frame, metres)."""

    position: Vec3
    text: str


LabelFn = Callable[[World, Sequence[Body]], list[Label]]
CheckFn = Callable[[World, Sequence[Body]], str]


@dataclass(frozen=True)
class Lesson:
    """One scene's lesson. ``presets`` are dicts ``{"label": str, "settings": {world attribute: value}}``,
    applied with ``apply_preset``, or ``{"label": str, "compare": lanes}``, which opens the scene in lanes
    side by side (``Session.open_compare``: one ``{"label", "settings"}`` per lane, A first);
    ``labels(world, bodies)`` gives the labels to draw now; ``check`` is
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
    labels: LabelFn = field(default=lambda world, bodies: [])

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
    """The check's one-line verdict."""
    return ("PASS: " if ok else "FAIL: ") + text


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
                   f"after 4 s the deepest overlap is {depth * 1000:.1f} mm (< 20 mm)")


def check_empty(world: World, bodies: Sequence[Body]) -> str:
    """A ray cast straight down meets the static ground's top face at y = 0; no dynamic bodies."""
    hit = world.raycast((1.0, 10.0, 2.0), (0.0, -1.0, 0.0))
    y = float(hit.point[1]) if hit else float("nan")
    return verdict(hit is not None and abs(y) < 1e-6 and not bodies,
                   f"a ray straight down meets the ground's top at y = {y:.2g} m")


def check_pile(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no body's centre sinks more than 1 cm below 0.5 m (S1's ground penetration bar)."""
    run(world, 300)
    pen = max(max(0.0, 0.5 - float(b.position[1])) for b in bodies)
    return verdict(finite(world) and pen < 0.01, f"ground penetration {pen * 1000:.1f} mm (bar: 10 mm)")


def check_pyramid(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no cube drifts more than 2 cm from its start (S2's bar)."""
    start = np.array([b.position for b in bodies])
    run(world, 300)
    drift = float(np.linalg.norm(np.array([b.position for b in bodies]) - start, axis=1).max())
    return verdict(finite(world) and drift < 0.02,
                   f"largest drift of a cube {drift * 100:.2f} cm (bar: 2 cm)")


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
                   f"deepest sphere–sphere overlap {max(deepest, 0.0) * 1000:.1f} mm (bar: 10 mm), "
                   f"{escaped} escaped")


def check_bullet(world: World, bodies: Sequence[Body]) -> str:
    """Run 1 s: with CCD the bullet stops at the wall; without it, it passes through (S4)."""
    ball = bodies[0]
    run(world, 60)
    passed = float(ball.position[0]) > 0.1
    if world.ccd:
        return verdict(not passed, f"CCD on: the bullet stopped at x = {ball.position[0]:.3f} m, before the "
                                   "wall's face at x = 0")
    return verdict(passed, f"CCD off: the bullet {'went through' if passed else 'stopped at'} the wall "
                           f"(x = {ball.position[0]:.2f} m)")


def check_bounce(world: World, bodies: Sequence[Body]) -> str:
    """The first rebound of the bottom of the ball against e²·h, e under the world's rule (S5)."""
    ball = bodies[0]
    e = pair_restitution(world, ball.restitution, 0.8)
    h = 2.0
    apex = first_apexes(world, [ball], 0.5, [0.0], 150)[0]
    want = e * e * h
    err = abs(apex - want) / want
    return verdict(err < 0.03, f"rebound {apex:.3f} m against e²·h = {e:.2f}²·{h:g} = {want:.3f} m "
                               f"({err * 100:.1f} % off)")


def bounce_row_expected(world: World, bodies: Sequence[Body]) -> list[float]:
    """e²·h for each ball of the line-up, e being the pair's under the world's rule (ground e = 1)."""
    return [pair_restitution(world, b.restitution, 1.0) ** 2 * 3.0 for b in bodies]


def check_bounce_row(world: World, bodies: Sequence[Body]) -> str:
    """Each ball's first rebound against e²·h (within 3 % or 1 cm), e = rule(e_ball, 1)."""
    want = bounce_row_expected(world, bodies)
    got = first_apexes(world, bodies, 0.4, [0.0] * len(bodies), 240)
    ok = all(abs(g - w) <= max(0.03 * w, 0.01) for g, w in zip(got, want, strict=True))
    pairs = ", ".join(f"{g:.3f}/{w:.3f}" for g, w in zip(got, want, strict=True))
    return verdict(ok, f"rebound/e²·h (m): {pairs} (within 3 % or 1 cm)")


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
    return verdict(ok, f"first ball {first:.2f} m/s, last ball leaves at {last:.2f} m/s "
                       f"({last / first * 100:.0f} %), the middle ones at most {middle:.2f} m/s")


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
    return verdict(ok, "a/g(sin θ − μ cos θ) in m/s²: " + ", ".join(parts))


def check_dominoes(world: World, bodies: Sequence[Body]) -> str:
    """Run up to 8 s: the last domino falls (tilts past 45°)."""
    for step in range(1, 481):
        world.step(DT)
        if tilt_deg(bodies[-1]) > 45.0:
            return verdict(True, f"the last of {len(bodies)} dominoes fell after {step * DT:.2f} s")
    fallen = sum(tilt_deg(b) > 45.0 for b in bodies)
    return verdict(False, f"only {fallen} of {len(bodies)} dominoes fell in 8 s")


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
    when = f"after {flip:.2f} s" if flip is not None else "never"
    return verdict(ok, f"the intermediate axis turned over {when}; kinetic energy kept within "
                       f"{drift * 100:.2f} %")


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
    return verdict(ok, f"head-on: {np.linalg.norm(mover):.3f} and {np.linalg.norm(target):.3f} m/s "
                       f"(formula 0 and {v:g}); glancing: {angle:.1f}° apart (formula 90°), "
                       f"energy kept {energy * 100:.1f} %")


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
    return verdict(ok, f"locked box turned by {turned:.1g} (an AABB still), free box spins at {spin:.2f} "
                       "rad/s "
                       f"(an OBB now); momentum kept to {dp:.1g} kg·m/s")


def check_box_box(world: World, bodies: Sequence[Body]) -> str:
    """Run 4 s: both boxes rest on their pedestals, no corner more than 1 cm below the top."""
    run(world, 240)
    parts = []
    ok = finite(world)
    for name, b in zip(("aligned", "turned"), bodies, strict=True):
        low = float(box_vertices(b)[:, 1].min())
        speed = float(np.linalg.norm(b.linear_velocity))
        ok &= low > 1.0 - 0.01 and speed < 0.05
        parts.append(f"{name}: lowest corner {low:.3f} m, {speed:.3f} m/s")
    return verdict(ok, "both rest on their pedestals (top at 1 m): " + "; ".join(parts))


def check_capsules(world: World, bodies: Sequence[Body]) -> str:
    """Run 4 s: no overlap of 1 cm, the upright capsule has toppled, the crossed one lies on the other."""
    run(world, 240)
    depth = max_depth(world)
    toppled = tilt_deg(bodies[2])
    stacked = float(bodies[1].position[1])
    ok = finite(world) and depth < 0.01 and toppled > 60.0 and stacked > 0.85
    return verdict(ok, f"deepest overlap {depth * 1000:.1f} mm; the upright one toppled to {toppled:.0f}°; "
                       "the "
                       f"crossed one rests at {stacked:.2f} m (on the other: 0.9 m)")


def check_hulls(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: no hull vertex below the ground by 1 cm, no overlap of 1 cm, all at rest."""
    run(world, 300)
    # hull vertices are kept relative to the centre of mass, not to the body's position
    low = min(float((b.center_of_mass + b.shape.vertices @ scenes.rotation_matrix(b.orientation).T)[:, 1]
                    .min()) for b in bodies)
    depth = max_depth(world)
    speed = max(float(np.linalg.norm(b.linear_velocity)) for b in bodies)
    ok = finite(world) and low > -0.01 and depth < 0.01 and speed < 0.1
    return verdict(ok, f"lowest vertex {low * 1000:.1f} mm, deepest overlap {depth * 1000:.1f} mm, "
                       f"fastest {speed:.3f} m/s")


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
                   f"{n} bodies with the ground: brute force tests {n * (n - 1) // 2} pairs; all four "
                   f"methods find the same {len(ref)} ({times})")


def check_manifold(world: World, bodies: Sequence[Body]) -> str:
    """The first step's manifolds under the cube on a face, an edge and a corner: 4, 2, 1 points."""
    world.step(DT)
    got = [ground_manifold_points(world, b) for b in bodies]
    return verdict(got == [4, 2, 1], f"points on a face, an edge, a corner: {got[0]}, {got[1]}, {got[2]} "
                                     "(expected 4, 2, 1)")


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
    figures = (f"{world.response}: the ball sank at most {peak * 1000:.1f} mm, rests {rest * 1000:.1f} mm "
               "deep "
               f"at v_y = {vy:.2f} m/s; the stack drifted {drift * 100:.2f} cm")
    if world.response == "projection":
        free_fall = -G * world.time
        return verdict(abs(rest) < 0.01 and abs(vy / free_fall - 1.0) < 0.01,
                       figures + f" (free fall: −g·t = {free_fall:.2f} m/s)")
    bar = 0.02 if world.response == "impulse" else 0.05
    return verdict(finite(world) and abs(rest) < 0.01 and abs(vy) < 0.05 and drift < bar,
                   figures + f" (bar {bar * 100:.0f} cm)")


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
    return verdict(ok, f"{world.restitution_rule} rule, rebound/e²·h (m): {pairs}")


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
    return verdict(ok, "v1', v2' in m/s (formula): " + "; ".join(parts) + "; momentum kept")


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
        return verdict(False, "the cue ball never reached the pack")
    ok = p_before - bound - 1e-9 <= p_after <= p_before * 1.001 and on_table and finite(world)
    return verdict(ok, f"momentum {p_before:.3f} kg·m/s before the break, {p_after:.3f} after "
                       "(cloth friction "
                       f"can take at most {bound:.3f}); cue ball {bodies[0].linear_velocity[0]:+.2f} m/s at "
                       f"the "
                       f"end; {'all balls on the table' if on_table else 'a ball left the table'}")


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
    return verdict(passed == want, f"CCD {'on' if world.ccd else 'off'}: through the wall at "
                                   f"{', '.join(through) or 'no'} m/s")


def check_stacking(world: World, bodies: Sequence[Body]) -> str:
    """Everything stands and falls asleep. The heavy-on-light stack (bodies 36–38) is measured apart: the
    soft contacts under a light body carrying a heavy one settle deeper (about 1 cm per contact here)."""
    start = np.array([b.position for b in bodies])
    run(world, 300)
    drift = np.linalg.norm(np.array([b.position for b in bodies]) - start, axis=1)
    heavy = slice(36, 39)
    rest = np.r_[drift[:36], drift[39:]]
    upright = all(tilt_deg(b) < 2.0 for b in bodies[heavy])
    asleep = sum(not b.awake for b in bodies)
    ok = (finite(world) and rest.max() < 0.02 and drift[heavy].max() < 0.03 and upright
          and (asleep == len(bodies) or not world.sleeping))
    return verdict(ok, f"pyramid, wall, cards drift at most {rest.max() * 100:.2f} cm (bar: 2 cm); "
                       "the 1/10/100 kg "
                       f"stack sank {drift[heavy].max() * 100:.2f} cm (bar: 3 cm); {asleep} of "
                       f"{len(bodies)} asleep")


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
            return verdict(False, f"the ray down onto body {b.index} missed it")
        worst = max(worst, abs(hit.distance - ray_entry(b, origin, down)))
    miss = world.raycast((0.0, 5.0, 0.0), (0.0, 1.0, 0.0))
    return verdict(worst < 1e-6 and miss is None,
                   f"{len(bodies)} rays straight down: hit distances match the formulas within {worst:.1g} "
                   f"m; "
                   "a ray upwards hits nothing")


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
    return verdict(ok, f"first touch of each ball within {max(errs) * 1000:.0f} ms of √(2h/g); "
                       f"{begins} begin and {ends} end events")


def check_spinning_top(world: World, bodies: Sequence[Body]) -> str:
    """Run 5 s: the spinning top stays near its 10° lean, the other one falls on its side."""
    run(world, 300)
    spun, still = tilt_deg(bodies[0]), tilt_deg(bodies[1])
    # lying on its side (rim and tip on the ground) the top's axis leans 90° − atan((0.4 − 0.032)/0.6) = 58°
    return verdict(finite(world) and spun < 30.0 and still > 50.0,
                   f"after 5 s the spinning top leans {spun:.0f}° (it started at 10°), the still one "
                   f"{still:.0f}° "
                   "(on its side: 58°)")


# ----------------------------------------------------------------------------------------------------
# labels that follow the state


def labels_bullet(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The wall with the CCD setting, and the bullet's travel per step."""
    return [Label((0.05, 4.4, 0.0), f"wall 10 cm — CCD {'on' if world.ccd else 'off'}"),
            Label((-7.5, 2.6, 0.0), "300 m/s: 5 m per step")]


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
    return ball_labels([bodies[0], bodies[-1]], ["released", "leaves with the same speed"], lift=0.5)


def labels_incline(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The angle and tan θ; per box its effective μ, critical angle and predicted fate."""
    theta = scenes.RAMP_ANGLE
    out = [Label((-6.0, 3.0, 4.5), f"θ = {theta:g}°, tan θ = {math.tan(math.radians(theta)):.3f}")]
    for b in bodies:
        mu = pair_friction(world, b.friction, 1.0)
        a = incline_expected(world, b.friction)
        crit = math.degrees(math.atan(mu))
        fate = f"slides, a = {a:.2f} m/s²" if a > 0 else "holds"
        out.append(Label(tuple(b.position + (0.0, 0.7, 0.0)), f"μ = {mu:.2f}, θc = {crit:.1f}°: {fate}"))
    return out


def labels_head_on(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Per lane the masses, the pair's e and the formula's final velocities."""
    out = []
    for k, (m1, m2, e1, e2) in enumerate(scenes.HEAD_ON_LANES):
        e = pair_restitution(world, e1, e2)
        w1, w2 = head_on_expected(m1, m2, e, scenes.HEAD_ON_SPEED)
        z = float(bodies[2 * k + 1].position[2])
        text = f"{m1:g} kg → {m2:g} kg, e = {e:g}: expect {w1:+.1f}, {w2:+.1f} m/s"
        out.append(Label((-5.5, 1.0, z), text))
    return out


def labels_sphere_sphere(world: World, bodies: Sequence[Body]) -> list[Label]:
    """What each lane shows."""
    return [Label((-3.0, 3.0, -2.0), "head-on: the balls swap velocities"),
            Label((-3.0, 3.0, 2.5), "glancing: they leave at 90°")]


def labels_sphere_box(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Which box is an AABB and which an OBB."""
    return [Label(tuple(bodies[0].position + (0.0, 1.0, 0.0)), "rotation locked: an AABB"),
            Label(tuple(bodies[2].position + (0.0, 1.0, 0.0)), "free: an OBB once it turns")]


def labels_box_box(world: World, bodies: Sequence[Body]) -> list[Label]:
    """How many separating axes each pair needs."""
    return [Label((-2.0, 3.3, 0.0), "AABB: 3 axes"), Label((2.0, 3.3, 0.0), "OBB: 15 axes")]


def labels_manifold(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The number of contact points under each cube (after the first step)."""
    out = []
    for b, case in zip(bodies, scenes.MANIFOLD_CASES, strict=True):
        k = ground_manifold_points(world, b) if world.steps else "?"
        out.append(Label(tuple(b.position + (0.0, 1.2, 0.0)), f"on a {case}: {k} points"))
    return out


def labels_responses(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The response method and the deepest overlap now."""
    return [Label((0.0, 4.0, 0.0), f"response: {world.response}"),
            Label((-3.0, 0.4 - max_depth(world), 0.8), f"deepest overlap {max_depth(world) * 1000:.1f} mm")]


def labels_restitution(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Each ball's material and pair e under the world's rule, and its e²·h mark."""
    want = restitution_expected(world)
    names = [f"{n}, e = {e:g}" for n, e in scenes.RESTITUTION_BALLS]
    e_pad = pair_restitution(world, 0.9, scenes.RESTITUTION_PAD)
    names.append(f"0.9 on pad 0.5: {world.restitution_rule} → e = {e_pad:.2f}")
    floors = [0.0] * len(scenes.RESTITUTION_BALLS) + [0.5]
    out = ball_labels(bodies, names, lift=0.6)
    out += [Label((float(b.position[0]), f + w + 0.3, 0.5), f"e²·h = {w:.2f} m")
            for b, w, f in zip(bodies, want, floors, strict=True)]
    return out


def labels_tunnelling(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The CCD setting and each bullet's travel per step."""
    out = [Label((0.05, 4.3, 0.0), f"CCD {'on' if world.ccd else 'off'}")]
    out += [Label((-3.5, 2.3, float(b.position[2])), f"{v:g} m/s: {v * DT:.2f} m per step")
            for b, v in zip(bodies, scenes.TUNNEL_SPEEDS, strict=True)]
    return out


def labels_stacking(world: World, bodies: Sequence[Body]) -> list[Label]:
    """The name of each structure."""
    return [Label((-6.0, 4.4, 0.0), "pyramid"), Label((-2.0, 2.8, 0.0), "brick wall"),
            Label((1.8, 1.9, 0.0), "1, 10, 100 kg"), Label((5.0, 2.9, 0.0), "card house")]


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
                  f"h = {h:g} m: first touch at {math.sqrt(2 * h / G):.2f} s")
            for b, h in zip(bodies, scenes.EVENT_HEIGHTS, strict=True)]


def labels_spinning_top(world: World, bodies: Sequence[Body]) -> list[Label]:
    """Each top's lean now."""
    return [Label(tuple(bodies[0].position + (0.0, 0.9, 0.0)), f"spinning, leans {tilt_deg(bodies[0]):.0f}°"),
            Label(tuple(bodies[1].position + (0.0, 0.9, 0.0)),
                  f"not spinning, leans {tilt_deg(bodies[1]):.0f}°")]


# ----------------------------------------------------------------------------------------------------
# the lessons, in the order of scenes.SCENES

CORE = "sandbox/engine/core/"


def _preset(label: str, **settings: object) -> dict:
    return {"label": label, "settings": settings}


RESPONSE_PRESETS = (_preset("Impulses (default)", response="impulse"),
                    _preset("Projection instead of impulses", response="projection"),
                    _preset("Penalty springs", response="penalty"))
RESTITUTION_PRESETS = tuple(_preset(f"Combine rule: {r}", restitution_rule=r) for r in RESTITUTION_RULES)
CCD_PRESETS = (_preset("CCD on", ccd=True), _preset("CCD off", ccd=False))


def _side_by_side(label: str, *lanes: tuple[str, dict]) -> dict:
    """A preset that opens the scene in lanes side by side, one ``(label, settings)`` per lane, A first."""
    return {"label": label, "compare": tuple({"label": name, "settings": s} for name, s in lanes)}


CCD_SIDE_BY_SIDE = _side_by_side("Side by side: CCD off | CCD on", ("CCD off", {"ccd": False}),
                                 ("CCD on", {"ccd": True}))
RESPONSES_SIDE_BY_SIDE = _side_by_side("Side by side: impulse | projection | penalty",
                                       ("impulse", {"response": "impulse"}),
                                       ("projection", {"response": "projection"}),
                                       ("penalty", {"response": "penalty"}))

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        name="showcase", title="A world in motion",
        concept="Every step runs the same pipeline: the broad phase finds pairs whose bounding boxes "
                "overlap, the narrow phase computes their contact points, the solver applies impulses so "
                "that nothing sinks, and the integrator moves every body with semi-implicit Euler. The step "
                "is fixed (1/60 s) and split into sub-steps, so the same scene always gives the same motion.",
        formula="v ← v + g·dt, then x ← x + v·dt (semi-implicit Euler)",
        try_this="Switch the response method and the number of sub-steps with the presets; drop a body by "
                 "hand.",
        look_at="The stage timings: the narrow phase and the solver take most of each step.",
        expect="Towers, pyramid, capsules, hulls and balls settle within a few seconds, with overlaps of at "
               "most a few millimetres.",
        camera=Camera((0.0, 6.5, 13.0), (-0.5, 2.5, 0.0)),
        engine_refs=("sandbox/engine/world.py: World.step", CORE + "integrate.py: integrate_velocities",
                     CORE + "integrate.py: integrate_positions"),
        check=check_showcase,
        presets=(*RESPONSE_PRESETS, _preset("One sub-step", substeps=1)),
    ),
    Lesson(
        name="empty", title="The static ground",
        concept="A body of mass 0 is static: its inverse mass and inverse inertia are zero, so no impulse "
                "can move it, and the impulse formula gives the whole response to the other body. Whatever "
                "you spawn here lands on it.",
        formula="1/m = 0 and I⁻¹ = 0 for a static body",
        try_this="Spawn bodies by hand and drop them on the ground.",
        look_at="Whatever you drop stops on the plane y = 0, however hard it lands.",
        expect="An empty world with a flat ground whose top is at y = 0.",
        camera=Camera((0.0, 6.0, 12.0), (0.0, 0.0, 0.0)),
        engine_refs=("sandbox/engine/world.py: World.add_body", CORE + "impulse.py: apply_impulse_pair"),
        check=check_empty,
    ),
    Lesson(
        name="pile", title="S1: a thousand resting contacts",
        concept="A pile has thousands of contacts that push on one another. The solver cannot solve them all "
                "at once; it sweeps over them again and again (Gauss–Seidel iterations), each time "
                "correcting one contact with the others' latest impulses, and sub-steps split the step into "
                "shorter ones.",
        formula="ground penetration = max(0, 0.5 m − centre height)",
        try_this="Use one sub-step or fewer iterations (presets), then compare the penetration.",
        look_at="The bottom layer: how far it sinks into the ground.",
        expect="About 1 mm of penetration with the defaults (bar: 1 cm); with one sub-step about 12 mm. Two "
               "iterations change little here, because the sub-steps already repeat the solve four times a "
               "step.",
        camera=Camera((0.0, 14.0, 26.0), (0.0, 4.0, 0.0)),
        engine_refs=(CORE + "contact_solver.py: solve_contacts", CORE + "substeps.py: run_substeps"),
        check=check_pile,
        presets=(_preset("Two iterations", iterations=2), _preset("One sub-step", substeps=1),
                 _preset("Defaults", iterations=10, substeps=4)),
    ),
    Lesson(
        name="pyramid", title="S2: a pyramid that stands",
        concept="A pyramid of 210 cubes stands only if friction holds every cube and the solver converges. "
                "Warm starting begins each step from last step's impulses, so the solver starts close to the "
                "answer instead of from zero.",
        formula="drift = |x(t) − x(0)|, bar: under 2 cm",
        try_this="Turn warm starting off, or use the reference (one contact at a time) solver.",
        look_at="The top cube: it should not move.",
        expect="The pyramid stands with drifts under 2 cm (about 8 mm at the top); without warm starting the "
               "solver never catches up with the load and it collapses within seconds.",
        camera=Camera((0.0, 10.0, 34.0), (0.0, 9.0, 0.0)),
        engine_refs=(CORE + "contact_prepare.py: match_previous", CORE + "contact_solver.py: warm_start",
                     CORE + "contact_solver_reference.py: solve_point"),
        check=check_pyramid,
        presets=(_preset("No warm starting", warm_starting=False),
                 _preset("Reference solver", contact_solver="reference"),
                 _preset("Wide solver, warm started", contact_solver="wide", warm_starting=True)),
    ),
    Lesson(
        name="spheres", title="S3: four thousand spheres in a box",
        concept="Two spheres overlap when the distance between their centres is less than the sum of their "
                "radii; the contact normal points from one centre to the other. With 4000 spheres the broad "
                "phase decides what is fast: testing every pair would be eight million tests per step.",
        formula="overlap = rₐ + r_b − |c_b − cₐ|, n = (c_b − cₐ)/|c_b − cₐ|",
        try_this="Switch the broad phase between sweep-and-prune, grid and octree and watch the timings.",
        look_at="The pile in the container and the broad phase's time per step.",
        expect="The spheres settle into a layer with pair overlaps under 1 cm and none escaping.",
        camera=Camera((0.0, 26.0, 4.0), (0.0, 0.0, -0.5)),  # above the 15 m walls, or they hide the spheres
        engine_refs=(CORE + "rounded.py: sphere_sphere", CORE + "broadphase.py: sap_pairs",
                     CORE + "broadphase.py: grid_pairs"),
        check=check_spheres,
        presets=tuple(_preset(f"Broad phase: {m}", broadphase=m) for m in ("sap", "grid", "octree")),
    ),
    Lesson(
        name="bullet", title="S4: a bullet and a thin wall",
        concept="A simulation only sees the positions at the end of each step. A 10 cm sphere at 300 m/s "
                "moves 5 m per step, so without continuous collision detection (CCD) its positions fall "
                "before and behind the wall and it never overlaps it. With CCD the contact is made ahead of "
                "time, from the distance the body can travel in the step.",
        formula="tunnels if v·dt > wall thickness + 2r + contact margin",
        try_this="Toggle CCD with the presets, or run CCD off and on side by side (the last preset).",
        look_at="The bullet on the left of the wall; where it ends up.",
        expect="CCD on: it stops at the wall. CCD off: it passes through.",
        camera=Camera((-9.0, 5.0, 8.0), (-2.0, 2.0, 0.0)),
        engine_refs=(CORE + "ccd.py: speculative_margins", "sandbox/engine/world.py: World._margins"),
        check=check_bullet,
        presets=(*CCD_PRESETS, CCD_SIDE_BY_SIDE),
        labels=labels_bullet,
    ),
    Lesson(
        name="bounce", title="S5: one bounce",
        concept="The coefficient of restitution e is the ratio of separation to approach speed. A ball that "
                "falls from h hits at √(2gh) and leaves at e√(2gh), so it climbs back to e²·h. The pair's e "
                "comes from both bodies' values through a combine rule; the default is the product.",
        formula="h' = e²·h, e = eₐ·e_b (product rule)",
        try_this="Change the restitution combine rule; the predicted height follows.",
        look_at="The ball's first rebound against the e²·h mark.",
        expect="Ball and ground have e = 0.8: the product rule gives e = 0.64 and a rebound of 0.82 m from 2 "
               "m.",
        camera=Camera((0.0, 2.0, 7.0), (0.0, 1.3, 0.0)),
        engine_refs=(CORE + "restitution.py: combine_restitution",
                     CORE + "restitution.py: apply_restitution"),
        check=check_bounce,
        presets=RESTITUTION_PRESETS,
        labels=labels_bounce,
    ),
    Lesson(
        name="bounce row", title="The bounce line-up",
        concept="Five balls with e = 0, ¼, ½, ¾ and 1 fall 3 m onto a ground of e = 1, so each pair's e is "
                "the ball's. Kinetic energy after the impact is e² times the energy before, so each climbs "
                "back to e² of its drop.",
        formula="h' = e²·h: 0, 0.19, 0.75, 1.69, 3 m",
        try_this="Try the min and max combine rules: with the ground at e = 1, max makes every ball "
                 "perfectly elastic.",
        look_at="Each ball's top against its e²·h mark.",
        expect="The clay ball (e = 0) stays down, the e = 1 ball returns to 3 m.",
        camera=Camera((0.0, 2.3, 8.5), (0.0, 1.6, 0.0)),
        engine_refs=(CORE + "restitution.py: apply_restitution", "sandbox/ledger.py: RestitutionLedger"),
        check=check_bounce_row,
        presets=RESTITUTION_PRESETS,
        labels=labels_bounce_row,
    ),
    Lesson(
        name="cradle", title="Newton's cradle",
        concept="In an elastic collision of equal masses, momentum and kinetic energy are both conserved, "
                "and the only solution for a ball hitting one at rest is that they exchange velocities. Down "
                "the row the speed is passed on, one collision after another, until the last ball leaves.",
        formula="m·v = m·v₁' + m·v₂' and ½mv² = ½mv₁'² + ½mv₂'² ⇒ v₁' = 0, v₂' = v",
        try_this="Add air drag (linear damping) and watch the swing shrink.",
        look_at="The middle balls barely move; the last one leaves with the first one's speed.",
        expect="The last ball leaves at 95 % or more of the first ball's speed.",
        camera=Camera((0.0, 2.2, 6.5), (0.0, 2.0, 0.0)),
        engine_refs=(CORE + "joints.py: solve_distance_joints", CORE + "impulse.py: apply_impulse_pair",
                     CORE + "restitution.py: apply_restitution"),
        check=check_cradle,
        presets=(_preset("Air drag", linear_damping=0.5), _preset("No drag", linear_damping=0.0)),
        labels=labels_cradle,
    ),
    Lesson(
        name="incline", title="Friction on a ramp",
        concept="On a ramp of angle θ, gravity pulls a box down the slope with mg·sin θ and presses it on "
                "with mg·cos θ; friction can hold up to μ·mg·cos θ. The box stays if μ ≥ tan θ (the critical "
                "angle is θc = atan μ) and otherwise slides with a = g(sin θ − μ cos θ), whatever its mass. "
                "The pair's μ comes from both bodies through a combine rule: this scene uses min, and the "
                "ramp has μ = 1, so each box's μ is its label.",
        formula="a = g(sin θ − μ cos θ) if μ < tan θ, else a = 0; θc = atan μ",
        try_this="Switch the friction rule to geometric: the ramp's μ = 1 then raises every pair to √μ.",
        look_at="Which boxes slide, and their acceleration against the label.",
        expect="θ = 20° (tan θ = 0.364): μ = 0.1, 0.2, 0.3 slide at 2.43, 1.51 and 0.59 m/s²; 0.5 and 0.7 "
               "hold.",
        camera=Camera((1.0, 10.0, 12.0), (1.0, 4.0, 0.0)),
        engine_refs=(CORE + "friction.py: combine_friction", CORE + "contact_solver.py: friction_lanes"),
        check=check_incline,
        presets=tuple(_preset(f"Friction rule: {r}", friction_rule=r) for r in ("min", "geometric", "max")),
        labels=labels_incline,
    ),
    Lesson(
        name="dominoes", title="Dominoes",
        concept="A domino tips over once its centre of mass passes over its front edge; each falling domino "
                "strikes the next one above that point and gives it enough to tip. The energy comes from "
                "each domino's own drop, so the wave keeps going.",
        formula="tips when tilt > atan(thickness / height) = atan(0.1/1.0) = 5.7°",
        try_this="Change the friction rule: with less friction (product, μ = 0.3) the wave still runs, a "
                 "little faster, because tipping needs far less friction than the dominoes have.",
        look_at="The wave along the curve.",
        expect="The last domino falls about 6 s after the first (6.2 s measured; 6.0 s under the product "
               "rule).",
        camera=Camera((-3.0, 7.0, 11.0), (-3.0, 0.0, 1.0)),
        engine_refs=(CORE + "polyhedra.py: box_box", CORE + "contact_solver.py: solve_contacts"),
        check=check_dominoes,
        presets=tuple(_preset(f"Friction rule: {r}", friction_rule=r) for r in ("geometric", "product")),
    ),
    Lesson(
        name="tennis racket", title="The tennis-racket flip",
        concept="A rigid body spins stably about the axes of its largest and smallest moment of inertia but "
                "not about the middle one: a tiny wobble grows, and the body flips over periodically while "
                "its angular momentum and energy stay constant (the Dzhanibekov effect). The integrator must "
                "include the gyroscopic term ω × Iω to show it.",
        formula="I₁ω̇₁ = (I₂ − I₃)ω₂ω₃ (and cyclic); here I_x < I_y < I_z",
        try_this="Watch which face points up: it turns over, spins a while, and turns back, again and again; "
                 "let it run with damping off (the scene sets it so).",
        look_at="The box's face turning over every few seconds.",
        expect="A flip within 10 s, with kinetic energy kept within 1 %.",
        camera=Camera((0.0, 3.5, 5.0), (0.0, 3.0, 0.0)),
        engine_refs=(CORE + "integrate.py: integrate_velocities",),
        check=check_tennis_racket,
    ),
    Lesson(
        name="sphere-sphere", title="Sphere against sphere",
        concept="The simplest collision test: two spheres touch when their centres are closer than the sum "
                "of the radii. The normal runs along the line of centres, so for frictionless balls the "
                "impulse does too. Equal elastic balls swap velocities head-on, and leave at right angles "
                "when they hit off-centre.",
        formula="|c_b − cₐ| < rₐ + r_b; equal masses, e = 1: v₁'·v₂' = 0 (90°)",
        try_this="Pause just before the impacts and look at the contact normal.",
        look_at="The angle between the two outgoing balls of the glancing pair.",
        expect="Head-on: 0 and 3 m/s. Glancing: 90° apart, energy kept.",
        camera=Camera((0.0, 5.5, 7.5), (0.0, 2.0, 0.0)),
        engine_refs=(CORE + "rounded.py: sphere_sphere", CORE + "impulse.py: apply_impulse_pair"),
        check=check_sphere_sphere,
        labels=labels_sphere_sphere,
    ),
    Lesson(
        name="sphere-box", title="Sphere against AABB and OBB",
        concept="The closest point of a box to a sphere's centre is the centre clamped to the box's extents; "
                "the sphere touches if that point is within its radius. For an axis-aligned box (AABB) the "
                "clamp is direct; for an oriented box (OBB) the centre is first taken into the box's frame. "
                "Locking a box's rotation keeps it an AABB.",
        formula="q = clamp(Rᵀ(c − x), −h, h); touching if |Rq + x − c| < r",
        try_this="Watch the two boxes after the hits; pause and look at the contact normal on each.",
        look_at="The locked box only slides; the free one slides and spins.",
        expect="Both lanes keep their momentum; only the free box turns.",
        camera=Camera((0.0, 5.5, 7.5), (0.0, 2.0, 0.0)),
        engine_refs=(CORE + "bounding_volumes.py: sphere_aabb", CORE + "rounded.py: sphere_box",
                     CORE + "integrate.py: integrate_velocities"),
        check=check_sphere_box,
        labels=labels_sphere_box,
    ),
    Lesson(
        name="box-box", title="AABB against OBB: separating axes",
        concept="Two convex shapes are apart exactly when some axis separates their projections. Two AABBs "
                "need only the three world axes. Two OBBs need fifteen: the three face normals of each and "
                "the nine cross products of their edges. The axis of least overlap gives the contact normal.",
        formula="separated on L if |T·L| > Σ aᵢ|Aᵢ·L| + Σ bᵢ|Bᵢ·L|",
        try_this="Pause as each box touches its pedestal and compare their contact points.",
        look_at="The turned box lands on a corner or edge and falls onto a face.",
        expect="Both come to rest on their pedestals without sinking into them.",
        camera=Camera((0.0, 3.0, 8.0), (0.0, 1.2, 0.0)),
        engine_refs=(CORE + "polyhedra.py: box_box",),
        check=check_box_box,
        labels=labels_box_box,
    ),
    Lesson(
        name="capsules", title="Capsules: closest points of segments",
        concept="A capsule is every point within r of a segment, so two capsules touch when the closest "
                "points of their segments are closer than rₐ + r_b; the normal joins those points. Against a "
                "box or the ground, the segment is clipped against the box's face.",
        formula="d = |closest(segment A, segment B)|; touching if d < rₐ + r_b",
        try_this="Drop more capsules by hand across the ones lying down.",
        look_at="The crossed pair touches at a single point; the lying one on the ground has two.",
        expect="The upright capsule topples; the others come to rest without overlapping.",
        camera=Camera((0.5, 3.0, 8.0), (0.5, 0.8, 0.0)),
        engine_refs=(CORE + "rounded.py: closest_segment_segment", CORE + "rounded.py: capsule_capsule",
                     CORE + "rounded.py: box_capsule"),
        check=check_capsules,
    ),
    Lesson(
        name="hulls", title="Convex polyhedra: SAT and clipping",
        concept="For two convex polyhedra the candidate separating axes are each face normal and the cross "
                "products of edge pairs (only the pairs that can meet, found on the Gauss map). If the best "
                "axis is a face, the other body's most anti-parallel face is clipped against the reference "
                "face's side planes (Sutherland–Hodgman) to give the contact points.",
        formula="separation on axis L = max over A of (L·a) compared with min over B of (L·b)",
        try_this="Drop more hulls by hand on top of the pile.",
        look_at="How the hulls settle onto faces.",
        expect="All come to rest without overlapping the ground or each other.",
        camera=Camera((0.0, 3.5, 8.0), (0.0, 1.0, 0.0)),
        engine_refs=(CORE + "polyhedra.py: hull_hull", CORE + "clipping.py: clip_to_face"),
        check=check_hulls,
    ),
    Lesson(
        name="broadphase", title="The broad phase",
        concept="Testing every pair costs n(n−1)/2 tests. Sweep-and-prune sorts the boxes along an axis and "
                "only tests those whose intervals overlap; a uniform grid only tests bodies sharing a cell; "
                "an octree only tests bodies in the same or nested cells. All must find the same pairs.",
        formula="brute force: n(n−1)/2 = 320 400 tests for 800 bodies and the ground",
        try_this="Switch the broad phase with the presets.",
        look_at="The pair count (unchanged) and the broad phase's time (it changes).",
        expect="The same pairs from every method; brute force is by far the slowest.",
        camera=Camera((0.0, 18.0, 27.0), (0.0, 1.0, 0.0)),
        engine_refs=(CORE + "broadphase.py: brute_pairs", CORE + "broadphase.py: sap_pairs",
                     CORE + "broadphase.py: grid_pairs", CORE + "broadphase.py: octree_pairs"),
        check=check_broadphase,
        presets=tuple(_preset(f"Broad phase: {m}", broadphase=m) for m in ("brute", "sap", "grid", "octree")),
    ),
    Lesson(
        name="manifold", title="The contact manifold",
        concept="One contact point cannot hold a box flat: the manifold needs the whole contact region. A "
                "face on a face is clipped to a polygon (kept to at most 4 points), an edge on a face gives "
                "a segment (2 points), a corner gives 1.",
        formula="face: 4 points, edge: 2, corner: 1",
        try_this="Pause at the first step and draw the contact points.",
        look_at="The points under each cube.",
        expect="4, 2 and 1 points; the cubes on an edge and a corner then fall onto a face.",
        camera=Camera((0.0, 2.5, 7.0), (0.0, 0.6, 0.0)),
        engine_refs=(CORE + "polyhedra.py: box_box", CORE + "clipping.py: reduce_to_four"),
        check=check_manifold,
        labels=labels_manifold,
    ),
    Lesson(
        name="responses", title="Three ways to respond to a collision",
        concept="Impulses change velocities so that the contact stops approaching (with angular terms in the "
                "effective mass). Projection moves the bodies apart by the overlap, shared by inverse mass, "
                "and leaves velocities to follow. Penalty springs push with a force k·d − c·vₙ, so bodies "
                "sink in until the spring holds them. The world has one response setting, so switch it with "
                "the presets, or run all three side by side in lanes (the last preset).",
        formula="j = −(1+e)·vₙ / (1/mₐ + 1/m_b + angular terms); projection: Δx = d·(1/m)/(Σ1/m); F = k·d − "
                "c·vₙ",
        try_this="Switch between impulse, projection and penalty, and reset the scene after each.",
        look_at="How deep the falling ball sinks and whether the stack stays put.",
        expect="Impulses: the ball stops dead and the stack stands still. Penalty: the ball sinks further "
               "(millimetres) before the spring holds it, and the stack creeps by a few centimetres. "
               "Projection: the ball stays on the ground but its velocity keeps growing as in free fall "
               "(−g·t), because nothing removes it, and the stack sinks and slides apart.",
        camera=Camera((0.0, 2.5, 9.0), (0.0, 1.2, 0.0)),
        engine_refs=(CORE + "impulse.py: apply_impulse_pair", CORE + "projection.py: project_contacts",
                     CORE + "penalty.py: penalty_contacts"),
        check=check_responses,
        presets=(*RESPONSE_PRESETS, RESPONSES_SIDE_BY_SIDE),
        labels=labels_responses,
    ),
    Lesson(
        name="restitution", title="Restitution: materials and combine rules",
        concept="Real materials bounce differently: a steel ball on steel keeps most of its speed, clay "
                "none. The engine stores e per body and combines a pair's two values with a rule; on a "
                "perfectly elastic ground (e = 1) the product rule gives the ball's own e. The last ball (e "
                "= 0.9) falls on a pad of e = 0.5, and its bounce depends on the rule: product 0.45, min "
                "0.5, max 0.9, average 0.7.",
        formula="h' = e²·h, e = rule(eₐ, e_b)",
        try_this="Switch the combine rule with the presets and watch only the last ball's mark move.",
        look_at="Each rebound against its e²·h mark.",
        expect="Steel 1.62 m, rubber 1.28 m, tennis 0.98 m, clay 0 from 2 m; the pad ball by the rule.",
        camera=Camera((0.0, 2.2, 10.0), (0.0, 1.3, 0.0)),
        engine_refs=(CORE + "restitution.py: combine_restitution",
                     CORE + "restitution.py: apply_restitution"),
        check=check_restitution,
        presets=RESTITUTION_PRESETS,
        labels=labels_restitution,
    ),
    Lesson(
        name="head-on", title="Head-on collisions: momentum",
        concept="In every collision the total momentum is conserved; restitution decides how much of the "
                "approach speed comes back as separation speed. Solving both for a ball m₁ at v hitting m₂ "
                "at rest gives the final velocities. With e = 1 kinetic energy is kept; with e = 0 the balls "
                "move together at m₁v/(m₁+m₂).",
        formula="v₁' = (m₁ − e·m₂)v/(m₁+m₂), v₂' = m₁(1+e)v/(m₁+m₂)",
        try_this="Pause after the impacts and read the velocities against the labels.",
        look_at="Light on heavy bounces back; heavy on light follows the light ball.",
        expect="From 4 m/s: 0/4, −2/2, 2/6, 2/2 and 1/1 m/s.",
        camera=Camera((0.0, 6.5, 7.5), (0.0, 1.0, 0.0)),
        engine_refs=(CORE + "impulse.py: apply_impulse_pair", CORE + "restitution.py: apply_restitution"),
        check=check_head_on,
        presets=(_preset("Reference solver", contact_solver="reference"),
                 _preset("Wide solver", contact_solver="wide")),
        labels=labels_head_on,
    ),
    Lesson(
        name="snooker", title="A snooker break",
        concept="The cue ball's momentum spreads through the pack in a cascade of nearly elastic collisions; "
                "the total stays the cue ball's, less what the cloth's friction takes (at most μ·m·g per "
                "sliding ball), until the cushions act. Racked tight, the pack takes the blow almost as one "
                "body heavier than the cue ball, so the cue ball comes back; its forward spin then grips the "
                "cloth and slows it. (With the balls apart and struck one after another, as in the cradle, a "
                "full hit would stop it dead.)",
        formula="Σ mᵢvᵢ after = m·v_cue before",
        try_this="Try the min and max restitution rules: ball on ball stays 0.95 instead of 0.95² = 0.90, "
                 "and the cushions give 0.7 or 0.95.",
        look_at="The spread of the pack and the cue ball after the hit.",
        expect="Momentum across the break kept within the cloth's friction (a few %); every ball stays on "
               "the table.",
        camera=Camera((0.0, 3.5, 2.8), (0.0, 0.0, 0.0)),
        engine_refs=(CORE + "impulse.py: apply_impulse_pair", CORE + "friction.py: combine_friction"),
        check=check_snooker,
        presets=(_preset("Restitution rule: product", restitution_rule="product"),
                 _preset("Restitution rule: min", restitution_rule="min"),
                 _preset("Restitution rule: max", restitution_rule="max")),
    ),
    Lesson(
        name="tunnelling", title="Tunnelling and CCD",
        concept="Bullets at 5 to 300 m/s fly at a 10 cm wall. Without continuous collision detection a "
                "contact is made only within a capped margin of the wall, so a bullet whose step is longer "
                "than the wall, its own diameter and that margin together can jump from in front of the wall "
                "to behind it. With CCD the margin grows with the distance travelled in the step, and every "
                "bullet is caught. The last preset runs CCD off and on side by side, in two lanes.",
        formula="tunnels if v·dt > thickness + 2r + margin (0.1 + 0.2 + 0.25 m)",
        try_this="Toggle CCD with the presets and reset, or compare both side by side (the last preset).",
        look_at="Which bullets end up behind the wall.",
        expect="CCD on: all stop. CCD off: 60, 150 and 300 m/s pass; 5 and 20 m/s stop. Each bullet starts "
               "where its whole steps jump over the wall if they can (the worst case): started elsewhere, a "
               "fast bullet may still be caught when a step happens to end inside the wall or just in front "
               "of it.",
        camera=Camera((-10.0, 6.0, 7.0), (-2.0, 1.5, 0.0)),
        engine_refs=(CORE + "ccd.py: speculative_margins", "sandbox/engine/world.py: World._margins"),
        check=check_tunnelling,
        presets=(*CCD_PRESETS, CCD_SIDE_BY_SIDE),
        labels=labels_tunnelling,
    ),
    Lesson(
        name="stacking", title="Stacking and sleeping",
        concept="Stacks test the solver: each contact's impulse depends on all the ones above it, and a "
                "heavy body on a light one (mass ratio 100) makes iterations converge slowly. Once an island "
                "of touching bodies has stayed below the speed thresholds for half a second it falls asleep "
                "and costs nothing until something wakes it.",
        formula="asleep when |v| < 0.05 m/s and |ω|·r < 0.05 m/s for 0.5 s",
        try_this="Use one sub-step or two iterations, or turn sleeping off and compare the step time.",
        look_at="The heavy-on-light stack and the card house; bodies that turn to their sleeping colour.",
        expect="Everything stands and is asleep within 5 s. The pyramid, wall and cards move by millimetres; "
               "the heavy-on-light stack settles about 1 cm per contact, since soft contacts under a light "
               "body carrying a hundred times its mass give way more. With one sub-step it collapses.",
        camera=Camera((-1.0, 4.0, 11.0), (-1.0, 1.5, 0.0)),
        engine_refs=(CORE + "islands.py: update_sleep", CORE + "contact_solver.py: solve_contacts"),
        check=check_stacking,
        presets=(_preset("One sub-step", substeps=1), _preset("Two iterations", iterations=2),
                 _preset("Sleeping off", sleeping=False)),
        labels=labels_stacking,
    ),
    Lesson(
        name="raycasts", title="Ray casts",
        concept="A ray o + t·d (d a unit vector) hits a sphere of centre p where |o + t·d − p| = r (a "
                "quadratic in t), a box where it is inside all three slabs, a convex hull where it has "
                "entered every face plane: t_enter is the largest crossing of the planes it enters, t_exit "
                "the smallest of those it leaves, and it hits if t_enter ≤ t_exit. The broad phase's "
                "structure skips the shapes the ray cannot reach.",
        formula="sphere: t = −b − √(b² − k), b = d·(o − p), k = |o − p|² − r²; hull: max t_enter ≤ min "
                "t_exit",
        try_this="Cast rays with the mouse over the field.",
        look_at="The hit distance labelled above each shape.",
        expect="Rays straight down hit each shape's top at the distance the formula gives.",
        camera=Camera((0.0, 8.0, 11.0), (0.0, 0.5, 0.0)),
        engine_refs=(CORE + "raycast.py: ray_sphere", CORE + "raycast.py: ray_box",
                     CORE + "raycast.py: ray_capsule",
                     CORE + "raycast.py: ray_hull", "sandbox/engine/world.py: World.raycast"),
        check=check_raycasts,
        labels=labels_raycasts,
    ),
    Lesson(
        name="events", title="Collision events",
        concept="After each step the engine compares the touching pairs with the previous step's: a new pair "
                "is a begin event, a pair gone is an end event. Dropped from h, a ball first touches the "
                "ground after √(2h/g).",
        formula="t_first = √(2h/g): 0.45, 0.64, 0.78, 0.90 s",
        try_this="Watch the bodies flash on each begin event.",
        look_at="The first flash of each ball against its label.",
        expect="Each ball's first begin event within a step of √(2h/g); begins and ends alternate.",
        camera=Camera((0.0, 2.5, 9.0), (0.0, 2.0, 0.0)),
        engine_refs=(CORE + "events.py: touching_keys", CORE + "events.py: diff_touching",
                     "sandbox/engine/world.py: World.events"),
        check=check_events,
        labels=labels_events,
    ),
    Lesson(
        name="spinning-top", title="A spinning top",
        concept="Gravity's torque on a tilted top is horizontal. For a fast top it turns the angular "
                "momentum sideways instead of tipping it, so the axis precesses around the vertical; a top "
                "that does not spin simply falls.",
        formula="precession rate Ω ≈ m·g·l / (I₃·ω)",
        try_this="Reset and watch from above: the spinning top's axis traces a circle (precession) while the "
                 "other one falls.",
        look_at="The spinning top's axis circling; the other one falling.",
        expect="After 5 s the spinning top is still up: its lean shrinks from 10° to a few degrees, because "
               "friction at its blunt tip raises it, as it raises a real top. The other one lies on its side "
               "(58°). The formula holds for a fast top: this one nutates too much for its precession rate "
               "to be measured against it.",
        camera=Camera((0.0, 2.0, 5.0), (0.0, 0.5, 0.0)),
        engine_refs=(CORE + "integrate.py: integrate_velocities",),
        check=check_spinning_top,
        labels=labels_spinning_top,
    ),
)

LESSONS_BY_NAME: dict[str, Lesson] = {lesson.name: lesson for lesson in LESSONS}


# ----------------------------------------------------------------------------------------------------
# the student's pages


def engine_link(ref: str, depth: int = 2) -> str:
    """A Markdown link from a page ``depth`` folders below the repository root to the file of an engine
    reference ``"path: function"``."""
    path, _, func = ref.partition(": ")
    return f"[`{path}`]({'../' * depth}{path}): `{func}`"


def lesson_markdown(lesson: Lesson) -> str:
    """The student's page for ``lesson`` (``docs/lessons/<name>.md``)."""
    lines = [f"# {lesson.title}", "", f"Scene: `{lesson.name}` (`python -m sandbox run "
             f"{lesson.name.replace(' ', '-')}` runs it headless). [All lessons](index.md)", "",
             "## The idea", "", lesson.concept, "", "## The formula", "", f"    {lesson.formula}", "",
             "## Try this", "", lesson.try_this, ""]
    if lesson.presets:
        lines += ["Presets (one click in the Lesson window):", ""]
        for p in lesson.presets:
            if "compare" in p:  # lanes side by side
                lanes = "; ".join(f"{lane['label']}: "
                                  + ", ".join(f"`{k} = {v!r}`" for k, v in lane["settings"].items())
                                  for lane in p["compare"])
                lines.append(f"- {p['label']} (A/B lanes, stepping together): {lanes}")
                continue
            settings = ", ".join(f"`{k} = {v!r}`" for k, v in p["settings"].items())
            lines.append(f"- {p['label']}: {settings}")
        lines.append("")
    lines += ["## What to look at", "", lesson.look_at, "", "## What to expect", "", lesson.expect, "",
              "The scene's own check (run by `tests/test_lessons.py`) measures this against the formula.", "",
              "## Where the engine computes it", ""]
    lines += [f"- {engine_link(r)}" for r in lesson.engine_refs]
    shot = lesson.doc_page.removesuffix(".md") + ".png"  # made by the app at 1280x720, Lesson window shown
    lines += ["", "## Screenshot", "",
              f"![The {lesson.name} scene in the app, with its Lesson window]({shot})", ""]
    return "\n".join(lines)


def index_markdown() -> str:
    """The index page of the lessons (``docs/lessons/index.md``)."""
    lines = ["# Lessons", "",
             "Each built-in scene of the sandbox teaches one idea of rigid-body simulation. Every page gives "
             "the idea, its formula, what to try, what to expect and where the engine computes it. The pages "
             "assume the introductory material: collision detection of spheres, AABBs, OBBs and convex "
             "polyhedra (SAT), clipping, impulses with angular terms, restitution and penalty springs.", "",
             "Load a scene from the panel's scene list (or run it headless with "
             "`python -m sandbox run NAME`). Its lesson sets the camera, draws labels in the scene (the "
             "predicted heights, the effective friction, the CCD setting, ...) and offers presets: one-click "
             "world settings that change what the scene shows. Reset the scene after a preset to watch it "
             "from the start. Each lesson also has its own check, an experiment that measures the scene "
             "against the formula; `tests/test_lessons.py` runs them all.", "",
             "| scene | lesson | formula |", "|---|---|---|"]
    for lesson in LESSONS:
        formula = lesson.formula.replace("|", "\\|")  # a bare | would end the table cell
        lines.append(f"| `{lesson.name}` | [{lesson.title}]({lesson.doc_page}) | {formula} |")
    lines.append("")
    return "\n".join(lines)


def write_docs(folder: str | Path) -> list[Path]:
    """Write the index and every lesson's page into ``folder``; return the paths written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "index.md"]
    written[0].write_text(index_markdown(), encoding="utf-8")
    for lesson in LESSONS:
        path = out / lesson.doc_page
        path.write_text(lesson_markdown(lesson), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_docs(sys.argv[1] if len(sys.argv) > 1 else "docs/lessons"):
        print(p)
