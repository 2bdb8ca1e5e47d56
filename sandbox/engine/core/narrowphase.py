"""The narrow phase: one contact manifold per candidate pair, dispatched by the two shape kinds.

``collide_pairs`` buckets the candidate pairs by kind pair ``kind_a * 4 + kind_b`` (``kind_a <= kind_b``)
and runs each bucket through its own loop, one pair test per bucket, chosen through a table (Box2D's
``s_registers[typeA][typeB]``; numba cannot call through an array of functions, so the table is written
out as an ``if`` chain: in ``_collide_bucket`` for the batch, in ``_dispatch`` for ``collide_one``). A
loop that calls a single pair test lets the compiler inline it and keeps its branches predictable. Every
pair test has the signature of ``docs/architecture.md`` ("Pair test signature"); its last argument, the
trace buffer (``narrow_trace.py``), has no rows here, so a step records nothing.

Speed notes (measured on the settled S1 pile): the bodies' ``params`` rows are passed as 4-tuples, and
the pair tests write into one set of small scratch arrays that are then copied into the output rows,
because every array (or array view) handed to a compiled function that is not inlined costs reference
counting on each call, several times the work of a sphere–sphere test. For the same reason the loops
call the pair tests directly, not through ``_dispatch``, which would hand on the whole hull table.
"""

from __future__ import annotations

import numpy as np

from .atomics import atomic_add
from .jit import helper, kernel
from .layout import BOX, CAPSULE, HULL, MAX_POINTS, SPHERE
from .narrow_trace import step_buffer
from .polyhedra import box_box, box_hull, hull_hull
from .records import HullArrays
from .refcount import borrow, keep_alive
from .rounded import (
    box_capsule,
    capsule_capsule,
    capsule_hull,
    sphere_box,
    sphere_capsule,
    sphere_hull,
    sphere_sphere,
)
from .threads import run_on_threads, share_out
from .vecmath import load3, load4

N_CODES = 16
"""Kind-pair codes ``kind_a * 4 + kind_b`` range over 0..15 (only ``kind_a <= kind_b`` occur)."""
PARALLEL_PAIRS = 256
"""The fewest candidate pairs that ``collide_pairs`` shares out over the threads: below, handing the
shares to the pool's threads (some tens of µs) would cost more than the pair tests it shares."""
SHARES = 32
"""How many shares the pairs are cut into (``collide_shares``), whatever the thread count: the threads
take the next share from a shared counter until none is left."""
SHARE_ROWS = 512
"""Pairs per run of a share (see ``collide_shares``), each run sorted by kind pair on its own: long enough
that each kind's loop runs long (in runs of 64 the S1 pile of 4096 collided 0.5 ms a step slower on one
thread: its boxes' and balls' pair tests took turns every dozen pairs)."""


@helper
def _dispatch(ka, kb, pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Call the pair test for kinds ``ka <= kb`` on one pair; returns its point count."""
    code = ka * 4 + kb
    if code == SPHERE * 4 + SPHERE:
        return sphere_sphere(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == SPHERE * 4 + BOX:
        return sphere_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == SPHERE * 4 + CAPSULE:
        return sphere_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == SPHERE * 4 + HULL:
        return sphere_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == BOX * 4 + BOX:
        return box_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == BOX * 4 + CAPSULE:
        return box_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == BOX * 4 + HULL:
        return box_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == CAPSULE * 4 + CAPSULE:
        return capsule_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == CAPSULE * 4 + HULL:
        return capsule_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    if code == HULL * 4 + HULL:
        return hull_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
    return 0


@helper
def _ordered_pair(pairs, p, kind):
    """Bodies of pair ``p`` ordered so that ``kind[a] <= kind[b]``."""
    a = pairs[p, 0]
    b = pairs[p, 1]
    if kind[a] > kind[b]:
        return b, a
    return a, b


@helper
def _pair_args(p, bodies):
    """Pair ``p``'s arguments for its pair test, bodies in kind order: the poses, the params rows as
    4-tuples and the summed margin. ``bodies = (pairs, kind, params, pos, quat, margin_body)``."""
    pairs, kind, params, pos, quat, margin_body = bodies
    a, b = _ordered_pair(pairs, p, kind)
    return (load3(pos, a), load4(quat, a), load4(params, a), load3(pos, b), load4(quat, b), load4(params, b),
            margin_body[a] + margin_body[b])


@helper
def _store_manifold(p, k, scratch, out):
    """Copy a pair test's result (``k`` points in the ``scratch`` arrays) into row ``p`` of ``out``."""
    normal, pts_a, pts_b, depths = scratch
    out_normal, out_npoints, out_pa, out_pb, out_depth = out
    out_npoints[p] = k
    for c in range(3):
        out_normal[p, c] = normal[c]
    for i in range(k):
        for c in range(3):
            out_pa[p, i, c] = pts_a[i, c]
            out_pb[p, i, c] = pts_b[i, c]
        out_depth[p, i] = depths[i]


@helper(inline="always")
def _collide_bucket(code, job):
    """The dispatch table: run the pair test of kind pair ``code`` on every pair of its bucket, in a
    loop of its own. ``job`` is ``collide_shares``'s tuple ``(order, lo, hi, bodies, H, scratch, out,
    trace)``:
    the bucket is ``order[lo:hi]``, and the manifold of pair ``p`` goes to row ``p`` of the ``out``
    arrays (``out_npoints[p] = 0`` when it has none)."""
    # inlined: as a compiled function of its own, this thin wrapper would have numba link and optimise
    # again the whole tree of kernels below it (see ``bench.compile --by-function``)
    order, lo, hi, bodies, H, scratch, out, trace = job
    normal, pts_a, pts_b, depths = scratch
    if code == SPHERE * 4 + SPHERE:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = sphere_sphere(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == SPHERE * 4 + BOX:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = sphere_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == SPHERE * 4 + CAPSULE:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = sphere_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == SPHERE * 4 + HULL:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = sphere_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == BOX * 4 + BOX:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = box_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == BOX * 4 + CAPSULE:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = box_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == BOX * 4 + HULL:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = box_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == CAPSULE * 4 + CAPSULE:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = capsule_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == CAPSULE * 4 + HULL:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = capsule_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)
    elif code == HULL * 4 + HULL:
        for r in range(lo, hi):
            pa, qa, prm_a, pb, qb, prm_b, margin = _pair_args(order[r], bodies)
            k = hull_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace)
            _store_manifold(order[r], k, scratch, out)


@helper
def _sort_run(pairs, lo, hi, kind, source, order, start):
    """Pairs ``lo`` to ``hi`` − 1 by kind pair, a stable counting sort (Cormen et al., §8.2): their
    indices into ``order`` from ``lo`` on, bucket by bucket, leaving out those whose manifold came from
    the cache (``source`` ≥ 0); ``start`` (``N_CODES + 1`` entries) receives the buckets' bounds in
    ``order``."""
    for code in range(N_CODES + 1):
        start[code] = 0
    for p in range(lo, hi):
        if source[p] >= 0:
            continue
        a, b = _ordered_pair(pairs, p, kind)
        start[kind[a] * 4 + kind[b] + 1] += 1
    start[0] = lo
    for code in range(N_CODES):
        start[code + 1] += start[code]
    for p in range(lo, hi):
        if source[p] >= 0:
            continue
        a, b = _ordered_pair(pairs, p, kind)
        code = kind[a] * 4 + kind[b]
        order[start[code]] = p
        start[code] += 1
    # each bucket's fill stopped at the next one's start: shift back by one bucket
    for code in range(N_CODES, 0, -1):
        start[code] = start[code - 1]
    start[0] = lo


@kernel(same_types=True)
def collide_shares(claims, shares, npairs, order, bodies, H, out, source):
    """The first pass of ``collide_pairs``, nearly all its work: the next share not yet taken of
    ``shares`` (counted in ``claims[0]``, ``atomics.py``), again until none is left, each share the runs
    of ``SHARE_ROWS`` pairs r with r mod ``shares`` its number, so that every share gets some of each kind
    pair (their costs differ a hundredfold: a sphere pair against a hull pair) and writes its rows in
    runs (few cache lines shared with another share). A run's pairs are sorted by kind pair into its rows
    of ``order`` (``_sort_run``) and each kind's taken in a loop of its own (``_collide_bucket``). ``bodies
    = (pairs, kind, params, pos, quat, margin_body)``, ``out`` the five output arrays; the manifold of pair
    ``p`` goes to row ``p``, except where the manifold cache has given the pair its manifold already
    (``source[p]`` ≥ 0, ``manifold_cache.reuse_manifolds``). Uses scratch arrays of its own and releases
    the GIL (as every kernel does), so that several threads can run it at once on different shares.

    Shares taken from a counter rather than dealt out in turn (thread i of n taking shares i, i + n, …):
    the pool's worker starts some tens of µs after the calling thread, which then waited for it at the
    end, and a thread that the machine slows (another program on its core) held the stage back by its
    whole half; now the first to be free takes the next share. In whole steps on this project's noisy
    two-core machine the difference was within the noise (S3 on two threads, six runs each alternated:
    7.24-11.6 ms against 7.26-10.9). Which thread runs a share changes nothing in its rows.

    Each run sorted on its own, on the threads, rather than all the pairs at once before them: that sort
    was a serial pass of its own, 90 µs a step on S3's 19,000 pairs, 140 on the S1 pile of 4096. With
    two threads, the narrow phase then took 850 µs a step against 950 on S3, 1980 against 2040 on the
    pile; on one, 1190 against 1250 and 3220 against 3160 (medians of four alternated runs each, twenty-
    third session)."""
    normal, pts_a, pts_b = np.zeros(3), np.zeros((MAX_POINTS, 3)), np.zeros((MAX_POINTS, 3))
    depths = np.zeros(MAX_POINTS)
    start = np.zeros(N_CODES + 1, np.int64)
    # every array the pair tests are handed, borrowed (refcount.py): a pair test that LLVM does not inline
    # would otherwise count references to each of them around every call, most of the time of a sphere
    # pair. The arrays themselves outlive the loop: the caller's are the caller's to keep, the scratch
    # above is kept by keep_alive after the loop (numba would free it right after this line otherwise)
    scratch = borrow((normal, pts_a, pts_b, depths))
    bodies, out, H, order, source = borrow((bodies, out, H, order, source))
    pairs, kind = bodies[0], bodies[1]
    # a trace buffer without rows: a step records nothing (narrow_trace.py; StepTrace.pair retraces a pair)
    trace = step_buffer()
    t = atomic_add(claims, 0, 1)
    while t < shares:
        lo = t * SHARE_ROWS
        while lo < npairs:
            hi = min(lo + SHARE_ROWS, npairs)
            _sort_run(pairs, lo, hi, kind, source, order, start)
            for code in range(N_CODES):
                if start[code + 1] > start[code]:
                    _collide_bucket(code, (order, start[code], start[code + 1], bodies, H, scratch, out,
                                           trace))
            lo += shares * SHARE_ROWS
        t = atomic_add(claims, 0, 1)
    keep_alive((normal, pts_a, pts_b, depths, start))


@kernel(same_types=True)
def _compact(pairs, npairs, kind, out_a, out_b, out_npoints, source, row_of):
    """The second pass of ``collide_pairs``: the rows that hold a manifold, numbered in the pairs' order
    from 0; returns how many. Manifold m gets its bodies in kind order (``out_a``, ``out_b``), its point
    count and ``source`` entry moved down to row m, and ``row_of[m]`` the row its normal, points and
    depths are still in (``move_rows`` moves them)."""
    m = 0
    for p in range(npairs):
        k = out_npoints[p]
        if k == 0:
            continue
        a, b = _ordered_pair(pairs, p, kind)
        out_a[m] = a
        out_b[m] = b
        row_of[m] = p
        if m != p:
            out_npoints[m] = k
            source[m] = source[p]
        m += 1
    return m


@kernel(same_types=True)
def move_rows(m, row_of, out_normal, out_npoints, out_pa, out_pb, out_depth):
    """The narrow phase's last pass: manifold i's normal, points and depths (``out_npoints[i]`` of them)
    moved down from row ``row_of[i]`` to row i, for i = 0, …, ``m`` − 1, in that order, in place: a row
    is written only once it has been read, since ``row_of`` increases and ``row_of[i]`` ≥ i."""
    for i in range(m):
        p = row_of[i]
        if p == i:
            continue
        for c in range(3):
            out_normal[i, c] = out_normal[p, c]
        for j in range(out_npoints[i]):
            for c in range(3):
                out_pa[i, j, c] = out_pa[p, j, c]
                out_pb[i, j, c] = out_pb[p, j, c]
            out_depth[i, j] = out_depth[p, j]


def collide_pairs(pairs: np.ndarray, npairs: int, kind: np.ndarray, params: np.ndarray, pos: np.ndarray,
                  quat: np.ndarray, H: HullArrays, margin_body: np.ndarray, out_a: np.ndarray,
                  out_b: np.ndarray, out_normal: np.ndarray, out_npoints: np.ndarray, out_pa: np.ndarray,
                  out_pb: np.ndarray, out_depth: np.ndarray, source: np.ndarray | None = None,
                  reused: int = 0, row_of: np.ndarray | None = None) -> int:
    """Manifolds of the candidate pairs ``pairs[:npairs]`` ((P, 2) body rows), written compactly into
    the ``out_*`` arrays (sized ≥ ``npairs`` by the caller) in the order of the pairs; returns the number
    of manifolds.

    Each pair is ordered so that ``kind[a] <= kind[b]`` (``out_a``/``out_b`` record that order; the
    normal points from ``out_a`` to ``out_b``) and tested with margin ``margin_body[a] + margin_body[b]``:
    pairs farther apart than that give no manifold, closer ones give points with depth down to -margin.
    ``pos`` holds centres of mass, ``quat`` orientations (x, y, z, w), ``H`` the hull table.

    With ``source`` (sized ≥ ``npairs``), the pairs p with ``source[p]`` ≥ 0 already have their
    manifold in row p of the ``out_*`` arrays, from the manifold cache (``manifold_cache.reuse_manifolds``,
    ``source[p]`` its entry's row): they are not collided, and ``source`` is compacted with the rows, so
    that ``source[m]`` names the entry manifold m came from, or −1. With ``reused`` = ``npairs`` (every
    pair's manifold from the cache, its bodies in ``out_a``/``out_b`` too: a resting pile or pyramid)
    there is nothing to collide or move, and no pass runs (the S2 pyramid: some 15 µs of a 0.7 ms step).

    Three passes: the pairs in runs, each sorted by kind pair into ``out_a`` (used as scratch) and taken
    one kind at a time, pair ``p``'s manifold written to row ``p`` (``collide_shares``); then the rows
    that hold a manifold are moved down to the front, which keeps the pairs' order (the solver's warm
    start merges manifolds sorted by body pair): first their bodies, point counts and ``source``
    (``_compact``), then their normals, points and depths (``move_rows``). With ``row_of`` (sized ≥
    ``npairs``) the last pass is left to the caller: ``row_of[m]`` names the row that manifold m's
    normal, points and depths stay in until ``move_rows(m, row_of, out_normal, out_npoints, out_pa,
    out_pb, out_depth)`` moves them (with ``reused`` = ``npairs`` every row is in place already, and
    ``row_of`` is not written). What that buys: the bodies and point counts are all the colouring
    reads, so the move, four fifths of the compaction (on S3's 24,000 pairs 330 µs alone against 74 for
    the first part), runs on a worker beside it (``World._respond``): on S3 on two threads the collide
    stage took 120 µs a step less and the contact preparation 60-100 more, whole steps 10-33 µs less
    (20th percentile) and 38-100 less (median) in four runs alternated every ten steps on one world; on
    the S1 pile of 4096, where the worker's part was already the longer, whole steps within the noise.

    The first pass runs on the threads once there are ``PARALLEL_PAIRS`` pairs: ``SHARES`` shares, taken
    by ``threads_in_use()`` threads (``threads.run_on_threads``: the calling thread and a pool's
    workers, each in ``collide_shares`` with the GIL released). Each pair writes only its own row, so the
    manifolds are the same bit for bit whatever the thread count. It is a thread pool, not a ``prange``, on
    purpose: numba compiles a parallel loop's body as a kernel of its own and wraps it twice more, each
    time optimising again everything it calls, here every pair test: the narrow phase compiled five
    times over, some 18 s of CPU (``bench.compile``). A step launches it once, so the pool's hand-off
    (tens of µs) costs nothing that matters."""
    if reused == npairs:
        return npairs
    order = out_a
    bodies = (pairs, kind, params, pos, quat, margin_body)
    out = (out_normal, out_npoints, out_pa, out_pb, out_depth)
    if source is None:
        source = np.full(max(npairs, 1), -1, np.int64)
    threads, shares = share_out(npairs, PARALLEL_PAIRS, SHARES)
    claims = np.zeros(1, np.int64)
    run_on_threads(lambda i, n: collide_shares(claims, shares, npairs, order, bodies, H, out, source),
                   threads, more=True)
    later = row_of is not None
    if not later:
        row_of = np.empty(max(npairs, 1), np.int64)
    m = _compact(pairs, npairs, kind, out_a, out_b, out_npoints, source, row_of)
    if not later:
        move_rows(m, row_of, out_normal, out_npoints, out_pa, out_pb, out_depth)
    return m


@kernel
def collide_one(ka, pa, qa, prm_a, kb, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Manifold of one pair in either kind order: when ``ka > kb`` the pair test runs with the bodies
    exchanged and the result is turned back (normal flipped, point sets exchanged), so that the normal
    always points from the first body to the second. ``prm_a``, ``prm_b``: (4,) params arrays (passed
    on as tuples, as ``collide_pairs`` does). Returns the point count. ``trace``: the pair test's trace
    buffer (``narrow_trace.py``; ``no_trace()`` records nothing), written in kind order (A the body of
    the lower kind) whichever order the bodies come in."""
    ta = (prm_a[0], prm_a[1], prm_a[2], prm_a[3])
    tb = (prm_b[0], prm_b[1], prm_b[2], prm_b[3])
    if ka <= kb:
        return _dispatch(ka, kb, pa, qa, ta, pb, qb, tb, H, margin, normal, pts_a, pts_b, depths, trace)
    k = _dispatch(kb, ka, pb, qb, tb, pa, qa, ta, H, margin, normal, pts_b, pts_a, depths, trace)
    for c in range(3):
        normal[c] = -normal[c]
    return k
