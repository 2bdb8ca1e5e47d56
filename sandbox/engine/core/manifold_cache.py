"""Reusing last step's manifolds for pairs that have hardly moved relative to each other (Jolt's body
pair cache): two boxes resting on each other give the same contact manifold step after step, so while
body B's pose in body A's frame stays within ``CACHE_DISTANCE`` and ``CACHE_ANGLE`` of the pose the
manifold was computed at, its points are taken from the cache (kept in each body's own frame) and only
mapped to the world again, with their depths measured anew. A pair that moves more is collided afresh.

The cache is a list of manifolds sorted by pair key ``min(a, b)·n + max(a, b)``, like the candidate pairs
of the broad phase, so finding the entries of a run of pairs is one merge. Before the narrow phase
collides anything, each candidate pair whose manifold the cache can give gets it, on the threads
(``reuse_manifolds``); the narrow phase collides the others (``narrowphase.collide_pairs``), and
``remember_manifolds`` then makes the step's manifolds the cache.
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
    ``reuse_rows``)."""
    ka, kb = kind[a], kind[b]
    return ka == SPHERE or ka == CAPSULE or kb == SPHERE or kb == CAPSULE


@helper
def reuse_rows(lo, hi, pairs, kind, pos, quat, nbodies, cache, cm, out, source):
    """Candidate pairs ``lo`` to ``hi`` − 1: each pair without a sphere or a capsule that has an entry
    among the first ``cm`` of ``cache`` whose relative pose is still within ``CACHE_DISTANCE`` and
    ``CACHE_ANGLE`` of the one the entry was computed at gets the entry's manifold in its row p of
    ``out`` (a ``Manifolds`` record; bodies A and B, normal, point count, points on A and on B, depths:
    the points mapped from the bodies' frames to the world, the normal from A's frame, the depths
    (pa − pb)·n measured now) and ``source[p]`` = the entry's row; every other pair ``source[p]`` = −1.
    Returns how many were reused.

    The pairs are sorted, and so are the entries, by pair key: the entries are found in one merge, from
    the first entry not below the first pair's key (``first_row``) on.

    A pair with a sphere or a capsule is never reused: on a round surface the contact point is not a
    point of the body but the one now lowest, and it slides over the surface as the body rolls. Kept in
    the body's frame, a cached point rolled away with the body, up to 1 mm before the pair was collided
    again, and the normal force, off the centre by as much, drove the rolling: a ball let roll at 0.1
    mm/s on the ground reached 1 cm/s in 2 s. (Colliding a sphere or a capsule costs little.)

    One loop, with no call that is handed the records' arrays: with the test and the mapping in a
    function of their own, numba counted references to each of its some twenty arrays at every call and
    the pass took five times as long (0.61 ms a step against 0.11 on the S1 pile of 4096)."""
    ck, cab, cpose, cn, cnp = cache.keys, cache.bodies, cache.pose, cache.normal, cache.npoints
    cfirst, cla, clb = cache.first, cache.points_a, cache.points_b
    oa, ob, onormal, onp = out.body_a, out.body_b, out.normal, out.npoints
    opa, opb, odepth = out.points_a, out.points_b, out.depth
    cos_limit = math.cos(0.5 * CACHE_ANGLE)
    j = first_row(ck, cm, pair_key(pairs[lo, 0], pairs[lo, 1], nbodies)) if lo < hi else 0
    reused = 0
    for p in range(lo, hi):
        source[p] = -1
        if round_pair(kind, pairs[p, 0], pairs[p, 1]):
            continue
        key = pair_key(pairs[p, 0], pairs[p, 1], nbodies)
        while j < cm and ck[j] < key:
            j += 1
        if j == cm or ck[j] != key:
            continue
        a = cab[j, 0]
        b = cab[j, 1]
        t, q = relative_pose(pos, quat, a, b)
        dt = sub(t, load3(cpose, j))
        # the rotation from the cached relative orientation to the current one: cos(angle/2) = |q0·q|
        cos_half = abs(cpose[j, 3] * q[0] + cpose[j, 4] * q[1] + cpose[j, 5] * q[2] + cpose[j, 6] * q[3])
        if not (dot(dt, dt) < CACHE_DISTANCE * CACHE_DISTANCE and cos_half > cos_limit):
            continue
        qa = load4(quat, a)
        qb = load4(quat, b)
        xa = load3(pos, a)
        xb = load3(pos, b)
        n = quat_rotate(qa, load3(cn, j))
        oa[p] = a
        ob[p] = b
        store3(onormal, p, n)
        onp[p] = cnp[j]
        for k in range(cnp[j]):
            pa = add(xa, quat_rotate(qa, load3(cla, cfirst[j] + k)))
            pb = add(xb, quat_rotate(qb, load3(clb, cfirst[j] + k)))
            for c in range(3):
                opa[p, k, c] = pa[c]
                opb[p, k, c] = pb[c]
            odepth[p, k] = dot(sub(pa, pb), n)
        source[p] = j
        reused += 1
    return reused


@helper
def first_row(keys, cm, key):
    """The first of the ``cm`` sorted ``keys`` not below ``key`` (binary search)."""
    lo = 0
    hi = cm
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(same_types=True)
def reuse_shares(claims, shares, npairs, pairs, kind, pos, quat, nbodies, cache, cm, out, source, found):
    """``reuse_rows`` over the ``npairs`` candidate pairs cut into ``shares`` runs, the calling thread taking
    the next run t not yet taken (``claims[0]``, ``atomics.py``) until none is left, and writing how many
    of its pairs were reused into ``found[t]``. Releases the GIL: each thread of ``threads.run_on_threads``
    runs it; each pair's row is written by one of them only."""
    t = atomic_add(claims, 0, 1)
    while t < shares:
        lo, hi = t * npairs // shares, (t + 1) * npairs // shares
        found[t] = reuse_rows(lo, hi, pairs, kind, pos, quat, nbodies, cache, cm, out, source)
        t = atomic_add(claims, 0, 1)


ROW_SHARES = 32
"""How many shares ``reuse_manifolds`` and ``remember_manifolds`` cut the pairs and the entries into for
the threads, whatever their number (each thread takes the next share not yet taken)."""
PARALLEL_ROWS = 2048
"""The fewest entries with which ``reuse_manifolds`` and ``remember_manifolds`` share out their work over the
threads: below, the hand-off to the pool's threads costs more than the rotations. An entry costs some 0.1 µs
on one thread; a hand-off some 80 µs of the step on this project's two-core machine (the worker starts 40-60
µs after the call, and the calling thread notices the end some 20 µs late), which a second thread pays back
from some 1600 rows. Measured on the S1 pile of 4096 mid-collapse (700-1000 manifolds reused, 2000-3700
entries a step), two threads, alternately: the cache's mapping and remembering took 560-630 µs a step on the
calling thread against 770-800 µs shared out from 256 rows up (twenty-third session). Those hand-off figures
are Python's executor of threads'; the pool that replaced it (``threads._Pool``, twenty-fourth session)
ends a hand-off some 20 µs sooner, and the threshold has not been measured again."""


@kernel(same_types=True)
def move_entries(m, manifolds, source, kind, entry_of, frame_below, pos, quat, nbodies, cache):
    """The first pass of ``remember_manifolds``: which of this step's ``m`` ``manifolds`` get an entry (those
    without a sphere or a capsule, the pairs ``reuse_rows`` may reuse: manifold ``entry_of[j]`` gets
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


@kernel
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


def reuse_manifolds(pairs: np.ndarray, npairs: int, kind: np.ndarray, pos: np.ndarray, quat: np.ndarray,
                    nbodies: int, cache: CachedManifolds, entries: int, out: Manifolds,
                    source: np.ndarray) -> int:
    """The first half of the narrow phase with the cache: each candidate pair of ``pairs[:npairs]`` whose
    manifold the ``cache`` (its first ``entries`` rows, their keys made for ``nbodies`` bodies) can give
    (``reuse_rows``) gets it in its row p of ``out``, and ``source[p]`` its entry's row; every other
    pair ``source[p]`` −1, for ``narrowphase.collide_pairs`` to collide (which then compacts the rows and
    ``source`` with them). Returns how many were reused.

    The pairs on their own, each writing its own row: on the threads (``reuse_shares``,
    ``threads.run_on_threads``) from ``PARALLEL_ROWS`` entries up. Until the twenty-third session a serial
    pass found the pairs to reuse and listed the others for the narrow phase, and a serial pass after it
    merged the two lists of manifolds into pair order, the reused ones then mapped on the threads: on the
    S1 pile of 4096 mid-collapse (900 manifolds reused a step of 10,000) they took some 490 µs a step on
    one thread and 440-480 on two, where this pass takes 270 and 180-220 µs (the narrow phase's
    compaction then moves the reused rows too, some tens of µs)."""
    if entries == 0:
        source[:npairs] = -1
        return 0
    threads, shares = share_out(entries, PARALLEL_ROWS, ROW_SHARES)
    claims = np.zeros(1, np.int64)
    found = np.zeros(shares, np.int64)
    run_on_threads(lambda i, n: reuse_shares(claims, shares, npairs, pairs, kind, pos, quat, nbodies, cache,
                                             entries, out, source, found), threads, more=True)
    return int(found.sum())


def remember_manifolds(m: int, manifolds: Manifolds, source: np.ndarray, kind: np.ndarray, pos: np.ndarray,
                       quat: np.ndarray, nbodies: int, cache: CachedManifolds,
                       shared: bool = True) -> tuple[int, int]:
    """Make ``cache`` (holding last step's entries) this step's, from this step's ``m`` ``manifolds``;
    returns the number of entries and of their points. A manifold of a pair with a sphere or a capsule,
    which ``reuse_rows`` never reuses, gets no entry. A reused one keeps its old entry (row
    ``source[i]``, and so the pose it was computed at, which keeps the tolerance from creeping), a fresh
    one is stored in its bodies' frames with the relative pose of now.

    Two passes: ``move_entries`` picks the manifolds that get an entry and moves the reused entries to their
    new rows, in place (serial: a row may be read only before it is written); ``frame_rows`` then writes every
    entry's pair and each fresh one's frames, which read no old row, each entry on its own: shared out over
    the threads (``frame_entries``, ``threads.run_on_threads``) from ``PARALLEL_ROWS`` entries up, else at the
    end of the first pass (one kernel call, not two: each call of a kernel handed these records costs a µs or
    two). What the threads buy: the frames, two rotations per point, are most of it (on the S1 pile of 4096
    mid-collapse some 0.37 ms a step of one thread); the entries are the same bit for bit whichever thread
    writes them. What leaving out the round pairs buys: S3's 4000 balls, some 12,000 manifolds, keep no entry
    where each had one (its key, bodies and point count, and zeros for the rest): 0.23 ms a step of one
    thread, and as much on two, where the pool's hand-off cost what the second thread saved; on the S1 pile,
    three manifolds in four are round.

    ``shared`` False keeps both passes on the calling thread (``World`` runs this beside the colouring, on
    a thread of its own)."""
    threads, shares = share_out(m, PARALLEL_ROWS, ROW_SHARES) if shared else (1, 1)
    entry_of = np.empty(max(m, 1), np.int64)
    frame_below = PARALLEL_ROWS if threads > 1 else m + 1  # fewer entries are framed in the first pass
    n, points = move_entries(m, manifolds, source, kind, entry_of, frame_below, pos, quat, nbodies, cache)
    if n >= frame_below:
        claims = np.zeros(1, np.int64)
        run_on_threads(lambda i, k: frame_entries(claims, shares, n, manifolds, source, entry_of, pos, quat,
                                                  nbodies, cache), threads, more=True)
    return n, points


@helper
def _copy_row(a, i, r, width):
    """Row ``r`` of the 2-D array ``a`` (its first ``width`` columns) into row ``i``."""
    for c in range(width):
        a[i, c] = a[r, c]
