"""Constants shared by the kernels and the Python layer: shape kinds and the layout of the arrays.

Bodies are rows of structure-of-arrays storage (see ``sandbox.engine.world.BodyArrays``); a body's
shape is ``kind[i]`` plus four floats ``params[i]``:

===========  ===============================================  ==========================================
kind         params                                           local frame
===========  ===============================================  ==========================================
SPHERE  0    (radius, 0, 0, 0)                                 centre at the origin
BOX     1    (hx, hy, hz, 0) half extents                       centred, axes along the local axes
CAPSULE 2    (radius, half_height, 0, 0)                        segment from (0,-hh,0) to (0,hh,0)
HULL    3    (hull_id, 0, 0, 0)                                 vertices relative to the centre of mass
===========  ===============================================  ==========================================

Hulls live in one packed table (``sandbox.engine.shapes.HullTable.arrays()``), passed to kernels as the
tuple ``H`` of arrays, indexed by ``hull_id``:

``H = (vert_start, vert_count, verts, face_start, face_count, face_normal, face_offset,
face_vstart, face_vcount, face_verts, edge_start, edge_count, edges, edge_faces)``

- ``verts[vert_start[h] : vert_start[h] + vert_count[h]]``: local vertices (float64, (V, 3));
- faces ``f`` in ``face_start[h] : face_start[h] + face_count[h]``: outward unit ``face_normal[f]``,
  plane offset ``face_offset[f]`` (``n·x = d`` on the face), and the face's vertex indices
  ``face_verts[face_vstart[f] : face_vstart[f] + face_vcount[f]]`` counter-clockwise seen from outside;
  vertex indices in ``face_verts`` and ``edges`` are global rows of ``verts``;
- edges ``e`` in ``edge_start[h] : edge_start[h] + edge_count[h]``: ``edges[e] = (v0, v1)`` (global vertex
  rows) and ``edge_faces[e] = (f0, f1)`` (global face rows) of its two adjacent faces.

Manifolds: one per colliding pair, at most ``MAX_POINTS`` points, normal from body A to body B, depth
positive when overlapping (negative down to ``-margin`` for speculative contacts).

Body pairs are keyed ``pair_key(a, b, n) = min(a, b)·n + max(a, b)``: the broad phase's sorted pairs, the
manifolds and the lists kept from step to step (warm starting, the manifold cache, collision events) are
all sorted by it, so matching one list against another is a merge.
"""

from .jit import helper

SPHERE = 0
BOX = 1
CAPSULE = 2
HULL = 3
KIND_NAMES = ("sphere", "box", "capsule", "hull")

MAX_POINTS = 4


@helper
def pair_key(a, b, nbodies):
    """The key of the body pair {a, b} among ``nbodies`` rows (either order gives the same key)."""
    return min(a, b) * nbodies + max(a, b)
