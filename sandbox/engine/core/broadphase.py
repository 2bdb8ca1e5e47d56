"""Broad-phase kernels: world AABBs of the bodies, and four ways to find the pairs whose AABBs overlap.

Every pair finder has the same contract: it writes candidate pairs ``(i, j)``, ``i < j``, of live bodies
whose closed AABBs overlap (touching counts), never two static bodies and never a pair twice, into a
preallocated ``(cap, 2)`` int64 array ``pairs``, and returns how many pairs there are. When that number
exceeds ``cap``, only the first ``cap`` were written and the caller grows the array and calls again.
``sort_pairs`` then puts the list in lexicographic order (``sap_pairs`` on the threads leaves one list
per share, which it reads where they are), so that all four methods give the identical array and the
engine is deterministic whatever the method.

- ``brute_pairs``: every pair tested, O(N²): the reference.
- ``sap_pairs``: sort and sweep along the axis of greatest variance (Ericson 2004, §7.5.2).
- ``grid_build`` + ``grid_pairs``: a uniform grid stored as a spatial hash (Ericson 2004, §7.1;
  Teschner et al. 2003 for the hash).
- ``octree_build`` + ``octree_pairs``: a strict octree, each object in the smallest node that holds it
  whole (Ericson 2004, §7.3).
"""

from __future__ import annotations

import math

import numpy as np

from .atomics import atomic_add
from .bounding_volumes import aabb_aabb
from .jit import helper, kernel
from .layout import BOX, CAPSULE, SPHERE
from .threads import run_on_threads, share_out
from .vecmath import load3, load4, mat_col, mat_vec, quat_to_mat

PARALLEL_SWEEP = 1024
"""The fewest boxes that ``sap_pairs`` sweeps on the threads: below, handing out the shares (some tens of
µs) would cost more than the sweep it shares."""
SWEEP_SHARES = 32
"""How many shares the parallel sweep is cut into (whatever the thread count, as ``narrowphase.SHARES``)."""
SWEEP_ROWS = 64
"""Boxes per run of a share of the sweep."""


@kernel(same_types=True)
def compute_aabbs(n, alive, kind, params, pos, quat, H, margin_body, aabb_min, aabb_max):
    """World axis-aligned bounding box of each live body, grown by ``margin_body[i]`` on every side.

    Exact boxes: a sphere is its centre ± r; a box of half extents h under rotation R has half extents
    |R|·h (Ericson 2004, §4.2.6); a capsule is its segment's box grown by r; a hull's box is the min and
    max of its rotated vertices. Dead rows get an empty-volume box at their position."""
    vert_start, vert_count, verts = H.vert_start, H.vert_count, H.verts
    for i in range(n):
        p = load3(pos, i)
        if not alive[i]:
            for k in range(3):
                aabb_min[i, k] = p[k]
                aabb_max[i, k] = p[k]
            continue
        shape = kind[i]
        if shape == SPHERE:
            r = params[i, 0]
            e = (r, r, r)
            lo = (p[0] - e[0], p[1] - e[1], p[2] - e[2])
            hi = (p[0] + e[0], p[1] + e[1], p[2] + e[2])
        elif shape == BOX:
            m = quat_to_mat(load4(quat, i))
            hx, hy, hz = params[i, 0], params[i, 1], params[i, 2]
            e = (abs(m[0]) * hx + abs(m[1]) * hy + abs(m[2]) * hz,
                 abs(m[3]) * hx + abs(m[4]) * hy + abs(m[5]) * hz,
                 abs(m[6]) * hx + abs(m[7]) * hy + abs(m[8]) * hz)
            lo = (p[0] - e[0], p[1] - e[1], p[2] - e[2])
            hi = (p[0] + e[0], p[1] + e[1], p[2] + e[2])
        elif shape == CAPSULE:
            r, hh = params[i, 0], params[i, 1]
            a = mat_col(quat_to_mat(load4(quat, i)), 1)
            e = (abs(a[0]) * hh + r, abs(a[1]) * hh + r, abs(a[2]) * hh + r)
            lo = (p[0] - e[0], p[1] - e[1], p[2] - e[2])
            hi = (p[0] + e[0], p[1] + e[1], p[2] + e[2])
        else:
            m = quat_to_mat(load4(quat, i))
            h = int(params[i, 0])
            lo = (np.inf, np.inf, np.inf)
            hi = (-np.inf, -np.inf, -np.inf)
            for v in range(vert_start[h], vert_start[h] + vert_count[h]):
                w = mat_vec(m, load3(verts, v))
                lo = (min(lo[0], w[0]), min(lo[1], w[1]), min(lo[2], w[2]))
                hi = (max(hi[0], w[0]), max(hi[1], w[1]), max(hi[2], w[2]))
            lo = (p[0] + lo[0], p[1] + lo[1], p[2] + lo[2])
            hi = (p[0] + hi[0], p[1] + hi[1], p[2] + hi[2])
        g = margin_body[i]
        for k in range(3):
            aabb_min[i, k] = lo[k] - g
            aabb_max[i, k] = hi[k] + g


@helper
def overlap(aabb_min, aabb_max, i, j):
    """True when the boxes of rows ``i`` and ``j`` overlap (``bounding_volumes.aabb_aabb``)."""
    return aabb_aabb(load3(aabb_min, i), load3(aabb_max, i), load3(aabb_min, j), load3(aabb_max, j))


@helper
def emit_pair(pairs, count, i, j):
    """Write the pair (min, max) at row ``count`` if it fits; the new count either way."""
    if count < pairs.shape[0]:
        pairs[count, 0] = min(i, j)
        pairs[count, 1] = max(i, j)
    return count + 1


@kernel(same_types=True)
def sort_pairs(pairs, found, n, tmp, counts):
    """The pairs of a pair finder, ``found[t]`` of them at the start of the t-th of ``len(found)`` equal
    regions of ``pairs`` (one region, the whole array, but for ``sap_pairs`` on the threads), sorted
    lexicographically into one run at the front of ``pairs``, in O(count + n); returns the count.

    LSD radix sort with the body indices as the two digits: a counting sort by the second index from
    the regions into ``tmp``, then a stable counting sort by the first index back into ``pairs`` (Cormen
    et al., §8.3). Both digits are counted in one pass over the regions, since how often a digit occurs
    does not depend on the order the pairs come in. ``tmp`` has at least as many rows as the pairs and
    ``counts`` at least ``2 (n + 1)`` entries.

    What reading the regions in place buys: the threads' pairs were first moved down into one run (a
    serial pass of its own, some 25 µs a step on S3 with two threads), then counted once per digit; on
    S3's 23,700 pairs, alone, 135 µs against 148 for the two."""
    shares = found.shape[0]
    region = pairs.shape[0] // shares
    first = counts[: n + 1]
    second = counts[n + 1: 2 * n + 2]
    first[:] = 0
    second[:] = 0
    count = 0
    for t in range(shares):
        for r in range(t * region, t * region + found[t]):
            first[pairs[r, 0] + 1] += 1
            second[pairs[r, 1] + 1] += 1
        count += found[t]
    for k in range(n):
        first[k + 1] += first[k]
        second[k + 1] += second[k]
    for t in range(shares):
        for r in range(t * region, t * region + found[t]):
            key = pairs[r, 1]
            row = second[key]
            second[key] = row + 1
            tmp[row, 0] = pairs[r, 0]
            tmp[row, 1] = key
    for p in range(count):
        key = tmp[p, 0]
        row = first[key]
        first[key] = row + 1
        pairs[row, 0] = key
        pairs[row, 1] = tmp[p, 1]
    return count


@kernel
def brute_pairs(n, alive, static, aabb_min, aabb_max, pairs):
    """All-pairs test, O(N²): every live, not both static pair whose boxes overlap.

    The loop order produces the pairs already sorted lexicographically."""
    count = int(0)  # a plain integer for emit_pair, not a literal (see contact_rows.py)
    for i in range(n):
        if not alive[i]:
            continue
        for j in range(i + 1, n):
            if alive[j] and not (static[i] and static[j]) and overlap(aabb_min, aabb_max, i, j):
                count = emit_pair(pairs, count, i, j)
    return count


# ---------------------------------------------------------------------------------------------------
# Sort and sweep


@helper
def variance_axis(n, alive, aabb_min, aabb_max):
    """The axis (0, 1, 2) along which the AABB centres of the live bodies vary most (Ericson 2004,
    §7.5.2: sweeping along it leaves the fewest overlapping intervals)."""
    sx = sy = sz = 0.0
    qx = qy = qz = 0.0
    m = 0
    for i in range(n):
        if not alive[i]:
            continue
        m += 1
        cx = 0.5 * (aabb_min[i, 0] + aabb_max[i, 0])
        cy = 0.5 * (aabb_min[i, 1] + aabb_max[i, 1])
        cz = 0.5 * (aabb_min[i, 2] + aabb_max[i, 2])
        sx += cx
        sy += cy
        sz += cz
        qx += cx * cx
        qy += cy * cy
        qz += cz * cz
    m = max(m, 1)
    var = (qx - sx * sx / m, qy - sy * sy / m, qz - sz * sz / m)
    best = 0
    for k in (1, 2):
        if var[k] > var[best]:
            best = k
    return best


@helper
def insertion_sort_order(order, skey, n, aabb_min, axis, max_moves):
    """Sort ``order[:n]`` by ``aabb_min[order, axis]`` by insertion sort, O(n + moves): fast when the
    order is nearly that of the last step (temporal coherence). Gives up, returning False with
    ``order`` still a permutation, once more than ``max_moves`` shifts were needed."""
    for k in range(n):
        skey[k] = aabb_min[order[k], axis]
    moves = 0
    for k in range(1, n):
        key = skey[k]
        body = order[k]
        m = k - 1
        while m >= 0 and skey[m] > key:
            skey[m + 1] = skey[m]
            order[m + 1] = order[m]
            m -= 1
        moves += k - 1 - m
        skey[m + 1] = key
        order[m + 1] = body
        if moves > max_moves:
            return False
    return True


@helper
def sweep_share(t, shares, m, sbox, sidx, sstatic, flags, pairs):
    """The sweep of ``sap_pairs`` over share ``t`` of ``shares`` of the ``m`` sorted boxes: the runs of
    ``SWEEP_ROWS`` boxes ``a`` whose number is ``t`` mod ``shares``, in order. Writes the pairs into
    ``pairs`` as far as it has rows (``emit_pair``) and returns how many it found.

    Each run is tested in two passes: a branch-free pass writing one overlap flag per candidate (which
    the compiler vectorises), then a scan of the flags; testing and branching per candidate is several
    times slower, its branch being unpredictable."""
    key = sbox[0, :m]
    u_min, u_max, v_min, v_max = sbox[2], sbox[3], sbox[4], sbox[5]
    count = int(0)  # a plain integer for emit_pair, not a literal (see contact_rows.py)
    for run in range(t, (m + SWEEP_ROWS - 1) // SWEEP_ROWS, shares):
        for a in range(run * SWEEP_ROWS, min((run + 1) * SWEEP_ROWS, m)):
            # Boxes a+1 .. end-1 start within [min_a, max_a]: they overlap box a along the sweep axis.
            end = np.searchsorted(key, sbox[1, a], side="right")
            lo_u, hi_u, lo_v, hi_v = u_min[a], u_max[a], v_min[a], v_max[a]
            # unsigned indices: numba wraps a negative signed index around, and that select, on every
            # access, hid from LLVM that the candidates are consecutive (it loaded them one by one): the
            # sweep of the S1 pile of 4096 took 3.9 ms a step on one thread, 1.7 ms with these
            for b in range(np.uint64(a + 1), np.uint64(end)):
                flags[b] = ((u_min[b] <= hi_u) & (lo_u <= u_max[b])
                            & (v_min[b] <= hi_v) & (lo_v <= v_max[b]))
            sa = sstatic[a]
            for b in range(np.uint64(a + 1), np.uint64(end)):
                if flags[b] and not (sa and sstatic[b]):
                    count = emit_pair(pairs, count, sidx[a], sidx[b])
    return count


@kernel(same_types=True)
def sap_sort(n, alive, static, aabb_min, aabb_max, order, prev_axis, skey, sidx, sbox, sstatic):
    """The sort of ``sap_pairs``: ``order`` (persistent between steps, a permutation of ``0..n-1``) sorted
    by the boxes' minimum along the axis of greatest variance, by insertion sort when the axis is that of
    the last step (``prev_axis``), by a full sort otherwise or when the insertion sort meets too much
    disorder; then the live bodies gathered in that order into ``sidx``, ``sstatic`` and the rows of
    ``sbox`` (0, 1: min and max along the axis; 2, 3 and 4, 5: along the two others), so that the sweep
    reads contiguous memory. Returns (axis, number of live bodies gathered)."""
    axis = variance_axis(n, alive, aabb_min, aabb_max)
    if axis != prev_axis or not insertion_sort_order(order, skey, n, aabb_min, axis, 4 * n + 64):
        for k in range(n):
            skey[k] = aabb_min[k, axis]
        sorted_order = np.argsort(skey[:n], kind="mergesort")
        for k in range(n):  # a loop, not order[:n] = ... (see substeps.run_substeps)
            order[k] = sorted_order[k]
    u = (axis + 1) % 3
    v = (axis + 2) % 3
    m = 0
    for k in range(n):
        i = order[k]
        if alive[i]:
            sidx[m] = i
            sstatic[m] = static[i]
            sbox[0, m] = aabb_min[i, axis]
            sbox[1, m] = aabb_max[i, axis]
            sbox[2, m] = aabb_min[i, u]
            sbox[3, m] = aabb_max[i, u]
            sbox[4, m] = aabb_min[i, v]
            sbox[5, m] = aabb_max[i, v]
            m += 1
    return axis, m


@kernel(same_types=True)
def sweep_shares(claims, shares, m, sbox, sidx, sstatic, pairs, found):
    """The next share not yet taken (counted in ``claims[0]``, ``atomics.py``), again until none is left,
    of the sweep of the ``m`` gathered boxes cut into ``shares`` (``sweep_share``), share t writing its
    pairs into the t-th of ``shares`` equal regions of ``pairs`` and how many it found into ``found[t]``.
    Releases the GIL: each thread of ``threads.run_on_threads`` runs it (the first free thread takes the
    next share, as in ``narrowphase.collide_shares``)."""
    region = pairs.shape[0] // shares
    flags = np.empty(m, np.bool_)
    t = atomic_add(claims, 0, 1)
    while t < shares:
        found[t] = sweep_share(t, shares, m, sbox, sidx, sstatic, flags, pairs[t * region:(t + 1) * region])
        t = atomic_add(claims, 0, 1)


@kernel(same_types=True)
def rows_needed(pairs, found):
    """The pairs that ``sweep_shares`` found, ``found[t]`` of them in the t-th of ``len(found)`` equal
    regions of ``pairs``: their count when every share's fitted its region; when one did not (it wrote
    only what fitted), ``len(found)`` times the most one found or the count, whichever is more: the row
    count that ``pairs`` must grow to (more than it has)."""
    shares = found.shape[0]
    region = pairs.shape[0] // shares
    most = 0
    total = 0
    for t in range(shares):
        most = max(most, found[t])
        total += found[t]
    return max(total, shares * most) if most > region else total


def sap_pairs(n: int, alive: np.ndarray, static: np.ndarray, aabb_min: np.ndarray, aabb_max: np.ndarray,
              order: np.ndarray, prev_axis: int, skey: np.ndarray, sidx: np.ndarray, sbox: np.ndarray,
              sstatic: np.ndarray, pairs: np.ndarray) -> tuple[int, int, int, np.ndarray]:
    """Sort and sweep (Ericson 2004, §7.5.2; Baraff 1992): sort the boxes by their minimum along the
    axis of greatest variance (``sap_sort``), then sweep: box ``a`` can only overlap the boxes that start
    after it and no later than its maximum, a run found by binary search (the early break of the sweep;
    ``sweep_share``). Returns (pair count, axis, number of live bodies gathered, ``found``: how many pairs
    each share wrote, ``sort_pairs``' input).

    With ``PARALLEL_SWEEP`` boxes or more and more than one thread in use, the sweep is cut into
    ``SWEEP_SHARES`` shares taken by the threads (``threads.run_on_threads``, each thread in
    ``sweep_shares`` with the GIL released), share t writing its pairs into the t-th of as many equal
    regions of ``pairs``; ``sort_pairs`` reads them there. The pairs come in another order than one
    share's, the same set, and ``sort_pairs`` puts them in one order: the result does not depend on the
    threads. What it buys: the sweep is most of ``find_pairs`` (the sort and the gathering before it
    stay serial); with two threads on two cores the stage went from 4.0 to 2.6 ms per step on the S1 pile
    of 4096 and from 4.6 to 3.0 ms on S3 (``python -m bench.threads``, then as a ``prange``, which numba
    compiles as a kernel of its own wrapped twice more: a pool of threads compiles once)."""
    axis, m = sap_sort(n, alive, static, aabb_min, aabb_max, order, prev_axis, skey, sidx, sbox, sstatic)
    threads, shares = share_out(m, PARALLEL_SWEEP, SWEEP_SHARES)
    found = np.zeros(shares, np.int64)
    claims = np.zeros(1, np.int64)
    run_on_threads(lambda i, k: sweep_shares(claims, shares, m, sbox, sidx, sstatic, pairs, found), threads,
                   more=True)
    return rows_needed(pairs, found), axis, m, found


# ---------------------------------------------------------------------------------------------------
# Uniform grid (spatial hash)


@kernel
def grid_cell_size(n, alive, aabb_min, aabb_max, scratch):
    """Cell edge for the grid: twice the median of the live boxes' largest extents.

    The median ignores the few huge bodies (a 400 m ground) that a maximum or mean would follow; with a
    cell twice the typical size, a typical box touches 1 to 8 cells. ``scratch`` holds ``n`` floats."""
    m = 0
    for i in range(n):
        if alive[i]:
            scratch[m] = max(aabb_max[i, 0] - aabb_min[i, 0], aabb_max[i, 1] - aabb_min[i, 1],
                             aabb_max[i, 2] - aabb_min[i, 2])
            m += 1
    if m == 0:
        return 1.0
    # the median through the merge sort that sap_sort compiles anyway: np.median would compile numba's
    # quickselect, some 2 s of compile (bench.compile), for a stage that is not the default
    o = np.argsort(scratch[:m], kind="mergesort")
    h = m // 2
    med = scratch[o[h]] if m % 2 else 0.5 * (scratch[o[h - 1]] + scratch[o[h]])
    return 2.0 * med if med > 0.0 else 1.0


@helper
def cell_hash(cx, cy, cz, mask):
    """Bucket of integer cell (cx, cy, cz) in a table of ``mask + 1`` buckets (a power of two), with
    the large-prime XOR hash of Teschner et al., "Optimized Spatial Hashing for Collision Detection of
    Deformable Objects", 2003."""
    return ((cx * 73856093) ^ (cy * 19349663) ^ (cz * 83492791)) & mask


@kernel
def grid_build(n, alive, aabb_min, aabb_max, cell, max_span, ent_cell, ent_body, tmp_cell, tmp_body,
               tmp_hash, bucket_start, oversize, is_over, bounds):
    """Hash every live box into the grid cells it touches (cell (a, b, c) is the closed cube
    [a, a+1]·cell × …; a box covers cells floor(min/cell) … floor(max/cell) on each axis).

    Boxes spanning more than ``max_span`` cells on some axis (a huge ground) go to the ``oversize`` list
    instead, flagged in ``is_over``, and are tested against every body. The entries (cell, body) are
    counting-sorted by bucket: bucket ``h`` holds ``ent_cell``/``ent_body`` rows
    ``bucket_start[h] : bucket_start[h + 1]``. ``bounds`` receives the box (2, 3) around the hashed
    (not oversize) boxes. Returns (number of entries, number of oversize bodies); when the entries
    exceed the arrays' capacity nothing is hashed and the caller grows them and calls again."""
    inv = 1.0 / cell
    for k in range(3):
        bounds[0, k] = np.inf
        bounds[1, k] = -np.inf
    n_ent = 0
    n_over = 0
    for i in range(n):
        is_over[i] = False
        if not alive[i]:
            continue
        cells = 1
        for k in range(3):
            span = math.floor(aabb_max[i, k] * inv) - math.floor(aabb_min[i, k] * inv) + 1
            cells *= span
            if span > max_span:
                is_over[i] = True
        if is_over[i]:
            oversize[n_over] = i
            n_over += 1
            continue
        n_ent += cells
        for k in range(3):
            bounds[0, k] = min(bounds[0, k], aabb_min[i, k])
            bounds[1, k] = max(bounds[1, k], aabb_max[i, k])
    if n_ent > ent_body.shape[0]:
        return n_ent, n_over
    mask = bucket_start.shape[0] - 2
    e = 0
    for i in range(n):
        if not alive[i] or is_over[i]:
            continue
        x0 = math.floor(aabb_min[i, 0] * inv)
        y0 = math.floor(aabb_min[i, 1] * inv)
        z0 = math.floor(aabb_min[i, 2] * inv)
        x1 = math.floor(aabb_max[i, 0] * inv)
        y1 = math.floor(aabb_max[i, 1] * inv)
        z1 = math.floor(aabb_max[i, 2] * inv)
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for cz in range(z0, z1 + 1):
                    tmp_cell[e, 0] = cx
                    tmp_cell[e, 1] = cy
                    tmp_cell[e, 2] = cz
                    tmp_body[e] = i
                    tmp_hash[e] = cell_hash(cx, cy, cz, mask)
                    e += 1
    # Counting sort by bucket: count into start[h + 1], prefix-sum, scatter with start[h] as cursor
    # (which leaves start[h] at the end of bucket h), then shift back by one.
    bucket_start[:] = 0
    for e in range(n_ent):
        bucket_start[tmp_hash[e] + 1] += 1
    for h in range(mask + 1):
        bucket_start[h + 1] += bucket_start[h]
    for e in range(n_ent):
        h = tmp_hash[e]
        r = bucket_start[h]
        bucket_start[h] = r + 1
        ent_body[r] = tmp_body[e]
        ent_cell[r, 0] = tmp_cell[e, 0]
        ent_cell[r, 1] = tmp_cell[e, 1]
        ent_cell[r, 2] = tmp_cell[e, 2]
    for h in range(mask + 1, 0, -1):
        bucket_start[h] = bucket_start[h - 1]
    bucket_start[0] = 0
    return n_ent, n_over


@kernel
def grid_pairs(n, alive, static, aabb_min, aabb_max, cell, ent_cell, ent_body, bucket_start, oversize,
               n_over, is_over, pairs):
    """Pairs from the grid built by ``grid_build``: within each cell, every two boxes that overlap; each
    oversize body against every other body.

    A pair sharing several cells is reported only by the cell that holds the lower corner of the
    intersection of its two boxes (Ericson 2004, §7.1.5), so never twice. Entries of different cells
    that hash to the same bucket are told apart by their stored cell coordinates."""
    inv = 1.0 / cell
    count = int(0)  # a plain integer for emit_pair, not a literal (see contact_rows.py)
    for h in range(bucket_start.shape[0] - 1):
        s = bucket_start[h]
        e = bucket_start[h + 1]
        for a in range(s, e):
            i = ent_body[a]
            cx, cy, cz = ent_cell[a, 0], ent_cell[a, 1], ent_cell[a, 2]
            for b in range(a + 1, e):
                j = ent_body[b]
                if j == i or ent_cell[b, 0] != cx or ent_cell[b, 1] != cy or ent_cell[b, 2] != cz:
                    continue
                if (static[i] and static[j]) or not overlap(aabb_min, aabb_max, i, j):
                    continue
                if (math.floor(max(aabb_min[i, 0], aabb_min[j, 0]) * inv) == cx
                        and math.floor(max(aabb_min[i, 1], aabb_min[j, 1]) * inv) == cy
                        and math.floor(max(aabb_min[i, 2], aabb_min[j, 2]) * inv) == cz):
                    count = emit_pair(pairs, count, i, j)
    for a in range(n_over):
        i = oversize[a]
        for j in range(n):
            # Two oversize bodies meet once, from the lower index.
            if j == i or not alive[j] or (is_over[j] and j < i) or (static[i] and static[j]):
                continue
            if overlap(aabb_min, aabb_max, i, j):
                count = emit_pair(pairs, count, i, j)
    return count


# ---------------------------------------------------------------------------------------------------
# Octree


@kernel
def octree_build(n, alive, aabb_min, aabb_max, max_depth, node_center, node_half, node_depth,
                 node_child, node_head, obj_next):
    """Build a strict octree over the live boxes; returns the number of nodes.

    The root is the cube around all boxes. Each box descends from the root while it lies strictly on
    one side of the node's three splitting planes, and is stored in the smallest node that holds it
    whole (Ericson 2004, §7.3.1): a box touching a plane stays in the node, which keeps the closed
    test exact (boxes of two disjoint subtrees are strictly apart). Nodes are created only on the way
    to a box, so every node holds boxes or is an ancestor of one; node arrays need
    ``1 + n·max_depth`` rows. Objects of node ``k`` form the linked list ``node_head[k]``,
    ``obj_next[...]`` (−1 ends it); ``node_child[k, octant]`` is −1 where there is no child."""
    lo = (np.inf, np.inf, np.inf)
    hi = (-np.inf, -np.inf, -np.inf)
    for i in range(n):
        if alive[i]:
            lo = (min(lo[0], aabb_min[i, 0]), min(lo[1], aabb_min[i, 1]), min(lo[2], aabb_min[i, 2]))
            hi = (max(hi[0], aabb_max[i, 0]), max(hi[1], aabb_max[i, 1]), max(hi[2], aabb_max[i, 2]))
    if lo[0] > hi[0]:
        return 0
    half = 0.0
    for k in range(3):
        node_center[0, k] = 0.5 * (lo[k] + hi[k])
        half = max(half, 0.5 * (hi[k] - lo[k]))
    node_half[0] = half * (1.0 + 1e-9) + 1e-12
    node_depth[0] = 0
    node_child[0, :] = -1
    node_head[0] = -1
    count = 1
    for i in range(n):
        if not alive[i]:
            continue
        node = 0
        while node_depth[node] < max_depth:
            octant = 0
            for k in range(3):
                s = node_center[node, k]
                if aabb_min[i, k] > s:
                    octant |= 1 << k
                elif not aabb_max[i, k] < s:
                    octant = -1
                    break
            if octant < 0:
                break
            child = node_child[node, octant]
            if child < 0:
                child = count
                count += 1
                h = 0.5 * node_half[node]
                for k in range(3):
                    sign = 1.0 if (octant >> k) & 1 else -1.0
                    node_center[child, k] = node_center[node, k] + sign * h
                node_half[child] = h
                node_depth[child] = node_depth[node] + 1
                node_child[child, :] = -1
                node_head[child] = -1
                node_child[node, octant] = child
            node = child
        obj_next[i] = node_head[node]
        node_head[node] = i
    return count


@kernel
def octree_pairs(static, aabb_min, aabb_max, node_count, node_center, node_half, node_child, node_head,
                 obj_next, stack, pairs):
    """Pairs from the octree of ``octree_build``: each box against the boxes after it in its own node,
    and against the boxes of its node's descendants (Ericson 2004, §7.3.2), visiting only the subtrees
    whose cube touches the box. Two overlapping boxes always lie in the same node or in a node and its
    descendant, so every pair is found exactly once. ``stack`` holds ``8·max_depth + 8`` entries."""
    count = int(0)  # a plain integer for emit_pair, not a literal (see contact_rows.py)
    for node in range(node_count):
        i = node_head[node]
        while i >= 0:
            j = obj_next[i]
            while j >= 0:
                if not (static[i] and static[j]) and overlap(aabb_min, aabb_max, i, j):
                    count = emit_pair(pairs, count, i, j)
                j = obj_next[j]
            top = 0
            for c in range(8):
                if node_child[node, c] >= 0:
                    stack[top] = node_child[node, c]
                    top += 1
            while top > 0:
                top -= 1
                d = stack[top]
                h = node_half[d]
                if (aabb_min[i, 0] > node_center[d, 0] + h or aabb_max[i, 0] < node_center[d, 0] - h
                        or aabb_min[i, 1] > node_center[d, 1] + h or aabb_max[i, 1] < node_center[d, 1] - h
                        or aabb_min[i, 2] > node_center[d, 2] + h or aabb_max[i, 2] < node_center[d, 2] - h):
                    continue
                j = node_head[d]
                while j >= 0:
                    if not (static[i] and static[j]) and overlap(aabb_min, aabb_max, i, j):
                        count = emit_pair(pairs, count, i, j)
                    j = obj_next[j]
                for c in range(8):
                    if node_child[d, c] >= 0:
                        stack[top] = node_child[d, c]
                        top += 1
            i = obj_next[i]
    return count
