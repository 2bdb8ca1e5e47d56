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


RAMP_ANGLE = 20.0  # degrees: tan 20° = 0.364 lies between the boxes' μ = 0.3 and 0.5
INCLINE_MUS = (0.1, 0.2, 0.3, 0.5, 0.7)


def ramp_frame(angle_deg: float) -> tuple[tuple[float, float, float, float], np.ndarray, np.ndarray]:
    """The ramp's orientation (a turn of ``angle_deg`` about z), its top face's normal and its downhill
    direction (the top face tilts down towards −x)."""
    a = math.radians(angle_deg)
    q = (0.0, 0.0, math.sin(a / 2), math.cos(a / 2))
    return q, np.array([-math.sin(a), math.cos(a), 0.0]), np.array([-math.cos(a), -math.sin(a), 0.0])


def incline(world: World, angle_deg: float = RAMP_ANGLE) -> list[Body]:
    """A ramp of ``angle_deg`` with boxes of friction 0.1 … 0.7, in the order of ``INCLINE_MUS``.

    The ramp's μ is 1 and the scene sets ``friction_rule = "min"``, so each pair's effective μ is the box's
    own (its label): the boxes with μ < tan θ slide with a = g(sin θ − μ cos θ), the others stay. (Under the
    default geometric rule the pair's μ would be √μ_box instead, and only the μ = 0.1 box would slide.)"""
    ground(world)
    world.friction_rule = "min"
    q, n, down = ramp_frame(angle_deg)
    centre = np.array([0.0, 4.0, 0.0])
    world.add_body(Box((8.0, 0.25, 4.0)), position=centre, orientation=q, mass=0.0, friction=1.0)
    out = []
    for k, mu in enumerate(INCLINE_MUS):
        # resting on the top face (touching, not dropped), 5 m up the slope from the ramp's middle
        p = centre + n * (0.25 + 0.3) - down * 5.0 + np.array([0.0, 0.0, -3.0 + 1.5 * k])
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


def no_gravity(world: World) -> None:
    """Free space: no gravity and no damping, so momentum and energy are conserved exactly between
    impacts and what a student measures is what the formulas predict."""
    world.gravity = (0.0, 0.0, 0.0)
    world.linear_damping = 0.0
    world.angular_damping = 0.0


def quat_axis_angle(axis, angle: float) -> tuple[float, float, float, float]:
    """The unit quaternion (x, y, z, w) of a turn by ``angle`` radians about ``axis``."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    s = math.sin(angle / 2)
    return (float(a[0] * s), float(a[1] * s), float(a[2] * s), math.cos(angle / 2))


def sphere_sphere(world: World, speed: float = 3.0) -> list[Body]:
    """Two pairs of equal, perfectly elastic, frictionless spheres in free space. Head on (lane z = −2),
    the moving ball stops and the other leaves with its velocity; glancing (lane z = +2, centres offset
    by one radius), the two leave at right angles. Returns [mover, target] per lane."""
    no_gravity(world)
    out = []
    for z, offset in ((-2.0, 0.0), (2.0, 0.5)):
        out.append(world.add_body(Sphere(0.5), position=(-3.0, 2.0, z + offset), velocity=(speed, 0.0, 0.0),
                                  restitution=1.0, friction=0.0))
        out.append(world.add_body(Sphere(0.5), position=(0.0, 2.0, z), restitution=1.0, friction=0.0))
    return out


def sphere_box(world: World, speed: float = 3.0) -> list[Body]:
    """Sphere against AABB and against OBB: two equal boxes in free space, each struck off-centre by a ball.
    The first box's rotation is locked, so it stays axis-aligned (an AABB: the sphere–box test only clamps
    the centre to its extents); the second turns after the hit (an OBB: the test first moves the sphere
    into the box's frame). Returns [locked box, ball, free box, ball]."""
    no_gravity(world)
    out = []
    for z, locked in ((-2.0, True), (2.0, False)):
        out.append(world.add_body(Box((0.5, 0.5, 0.5)), position=(0.0, 2.0, z), lock_rotation=locked,
                                  friction=0.0))
        out.append(world.add_body(Sphere(0.3), position=(-3.0, 2.35, z), velocity=(speed, 0.0, 0.0),
                                  friction=0.0))
    return out


def box_box(world: World) -> list[Body]:
    """AABB against OBB: two boxes dropped onto equal static pedestals. The left one is axis-aligned, so
    three overlap intervals decide contact; the right one is turned about two axes, so the separating axis
    test needs all 15 axes (3 + 3 face normals, 9 edge–edge cross products). Returns [aligned, turned]."""
    ground(world)
    out = []
    turned = quat_mul(quat_axis_angle((0, 1, 0), math.radians(30)),
                      quat_axis_angle((1, 0, 1), math.radians(25)))
    for x, q in ((-2.0, (0.0, 0.0, 0.0, 1.0)), (2.0, turned)):
        world.add_body(Box((1.0, 0.5, 1.0)), position=(x, 0.5, 0.0), mass=0.0)
        out.append(world.add_body(Box((0.4, 0.4, 0.4)), position=(x, 2.5, 0.0), orientation=q))
    return out


def quat_mul(a, b) -> tuple[float, float, float, float]:
    """The Hamilton product a·b of quaternions (x, y, z, w): the turn b followed by the turn a."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def capsules(world: World) -> list[Body]:
    """Capsules: one lying on the ground (segment–plane), one across it (segment–segment closest points),
    one standing upright that topples, one dropped on a box (box–capsule)."""
    ground(world)
    lying = quat_axis_angle((0, 0, 1), math.pi / 2)  # local y (the segment) along world x
    across = quat_axis_angle((1, 0, 0), math.pi / 2)  # the segment along world z
    world.add_body(Box((0.8, 0.3, 0.8)), position=(3.0, 0.3, 0.0), mass=0.0)
    return [
        world.add_body(Capsule(0.3, 0.8), position=(-2.0, 0.3, 0.0), orientation=lying),
        world.add_body(Capsule(0.3, 0.8), position=(-2.0, 1.6, 0.0), orientation=across),
        world.add_body(Capsule(0.25, 0.6), position=(0.5, 0.86, 0.0),
                       orientation=quat_axis_angle((0, 0, 1), 0.15)),
        world.add_body(Capsule(0.3, 0.5), position=(3.0, 2.0, 0.0),
                       orientation=quat_axis_angle((1, 1, 0), 0.6)),
    ]


def hulls(world: World, count: int = 8) -> list[Body]:
    """Convex polyhedra (random hulls of 14 points) dropped onto the ground and onto each other: SAT over
    face normals and edge pairs, then clipping the incident face against the reference face."""
    ground(world)
    rng = np.random.default_rng(3)
    return [world.add_body(ConvexHull(random_hull_points(rng, 0.6)),
                           position=(-2.4 + 1.6 * (k % 4), 1.0 + 1.4 * (k // 4), 0.4 * (k % 2)),
                           orientation=quat_axis_angle(rng.normal(size=3), rng.uniform(0, math.pi)))
            for k in range(count)]


def broadphase_field(world: World, n: int = 800) -> list[Body]:
    """Many bodies (alternating spheres and cubes of half size 0.25) raining onto a wide ground, for
    comparing the broad phases: brute force tests all n(n−1)/2 pairs, sweep-and-prune, the grid and the
    octree find the same overlapping pairs with far fewer tests."""
    ground(world, half=40.0)
    side = max(1, round(math.sqrt(n / 4)))
    pos = grid_positions(n, side, 1.0, 0.5, 0.2, seed=5)
    pos[:, [0, 2]] *= 1.6
    out = []
    for i, p in enumerate(pos):
        shape = Sphere(0.25) if i % 2 else Box((0.25, 0.25, 0.25))
        out.append(world.add_body(shape, position=p))
    return out


MANIFOLD_CASES = ("face", "edge", "corner")


def manifold(world: World) -> list[Body]:
    """Three unit cubes standing on the ground on a face, on an edge and on a corner: the contact manifolds
    have 4, 2 and 1 points (clipping a face against a face, an edge against a face, a vertex)."""
    ground(world, friction=1.0)
    edge = quat_axis_angle((0, 0, 1), math.pi / 4)
    # the cube's diagonal (1, 1, 1) turned onto world y puts one corner straight down
    diag = np.array([1.0, 1.0, 1.0]) / math.sqrt(3.0)
    corner = quat_axis_angle(np.cross(diag, (0.0, 1.0, 0.0)), math.acos(diag[1]))
    cube = Box((0.5, 0.5, 0.5))
    return [world.add_body(cube, position=(-3.0, 0.5, 0.0), friction=1.0),
            world.add_body(cube, position=(0.0, 0.5 * math.sqrt(2.0), 0.0), orientation=edge, friction=1.0),
            world.add_body(cube, position=(3.0, 0.5 * math.sqrt(3.0), 0.0), orientation=corner, friction=1.0)]


def responses(world: World) -> list[Body]:
    """One collision for every response method (``world.response``: impulse, projection, penalty): a ball
    dropped from 2 m, a box dropped on a box, and a stack of three cubes. The engine has one response
    setting per world, so the lesson switches methods with presets rather than showing three lanes."""
    ground(world)
    return [world.add_body(Sphere(0.4), position=(-3.0, 2.4, 0.0)),
            world.add_body(Box((0.5, 0.5, 0.5)), position=(0.0, 0.5, 0.0)),
            world.add_body(Box((0.5, 0.5, 0.5)), position=(0.0, 3.0, 0.0)),
            *(world.add_body(Box((0.4, 0.4, 0.4)), position=(3.0, 0.4 + 0.8 * k, 0.0)) for k in range(3))]


RESTITUTION_BALLS = (("steel", 0.9), ("rubber", 0.8), ("tennis", 0.7), ("clay", 0.0))
RESTITUTION_PAD = 0.5  # the pad under the last ball: its pair's e depends on the combine rule
RESTITUTION_HEIGHT = 2.0


def restitution(world: World) -> list[Body]:
    """Balls of real materials (steel 0.9, rubber 0.8, tennis 0.7, clay 0) dropped from 2 m onto a ground of
    e = 1, so each pair's e is the ball's under the product rule; and a last ball of e = 0.9 dropped onto a
    pad of e = 0.5, whose pair's e is what the combine rule (``world.restitution_rule``) makes of 0.9 and
    0.5. Each rebounds to e²·h (bottom heights, above the surface it hits)."""
    ground(world, restitution=1.0)
    out = [world.add_body(Sphere(0.3), position=(-4.0 + 2.0 * k, RESTITUTION_HEIGHT + 0.3, 0.0),
                          restitution=e)
           for k, (_, e) in enumerate(RESTITUTION_BALLS)]
    world.add_body(Box((0.6, 0.25, 0.6)), position=(4.0, 0.25, 0.0), mass=0.0, restitution=RESTITUTION_PAD)
    out.append(world.add_body(Sphere(0.3), position=(4.0, 0.5 + RESTITUTION_HEIGHT + 0.3, 0.0),
                              restitution=0.9))
    return out


# lane: (m1, m2, e1, e2); ball 1 moves at HEAD_ON_SPEED towards ball 2 at rest
HEAD_ON_LANES = ((1.0, 1.0, 1.0, 1.0), (1.0, 3.0, 1.0, 1.0), (3.0, 1.0, 1.0, 1.0), (1.0, 1.0, 0.0, 0.0),
                 (1.0, 3.0, 0.0, 0.0))
HEAD_ON_SPEED = 4.0


def head_on(world: World) -> list[Body]:
    """Head-on collisions in free space, one lane per case of ``HEAD_ON_LANES``: elastic (e = 1) with equal
    masses, light on heavy and heavy on light, then perfectly inelastic (e = 0). Ball sizes grow with the
    cube root of the mass (same density). Returns [ball 1, ball 2] per lane."""
    no_gravity(world)
    out = []
    for k, (m1, m2, e1, e2) in enumerate(HEAD_ON_LANES):
        z = (k - (len(HEAD_ON_LANES) - 1) / 2) * 1.6
        out.append(world.add_body(Sphere(0.3 * m1 ** (1 / 3)), position=(-3.0, 1.0, z), mass=m1,
                                  restitution=e1, friction=0.0, velocity=(HEAD_ON_SPEED, 0.0, 0.0)))
        out.append(world.add_body(Sphere(0.3 * m2 ** (1 / 3)), position=(0.0, 1.0, z), mass=m2,
                                  restitution=e2, friction=0.0))
    return out


SNOOKER_RADIUS = 0.1
SNOOKER_SPEED = 6.0


def snooker(world: World) -> list[Body]:
    """A snooker break: a rolling cue ball (first body) into a triangle of 15 balls on a 3.6 × 1.8 m table
    with cushions. Every ball has e = 0.95, so under the default product rule ball–ball impacts get
    0.95² ≈ 0.90, the cushions (0.7) 0.67, and the cloth (0) none; the cloth's friction makes sliding balls
    roll. (The scene sets no combine rule: the app carries the restitution rule over from scene to scene.)"""
    r = SNOOKER_RADIUS
    ground(world, friction=0.2)
    hx, hz, t = 1.8, 0.9, 0.1
    for sx, sz in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        half = (t, 0.1, hz + 2 * t) if sx else (hx + 2 * t, 0.1, t)
        world.add_body(Box(half), position=(sx * (hx + t), 0.1, sz * (hz + t)), mass=0.0, restitution=0.7,
                       friction=0.2)
    ball = Sphere(r)
    out = [world.add_body(ball, position=(-1.2, r, 0.0), mass=0.17, restitution=0.95, friction=0.2,
                          velocity=(SNOOKER_SPEED, 0.0, 0.0),
                          angular_velocity=(0.0, 0.0, -SNOOKER_SPEED / r))]  # rolling: v = ω·r
    d = 2 * r + 0.001
    for row in range(5):
        for i in range(row + 1):
            out.append(world.add_body(ball, position=(0.6 + row * d * math.sqrt(3) / 2, r,
                                                      (i - row / 2) * d),
                                      mass=0.17, restitution=0.95, friction=0.2))
    return out


TUNNEL_SPEEDS = (5.0, 20.0, 60.0, 150.0, 300.0)
TUNNEL_WALL = 0.1  # m thick, front face at x = 0
TUNNEL_RADIUS = 0.1  # as S4's bullet


def tunnelling(world: World, dt: float = 1.0 / 60.0) -> list[Body]:
    """Bullets (spheres of radius 10 cm) at 5, 20, 60, 150 and 300 m/s towards a wall 10 cm thick, no gravity.
    With ``world.ccd`` on every bullet stops at the wall. With it off, a bullet tunnels when its whole-step
    positions jump over the wall: each starts where that happens if it can (its last position before the
    wall half a step short of the region where a contact would be made), so the slow ones stop and the
    fast ones pass. The engine has one CCD flag per world, so the lesson toggles it with presets."""
    no_gravity(world)
    world.add_body(Box((TUNNEL_WALL / 2, 2.0, 3.5)), position=(TUNNEL_WALL / 2, 2.0, 0.0), mass=0.0)
    out = []
    reach = TUNNEL_RADIUS + world.max_speculative  # a contact is made within this of the front face
    for k, v in enumerate(TUNNEL_SPEEDS):
        hop = v * dt
        # the last position before the hop over the wall: the hop's excess over the window from `reach` in
        # front of the wall to touching its back face is split evenly before and behind the window
        last = -reach - max(0.0, hop - reach - TUNNEL_WALL - TUNNEL_RADIUS) / 2
        x0 = last - hop * math.ceil((3.0 + last) / hop)  # whole steps back, at least 3 m from the wall
        out.append(world.add_body(Sphere(TUNNEL_RADIUS), position=(x0, 2.0, -2.8 + 1.4 * k),
                                  velocity=(v, 0.0, 0.0)))
    return out


def stacking(world: World) -> list[Body]:
    """Stacks that must stand and fall asleep: a pyramid of 15 cubes, a brick wall (staggered rows), a
    heavy-on-light stack (1 kg, 10 kg, 100 kg upwards) and a card house (two leaning cards under a flat
    one)."""
    ground(world, friction=0.8)
    out = []
    cube = Box((0.4, 0.4, 0.4))
    for row in range(5):
        for i in range(5 - row):
            x = -6.0 + (i - (4 - row) / 2) * 0.801  # 1 mm gaps within a row
            out.append(world.add_body(cube, position=(x, 0.4 + 0.8 * row, 0.0), friction=0.8))
    brick = Box((0.4, 0.2, 0.2))
    for row in range(6):
        shift = 0.4 * (row % 2)
        for i in range(4 - row % 2):
            out.append(world.add_body(brick, position=(-2.0 + shift + i * 0.801 - 1.2, 0.2 + 0.4 * row, 0.0),
                                      friction=0.8))
    for k, m in enumerate((1.0, 10.0, 100.0)):
        out.append(world.add_body(Box((0.4, 0.25, 0.4)), position=(1.8, 0.25 + 0.5 * k, 0.0), mass=m,
                                  friction=0.8))
    lean = math.radians(15.0)
    card = Box((0.01, 0.6, 0.35))
    h = 0.6 * math.cos(lean) + 0.01 * math.sin(lean)
    gap = 0.6 * math.sin(lean) + 0.01 * math.cos(lean)
    for s in (-1, 1):
        out.append(world.add_body(card, position=(5.0 + s * gap, h, 0.0),
                                  orientation=quat_axis_angle((0, 0, 1), s * lean), friction=1.0))
    out.append(world.add_body(Box((0.6, 0.01, 0.35)), position=(5.0, 2 * h + 0.01, 0.0), friction=1.0))
    return out


def raycasts(world: World) -> list[Body]:
    """A field of static shapes for ray casting: spheres, boxes, upright capsules and hulls on a grid.
    Nothing moves; the lesson casts rays into it (``world.raycast``)."""
    ground(world)
    rng = np.random.default_rng(11)
    out = []
    for k in range(12):
        x, z = -4.5 + 3.0 * (k % 4), -3.0 + 3.0 * (k // 4)
        kind = k % 4
        if kind == 0:
            shape, y = Sphere(0.6), 0.6
        elif kind == 1:
            shape, y = Box((0.5, 0.7, 0.5)), 0.7
        elif kind == 2:
            shape, y = Capsule(0.4, 0.5), 0.9
        else:
            shape, y = ConvexHull(random_hull_points(rng, 0.7)), 1.0
        out.append(world.add_body(shape, position=(x, y, z), mass=0.0))
    return out


EVENT_HEIGHTS = (1.0, 2.0, 3.0, 4.0)


def events(world: World) -> list[Body]:
    """Balls dropped from 1, 2, 3 and 4 m (bottoms above the ground) that bounce (e = 0.6): each touch
    starts a collision begin event and each lift-off an end event (``world.events``); the app flashes a
    body on its begin events."""
    ground(world, restitution=1.0)
    return [world.add_body(Sphere(0.3), position=(-3.0 + 2.0 * k, h + 0.3, 0.0), restitution=0.6)
            for k, h in enumerate(EVENT_HEIGHTS)]


def top_points(radius: float = 0.4, height: float = 0.6, count: int = 24) -> np.ndarray:
    """A spinning top's hull: a disc of ``radius`` above a cone down to a blunt tip ``height`` below it."""
    a = np.linspace(0.0, 2 * math.pi, count, endpoint=False)
    rim = np.stack([radius * np.cos(a), np.zeros(count), radius * np.sin(a)], axis=1)
    lid = rim * 0.6 + (0.0, 0.15, 0.0)
    tip = rim * 0.08 - (0.0, height, 0.0)
    return np.concatenate([rim, lid, tip])


def spinning_top(world: World, spin: float = 60.0, tilt_deg: float = 10.0) -> list[Body]:
    """Two equal tops tilted by ``tilt_deg`` degrees on the ground: the first spins at ``spin`` rad/s about
    its axis, the second does not. The spinning one precesses and stays up (its angular momentum only turns
    under the gravity torque); the other falls over."""
    ground(world)
    points = top_points()
    shape = ConvexHull(points)
    tilt = math.radians(tilt_deg)
    q = quat_axis_angle((1, 0, 0), tilt)
    axis = np.array([0.0, math.cos(tilt), math.sin(tilt)])  # the top's local y axis, turned by q
    lowest = float((points @ rotation_matrix(q).T)[:, 1].min())
    out = []
    for x, w in ((-1.5, spin), (1.5, 0.0)):
        # the tip just touches the ground
        out.append(world.add_body(shape, position=(x, -lowest, 0.0), orientation=q,
                                  angular_velocity=w * axis))
    return out


def rotation_matrix(q) -> np.ndarray:
    """The 3 × 3 rotation matrix of the unit quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def empty(world: World) -> list[Body]:
    """Just the ground, for spawning by hand."""
    ground(world)
    return []


BUILDERS: dict[str, Callable[[World], list[Body]]] = {
    "pile": s1_pile, "pyramid": s2_pyramid, "spheres": s3_spheres, "bullet": s4_bullet, "bounce": s5_bounce,
    "broadphase": broadphase_field}
"""The builders a scene file may name (its ``"builder"``)."""

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
    "sphere-sphere": sphere_sphere,
    "sphere-box": sphere_box,
    "box-box": box_box,
    "capsules": capsules,
    "hulls": hulls,
    "broadphase": broadphase_field,
    "manifold": manifold,
    "responses": responses,
    "restitution": restitution,
    "head-on": head_on,
    "snooker": snooker,
    "tunnelling": tunnelling,
    "stacking": stacking,
    "raycasts": raycasts,
    "events": events,
    "spinning-top": spinning_top,
}
DEFAULT_SCENE = "showcase"
