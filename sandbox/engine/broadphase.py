"""The broad phase: bounding boxes of the bodies and the candidate pairs whose boxes overlap, by one of
four methods a student can switch between, plus ray casts through a spatial grid.

``BroadPhase`` owns the scratch arrays (grown by doubling, never reallocated per step) and calls the
kernels of ``core/broadphase.py`` and ``core/raycast.py``. All four methods return the identical sorted
pair array, so changing the method changes the speed and the debug drawing, never the simulation.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

from .core import broadphase as kernels
from .core.raycast import raycast_grid
from .linalg3 import norm
from .validate import vec

_RAY_PAD = 1e-7
"""Margin (m) added to the boxes hashed for ray casts, so that rounding in a shape test can never put a
hit point outside the cells its body was hashed into."""


class RowHit(NamedTuple):
    """The broad phase's answer to a ray, by body row: the row index, the distance along the ray (m), the
    hit point and the outward surface normal there (both world frame; ``-direction`` for a ray starting
    inside). ``World.raycast`` turns it into the public ``RayHit``, which holds a ``Body`` handle."""

    body: int
    distance: float
    point: np.ndarray
    normal: np.ndarray


def _capacity(needed: int, current: int) -> int:
    """The smallest power-of-two multiple of ``current`` (at least 16) that holds ``needed``."""
    cap = max(current, 16)
    while cap < needed:
        cap *= 2
    return cap


class _Grid:
    """A uniform grid stored as a spatial hash (``core.broadphase.grid_build``) and its scratch arrays.

    Boxes that span more than ``MAX_SPAN`` cells along an axis are kept in an oversize list."""

    MAX_SPAN = 4

    def __init__(self) -> None:
        self.cell_size = 1.0
        self.n_entries = 0
        self.n_over = 0
        self.bounds = np.zeros((2, 3))
        self._alloc_bodies(16)
        self._alloc_entries(64)

    def _alloc_bodies(self, cap: int) -> None:
        self.oversize = np.zeros(cap, np.int64)
        self.is_over = np.zeros(cap, np.bool_)
        self.extent = np.zeros(cap)
        self.tested = np.zeros(cap, np.bool_)

    def _alloc_entries(self, cap: int) -> None:
        self.ent_cell = np.zeros((cap, 3), np.int64)
        self.ent_body = np.zeros(cap, np.int64)
        self._tmp_cell = np.zeros((cap, 3), np.int64)
        self._tmp_body = np.zeros(cap, np.int64)
        self._tmp_hash = np.zeros(cap, np.int64)
        self.bucket_start = np.zeros(2 * cap + 1, np.int64)  # a table twice the entries: few collisions

    def build(self, n: int, alive: np.ndarray, aabb_min: np.ndarray, aabb_max: np.ndarray) -> None:
        if n > len(self.oversize):
            self._alloc_bodies(_capacity(n, len(self.oversize)))
        self.cell_size = kernels.grid_cell_size(n, alive, aabb_min, aabb_max, self.extent)
        while True:
            self.n_entries, self.n_over = kernels.grid_build(
                n, alive, aabb_min, aabb_max, self.cell_size, self.MAX_SPAN, self.ent_cell, self.ent_body,
                self._tmp_cell, self._tmp_body, self._tmp_hash, self.bucket_start, self.oversize,
                self.is_over, self.bounds)
            if self.n_entries <= len(self.ent_body):
                return
            self._alloc_entries(_capacity(self.n_entries, len(self.ent_body)))


class BroadPhase:
    """Finds the candidate pairs of a step: ``update`` computes each live body's AABB (grown by its
    margin) and returns the pairs ``(i, j)``, ``i < j``, whose boxes overlap, never two static bodies,
    sorted lexicographically, by the method ``method``:

    - ``"brute"``: every pair tested, O(N²), the reference;
    - ``"sap"``: sort and sweep along the axis of greatest variance, re-sorted incrementally;
    - ``"grid"``: uniform grid (spatial hash) with a cell twice the median body size;
    - ``"octree"``: strict octree, each body in the smallest node that holds it whole.

    After ``update``: ``aabb_min``, ``aabb_max`` (rows ``[:n]``), ``pair_count``, ``ms`` (milliseconds
    spent in the last update) and ``debug()`` for drawing the structure.

    >>> bp = BroadPhase("grid")
    >>> bp.method = "octree"
    >>> bp.method
    'octree'
    """

    METHODS = ("brute", "sap", "grid", "octree")
    OCTREE_DEPTH = 12

    def __init__(self, method: str = "sap") -> None:
        self.method = method
        self.aabb_min = np.zeros((0, 3))
        self.aabb_max = np.zeros((0, 3))
        self.pair_count = 0
        self.ms = 0.0
        self._built = "brute"
        self._body_cap = 0
        self._alloc_bodies(16)
        self._pairs = np.zeros((64, 2), np.int64)
        self._pairs_tmp = np.zeros((64, 2), np.int64)
        self._grid = _Grid()
        self._ray_grid = _Grid()
        self._ray_min = np.zeros((0, 3))
        self._ray_max = np.zeros((0, 3))
        self._ray_pad = np.zeros(0)
        self._sap_axis = -1
        self._sap_n = 0
        self._sap_live = 0
        self._found = np.zeros(1, np.int64)  # per share of the last sweep, the pairs it wrote (sap_pairs)
        self._oct_count = 0
        self._stack = np.zeros(8 * self.OCTREE_DEPTH + 8, np.int64)

    @property
    def method(self) -> str:
        """The pair-finding method, one of ``METHODS``."""
        return self._method

    @method.setter
    def method(self, name: str) -> None:
        if name not in self.METHODS:
            raise ValueError(f"broad-phase method must be one of {', '.join(self.METHODS)}; got {name!r}")
        self._method = name

    def _alloc_bodies(self, cap: int) -> None:
        self._body_cap = cap
        self._aabb_min = np.zeros((cap, 3))
        self._aabb_max = np.zeros((cap, 3))
        self._counts = np.zeros(2 * (cap + 1), np.int64)
        self._order = np.zeros(cap, np.int64)
        self._sap_n = 0
        self._skey = np.zeros(cap)
        self._sidx = np.zeros(cap, np.int64)
        self._sbox = np.zeros((6, cap))
        self._sstatic = np.zeros(cap, np.bool_)
        self._obj_next = np.zeros(cap, np.int64)
        self._alloc_nodes(1)

    def _alloc_nodes(self, nodes: int) -> None:
        # Allocated on the first octree update: each body creates at most OCTREE_DEPTH nodes.
        self._node_center = np.zeros((nodes, 3))
        self._node_half = np.zeros(nodes)
        self._node_depth = np.zeros(nodes, np.int64)
        self._node_child = np.zeros((nodes, 8), np.int64)
        self._node_head = np.zeros(nodes, np.int64)

    def update(self, n: int, alive: np.ndarray, static: np.ndarray, kind: np.ndarray, params: np.ndarray,
               pos: np.ndarray, quat: np.ndarray, H: tuple, margin_body: np.ndarray) -> np.ndarray:
        """The candidate pairs ((P, 2) int64, sorted) of rows ``[:n]`` of the body arrays.

        The result is a view of an internal buffer, valid until the next call."""
        t_start = time.perf_counter()
        if n > self._body_cap:
            self._alloc_bodies(_capacity(n, self._body_cap))
        self.aabb_min = self._aabb_min[:n]
        self.aabb_max = self._aabb_max[:n]
        kernels.compute_aabbs(n, alive, kind, params, pos, quat, H, margin_body, self._aabb_min,
                              self._aabb_max)
        method = self._method
        if method == "grid":
            self._grid.build(n, alive, self._aabb_min, self._aabb_max)
        elif method == "octree":
            if len(self._node_half) < 1 + n * self.OCTREE_DEPTH:
                self._alloc_nodes(1 + self._body_cap * self.OCTREE_DEPTH)
            self._oct_count = kernels.octree_build(
                n, alive, self._aabb_min, self._aabb_max, self.OCTREE_DEPTH, self._node_center,
                self._node_half, self._node_depth, self._node_child, self._node_head, self._obj_next)
        elif method == "sap" and n != self._sap_n:
            # New rows join at the end of the persistent order; the insertion sort places them.
            if n < self._sap_n:
                self._sap_n = 0
            self._order[self._sap_n:n] = np.arange(self._sap_n, n)
            self._sap_n = n
        while True:
            count = self._find(method, n, alive, static)
            if count <= len(self._pairs):
                break
            cap = _capacity(count, len(self._pairs))
            self._pairs = np.zeros((cap, 2), np.int64)
            self._pairs_tmp = np.zeros((cap, 2), np.int64)
        if method != "brute":
            found = self._found if method == "sap" else np.full(1, count, np.int64)
            kernels.sort_pairs(self._pairs, found, n, self._pairs_tmp, self._counts)
        self._built = method
        self.pair_count = count
        self.ms = (time.perf_counter() - t_start) * 1e3
        return self._pairs[:count]

    def _find(self, method: str, n: int, alive: np.ndarray, static: np.ndarray) -> int:
        lo, hi, pairs = self._aabb_min, self._aabb_max, self._pairs
        if method == "brute":
            return kernels.brute_pairs(n, alive, static, lo, hi, pairs)
        if method == "sap":
            count, self._sap_axis, self._sap_live, self._found = kernels.sap_pairs(
                n, alive, static, lo, hi, self._order, self._sap_axis, self._skey, self._sidx, self._sbox,
                self._sstatic, pairs)
            return count
        if method == "grid":
            g = self._grid
            return kernels.grid_pairs(n, alive, static, lo, hi, g.cell_size, g.ent_cell, g.ent_body,
                                      g.bucket_start, g.oversize, g.n_over, g.is_over, pairs)
        return kernels.octree_pairs(static, lo, hi, self._oct_count, self._node_center, self._node_half,
                                    self._node_child, self._node_head, self._obj_next, self._stack, pairs)

    def debug(self) -> dict:
        """The structure of the last update, for drawing; empty arrays if the current method has not run
        yet. sap: ``axis``, ``intervals`` (k, 2) min/max along it and ``order`` (the live bodies in
        sorted order); grid: ``cell_size``, ``cells`` (k, 3) the distinct cells in use, ``oversize`` the
        bodies kept out of the grid; octree: ``nodes_min``, ``nodes_max`` (k, 3) and ``depth`` (k,) of the
        nodes (all hold bodies or are ancestors of nodes that do)."""
        method = self._method
        built = self._built == method
        if method == "sap":
            m = self._sap_live if built else 0
            axis = max(self._sap_axis, 0)
            return {"method": "sap", "axis": axis,
                    "intervals": self._sbox[:2, :m].T.copy(),
                    "order": self._sidx[:m].copy()}
        if method == "grid":
            g = self._grid
            e = g.n_entries if built else 0
            cells = np.unique(g.ent_cell[:e], axis=0) if e else np.zeros((0, 3), np.int64)
            return {"method": "grid", "cell_size": float(g.cell_size), "cells": cells,
                    "oversize": g.oversize[: g.n_over if built else 0].copy()}
        if method == "octree":
            k = self._oct_count if built else 0
            c = self._node_center[:k]
            h = self._node_half[:k, None]
            return {"method": "octree", "nodes_min": c - h, "nodes_max": c + h,
                    "depth": self._node_depth[:k].copy()}
        return {"method": "brute"}

    def raycast(self, origin, direction, max_distance: float, n: int, alive: np.ndarray, kind: np.ndarray,
                params: np.ndarray, pos: np.ndarray, quat: np.ndarray, H: tuple) -> RowHit | None:
        """The closest live body hit by the ray from ``origin`` along ``direction`` (normalised here)
        within ``max_distance`` (may be ``inf``), or None.

        Uses the bodies' current positions: the boxes and a uniform grid are rebuilt for the ray (the
        pair structures are left as they are), then the grid is walked cell by cell from the origin
        (3D DDA, see ``core.raycast.raycast_grid``) and only bodies in the cells crossed are tested.
        Ties in distance go to the lower body index. A ray starting inside a body hits it at distance 0
        with normal ``-direction``."""
        o = vec("origin", origin)
        d = vec("direction", direction)
        length = norm(d)
        if length < 1e-12:
            raise ValueError(f"direction must be non-zero, got {d.tolist()}")
        d = d / length
        try:
            t_max = float(max_distance)
        except (TypeError, ValueError):
            raise ValueError(f"max_distance must be a number, got {max_distance!r}") from None
        if math.isnan(t_max) or t_max < 0.0:
            raise ValueError(f"max_distance must be >= 0, got {t_max}")
        if n > len(self._ray_pad):
            # The ray's own boxes: those of ``update`` (with contact margins) stay for debug drawing.
            cap = _capacity(n, len(self._ray_pad))
            self._ray_min = np.zeros((cap, 3))
            self._ray_max = np.zeros((cap, 3))
            self._ray_pad = np.full(cap, _RAY_PAD)
        kernels.compute_aabbs(n, alive, kind, params, pos, quat, H, self._ray_pad, self._ray_min,
                              self._ray_max)
        g = self._ray_grid
        g.build(n, alive, self._ray_min, self._ray_max)
        body, t, normal = raycast_grid(
            (o[0], o[1], o[2]), (d[0], d[1], d[2]), t_max, n, kind, params, pos, quat, H, g.cell_size,
            g.ent_cell, g.ent_body, g.bucket_start, g.oversize, g.n_over, g.bounds, g.tested)
        if body < 0:
            return None
        return RowHit(int(body), float(t), o + t * d, np.array(normal))
