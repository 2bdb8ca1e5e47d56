"""A traced step: what the step computed, stage by stage, for a teacher to take apart (``World.step_traced``).

The traced step runs exactly the code of ``World.step``; the kernels additionally copy what they computed
into preallocated trace arrays when tracing is on (``core/substeps.record_pass``), so the state after a
traced step is bit for bit the state after an ordinary one. Recorded today: the stages in the order they
ran with their times, the broad phase's candidate pairs, the manifolds, and the solver's every pass (warm
start, each velocity iteration of each sub-step, relax, restitution): the accumulated normal and friction
impulses of every contact point and the velocities of every body after that pass.

The narrow phase is traced lazily, one pair at a time (``StepTrace.pair``). The traced step keeps what
the narrow phase read (the bodies' poses, shapes and margins before the step, ``NarrowState``), and
``pair(a, b)`` runs that pair's test again on it with a trace buffer that has rows
(``core/narrow_trace.py``): the same compiled function on the same numbers, so it computes exactly what
the step computed, and records every axis, polygon and simplex on the way. The other choice, recording
every pair during the step, would fill buffers for thousands of pairs in the 1000-body pile to show one
of them, and could not show a pair whose manifold the contact cache reused; retracing costs one pair
test and its decoding (0.4 to 1.2 ms) when the stepper asks, nothing when it does not. The state kept
is a copy of four arrays of the bodies (about 100 kB for 1000 bodies). In an ordinary step the pair
tests get a buffer without rows and record nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .collide import Manifold
from .core import narrow_trace as nt
from .core.layout import KIND_NAMES, MAX_POINTS
from .core.narrowphase import collide_one
from .core.records import HullArrays
from .core.vecmath import quat_to_mat


@dataclass(frozen=True)
class SolverPass:
    """The state after one pass of the solver: its ``label`` ("substep 2 / solve 3", "restitution", …),
    every contact point's accumulated ``normal`` impulse (k,) and ``friction`` impulse along the point's
    two tangents (k, 2) (N·s), and every body row's ``velocity`` and ``angular_velocity`` (n, 3)."""

    label: str
    normal: np.ndarray
    friction: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray


@dataclass(frozen=True)
class NarrowState:
    """What the narrow phase read at the start of a step, enough to run any candidate pair's test again:
    the bodies' ``kind``, ``params``, centres ``pos`` and orientations ``quat`` (copies of rows ``[:n]``),
    their speculative ``margins``, the hull table, and the pairs whose manifold the contact cache reused
    (``reused``: keys ``(min, max)`` of body rows)."""

    kind: np.ndarray
    params: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    margins: np.ndarray
    hulls: HullArrays
    reused: frozenset


@dataclass(frozen=True)
class GjkSimplex:
    """GJK's simplex after one iteration (``iteration`` 0: the starting point): its support points on the
    polyhedron and on the segment (``on_polyhedron``, ``on_segment``, (k, 3) world; their differences
    are the simplex in the Minkowski difference), their barycentric ``weights`` (k,) (NaN when the
    simplex holds the origin), and ``distance``, |v| of the simplex's point nearest the origin: the
    distance of the two cores as far as GJK got."""

    iteration: int
    on_polyhedron: np.ndarray
    on_segment: np.ndarray
    weights: np.ndarray
    distance: float


@dataclass(frozen=True)
class ClosestPoints:
    """The closest points of the two cores (a sphere's centre, a capsule's segment, a box or hull
    itself): ``point_a`` on A's, ``point_b`` on B's (world), their ``distance`` (negative for a sphere
    whose centre lies inside a box: minus the gap to the nearest face), and ``simplices``, GJK's
    iterations where GJK found them (empty otherwise)."""

    point_a: np.ndarray
    point_b: np.ndarray
    distance: float
    simplices: list[GjkSimplex]


AXIS_GROUPS = ("face A", "face B", "edge")
"""The groups of separating axes, indexed by ``narrow_trace``'s FACE_A, FACE_B, EDGE."""
REMOVED_REASONS = ("above", "reduction")
"""Why a point was left out of the manifold: it lay ``above`` the reference face by more than the margin,
or the ``reduction`` to four points dropped it."""


@dataclass(frozen=True)
class PairTrace:
    """What the narrow phase did for one pair (``StepTrace.pair``), in the order it ran the pair's test:
    ``body_a``, ``body_b`` (body rows) in the test's order, A the body of the lower shape kind (sphere <
    box < capsule < hull; equal kinds in the broad phase's order), so that the normal and every axis
    point from ``body_a`` to ``body_b`` and "face A" is a face of ``body_a``; ``kinds`` their shape
    names; ``margin`` the speculative margin the test used (m).

    Separating axis tests (polyhedra; and the penetration search of a sphere or capsule inside a box or
    hull): ``axes`` ``[(label, unit axis (3,), separation), …]``, every axis tested, in order, up to the
    one that separated if any (a parallel edge pair has a zero axis and a NaN separation: a face axis
    covers it); ``features`` the same axes as ``(group, feature of A, feature of B)`` (group a key of
    ``AXIS_GROUPS``, -1: none); ``chosen`` the index of the axis the manifold uses (None when the shapes
    are apart); ``separating`` the index of the axis beyond the margin, where the test stopped.

    Face contacts: ``reference_face`` and ``incident_face`` (k, 3) world polygons, ``reference_body``
    "A" or "B"; ``clip_passes`` ``[(plane label, (m, 3) polygon after it), …]`` in order, with
    ``clip_planes`` ``[(unit outward normal, offset), …]`` (points with n·x <= offset are kept);
    ``kept`` (k, 3) the clipped points within the margin below the reference face with their
    ``kept_depths``; ``removed`` ``[(reason, point (3,), depth), …]`` (a key of ``REMOVED_REASONS``);
    ``fallback`` the one vertex used when clipping came out empty. Edge contacts: ``edges`` (A's edge,
    B's edge), each (2, 3). Round shapes and edge contacts: ``closest`` (``ClosestPoints``).

    ``result``: every point the test wrote (speculative ones too; None for none); ``manifold``: the
    pair's touching manifold as ``world.manifolds`` holds it (None if none touched). ``reused``: the
    step took the manifold from the contact cache instead of running the test (``world.contact_cache``);
    everything else then shows what the test computes for the same poses. ``truncated``: the trace
    buffer ran out of room (never, unless a hull has thousands of edges)."""

    body_a: int
    body_b: int
    kinds: tuple[str, str]
    margin: float
    reused: bool
    axes: list[tuple[str, np.ndarray, float]]
    features: list[tuple[str, int, int]]
    chosen: int | None
    separating: int | None
    reference_face: np.ndarray | None
    reference_body: str | None
    incident_face: np.ndarray | None
    clip_passes: list[tuple[str, np.ndarray]]
    clip_planes: list[tuple[np.ndarray, float]]
    kept: np.ndarray
    kept_depths: np.ndarray
    removed: list[tuple[str, np.ndarray, float]]
    fallback: np.ndarray | None
    edges: tuple[np.ndarray, np.ndarray] | None
    closest: ClosestPoints | None
    result: Manifold | None
    manifold: Manifold | None
    truncated: bool

    def axis_label(self, i: int, translate=lambda text: text) -> str:
        """The label of axis ``i`` (``axis_label``), its patterns passed through ``translate``."""
        return axis_label(self.kinds, self.features[i], translate)


def axis_label(kinds: tuple[str, str], feature: tuple[str, int, int], translate=lambda text: text) -> str:
    """The label of a separating axis ``feature = (group, feature of A, feature of B)`` between shapes of
    ``kinds``: "face A y", "face B +x", "face A 3", "edge A x × B z", "edge A 4 × B 7", "edge B 5 × core
    A"; its patterns are passed through ``translate`` (e.g. ``i18n._``; the engine shows English)."""
    group, fa, fb = feature
    if group != "edge":
        body = "A" if group == "face A" else "B"
        name = _feature_name(kinds, body, fa if body == "A" else fb, edge=False)
        return translate("face {body} {feature}").format(body=body, feature=name)
    parts = []
    for body, row in (("A", fa), ("B", fb)):
        if row < 0:
            parts.append(translate("core {body}").format(body=body))
        else:
            parts.append(f"{body} {_feature_name(kinds, body, row, edge=True)}")
    return translate("edge {a} × {b}").format(a=parts[0], b=parts[1])


def _feature_name(kinds: tuple[str, str], body: str, row: int, edge: bool) -> str:
    """A face (or edge) of a body as its label shows it: a box face by its axis ("x" in the 15-axis test,
    whose face axes stand for both opposite faces; "+x" where each face is tested on its own), anything
    else by its number."""
    if kinds[0 if body == "A" else 1] != "box" or edge and kinds != ("box", "box"):
        return str(row)
    if kinds == ("box", "box"):
        return "xyz"[row]
    if "hull" in kinds:  # polyhedra.py's box as a hull: faces -x, +x, -y, +y, -z, +z
        return ("-" if row % 2 == 0 else "+") + "xyz"[row // 2]
    return ("+" if row % 2 == 0 else "-") + "xyz"[row // 2]  # rounded.py's box: +x, -x, +y, …


@dataclass(frozen=True)
class StepTrace:
    """What one step computed (see the module's docstring).

    ``stages``: the names of the stages that ran, in order (``world.STAGES`` less those the response method
    skips); ``timings``: their milliseconds; ``pairs``: (p, 2) body rows of the broad phase's candidate
    pairs; ``manifolds``: the touching manifolds, as ``world.manifolds`` gives them; ``point_manifold``,
    ``point_slot``, ``point_bodies``: for each solver contact point, the row of ``world.contacts`` it
    belongs to, its index in that manifold and its two bodies; ``solver``: the passes in order;
    ``narrow``: what the narrow phase read, for ``pair`` (see the module's docstring)."""

    stages: tuple[str, ...]
    timings: dict[str, float]
    pairs: np.ndarray
    manifolds: list[Manifold]
    point_manifold: np.ndarray
    point_slot: np.ndarray
    point_bodies: np.ndarray
    solver: list[SolverPass]
    narrow: NarrowState | None = None
    _pair_traces: dict = field(default_factory=dict, repr=False, compare=False)

    def pair(self, a: int, b: int) -> PairTrace | None:
        """What the narrow phase did for the bodies of rows ``a`` and ``b`` (see ``PairTrace``); None when
        they were not a candidate pair of the broad phase, so the narrow phase never got there.
        ``pair(a, b)`` and ``pair(b, a)`` are the same object: its ``body_a``, ``body_b`` give the order
        the test ran in, which the normal and the axes follow. Computed on the first call by running the
        pair's test again on the state before the step (the module's docstring), then kept."""
        key = (min(int(a), int(b)), max(int(a), int(b)))
        cache = self._pair_traces
        if "order" not in cache:
            cache["order"] = {(min(p), max(p)): (int(p[0]), int(p[1])) for p in self.pairs.tolist()}
            ends = ((m.body_a.index, m.body_b.index, m) for m in self.manifolds)
            cache["manifolds"] = {(min(i, j), max(i, j)): m for i, j, m in ends}
        if self.narrow is None or key not in cache["order"]:
            return None
        if key not in cache:
            cache[key] = trace_pair(self.narrow, *cache["order"][key], cache["manifolds"].get(key))
        return cache[key]

    def touching_pairs(self) -> list[tuple[int, int]]:
        """The body rows of every touching manifold's pair, deepest first."""
        ranked = sorted(self.manifolds, key=lambda m: -float(m.depths.max()))
        return [(m.body_a.index, m.body_b.index) for m in ranked]

    def largest_change(self) -> np.ndarray:
        """For each solver pass after the first, the largest change of any point's accumulated normal
        impulse from the pass before: how far the iterations still move (it should fall within a
        sub-step)."""
        normals = np.array([p.normal for p in self.solver])
        if len(normals) < 2 or normals.shape[1] == 0:
            return np.zeros(max(len(normals) - 1, 0))
        return np.abs(np.diff(normals, axis=0)).max(axis=1)


def solver_pass_labels(response: str, substeps: int, iterations: int, warm_starting: bool) -> list[str]:
    """The labels of the passes ``core/substeps.run_substeps`` records, in its order: per sub-step the
    warm start (or cold start), the sub-step's share of the iterations and the relax pass, then
    restitution (the impulse method); the penalty springs once per sub-step (the penalty method); none
    for projection, which has no impulses."""
    labels = []
    if response == "projection":
        return labels
    base, extra = divmod(iterations, substeps)
    for sub in range(substeps):
        name = f"substep {sub + 1}"
        if response == "penalty":
            labels.append(f"{name} / penalty springs")
            continue
        labels.append(f"{name} / {'warm start' if warm_starting else 'cold start'}")
        labels += [f"{name} / solve {i + 1}" for i in range(max(base + (sub < extra), 1))]
        labels.append(f"{name} / relax")
    if response == "impulse":
        labels.append("restitution")
    return labels


def trace_pair(state: NarrowState, a: int, b: int, manifold: Manifold | None) -> PairTrace:
    """Run the pair test of bodies ``a`` and ``b`` (in the broad phase's order) on ``state`` with a trace
    buffer (``core/narrow_trace.py``) and decode what it recorded; ``manifold``: the pair's touching
    manifold of the step. The buffer starts at 4096 rows and grows while the test runs out of room."""
    if state.kind[a] > state.kind[b]:  # the test's order, as narrowphase._ordered_pair
        a, b = b, a
    margin = float(state.margins[a] + state.margins[b])
    rows = 4096
    while True:
        buf = nt.trace_buffer(rows)
        normal, pts_a, pts_b, depths = np.zeros(3), np.zeros((MAX_POINTS, 3)), np.zeros((MAX_POINTS, 3)), \
            np.zeros(MAX_POINTS)
        k = collide_one(int(state.kind[a]), tuple(state.pos[a]), tuple(state.quat[a]), state.params[a],
                        int(state.kind[b]), tuple(state.pos[b]), tuple(state.quat[b]), state.params[b],
                        state.hulls, margin, normal, pts_a, pts_b, depths, buf)
        if buf[0, 1] == 0.0 or rows >= 1 << 20:
            break
        rows *= 8
    result = (Manifold(normal=normal, points_a=pts_a[:k].copy(), points_b=pts_b[:k].copy(),
                       depths=depths[:k].copy()) if k else None)
    kinds = (KIND_NAMES[state.kind[a]], KIND_NAMES[state.kind[b]])
    return _decode(buf, a, b, kinds, margin, (min(a, b), max(a, b)) in state.reused, result, manifold)


def _decode(buf: np.ndarray, a: int, b: int, kinds: tuple[str, str], margin: float, reused: bool,
            result: Manifold | None, manifold: Manifold | None) -> PairTrace:
    """A ``PairTrace`` from the rows of a trace buffer (layout in ``core/narrow_trace.py``), its geometry
    mapped from the test's working frame to the world."""
    rows = buf[1:1 + int(buf[0, 0])]
    origin, rot = np.zeros(3), np.eye(3)
    for r in rows:
        if r[0] == nt.FRAME_P:
            origin = r[4:7].copy()
        elif r[0] == nt.FRAME_Q:
            rot = np.array(quat_to_mat((r[4], r[5], r[6], r[7]))).reshape(3, 3)

    def point(x: np.ndarray) -> np.ndarray:
        return origin + rot @ x

    def points(xs: np.ndarray) -> np.ndarray:
        return origin + xs @ rot.T if len(xs) else np.zeros((0, 3))

    axes: list[tuple[str, np.ndarray, float]] = []
    features: list[tuple[str, int, int]] = []
    removed, clips, planes, simplices = [], [], [], []
    chosen_key = None
    polygons: dict[int, np.ndarray] = {}
    kept = np.zeros((0, 3))
    kept_depths = np.zeros(0)
    fallback = None
    closest: dict[int, tuple[np.ndarray, float]] = {}
    i = 0
    while i < len(rows):
        tag, g, j, k = (int(x) for x in rows[i, :4])
        x, s = rows[i, 4:7], float(rows[i, 7])
        i += 1
        if tag == nt.AXIS:
            features.append((AXIS_GROUPS[g], j, k))
            axes.append((axis_label(kinds, features[-1]), rot @ x, s))
        elif tag == nt.CHOSEN:
            chosen_key = (AXIS_GROUPS[g], j, k)
        elif tag == nt.POLYGON:
            verts = rows[i:i + k]
            i += k
            if g == nt.CLIP:
                clips.append(points(verts[:, 4:7]))
                length = float(np.linalg.norm(x))
                normal = rot @ (x / length) if length > 0 else np.zeros(3)
                planes.append((normal, s / length + float(normal @ origin) if length > 0 else 0.0))
            elif g == nt.KEPT:
                kept, kept_depths = points(verts[:, 4:7]), verts[:, 7].copy()
            else:
                polygons[g] = points(verts[:, 4:7])
        elif tag == nt.REMOVED:
            removed.append((REMOVED_REASONS[g], point(x), s))
        elif tag == nt.FALLBACK:
            fallback = point(x)
        elif tag == nt.CLOSEST:
            closest[g] = (point(x), s)
        elif tag == nt.SIMPLEX:
            verts = rows[i:i + 2 * k]
            i += 2 * k
            simplices.append(GjkSimplex(g, points(verts[:k, 4:7]), points(verts[k:, 4:7]),
                                        verts[:k, 7].copy(), s))
    return PairTrace(
        body_a=a, body_b=b, kinds=kinds, margin=margin, reused=reused, axes=axes, features=features,
        chosen=features.index(chosen_key) if chosen_key in features else None,
        separating=next((n for n, (_, _, sep) in enumerate(axes) if sep > margin), None),
        reference_face=polygons.get(nt.REFERENCE), incident_face=polygons.get(nt.INCIDENT),
        reference_body=None if chosen_key is None or chosen_key[0] == "edge" else chosen_key[0][-1],
        clip_passes=[(f"side plane {n + 1} of the reference face", poly) for n, poly in enumerate(clips)],
        clip_planes=planes, kept=kept, kept_depths=kept_depths, removed=removed,
        fallback=fallback,
        edges=(polygons[nt.EDGE_A], polygons[nt.EDGE_B]) if nt.EDGE_A in polygons else None,
        closest=(ClosestPoints(closest[0][0], closest[1][0], closest[0][1], simplices) if len(closest) == 2
                 else None),
        result=result, manifold=manifold, truncated=bool(buf[0, 1]))
