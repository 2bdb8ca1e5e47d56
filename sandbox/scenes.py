"""Scene builders, shared by the app, the tests and the benchmarks. They use only the public engine API.

Each builder fills an empty ``World`` and returns the dynamic bodies it made, in creation order. The
standard scenes S1–S5 follow ``shared/SCENES.md`` (there z is up; here y is up, so the harness's (x, y, z)
is our (x, z, −y)).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .engine import Body, Box, Capsule, ConvexHull, Sphere, World

FRICTION = 0.5


def ground(world: World, half: float = 50.0, restitution: float = 0.0, friction: float = FRICTION) -> Body:
    """A static slab whose top face is the plane y = 0."""
    return world.add_body(Box((half, 0.5, half)), position=(0.0, -0.5, 0.0), mass=0.0,
                          restitution=restitution, friction=friction)


def grid_positions(n: int, per_row: int, spacing: float, y0: float, jitter: float,
                   seed: int = 0) -> np.ndarray:
    """Layers of a per_row × per_row grid centred over the origin, bottom layer at height y0, each point
    shifted sideways by a seeded uniform offset in [−jitter, jitter] (the harness's ``grid``, y up)."""
    k = np.arange(n)
    ix, iz, iy = k % per_row, (k // per_row) % per_row, k // per_row**2
    pos = np.stack([(ix - (per_row - 1) / 2) * spacing, y0 + iy * spacing,
                    -(iz - (per_row - 1) / 2) * spacing], axis=1)
    off = np.random.default_rng(seed).uniform(-jitter, jitter, (n, 2))
    pos[:, 0] += off[:, 0]
    pos[:, 2] -= off[:, 1]
    return pos


def s1_pile(world: World, n: int = 1000, jitter: float = 0.05) -> list[Body]:
    """S1: n bodies, alternating unit cubes and spheres of radius 0.5, on a cubic grid of spacing 1.2 m with
    the bottom layer at height 1. The ground is 400 m across, as in the harness: spheres that roll off the
    pile keep rolling for a long way."""
    ground(world, half=200.0)
    side = round(n ** (1 / 3))
    side += side**3 < n
    out = []
    for i, p in enumerate(grid_positions(n, side, 1.2, 1.0, jitter)):
        shape = Box((0.5, 0.5, 0.5)) if i % 2 == 0 else Sphere(0.5)
        out.append(world.add_body(shape, position=p, mass=1.0, friction=FRICTION))
    return out


def s2_pyramid(world: World, base: int = 20) -> list[Body]:
    """S2: a pyramid of unit cubes in one vertical plane, rows touching, 1 mm gaps within a row."""
    ground(world)
    out = []
    cube = Box((0.5, 0.5, 0.5))
    for row in range(base):
        count = base - row
        for i in range(count):
            out.append(world.add_body(cube, position=((i - (count - 1) / 2) * 1.001, 0.5 + row, 0.0),
                                      mass=1.0, friction=FRICTION))
    return out


def s3_spheres(world: World, n: int = 4000, jitter: float = 0.05, radius: float = 0.25) -> list[Body]:
    """S3: spheres dropped from a jittered grid (spacing 0.6 m) into a 10 × 10 m box of four static walls."""
    ground(world)
    h, t, wall_h = 5.0, 0.5, 15.0
    for sx, sz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        half = (t, wall_h / 2, h + 2 * t) if sx else (h + 2 * t, wall_h / 2, t)
        world.add_body(Box(half), position=(sx * (h + t), wall_h / 2, sz * (h + t)), mass=0.0,
                       friction=FRICTION)
    pos = grid_positions(n, int(10.0 // 0.6), 0.6, 0.5, jitter)
    pos[:, [0, 2]] = pos[:, [0, 2]].clip(-(h - radius), h - radius)
    ball = Sphere(radius)
    return [world.add_body(ball, position=p, mass=1.0, friction=FRICTION) for p in pos]


def s4_bullet(world: World, gap: float = 7.5, speed: float = 300.0) -> list[Body]:
    """S4: a sphere of radius 0.1 at ``speed`` m/s towards a static wall 0.1 m thick, no gravity; its centre
    starts ``gap`` before the wall's front face at x = 0."""
    world.gravity = (0.0, 0.0, 0.0)
    world.add_body(Box((0.05, 2.0, 2.0)), position=(0.05, 2.0, 0.0), mass=0.0, friction=FRICTION)
    return [world.add_body(Sphere(0.1), position=(-gap, 2.0, 0.0), velocity=(speed, 0.0, 0.0),
                           friction=FRICTION)]


def s5_bounce(world: World, restitution: float = 0.8, height: float = 2.0) -> list[Body]:
    """S5: a sphere of radius 0.5 dropped with its bottom ``height`` above the ground, both of restitution
    ``restitution``."""
    ground(world, restitution=restitution)
    return [world.add_body(Sphere(0.5), position=(0.0, height + 0.5, 0.0), restitution=restitution,
                           friction=FRICTION)]


def bounce_row(world: World) -> list[Body]:
    """Five balls of restitution 0, ¼, ½, ¾ and 1 dropped side by side from 3 m onto a ground of e = 1:
    each rebounds to e²·h under the product rule."""
    ground(world, restitution=1.0)
    return [world.add_body(Sphere(0.4), position=(x, 3.4, 0.0), restitution=e)
            for x, e in zip(np.linspace(-4, 4, 5), (0.0, 0.25, 0.5, 0.75, 1.0), strict=True)]


def newtons_cradle(world: World, balls: int = 5, radius: float = 0.25, length: float = 2.0,
                   gap: float = 0.04, lift_deg: float = 35.0) -> list[Body]:
    """Newton's cradle: ``balls`` spheres of restitution 1 hanging on rods from fixed points; the first is
    lifted by ``lift_deg`` and let go. The small gaps make the collisions happen one after another, as
    in the real toy, so momentum travels down the row and the last ball leaves."""
    ground(world)
    top = length + radius + 1.0
    out = []
    step = 2 * radius + gap
    for i in range(balls):
        x = (i - (balls - 1) / 2) * step
        pivot = np.array([x, top, 0.0])
        pos = pivot - (0.0, length, 0.0)
        if i == 0:
            a = math.radians(lift_deg)
            pos = pivot + length * np.array([-math.sin(a), -math.cos(a), 0.0])
        b = world.add_body(Sphere(radius), position=pos, restitution=1.0, friction=0.0)
        world.add_distance_joint(b, None, anchor_a=pos, anchor_b=pivot, length=length)
        out.append(b)
    world.linear_damping = 0.0
    world.angular_damping = 0.0
    return out


def incline(world: World, angle_deg: float = 20.0) -> list[Body]:
    """A ramp of ``angle_deg`` with boxes of friction 0.1 … 0.7: those with μ < tan θ slide, the rest stay."""
    ground(world)
    a = math.radians(angle_deg)
    q = (0.0, 0.0, math.sin(a / 2), math.cos(a / 2))
    world.add_body(Box((6.0, 0.25, 4.0)), position=(0.0, 3.0, 0.0), orientation=q, mass=0.0, friction=1.0)
    n = np.array([-math.sin(a), math.cos(a), 0.0])
    along = np.array([math.cos(a), math.sin(a), 0.0])
    out = []
    for k, mu in enumerate((0.1, 0.2, 0.3, 0.5, 0.7)):
        p = np.array([0.0, 3.0, 0.0]) + n * (0.25 + 0.3) + along * 3.0 + np.array([0, 0, -3.0 + 1.5 * k])
        out.append(world.add_body(Box((0.3, 0.3, 0.3)), position=p, orientation=q, friction=mu))
    return out


def dominoes(world: World, count: int = 24) -> list[Body]:
    """A curved row of dominoes, each facing along the curve; the first one is tipped over."""
    ground(world)
    out = []
    r = 6.0
    for i in range(count):
        t = i / (count - 1) * math.pi * 0.9
        yaw = -(t + math.pi / 2)  # turns the thin local x axis onto the curve's tangent
        q = (0.0, math.sin(yaw / 2), 0.0, math.cos(yaw / 2))
        out.append(world.add_body(Box((0.05, 0.5, 0.25)), position=(r * math.cos(t) - r / 2, 0.5,
                                                                    r * math.sin(t) - 2.0),
                                  orientation=q, friction=0.6))
    tangent = np.array([0.0, 0.0, 1.0])  # the curve's direction at the first domino
    out[0].angular_velocity = 2.0 * np.cross((0.0, 1.0, 0.0), tangent)
    return out


def tennis_racket(world: World) -> list[Body]:
    """A box spinning about its intermediate axis in free fall: the Dzhanibekov (tennis-racket) flip."""
    world.gravity = (0.0, 0.0, 0.0)
    b = world.add_body(Box((0.8, 0.4, 0.1)), position=(0.0, 3.0, 0.0), angular_velocity=(0.01, 6.0, 0.0))
    world.linear_damping = 0.0
    world.angular_damping = 0.0
    return [b]


def random_hull_points(rng: np.random.Generator, scale: float = 0.5, count: int = 14) -> np.ndarray:
    """Points for a pleasant random convex hull: directions on a sphere, squashed a little per axis."""
    p = rng.normal(size=(count, 3))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    return p * rng.uniform(0.7, 1.0, size=3) * scale


def showcase(world: World) -> list[Body]:
    """The default scene: a box tower, a small pyramid, capsules, hulls and balls of every restitution."""
    ground(world)
    out = []
    rng = np.random.default_rng(7)
    cube = Box((0.5, 0.5, 0.5))
    for k in range(8):
        out.append(world.add_body(cube, position=(-5.0, 0.5 + k * 1.0, -2.0)))
    for row in range(6):
        for i in range(6 - row):
            out.append(world.add_body(Box((0.4, 0.4, 0.4)),
                                      position=(1.0 + (i - (5 - row) / 2) * 0.82, 0.4 + row * 0.8, -3.0)))
    for k in range(6):
        q = (0.0, 0.0, math.sin(0.7), math.cos(0.7)) if k % 2 else (0.0, 0.0, 0.0, 1.0)
        out.append(world.add_body(Capsule(0.25, 0.5), position=(4.0 + 0.7 * (k % 3), 1.0 + 1.2 * k, 1.5),
                                  orientation=q))
    for k in range(6):
        hull = ConvexHull(random_hull_points(rng, 0.6))
        out.append(world.add_body(hull, position=(-2.5 + 1.4 * (k % 3), 2.0 + 1.5 * (k // 3), 2.5)))
    for k, e in enumerate((0.0, 0.3, 0.6, 0.9)):
        out.append(world.add_body(Sphere(0.35), position=(-1.5 + 1.0 * k, 4.0, 5.0), restitution=e))
    return out


def empty(world: World) -> list[Body]:
    """Just the ground, for spawning by hand."""
    ground(world)
    return []


SCENES: dict[str, Callable[[World], list[Body]]] = {
    "showcase": showcase,
    "empty": empty,
    "pile": s1_pile,
    "pyramid": s2_pyramid,
    "spheres": s3_spheres,
    "bullet": s4_bullet,
    "bounce": s5_bounce,
    "bounce row": bounce_row,
    "cradle": newtons_cradle,
    "incline": incline,
    "dominoes": dominoes,
    "tennis racket": tennis_racket,
}
DEFAULT_SCENE = "showcase"
