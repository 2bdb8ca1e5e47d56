"""Debug geometry as batched lines and points, built from the world's arrays with numpy.

A ``Batch`` writes the frame's debug drawing straight into three preallocated float32 arrays (kept
from frame to frame, grown by doubling), each uploaded to one dynamic buffer with one write:

- line vertices in ``VERTEX_FORMAT`` (position, RGBA colour, width in pixels), drawn as ``GL_LINES``
  (wide lines are a fixed-function feature, fast on every rasteriser, software ones included);
- points in the same format, drawn as round sprites;
- instances in ``INSTANCE_FORMAT`` (two 3-vectors ``a``, ``b`` and an RGBA colour) for the two
  primitives that would otherwise cost many vertices each: wire boxes (``a``, ``b`` the min and max
  corners; 24 vertices made by ``box_line.vert.glsl``) and arrows (``a`` the origin, ``b`` the
  vector; shaft and head made by ``arrow.vert.glsl``, facing the eye). Ten floats per box or arrow
  instead of 24 or 6 vertices of eight keep the per-frame numpy work small.

Lines and instances come in runs of one width (and one primitive), one draw call each.
``build_debug`` reads the world (contacts, broad phase, velocities, joints) and the highlight (grab
spring) and fills a batch according to the options; no Python loop runs over bodies or contacts (only
over joints, which are few).

Colours are sRGB with alpha; widths and point sizes are in pixels.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..i18n import _

VERTEX_FORMAT = "3f 4f 1f"
LINE_ATTRIBUTES = ("in_pos", "in_color")
INSTANCE_FORMAT = "3f 3f 4f/i"
INSTANCE_ATTRIBUTES = ("i_a", "i_b", "i_color")
WIRE_BOXES, ARROWS = "wire boxes", "arrows"
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
# BOX_CORNERS: the 24 edge endpoints as (0 or 1 per axis), the template box_line.vert.glsl expands
_BOX_EDGES = np.array([(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7),
                       (0, 4), (1, 5), (2, 6), (3, 7)])
BOX_CORNERS = ((_BOX_EDGES.reshape(-1)[:, None] >> np.arange(3)[None, :]) & 1).astype(np.float32)
MIN_NORMAL_LENGTH = 0.35
"""The shortest contact normal arrow (metres): long enough to stick out of its contact dot at any
usual viewing distance, so that resting contacts (tiny depth, small impulse) show their normals too."""
MAX_NORMAL_LENGTH = 3.0
AXIS_NAMES = "xyz"

ARROW_CODES = np.array([0, 1, 1, 2, 1, 3], np.float32)
"""The arrow template of arrow.vert.glsl: shaft origin→tip, then tip→each end of the head."""


def _rgba(color, k: int) -> np.ndarray:
    """``color`` (one RGBA or (k, 4)) as float32 (1, 4) or (k, 4), ready to broadcast over vertices."""
    if isinstance(color, tuple) and len(color) == 4:  # a colour constant, converted once
        return _constant(color)
    c = np.asarray(color, dtype=np.float32).reshape(-1, 4)
    if len(c) not in (1, k):
        raise ValueError(f"color must be one RGBA or {k} of them, got shape {np.shape(color)}")
    return c


@cache
def _constant(color: tuple) -> np.ndarray:
    """``_rgba`` of one colour given as a tuple (made once per colour: the module's constants)."""
    c = np.asarray(color, dtype=np.float32).reshape(1, 4)
    c.flags.writeable = False
    return c


class Batch:
    """Line vertices, points and box / arrow instances of one frame (see the module docstring)."""

    def __init__(self) -> None:
        self._line_v = np.zeros((4096, 8), np.float32)
        self._point_v = np.zeros((1024, 8), np.float32)
        self._inst = np.zeros((1024, 10), np.float32)
        self._lines_used = self._points_used = self._inst_used = 0
        self._line_runs: list[tuple[float, int, int]] = []
        self._inst_runs: list[tuple[str, float, int, int]] = []
        self._last_lines = (0, 0)  # (first vertex, segments) of the last ``lines`` call

    def clear(self) -> None:
        self._lines_used = self._points_used = self._inst_used = 0
        self._last_lines = (0, 0)
        self._line_runs.clear()
        self._inst_runs.clear()

    def lines(self, a, b, color, width: float) -> None:
        """Segments from ``a[i]`` to ``b[i]`` ((k, 3) each); ``color`` one RGBA or (k, 4)."""
        a = np.asarray(a).reshape(-1, 3)
        block = self.line_block(len(a), color, width)
        set_columns(block[:, 0, :3], a)
        set_columns(block[:, 1, :3], np.asarray(b).reshape(-1, 3))

    def line_block(self, k: int, color, width: float) -> np.ndarray:
        """Room for ``k`` segments, as ``lines`` adds them, with their colours (one RGBA or (k, 4)) and
        width set: the (k, 2, 8) vertices, whose positions (``[:, 0, :3]`` the starts, ``[:, 1, :3]`` the
        ends) the caller writes, column by column and straight from its own arrays, where ``lines``
        would copy (k, 3) arrays made for it."""
        first = self._lines_used
        self._line_v = _grown(self._line_v, first, first + 2 * k)
        block = self._line_v[first:first + 2 * k].reshape(k, 2, 8)
        if k == 0:
            return block
        self._lines_used = first + 2 * k
        _extend_run(self._line_runs, (float(width),), first, 2 * k)
        self._last_lines = (first, k)
        _fill(block, _rgba(color, k), width)
        return block

    def points(self, p, color, size: float) -> None:
        """Round dots at ``p`` ((k, 3)) of ``size`` pixels; ``color`` one RGBA or (k, 4)."""
        p = np.asarray(p).reshape(-1, 3)
        if len(p) == 0:
            return
        first = self._points_used
        self._point_v = _grown(self._point_v, first, first + len(p))
        self._points_used = first + len(p)
        block = self._point_v[first:self._points_used]
        _fill(block[:, None, :], _rgba(color, len(p)), size)
        set_columns(block[:, :3], p)

    def line_end_points(self, size: float) -> None:
        """Round dots of ``size`` pixels at both ends of each segment of the last ``lines`` call, in the
        segments' colours: all the starts, then all the ends (as ``points`` of the two lists would add
        them), copied from the segments' vertices, one 32-byte item per vertex."""
        first, k = self._last_lines
        if k == 0:
            return
        start = self._points_used
        self._point_v = _grown(self._point_v, start, start + 2 * k)
        self._points_used = start + 2 * k
        ends = self._line_v[first:first + 2 * k].view("V32").reshape(k, 2)
        block = self._point_v[start:start + 2 * k]
        block.view("V32").reshape(2, k)[...] = ends.T
        block[:, 7] = size

    def _instances(self, kind: str, a, b, color, width: float) -> None:
        a = np.asarray(a).reshape(-1, 3)
        block = self.instance_block(kind, len(a), color, width)
        set_columns(block[:, 0:3], a)
        set_columns(block[:, 3:6], np.asarray(b).reshape(-1, 3))

    def instance_block(self, kind: str, k: int, color, width: float) -> np.ndarray:
        """Room for ``k`` instances of ``kind`` (``ARROWS`` or ``WIRE_BOXES``), as ``arrows`` and
        ``wire_boxes`` add them, with their colours (one RGBA or (k, 4)) set: the (k, 10) rows, whose
        ``a`` (``[:, 0:3]``) and ``b`` (``[:, 3:6]``) the caller writes (see ``line_block``)."""
        first = self._inst_used
        self._inst = _grown(self._inst, first, first + k)
        block = self._inst[first:first + k]
        if k == 0:
            return block
        self._inst_used = first + k
        _extend_run(self._inst_runs, (kind, float(width)), first, k)
        # each colour copied as one 16-byte item (a void view), one colour broadcast to every row
        block[:, 6:10].view("V16")[:, 0] = np.ascontiguousarray(_rgba(color, k)).view("V16")[:, 0]
        return block

    def arrows(self, origin, vector, color, width: float) -> None:
        """Arrows from ``origin`` along ``vector`` ((k, 3) each) with a two-stroke head facing the eye
        (drawn by arrow.vert.glsl); zero vectors draw nothing. ``color`` one RGBA or (k, 4)."""
        self._instances(ARROWS, origin, vector, color, width)

    def wire_boxes(self, lo, hi, color, width: float) -> None:
        """The 12 edges of each axis-aligned box ``[lo[i], hi[i]]`` (drawn by box_line.vert.glsl);
        ``color`` one RGBA or (k, 4)."""
        self._instances(WIRE_BOXES, lo, hi, color, width)

    def line_array(self) -> tuple[np.ndarray, list[tuple[float, int, int]]]:
        """All segments' vertices, (2·segments, 8) float32 (a view, valid until the next ``clear``),
        and the runs of equal width as (width, first vertex, vertex count)."""
        return self._line_v[:self._lines_used], list(self._line_runs)

    def point_array(self) -> np.ndarray:
        """All points, (points, 8) float32 (a view, valid until the next ``clear``)."""
        return self._point_v[:self._points_used]

    def instance_array(self) -> tuple[np.ndarray, list[tuple[str, float, int, int]]]:
        """All box and arrow instances, (instances, 10) float32 in ``INSTANCE_FORMAT`` (a view, valid
        until the next ``clear``), and their runs as (``WIRE_BOXES`` or ``ARROWS``, width, first, count)."""
        return self._inst[:self._inst_used], list(self._inst_runs)


def _extend_run(runs: list, key: tuple, first: int, count: int) -> None:
    """Append ``count`` items from ``first`` to ``runs`` (tuples ``(*key, first, count)``), merged
    into the last run when it has the same key (it then ends at ``first``)."""
    if runs and runs[-1][:-2] == key:
        runs[-1] = (*key, runs[-1][-2], runs[-1][-1] + count)
    else:
        runs.append((*key, first, count))


def set_columns(dest: np.ndarray, src: np.ndarray) -> None:
    """``dest[...] = src`` for ``dest`` (m, c) and ``src`` (m, c) or (1, c), one column at a time: each
    column is one strided inner loop of m items (converting float64 to float32 on the way), where a
    plain assignment loops over the m rows with an inner loop of only c items, and numpy's per-row
    overhead, not the bytes, is then what it costs (three to six times as much for c = 3)."""
    for j in range(dest.shape[1]):
        dest[:, j] = src[:, j]


def choose_colors(condition: np.ndarray, if_true, if_false) -> np.ndarray:
    """(k, 4) float32 RGBA: ``if_true`` where ``condition`` (k,) holds, ``if_false`` elsewhere, taken
    as whole rows of a two-row table (``np.where`` over (k, 1) would broadcast colour by colour)."""
    return _two_colors(tuple(if_false), tuple(if_true)).take(condition, axis=0)


@cache
def _two_colors(if_false: tuple, if_true: tuple) -> np.ndarray:
    """The table of ``choose_colors``: row 0 ``if_false``, row 1 ``if_true`` (made once per pair)."""
    table = np.array([if_false, if_true], np.float32)
    table.flags.writeable = False
    return table


def _fill(block: np.ndarray, color: np.ndarray, width: float) -> None:
    """Colour and width of the (items, per_item, 8) vertices ``block``: one RGBA as whole-row copies
    (much faster than a strided write of four columns), else one per item."""
    if len(color) == 1:
        row = np.zeros(8, np.float32)
        row[3:7] = color[0]
        row[7] = width
        np.copyto(block, row)
    else:
        # each colour copied as one 16-byte item (a void view), broadcast over the item's vertices
        rgba = np.ascontiguousarray(color, dtype=np.float32).view("V16")
        block[:, :, 3:7].view("V16")[:, :, 0] = rgba
        block[:, :, 7] = width


def _grown(a: np.ndarray, used: int, needed: int) -> np.ndarray:
    """``a`` if it has ``needed`` rows, else a copy of its first ``used`` rows in an array at least
    twice as long."""
    if needed <= len(a):
        return a
    out = np.zeros((max(needed, 2 * len(a)), a.shape[1]), a.dtype)
    out[:used] = a[:used]
    return out


def contact_points(contacts, impulses: bool = True,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """The valid points of the last step's manifolds, flattened: points on B (k, 3), normals A→B
    (k, 3), depths (k,) and normal impulses (k,; None unless ``impulses``)."""
    m = int(contacts.count)
    per = contacts.points_b.shape[1]
    # slot j of manifold i holds a point when j < npoints[i]: each manifold's row of slot flags is
    # copied whole from a table (a broadcast comparison would loop over the manifolds, per columns each)
    valid = _slot_flags(per).take(contacts.npoints[:m], mode="clip").view(bool)
    flat = np.flatnonzero(valid)
    # the manifold of each point: a shift where the slot count is a power of two (it is 4), several
    # times faster than numpy's integer division
    manifold = flat >> (per.bit_length() - 1) if per & (per - 1) == 0 else flat // per
    return (contacts.points_b[:m].reshape(-1, 3).take(flat, axis=0), contacts.normal.take(manifold, axis=0),
            contacts.depth[:m].reshape(-1).take(flat),
            contacts.impulse[:m].reshape(-1).take(flat) if impulses else None)


@cache
def _slot_flags(per: int) -> np.ndarray:
    """(per + 1,) items of ``per`` bytes: item c holds c true flags, then false ones."""
    table = np.arange(per)[None, :] < np.arange(per + 1)[:, None]
    return table.view(np.dtype((np.void, per)))[:, 0]


def build_debug(batch: Batch, world, options, highlight, pos: np.ndarray, colors: np.ndarray) -> None:
    """Fill ``batch`` with the debug drawing that ``options`` turns on (see ``RenderOptions``).

    ``pos`` are the drawn body positions (rows ``[:world.data.n]``), ``colors`` the bodies' RGB colours
    (same rows)."""
    d = world.data
    n = d.n
    w = options.line_width
    live = d.alive[:n]
    if options.contacts or options.normals:
        p, normal, depth, impulse = contact_points(world.contacts, options.normals
                                                   and options.normal_scale == "impulse")
        if options.contacts:
            batch.points(p, choose_colors(depth > 0.0, CONTACT_COLOR, SPECULATIVE_COLOR), options.point_size)
        if options.normals:
            # the minimum length first, then what the mode measures on top (capped)
            if options.normal_scale == "impulse":
                extra = np.maximum(impulse, 0.0) * options.impulse_arrow_scale
            else:
                extra = np.maximum(depth, 0.0) * options.depth_arrow_scale
            length = MIN_NORMAL_LENGTH + np.minimum(extra, MAX_NORMAL_LENGTH - MIN_NORMAL_LENGTH)
            # the arrows written in place (``arrows`` of p and normal·length, without the (k, 3) products)
            block = batch.instance_block(ARROWS, len(p), NORMAL_COLOR, w)
            set_columns(block[:, 0:3], p)
            for j in range(3):
                np.multiply(normal[:, j], length, out=block[:, 3 + j])
    if options.aabbs:
        lo, hi = world.broad.aabb_min[:n], world.broad.aabb_max[:n]
        awake, static = d.awake[:n], d.static[:n]
        if not live.all():  # else every row is drawn: no copies of the rows
            rows = np.flatnonzero(live)
            lo, hi, awake, static = lo.take(rows, axis=0), hi.take(rows, axis=0), awake[rows], static[rows]
        block = batch.instance_block(WIRE_BOXES, len(lo), choose_colors(awake & ~static, AABB_COLOR,
                                                                        AABB_ASLEEP_COLOR), 1.5)
        set_columns(block[:, 0:3], lo)
        set_columns(block[:, 3:6], hi)
    if options.broadphase:
        _broadphase(batch, world, colors, w)
    if options.velocities:
        rows = np.flatnonzero(live & ~d.static[:n] & d.awake[:n])
        block = batch.instance_block(ARROWS, len(rows), VELOCITY_COLOR, w)
        set_columns(block[:, 0:3], pos.take(rows, axis=0))
        vel = d.vel.take(rows, axis=0)
        for j in range(3):
            np.multiply(vel[:, j], options.velocity_arrow_scale, out=block[:, 3 + j])
    if options.joints:
        joints = getattr(world, "joints", ())
        if joints:
            a = np.array([j.anchor_world_a() for j in joints])
            b = np.array([j.anchor_world_b() for j in joints])
            batch.lines(a, b, JOINT_COLOR, 3.0)
            batch.line_end_points(6.0)
    if options.grab_spring and highlight.grab_line is not None:
        anchor, target = (np.asarray(x, dtype=np.float64) for x in highlight.grab_line)
        batch.lines(anchor, target, SPRING_COLOR, 2.5)
        batch.line_end_points(8.0)
        if highlight.grab_force is not None:
            force = np.asarray(highlight.grab_force, dtype=np.float64)
            magnitude = float(np.linalg.norm(force))
            if magnitude > 1e-9:
                length = min(magnitude * options.force_arrow_scale, 4.0)
                batch.arrows(anchor, force / magnitude * length, FORCE_COLOR, 3.0)


def broadphase_legend(world) -> str:
    """One line that says what the broad-phase drawing shows for the world's current method, in the
    current language."""
    method = world.broadphase
    if method == "sap":
        axis = AXIS_NAMES[int(world.broad.debug().get("axis", 0))]
        return _("Sort and sweep: each bar beside the scene is one body's interval on the {axis} axis (the "
                 "sweep axis), in the body's colour (static bodies grey); bodies whose bars overlap become "
                 "candidate pairs.").format(axis=axis)
    if method == "grid":
        return _("Uniform grid: the cyan cubes are the cells that hold at least one body's box; only bodies "
                 "sharing a cell are paired.")
    if method == "octree":
        return _("Octree: the wire boxes are the tree's nodes, red at the root to violet at the deepest "
                 "level; only bodies in the same node or its ancestors are paired.")
    return _("Brute force: every pair of boxes is tested; there is no structure to draw.")


def broadphase_caption(world) -> tuple[tuple[float, float, float], str] | None:
    """Where to write a short caption in the view for the broad-phase drawing (a world point at the
    start of the sort-and-sweep lanes) and its text in the current language, or None for methods whose
    drawing needs none."""
    if world.broadphase != "sap":
        return None
    info = world.broad.debug()
    intervals = info["intervals"]
    if len(intervals) == 0:
        return None
    axis = int(info["axis"])
    lane_axis, start = _sap_lanes(world, axis)
    point = [0.0, 0.0, 0.0]  # in floats: numpy's per-call cost would dominate for one point
    point[lane_axis] = start - 0.4
    point[axis] = float(intervals[:, 0].min())
    point[1] += 0.3
    return (point[0], point[1], point[2]), _("sort-and-sweep: intervals on the {axis} axis").format(
        axis=AXIS_NAMES[axis])


def _sap_lanes(world, axis: int) -> tuple[int, float]:
    """The horizontal axis the sort-and-sweep lanes are stacked along (across the sweep ``axis``) and the
    coordinate of the first lane, just outside the dynamic bodies."""
    lane_axis = 2 if axis == 0 else 0
    d = world.data
    dynamic = d.alive[: d.n] & ~d.static[: d.n]
    # the masked copy and its max: a third of the time of np.max(..., where=dynamic), which loops slowly
    tops = world.broad.aabb_max[: d.n, lane_axis][dynamic]
    hi = tops.max() if len(tops) else -np.inf
    return lane_axis, (float(hi) if np.isfinite(hi) else 0.0) + 0.6


_LANE_OFFSETS = np.zeros(0)


def _lane_offsets(k: int) -> np.ndarray:
    """The offsets of bars ``0..k-1`` across the sort-and-sweep lanes, ``0.15 m · (i mod 32)`` (a table
    kept and grown, made again only when more bars come)."""
    global _LANE_OFFSETS
    if len(_LANE_OFFSETS) < k:
        _LANE_OFFSETS = 0.15 * (np.arange(max(k, 2 * len(_LANE_OFFSETS), 1024)) % 32)
        _LANE_OFFSETS.flags.writeable = False
    return _LANE_OFFSETS[:k]


def _broadphase(batch: Batch, world, colors: np.ndarray, width: float) -> None:
    """The broad phase's own structure: sweep-and-prune intervals as coloured bars in lanes on the
    ground beside the scene (static bodies grey), uniform-grid cells in use as wire cubes, octree nodes
    as wire boxes coloured by depth."""
    info = world.broad.debug()
    method = info["method"]
    if method == "sap":
        intervals, order = info["intervals"], info["order"]  # (k, 2) and (k,) arrays
        k = len(intervals)
        if k == 0:
            return
        axis = int(info["axis"])
        # lanes run along a horizontal axis across the sweep axis, starting just outside the bodies
        lane_axis, start = _sap_lanes(world, axis)
        d = world.data
        rgba = np.ones((k, 4), np.float32)
        set_columns(rgba[:, :3], colors.take(order[:k], axis=0))
        rgba[d.static[order[:k]], :3] = 0.5
        # each bar from its interval's min to its max along the sweep axis, in lane k mod 32 across it,
        # 3 cm above the ground (or on it, along y); written column by column into the batch
        lane = start + _lane_offsets(k)
        other = 3 - axis - lane_axis
        block = batch.line_block(k, rgba, 3.0)
        for end in (0, 1):
            block[:, end, axis] = intervals[:, end]
            block[:, end, lane_axis] = lane
            block[:, end, other] = 0.03 if other == 1 else 0.0
        batch.line_end_points(5.0)
    elif method == "grid":
        cells = np.asarray(info["cells"], dtype=np.float64).reshape(-1, 3)
        size = float(info["cell_size"])
        batch.wire_boxes(cells * size, (cells + 1.0) * size, GRID_CELL_COLOR, 1.0)
    elif method == "octree":
        depth = np.asarray(info["depth"], dtype=np.int64)
        color = OCTREE_COLORS[np.minimum(depth, len(OCTREE_COLORS) - 1)]
        batch.wire_boxes(info["nodes_min"], info["nodes_max"], color, width * 0.75)
