"""Reusing last step's manifolds for pairs that have hardly moved relative to each other (Jolt's body
pair cache): two boxes resting on each other give the same contact manifold step after step, so while
body B's pose in body A's frame stays within ``CACHE_DISTANCE`` and ``CACHE_ANGLE`` of the pose the
manifold was computed at, its points are taken from the cache (kept in each body's own frame) and only
mapped to the world again, with their depths measured anew. A pair that moves more is collided afresh.

The cache is a list of manifolds sorted by pair key ``min(a, b)·n + max(a, b)``, like the candidate pairs
of the broad phase, so finding a pair's entry is one merge.
"""

from __future__ import annotations

import math

import numpy as np

from .atomics import atomic_add
from .jit import helper, kernel
from .layout import CAPSULE, SPHERE, pair_key
from .records import CachedManifolds, Manifolds
from .threads import run_on_threads, share_out
from .vecmath import add, dot, load3, load4, quat_conj, quat_inv_rotate, quat_mul, quat_rotate, store3, sub

CACHE_DISTANCE = 1e-3  # m
CACHE_ANGLE = math.radians(2.0)


@helper
def relative_pose(pos, quat, a, b):
    """Body b's centre and orientation in body a's frame."""
    qa = load4(quat, a)
    return quat_inv_rotate(qa, sub(load3(pos, b), load3(pos, a))), quat_mul(quat_conj(qa), load4(quat, b))


@helper
def round_pair(kind, a, b):
    """Whether bodies ``a`` and ``b`` make a pair with a sphere or a capsule, which is never reused (see
    ``find_reusable``)."""
    ka, kb = kind[a], kind[b]
    return ka == SPHERE or ka == CAPSULE or kb == SPHERE or kb == CAPSULE


@kernel
def find_reusable(pairs, npairs, kind, pos, quat, nbodies, cache, cm, reuse, todo):
    """For each candidate pair p: ``reuse[p]`` = the cache row of its manifold when the pair's relative
    pose is still within the tolerances of the one that manifold was computed at, else −1; the pairs
    without a reusable manifold are listed in ``todo`` (rows of ``pairs``, in order). ``cache`` is the
    ``CachedManifolds`` record, ``cm`` its number of entries, ``kind`` the bodies' shape kinds. Returns
    the number of pairs in ``todo``.

    A pair with a sphere or a capsule is never reused: on a round surface the contact point is not a
    point of the body but the one now lowest, and it slides over the surface as the body rolls. Kept in
    the body's frame, a cached point rolled away with the body, up to 1 mm before the pair was collided
    again, and the normal force, off the centre by as much, drove the rolling: a ball let roll at
    0.1 mm/s on the ground reached 1 cm/s in 2 s. (Colliding a sphere or a capsule costs little.)"""
    ck, cab, cpose = cache.keys, cache.bodies, cache.pose
    half = math.cos(0.5 * CACHE_ANGLE)
    j = 0
    nt = 0
    for p in range(npairs):
        a = pairs[p, 0]
        b = pairs[p, 1]
        reuse[p] = -1
        # a round pair first: it needs no look-up (S3's 4000 balls: no pair reads the cache). The merge
        # stays right: the keys rise with p, so the next pair that looks catches up from where it stood
        if round_pair(kind, a, b):
            todo[nt, 0] = a
            todo[nt, 1] = b
            nt += 1
            continue
        key = pair_key(a, b, nbodies)
        while j < cm and ck[j] < key:
            j += 1
        if j < cm and ck[j] == key:
            ea = cab[j, 0]
            eb = cab[j, 1]
            t, q = relative_pose(pos, quat, ea, eb)
            dt = sub(t, load3(cpose, j))
            q0 = (cpose[j, 3], cpose[j, 4], cpose[j, 5], cpose[j, 6])
            # the rotation from the cached relative orientation to the current one: cos(angle/2) = |q0·q|
            c = abs(q0[0] * q[0] + q0[1] * q[1] + q0[2] * q[2] + q0[3] * q[3])
            if dot(dt, dt) < CACHE_DISTANCE * CACHE_DISTANCE and c > half:
                reuse[p] = j
        if reuse[p] < 0:
            todo[nt, 0] = pairs[p, 0]
            todo[nt, 1] = pairs[p, 1]
            nt += 1
    return nt


ROW_SHARES = 32
"""How many shares ``merge_manifolds`` and ``remember_manifolds`` cut the manifold rows into for the
threads, whatever their number (each thread takes the next share not yet taken)."""
PARALLEL_ROWS = 2048
"""The fewest rows (reused manifolds to map, entries to remember) that ``merge_manifolds`` and
``remember_manifolds`` share out over the threads: below, the hand-off to the pool's threads costs more
than the rotations. A row costs some 0.1 µs on one thread; a hand-off some 80 µs of the step on this
project's two-core machine (the worker starts 40-60 µs after the call, and the calling thread notices the
end some 20 µs late), which a second thread pays back from some 1600 rows. Measured on the S1 pile of
4096 mid-collapse (700-1000 manifolds reused, 2000-3700 entries a step), two threads, alternately: the
merge and the remembering took 560-630 µs a step on the calling thread against 770-800 µs shared out
from 256 rows up (twenty-third session)."""


@kernel
def place_manifolds(pairs, npairs, reuse, nfresh, out, source, pos, quat, cache, map_here):
    """The first pass of ``merge_manifolds``: where each candidate pair's manifold goes, in pair order. The
    ``nfresh`` manifolds that ``collide_pairs`` wrote into rows ``[:nfresh]`` of ``out`` (from the
    ``todo`` pairs, in the same order) are moved to their rows; a reused pair's row only gets its cache
    row in ``source`` (``map_rows`` writes the manifold: here with ``map_here``, else ``map_cached_rows``
    on the threads), a fresh one's −1. Returns the number of manifolds.

    The pass runs from the back, as merge sort merges in place into an array that holds one of its inputs
    at its front: the row written is never below the fresh row still to be read, so the fresh manifolds
    need no array of their own (a second set of manifold arrays as large as the first). The reused rows
    are written afterwards, once every fresh row has been read."""
    oa, ob, onormal, onp = out.body_a, out.body_b, out.normal, out.npoints
    opa, opb, odepth = out.points_a, out.points_b, out.depth
    total = nfresh
    for p in range(npairs):
        if reuse[p] >= 0:
            total += 1
    f = nfresh - 1
    m = total
    for p in range(npairs - 1, -1, -1):
        r = reuse[p]
        if r >= 0:
            m -= 1
            source[m] = r
            continue
        a = pairs[p, 0]
        b = pairs[p, 1]
        if f >= 0 and ((oa[f] == a and ob[f] == b) or (oa[f] == b and ob[f] == a)):
            m -= 1
            if m != f:
                oa[m] = oa[f]
                ob[m] = ob[f]
                for c in range(3):
                    onormal[m, c] = onormal[f, c]
                onp[m] = onp[f]
                for k in range(onp[f]):
                    for c in range(3):
                        opa[m, k, c] = opa[f, k, c]
                        opb[m, k, c] = opb[f, k, c]
                    odepth[m, k] = odepth[f, k]
            source[m] = -1
            f -= 1
    if map_here:
        map_rows(int(0), total, pos, quat, cache, out, source)
    return total


@helper
def map_rows(lo, hi, pos, quat, cache, out, source):
    """Rows ``lo`` to ``hi`` − 1 of ``out`` whose manifold comes from the cache (``source[m]`` = its
    entry, ≥ 0) get it: the points mapped from the bodies' frames to the world, the normal from A's frame,
    the depths (pa − pb)·n measured now."""
    cab, cn, cnp, cla, clb = cache.bodies, cache.normal, cache.npoints, cache.points_a, cache.points_b
    cfirst = cache.first
    oa, ob, onormal, onp = out.body_a, out.body_b, out.normal, out.npoints
    opa, opb, odepth = out.points_a, out.points_b, out.depth
    for m in range(lo, hi):
        r = source[m]
        if r < 0:
            continue
        a = cab[r, 0]
        b = cab[r, 1]
        qa = load4(quat, a)
        qb = load4(quat, b)
        xa = load3(pos, a)
        xb = load3(pos, b)
        n = quat_rotate(qa, load3(cn, r))
        oa[m] = a
        ob[m] = b
        store3(onormal, m, n)
        onp[m] = cnp[r]
        for k in range(cnp[r]):
            pa = add(xa, quat_rotate(qa, load3(cla, cfirst[r] + k)))
            pb = add(xb, quat_rotate(qb, load3(clb, cfirst[r] + k)))
            for c in range(3):
                opa[m, k, c] = pa[c]
                opb[m, k, c] = pb[c]
            odepth[m, k] = dot(sub(pa, pb), n)


@kernel(nogil=True)
def map_cached_rows(claims, shares, total, pos, quat, cache, out, source):
    """The second pass of ``merge_manifolds`` on the threads: ``map_rows`` over the rows below ``total``
    cut into ``shares`` runs, the calling thread taking the next run not yet taken (counted in
    ``claims[0]``, ``atomics.py``) until none is left. Releases the GIL: each thread of
    ``threads.run_on_threads`` runs it, and each row is written by one of them only."""
    t = atomic_add(claims, 0, 1)
    while t < shares:
        map_rows(t * total // shares, (t + 1) * total // shares, pos, quat, cache, out, source)
        t = atomic_add(claims, 0, 1)


def merge_manifolds(pairs: np.ndarray, npairs: int, pos: np.ndarray, quat: np.ndarray, reuse: np.ndarray,
                    reused: int, cache: CachedManifolds, nfresh: int, out: Manifolds,
                    source: np.ndarray) -> int:
    """The manifolds of all candidate pairs, in pair order, into ``out``: a reused pair's from its ``cache``
    row (``reuse[p]``, ``reused`` pairs in all; points mapped from the bodies' frames to the world, normal
    from A's frame, depths measured now), the others from the ``nfresh`` manifolds that ``collide_pairs``
    wrote into rows ``[:nfresh]`` of ``out`` itself. ``source[m]`` receives the cache row a manifold came
    from, or −1 for a fresh one. Returns the number of manifolds.

    Two passes: ``place_manifolds`` finds every row and moves the fresh manifolds into theirs, in place
    (serial: a row may be read only before it is written); ``map_rows`` then writes the reused ones, each
    row on its own: shared out over the threads (``map_cached_rows``, ``threads.run_on_threads``) from
    ``PARALLEL_ROWS`` reused manifolds up, else at the end of the first pass (one kernel call, not two:
    the S2 pyramid's step is some 0.7 ms, and each call of a kernel handed these records costs a µs or
    two). What it buys: the mapping, two rotations per point, is most of the merge (on the S1 pile of 4096
    mid-collapse some 0.45 ms a step of one thread), and it now runs on all of them; the rows are the same
    bit for bit whichever thread writes them. With nothing reused (a world of balls, whose pairs never
    are) the fresh manifolds are all of them, already in pair order: no pass at all (118 µs a step of
    S3)."""
    if reused == 0:
        source[:nfresh] = -1
        return nfresh
    threads, shares = share_out(reused, PARALLEL_ROWS, ROW_SHARES)
    total = place_manifolds(pairs, npairs, reuse, nfresh, out, source, pos, quat, cache, threads == 1)
    if threads > 1:
        claims = np.zeros(1, np.int64)
        run_on_threads(lambda i, n: map_cached_rows(claims, shares, total, pos, quat, cache, out, source),
                       threads)
    return total


@kernel
def move_entries(m, manifolds, source, kind, entry_of, frame_below, pos, quat, nbodies, cache):
    """The first pass of ``remember_manifolds``: which of this step's ``m`` ``manifolds`` get an entry (those
    without a sphere or a capsule, the pairs ``find_reusable`` may reuse: manifold ``entry_of[j]`` gets
    entry j), every entry's first point (``cache.first``), and each reused entry (its manifold's
    ``source`` ≥ 0) moved from its old row to its new one, its points with it. Returns the number of
    entries and of their points. With fewer entries than ``frame_below``, the second pass
    (``frame_rows``) follows here, over every entry.

    In place, with no second set of entries: the reused entries keep their order (both lists are sorted
    by pair, so sources rise with rows, and so do their points). Those that move to a lower row (source
    above it) are moved first, front to back, each reading a row not yet written; then those that move
    to a higher row, back to front, likewise. No entry of the first pass writes a row r that the second
    reads: that entry (row r) would lie below the reader, so (rising sources) its source would lie below
    r: it would move up. The points move the same way, by where their first point goes."""
    body_a, body_b, npoints = manifolds.body_a, manifolds.body_b, manifolds.npoints
    cpose, cn, cfirst, cla, clb = cache.pose, cache.normal, cache.first, cache.points_a, cache.points_b
    n = 0
    for i in range(m):
        if not round_pair(kind, body_a[i], body_b[i]):
            entry_of[n] = i
            n += 1
    old_first = np.empty(n, np.int64)  # each reused entry's first point in the old layout
    for j in range(n):
        r = source[entry_of[j]]
        old_first[j] = cfirst[r] if r >= 0 else -1
    k = 0
    for j in range(n):
        cfirst[j] = k
        k += npoints[entry_of[j]]
    for j in range(n):
        i = entry_of[j]
        r = source[i]
        if r > j:
            _copy_row(cpose, j, r, 7)
            _copy_row(cn, j, r, 3)
        if old_first[j] > cfirst[j]:
            for p in range(npoints[i]):
                _copy_row(cla, cfirst[j] + p, old_first[j] + p, 3)
                _copy_row(clb, cfirst[j] + p, old_first[j] + p, 3)
    for j in range(n - 1, -1, -1):
        i = entry_of[j]
        r = source[i]
        if 0 <= r < j:
            _copy_row(cpose, j, r, 7)
            _copy_row(cn, j, r, 3)
        if 0 <= old_first[j] < cfirst[j]:
            for p in range(npoints[i] - 1, -1, -1):
                _copy_row(cla, cfirst[j] + p, old_first[j] + p, 3)
                _copy_row(clb, cfirst[j] + p, old_first[j] + p, 3)
    if n < frame_below:
        frame_rows(int(0), n, manifolds, source, entry_of, pos, quat, nbodies, cache)
    return n, k


@helper
def frame_rows(lo, hi, manifolds, source, entry_of, pos, quat, nbodies, cache):
    """Entries ``lo`` to ``hi`` − 1 (of manifolds ``entry_of[lo:hi]``): each gets its pair's key, bodies and
    point count, and a fresh one (``source`` < 0) its pose, normal and points in its bodies' frames."""
    body_a, body_b, normal, npoints = manifolds.body_a, manifolds.body_b, manifolds.normal, manifolds.npoints
    points_a, points_b = manifolds.points_a, manifolds.points_b
    ck, cab, cpose, cn, cnp = cache.keys, cache.bodies, cache.pose, cache.normal, cache.npoints
    cfirst, cla, clb = cache.first, cache.points_a, cache.points_b
    for j in range(lo, hi):
        i = entry_of[j]
        a = body_a[i]
        b = body_b[i]
        ck[j] = pair_key(a, b, nbodies)
        cab[j, 0] = a
        cab[j, 1] = b
        cnp[j] = npoints[i]
        if source[i] >= 0:
            continue
        rel, q = relative_pose(pos, quat, a, b)
        qa = load4(quat, a)
        qb = load4(quat, b)
        xa = load3(pos, a)
        xb = load3(pos, b)
        for c in range(3):
            cpose[j, c] = rel[c]
        for c in range(4):
            cpose[j, 3 + c] = q[c]
        store3(cn, j, quat_inv_rotate(qa, load3(normal, i)))
        for p in range(npoints[i]):
            pa = (points_a[i, p, 0], points_a[i, p, 1], points_a[i, p, 2])
            pb = (points_b[i, p, 0], points_b[i, p, 1], points_b[i, p, 2])
            store3(cla, cfirst[j] + p, quat_inv_rotate(qa, sub(pa, xa)))
            store3(clb, cfirst[j] + p, quat_inv_rotate(qb, sub(pb, xb)))


@kernel(nogil=True)
def frame_entries(claims, shares, n, manifolds, source, entry_of, pos, quat, nbodies, cache):
    """The second pass of ``remember_manifolds`` on the threads: ``frame_rows`` over the ``n`` entries cut
    into ``shares`` runs, the calling thread taking the next run not yet taken (``claims[0]``,
    ``atomics.py``) until none is left. Releases the GIL: each thread of ``threads.run_on_threads`` runs
    it; each entry is written by one of them only, and reads nothing another writes."""
    t = atomic_add(claims, 0, 1)
    while t < shares:
        frame_rows(t * n // shares, (t + 1) * n // shares, manifolds, source, entry_of, pos, quat, nbodies,
                   cache)
        t = atomic_add(claims, 0, 1)


def remember_manifolds(m: int, manifolds: Manifolds, source: np.ndarray, kind: np.ndarray, pos: np.ndarray,
                       quat: np.ndarray, nbodies: int, cache: CachedManifolds) -> tuple[int, int]:
    """Make ``cache`` (holding last step's entries) this step's, from this step's ``m`` ``manifolds``;
    returns the number of entries and of their points. A manifold of a pair with a sphere or a capsule,
    which ``find_reusable`` never reuses, gets no entry. A reused one keeps its old entry (row
    ``source[i]``, and so the pose it was computed at, which keeps the tolerance from creeping), a fresh
    one is stored in its bodies' frames with the relative pose of now.

    Two passes: ``move_entries`` picks the manifolds that get an entry and moves the reused entries to
    their new rows, in place (serial: a row may be read only before it is written); ``frame_rows`` then
    writes every entry's pair and each fresh one's frames, which read no old row, each entry on its own:
    shared out over the threads (``frame_entries``, ``threads.run_on_threads``) from ``PARALLEL_ROWS``
    entries up, else at the end of the first pass (one kernel call, as in ``merge_manifolds``). What the
    threads buy: the frames, two rotations per point, are most of it (on the S1 pile of 4096 mid-collapse
    some 0.37 ms a step of one thread); the entries are the same bit for bit whichever thread writes
    them. What leaving out the round pairs buys: S3's 4000 balls, some 12,000 manifolds, keep no entry
    where each had one (its key, bodies and point count, and zeros for the rest): 0.23 ms a step of one
    thread, and as much on two, where the pool's hand-off cost what the second thread saved; on the S1
    pile, three manifolds in four are round."""
    threads, shares = share_out(m, PARALLEL_ROWS, ROW_SHARES)
    entry_of = np.empty(max(m, 1), np.int64)
    frame_below = PARALLEL_ROWS if threads > 1 else m + 1  # fewer entries are framed in the first pass
    n, points = move_entries(m, manifolds, source, kind, entry_of, frame_below, pos, quat, nbodies, cache)
    if n >= frame_below:
        claims = np.zeros(1, np.int64)
        run_on_threads(lambda i, k: frame_entries(claims, shares, n, manifolds, source, entry_of, pos, quat,
                                                  nbodies, cache), threads)
    return n, points


@helper
def _copy_row(a, i, r, width):
    """Row ``r`` of the 2-D array ``a`` (its first ``width`` columns) into row ``i``."""
    for c in range(width):
        a[i, c] = a[r, c]
