"""Bounding volumes: the seed's first overlap tests, between axis-aligned boxes (AABBs) and spheres.

An AABB is the box ``lo ≤ x ≤ hi`` with faces parallel to the world axes. Two AABBs overlap exactly when
their intervals overlap on all three axes (the separating axis theorem with only the three world axes to
try); a sphere overlaps an AABB when the box point closest to its centre, the centre clamped to the box
axis by axis, lies within the radius (Ericson, "Real-Time Collision Detection", §4.2.1 and §5.2.5). The
broad phase tests every candidate pair's AABBs with ``aabb_aabb``; the sphere–box pair test of the narrow
phase is ``sphere_aabb``'s clamp done in the box's own frame, where an oriented box (OBB) is an AABB
(``rounded.sphere_box``).
"""

from __future__ import annotations

from .jit import helper
from .vecmath import dot, sub


@helper
def aabb_aabb(min_a, max_a, min_b, max_b):
    """True when the closed boxes [min_a, max_a] and [min_b, max_b] overlap (touching faces count): their
    intervals overlap on x, y and z. Written with ``&``, not ``and``: six comparisons without branches run
    several times faster in the broad phase's pair loops than a chain of unpredictable jumps."""
    return ((min_a[0] <= max_b[0]) & (min_b[0] <= max_a[0]) & (min_a[1] <= max_b[1]) & (min_b[1] <= max_a[1])
            & (min_a[2] <= max_b[2]) & (min_b[2] <= max_a[2]))


@helper
def closest_point_aabb(p, lo, hi):
    """The point of the box [lo, hi] closest to ``p``: ``p`` clamped to the box axis by axis (``p`` itself
    when inside)."""
    return (min(max(p[0], lo[0]), hi[0]), min(max(p[1], lo[1]), hi[1]), min(max(p[2], lo[2]), hi[2]))


@helper
def sphere_aabb(center, radius, lo, hi):
    """True when the sphere (``center``, ``radius``) and the box [lo, hi] overlap: the squared distance
    from the centre to the closest box point is at most r²."""
    d = sub(center, closest_point_aabb(center, lo, hi))
    return dot(d, d) <= radius * radius
