"""Debug geometry as batched lines and points, built from the world's arrays with numpy.

A ``Batch`` writes line segments and points during a frame straight into two preallocated float32
arrays in ``VERTEX_FORMAT`` (position, RGBA colour, width or size in pixels), each uploaded to one
dynamic vertex buffer with one write. Lines are drawn as ``GL_LINES`` (wide lines are a fixed-function
feature, fast on every rasteriser, software ones included), one draw call per run of one width:
``line_array`` returns the runs. Points are sprites, one draw call.
``build_debug`` reads the world (contacts, broad phase, velocities, joints) and the highlight (grab
spring) and fills a batch according to the options; no Python loop runs over bodies or contacts (only
over joints, which are few).

Colours are sRGB with alpha; widths and point sizes are in pixels.
"""

from __future__ import annotations

import numpy as np

VERTEX_FORMAT = "3f 4f 1f"
LINE_ATTRIBUTES = ("in_pos", "in_color")
POINT_ATTRIBUTES = ("in_pos", "in_color", "in_size")

CONTACT_COLOR = (0.95, 0.15, 0.10, 1.0)
SPECULATIVE_COLOR = (1.0, 0.70, 0.20, 0.9)
NORMAL_COLOR = (1.0, 0.85, 0.15, 1.0)
AABB_COLOR = (0.20, 0.85, 0.30, 0.9)
AABB_ASLEEP_COLOR = (0.45, 0.50, 0.50, 0.6)
GRID_CELL_COLOR = (0.10, 0.75, 0.85, 0.7)
VELOCITY_COLOR = (0.15, 0.55, 1.0, 1.0)
JOINT_COLOR = (0.15, 0.15, 0.18, 1.0)
SPRING_COLOR = (0.10, 0.80, 1.0, 1.0)
FORCE_COLOR = (1.0, 0.30, 0.75, 1.0)
OCTREE_COLORS = np.array([(0.95, 0.35, 0.25, 0.9), (0.95, 0.65, 0.15, 0.9), (0.75, 0.85, 0.15, 0.85),
                          (0.25, 0.80, 0.35, 0.8), (0.15, 0.70, 0.85, 0.75), (0.35, 0.40, 0.95, 0.7),
                          (0.70, 0.35, 0.90, 0.65)], dtype=np.float32)

# the 12 edges of a box as pairs of corner numbers, corner c having bit k set for the max on axis k;
# _EDGE_BITS[v, k]: whether vertex v of the 24 edge endpoints takes the max on axis k
_BOX_EDGES = np.array([(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7),
                       (0, 4), (1, 5), (2, 6), (3, 7)])
_EDGE_BITS = ((_BOX_EDGES.reshape(-1)[:, None] >> np.arange(3)[None, :]) & 1).astype(bool)
_UP = np.array([0.0, 1.0, 0.0], np.float32)
_RIGHT = np.array([1.0, 0.0, 0.0], np.float32)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (k, 3) arrays (``np.cross`` without its per-call axis shuffling)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.float32)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def _rgba(color, k: int) -> np.ndarray:
    """``color`` (one RGBA or (k, 4)) as float32 (1, 4) or (k, 4), ready to broadcast over vertices."""
    c = np.asarray(color, dtype=np.float32).reshape(-1, 4)
    if len(c) not in (1, k):
        raise ValueError(f"color must be one RGBA or {k} of them, got shape {np.shape(color)}")
    return c


class Batch:
    """Line segments and points of one frame, written straight into two float32 vertex arrays that
    are kept from frame to frame (grown by doubling), so that each is uploaded with one write.

    Line vertices come in blocks, one per call; ``line_array`` reports runs of consecutive vertices
    of one width (adjacent blocks of equal width merged), one draw call each."""

    def __init__(self) -> None:
        self._line_v = np.zeros((4096, 8), np.float32)
        self._point_v = np.zeros((1024, 8), np.float32)
        self._lines_used = 0
        self._points_used = 0
        self._runs: list[tuple[float, int, int]] = []

    def clear(self) -> None:
        self._lines_used = self._points_used = 0
        self._runs.clear()

    def _line_block(self, segments: int, width: float) -> np.ndarray:
        """The next ``segments`` segments' vertices, a (segments, 2, 8) view with the width filled."""
        count = 2 * segments
        first = self._lines_used
        self._line_v = _grown(self._line_v, first, first + count)
        self._lines_used = first + count
        if self._runs and self._runs[-1][0] == width:
            self._runs[-1] = (width, self._runs[-1][1], self._runs[-1][2] + count)
        else:
            self._runs.append((float(width), first, count))
        block = self._line_v[first:first + count]
        block[:, 7] = width
        return block.reshape(segments, 2, 8)

    def lines(self, a, b, color, width: float) -> None:
        """Segments from ``a[i]`` to ``b[i]`` ((k, 3) each); ``color`` one RGBA or (k, 4)."""
        a = np.asarray(a).reshape(-1, 3)
        if len(a) == 0:
            return
        block = self._line_block(len(a), width)
        block[:, 0, :3] = a
        block[:, 1, :3] = np.asarray(b).reshape(-1, 3)
        block[:, :, 3:7] = _rgba(color, len(a))[:, None, :]

    def points(self, p, color, size: float) -> None:
        """Round dots at ``p`` ((k, 3)) of ``size`` pixels; ``color`` one RGBA or (k, 4)."""
        p = np.asarray(p).reshape(-1, 3)
        if len(p) == 0:
            return
        first = self._points_used
        self._point_v = _grown(self._point_v, first, first + len(p))
        self._points_used = first + len(p)
        block = self._point_v[first:self._points_used]
        block[:, :3] = p
        block[:, 3:7] = _rgba(color, len(p))
        block[:, 7] = size

    def arrows(self, origin, vector, color, width: float, eye) -> None:
        """Arrows from ``origin`` along ``vector`` ((k, 3) each) with a two-stroke head, drawn in the
        plane that faces the eye so that the head is always visible; zero vectors are skipped."""
        o = np.asarray(origin, dtype=np.float32).reshape(-1, 3)
        v = np.asarray(vector, dtype=np.float32).reshape(-1, 3)
        color = _rgba(color, len(o))
        length = np.sqrt(np.einsum("ij,ij->i", v, v))
        keep = length > 1e-6
        if not keep.all():
            o, v, length = o[keep], v[keep], length[keep]
            color = color[keep] if len(color) > 1 else color
        k = len(o)
        if k == 0:
            return
        d = v / length[:, None]
        tip = o + v
        side = _cross(d, np.asarray(eye, dtype=np.float32)[None, :] - tip)
        side_len = np.sqrt(np.einsum("ij,ij->i", side, side))
        flat = np.flatnonzero(side_len < 1e-6)
        if len(flat):
            # looking straight along the arrow: any perpendicular will do
            axis = np.where((np.abs(d[flat, 1]) < 0.9)[:, None], _UP, _RIGHT)
            side[flat] = _cross(d[flat], axis)
            side_len[flat] = np.sqrt(np.einsum("ij,ij->i", side[flat], side[flat]))
        head = np.clip(0.3 * length, 0.02, 0.25)
        back = tip - d * head[:, None]
        half = side * (0.5 * head / side_len)[:, None]
        block = self._line_block(3 * k, width).reshape(k, 6, 8)
        block[:, 0, :3] = o
        block[:, 1, :3] = tip
        block[:, 2, :3] = tip
        block[:, 3, :3] = back + half
        block[:, 4, :3] = tip
        block[:, 5, :3] = back - half
        block[:, :, 3:7] = color[:, None, :]

    def wire_boxes(self, lo, hi, color, width: float) -> None:
        """The 12 edges of each axis-aligned box ``[lo[i], hi[i]]``; ``color`` one RGBA or (k, 4)."""
        lo = np.asarray(lo).reshape(-1, 3)
        hi = np.asarray(hi).reshape(-1, 3)
        k = len(lo)
        if k == 0:
            return
        block = self._line_block(12 * k, width).reshape(k, 24, 8)
        xyz = block[:, :, :3]
        np.copyto(xyz, lo[:, None, :], casting="same_kind")
        np.copyto(xyz, hi[:, None, :], casting="same_kind", where=_EDGE_BITS[None])
        block[:, :, 3:7] = _rgba(color, k)[:, None, :]

    def line_array(self) -> tuple[np.ndarray, list[tuple[float, int, int]]]:
        """All segments' vertices, (2·segments, 8) float32 (a view, valid until the next ``clear``),
        and the runs of equal width as (width, first vertex, vertex count)."""
        return self._line_v[:self._lines_used], list(self._runs)

    def point_array(self) -> np.ndarray:
        """All points, (points, 8) float32 (a view, valid until the next ``clear``)."""
        return self._point_v[:self._points_used]


def _grown(a: np.ndarray, used: int, needed: int) -> np.ndarray:
    """``a`` if it has ``needed`` rows, else a copy of its first ``used`` rows in an array at least
    twice as long."""
    if needed <= len(a):
        return a
    out = np.zeros((max(needed, 2 * len(a)), a.shape[1]), a.dtype)
    out[:used] = a[:used]
    return out


def contact_points(contacts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The valid points of the last step's manifolds, flattened: points on B (k, 3), normals A→B
    (k, 3), depths (k,) and normal impulses (k,)."""
    m = int(contacts.count)
    per = contacts.points_b.shape[1]
    flat = np.flatnonzero(np.arange(per)[None, :] < contacts.npoints[:m, None])
    return (contacts.points_b[:m].reshape(-1, 3)[flat], contacts.normal[flat // per],
            contacts.depth[:m].reshape(-1)[flat], contacts.impulse[:m].reshape(-1)[flat])


def build_debug(batch: Batch, world, options, highlight, pos: np.ndarray, colors: np.ndarray,
                eye: np.ndarray) -> None:
    """Fill ``batch`` with the debug drawing that ``options`` turns on (see ``RenderOptions``).

    ``pos`` are the drawn body positions (rows ``[:world.data.n]``), ``colors`` the bodies' RGB colours
    (same rows), ``eye`` the camera position (arrow heads face it)."""
    d = world.data
    n = d.n
    w = options.line_width
    live = d.alive[:n]
    if options.contacts or options.normals:
        p, normal, depth, impulse = contact_points(world.contacts)
        if options.contacts:
            color = np.where((depth > 0.0)[:, None], np.float32(CONTACT_COLOR),
                             np.float32(SPECULATIVE_COLOR))
            batch.points(p, color, options.point_size)
        if options.normals:
            if options.normal_scale == "impulse":
                length = np.minimum(impulse * options.impulse_arrow_scale, 3.0)
            else:
                length = 0.15 + np.maximum(depth, 0.0) * options.depth_arrow_scale
            batch.arrows(p, normal * length[:, None], NORMAL_COLOR, w, eye)
    if options.aabbs:
        rows = np.flatnonzero(live)
        awake = d.awake[rows] & ~d.static[rows]
        color = np.where(awake[:, None], np.float32(AABB_COLOR), np.float32(AABB_ASLEEP_COLOR))
        batch.wire_boxes(world.broad.aabb_min[rows], world.broad.aabb_max[rows], color, 1.5)
    if options.broadphase:
        _broadphase(batch, world, colors, w)
    if options.velocities:
        rows = np.flatnonzero(live & ~d.static[:n] & d.awake[:n])
        batch.arrows(pos[rows], d.vel[rows] * options.velocity_arrow_scale, VELOCITY_COLOR, w, eye)
    if options.joints:
        joints = getattr(world, "joints", ())
        if joints:
            a = np.array([j.anchor_world_a() for j in joints])
            b = np.array([j.anchor_world_b() for j in joints])
            batch.lines(a, b, JOINT_COLOR, 3.0)
            batch.points(np.concatenate([a, b]), JOINT_COLOR, 6.0)
    if options.grab_spring and highlight.grab_line is not None:
        anchor, target = (np.asarray(x, dtype=np.float64) for x in highlight.grab_line)
        batch.lines(anchor, target, SPRING_COLOR, 2.5)
        batch.points(np.stack([anchor, target]), SPRING_COLOR, 8.0)
        if highlight.grab_force is not None:
            force = np.asarray(highlight.grab_force, dtype=np.float64)
            magnitude = float(np.linalg.norm(force))
            if magnitude > 1e-9:
                length = min(magnitude * options.force_arrow_scale, 4.0)
                batch.arrows(anchor, force / magnitude * length, FORCE_COLOR, 3.0, eye)


def _broadphase(batch: Batch, world, colors: np.ndarray, width: float) -> None:
    """The broad phase's own structure: sweep-and-prune intervals as coloured bars in lanes on the
    ground beside the scene (static bodies grey), uniform-grid cells in use as wire cubes, octree nodes
    as wire boxes coloured by depth."""
    info = world.broad.debug()
    method = info["method"]
    if method == "sap":
        intervals = np.asarray(info["intervals"], dtype=np.float64).reshape(-1, 2)
        order = np.asarray(info["order"], dtype=np.int64)
        k = len(intervals)
        if k == 0:
            return
        axis = int(info["axis"])
        # lanes run along a horizontal axis across the sweep axis, starting just outside the bodies
        lane_axis = 2 if axis == 0 else 0
        d = world.data
        rows = np.flatnonzero(d.alive[: d.n] & ~d.static[: d.n])
        hi = world.broad.aabb_max[rows, lane_axis].max() if len(rows) else 0.0
        lane = np.arange(k) % 32
        a = np.zeros((k, 3))
        a[:, 1] = 0.03
        a[:, lane_axis] = hi + 0.6 + 0.15 * lane
        b = a.copy()
        a[:, axis] += intervals[:, 0]
        b[:, axis] += intervals[:, 1]
        if axis == 1:
            a[:, 1] -= 0.03
            b[:, 1] -= 0.03
        rgba = np.ones((k, 4), np.float32)
        rgba[:, :3] = np.where(d.static[order[:k], None], np.float32(0.5), colors[order[:k]])
        batch.lines(a, b, rgba, 3.0)
        batch.points(np.concatenate([a, b]), np.concatenate([rgba, rgba]), 5.0)
    elif method == "grid":
        cells = np.asarray(info["cells"], dtype=np.float64).reshape(-1, 3)
        size = float(info["cell_size"])
        batch.wire_boxes(cells * size, (cells + 1.0) * size, GRID_CELL_COLOR, 1.0)
    elif method == "octree":
        depth = np.asarray(info["depth"], dtype=np.int64)
        color = OCTREE_COLORS[np.minimum(depth, len(OCTREE_COLORS) - 1)]
        batch.wire_boxes(info["nodes_min"], info["nodes_max"], color, width * 0.75)
