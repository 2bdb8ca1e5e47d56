"""The built-in scenes: scene files of ``assets/scenes/`` (``SCENES``), and the Python builders of the
standard scenes, shared by those files, the tests and the benchmarks.

Every built-in scene is a file, ``assets/scenes/<name>.json``, with its world settings, bodies, joints,
camera and lesson (``sandbox.scene_file``; the format is in ``docs/scene-files.md``). The standard scenes
S1–S5 and the broad-phase field keep a Python builder that their file names (``BUILDERS``): they are
parametrised by the benchmarks, and the big ones would be megabytes of JSON. Each builder fills an empty
``World`` with the public engine API and returns the dynamic bodies it made, in creation order. S1–S5
follow ``shared/SCENES.md`` (there z is up; here y is up, so the harness's (x, y, z) is our (x, z, −y)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .engine import Body, Box, Sphere, World

if TYPE_CHECKING:
    from .scene_file import SceneFile

FRICTION = 0.5


def ground(world: World, half: float = 50.0, restitution: float = 0.0, friction: float = FRICTION) -> Body:
    """A static slab whose top face is the plane y = 0."""
    return world.add_body(Box((half, 0.5, half)), position=(0.0, -0.5, 0.0), mass=0.0,
                          restitution=restitution, friction=friction)


def plank_with_balls(world: World) -> Body:
    """48 balls of 0.5 kg resting on one free 20 kg plank on the ground: the plank is in more manifolds
    than there are colours (the overflow, ``graph_color.py``), and with its balls it is one island of 52
    points and a mass ratio of 40 (the block solver's, ``block_solver.py``). Returns the plank."""
    ground(world)
    plank = world.add_body(Box((3.5, 0.1, 3.5)), position=(0, 0.1, 0), mass=20.0)
    for i in range(8):
        for j in range(6):
            world.add_body(Sphere(0.2), position=(-3.0 + 0.85 * i, 0.4, -2.5 + 0.95 * j), mass=0.5)
    return plank


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


BUILDERS: dict[str, Callable[[World], list[Body]]] = {
    "pile": s1_pile, "pyramid": s2_pyramid, "spheres": s3_spheres, "bullet": s4_bullet, "bounce": s5_bounce,
    "broadphase": broadphase_field}
"""The builders a scene file may name as its ``"builder"``: the standard scenes of ``shared/SCENES.md``,
which the benchmarks and the other engines' harness build with the same parameters, and the broad-phase
field; the big ones would be megabytes of JSON."""


# ----------------------------------------------------------------------------------------------------
# helpers for shapes and frames


def random_hull_points(rng: np.random.Generator, scale: float = 0.5, count: int = 14) -> np.ndarray:
    """Points for a pleasant random convex hull: directions on a sphere, squashed a little per axis."""
    p = rng.normal(size=(count, 3))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    return p * rng.uniform(0.7, 1.0, size=3) * scale


def rotation_matrix(q) -> np.ndarray:
    """The 3 × 3 rotation matrix of the unit quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def ramp_frame(angle_deg: float) -> tuple[tuple[float, float, float, float], np.ndarray, np.ndarray]:
    """The ramp's orientation (a turn of ``angle_deg`` about z), its top face's normal and its downhill
    direction (the top face tilts down towards −x)."""
    a = math.radians(angle_deg)
    q = (0.0, 0.0, math.sin(a / 2), math.cos(a / 2))
    return q, np.array([-math.sin(a), math.cos(a), 0.0]), np.array([-math.cos(a), -math.sin(a), 0.0])


# ----------------------------------------------------------------------------------------------------
# what the lessons' checks and labels expect of their scene files (the files were written with these
# values; tests/test_scene_files.py runs every file's check)

RAMP_ANGLE = 20.0  # incline.json's ramp, degrees: tan 20° = 0.364 lies between the boxes' μ = 0.3 and 0.5
MANIFOLD_CASES = ("face", "edge", "corner")  # manifold.json's cubes stand on these
RESTITUTION_BALLS = (("steel", 0.9), ("rubber", 0.8), ("tennis", 0.7), ("clay", 0.0))  # restitution.json
RESTITUTION_PAD = 0.5  # the pad under its last ball: that pair's e depends on the combine rule
RESTITUTION_HEIGHT = 2.0  # the balls' drop, bottom above the surface below (m)
# head-on.json's lanes: (m1, m2, e1, e2); ball 1 moves at HEAD_ON_SPEED towards ball 2 at rest
HEAD_ON_LANES = ((1.0, 1.0, 1.0, 1.0), (1.0, 3.0, 1.0, 1.0), (3.0, 1.0, 1.0, 1.0), (1.0, 1.0, 0.0, 0.0),
                 (1.0, 3.0, 0.0, 0.0))
HEAD_ON_SPEED = 4.0
TUNNEL_SPEEDS = (5.0, 20.0, 60.0, 150.0, 300.0)  # tunnelling.json's bullets (m/s)
TUNNEL_WALL = 0.1  # m thick, front face at x = 0
TUNNEL_RADIUS = 0.1  # as S4's bullet
EVENT_HEIGHTS = (1.0, 2.0, 3.0, 4.0)  # events.json's drops (m)


# ----------------------------------------------------------------------------------------------------
# the built-in scenes: scene files of assets/scenes/


SCENE_FOLDER = Path(__file__).resolve().parent.parent / "assets" / "scenes"
"""The scene files that come with the sandbox: every built-in scene, and examples."""
SCENE_NAMES = ("showcase", "empty", "pile", "pyramid", "spheres", "bullet", "bounce", "bounce row", "cradle",
               "incline", "dominoes", "tennis racket", "sphere-sphere", "sphere-box", "box-box", "capsules",
               "hulls", "broadphase", "manifold", "responses", "restitution", "head-on", "snooker",
               "tunnelling", "stacking", "raycasts", "events", "spinning-top")
"""The built-in scenes, in the order of the scene list and the lessons; each is the file
``scene_file_path(name)``."""
DEFAULT_SCENE = "showcase"


def scene_file_path(name: str) -> Path:
    """The file of the built-in scene ``name``: its name with spaces as hyphens, in ``SCENE_FOLDER``."""
    return SCENE_FOLDER / f"{name.replace(' ', '-')}.json"


def built_in_name(scene: str | Path) -> str | None:
    """The built-in scene that ``scene`` names, or None: its name, with hyphens for spaces or spaces for
    hyphens (``"bounce-row"`` and ``"bounce row"`` are the same scene), or the path of its file."""
    key = str(scene).replace(" ", "-")
    for name in SCENE_NAMES:
        if name.replace(" ", "-") == key:
            return name
    if str(scene).lower().endswith(".json"):
        try:
            path = Path(scene).resolve()
        except (OSError, RuntimeError):  # a path that cannot be resolved names no built-in file
            return None
        for name in SCENE_NAMES:
            if scene_file_path(name) == path:
                return name
    return None


def _read(path: Path) -> SceneFile:
    from .scene_file import load_scene_file  # imported here: scene_file imports this module

    return load_scene_file(path)


class BuiltInScenes(Mapping):
    """The built-in scenes by name, in the order of ``SCENE_NAMES``: each the ``scene_file.SceneFile`` of
    ``scene_file_path(name)``, read the first time it is looked up (the app reads only the scenes it
    shows; ``lessons.LESSONS`` reads them all)."""

    def __init__(self) -> None:
        self._files: dict[str, SceneFile] = {}

    def __getitem__(self, name: str) -> SceneFile:
        scene = self._files.get(name)
        if scene is None:
            if name not in SCENE_NAMES:
                raise KeyError(name)
            scene = self._files[name] = _read(scene_file_path(name))
        return scene

    def __iter__(self) -> Iterator[str]:
        return iter(SCENE_NAMES)

    def __len__(self) -> int:
        return len(SCENE_NAMES)

    def current(self, name: str) -> SceneFile:
        """Scene ``name``, read again first if its file has changed since it was read (a teacher edited
        it): the new one replaces the old from then on. ``SceneFileError`` if the edited file is bad (the
        old one stays)."""
        scene = self[name]
        if scene.changed():
            scene = self._files[name] = _read(scene.path)
        return scene


SCENES = BuiltInScenes()
"""The built-in scenes by name (see ``BuiltInScenes``): ``SCENES["bounce row"](world)`` builds one."""
