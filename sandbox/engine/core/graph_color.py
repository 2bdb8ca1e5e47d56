"""Graph colouring of the contact manifolds, and the blocks of lanes the wide solver works on.

Sequential impulses solve one contact after another, each seeing the velocities the last one left, and a
solver that does exactly that is bound by the latency of that chain. But two manifolds that share no
moving body do not interact within a pass, so the order among them is free. ``color_contacts`` colours
the manifolds greedily so that no two manifolds of one colour share a moving body (static and sleeping
bodies do not count: nothing writes their velocities), and cuts each colour into blocks of up to ``L``
manifolds, the block's *lanes* (Box2D v3's graph colouring; Rapier's parallel solver does the same).
Manifolds that find no free colour among ``COLORS`` (a body touching very many others) go to the
overflow, blocks of one lane at the end of the order, which the reference solver takes one by one.
"""

from __future__ import annotations

import numpy as np

from .contact_rows import NF, STRIDE, L
from .jit import helper, kernel

COLORS = 32  # colours tried before a manifold goes to the overflow (one bit each in an int64 mask)
DIRECT = COLORS + 1  # the class after the overflow: the block solver's manifolds
PARALLEL_BLOCKS = 4
"""The fewest blocks that are shared out over the threads (the coloured blocks of a solver pass,
``contact_solver.solve_colours``; the blocks of ``contact_prepare.prepare_contacts``): the blocks of a
colour share no moving body, so they can run side by side; with fewer, the parallel launch costs more
than it saves."""


@kernel(same_types=True)
def color_contacts(m, mb_a, mb_b, m_npoints, moving, m_first, cidx, blocks, mask, island, body_region,
                   regions):
    """Colour the manifolds and cut the colours into ``blocks`` (a ``Blocks`` record, filled here).

    Greedy colouring: manifold by manifold, the lowest colour that neither of its moving bodies already
    has (``mask`` holds a bit per colour per body). Within a colour the manifolds are ordered by region
    (``body_region[i]`` of their first moving body, 0 to ``regions`` − 1: ``body_regions``), then by
    point count, largest first, so that a block's lanes have like counts; runs of up to ``L`` within a
    region make the blocks (a region's manifolds in each colour then take a run of blocks of their own,
    which the solver's thread for that region takes first: ``contact_solver.solve_colours``).
    ``m_first[i]`` receives the number of manifold i's first contact point (points are numbered manifold
    by manifold), or −1 for a manifold between two bodies that do not move (asleep or static): it gets
    no solver points. ``cidx[k]`` receives point k's place in ``cw``. The manifolds of the islands that
    the block solver takes (``island[i]`` ≥ 0, ``block_solver.mark_stiff_islands``) get no colour: they
    come last, one block each, after the overflow.
    Returns (blocks, coloured blocks, first block of the block solver's, floats of ``cw`` used, contact
    points)."""
    order, blk_start, blk_lanes, blk_slots, blk_off = (blocks.order, blocks.start, blocks.lanes, blocks.slots,
                                                       blocks.offset)
    color = blocks.color
    count = np.zeros((COLORS + 2) * regions * 4, np.int64)
    # each coloured manifold's part of the order: its colour's run of its region (that of its first moving
    # body); the overflow and the block solver's manifolds, one part per class
    part = np.empty(max(m, 1), np.int64)
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        mask[a] = 0
        mask[b] = 0
    k = 0
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        color[i] = -1
        if not (moving[a] or moving[b]):
            m_first[i] = -1
            continue
        m_first[i] = k
        k += m_npoints[i]
        if island[i] >= 0:
            color[i] = DIRECT
            part[i] = DIRECT * regions
            count[4 * part[i] + 4 - m_npoints[i]] += 1
            continue
        used = (mask[a] if moving[a] else 0) | (mask[b] if moving[b] else 0)
        c = 0
        while c < COLORS and (used >> c) & 1:
            c += 1
        if c < COLORS:
            bit = np.int64(1) << c
            if moving[a]:
                mask[a] |= bit
            if moving[b]:
                mask[b] |= bit
        color[i] = c
        part[i] = c * regions + ((body_region[a] if moving[a] else body_region[b]) if c < COLORS else 0)
        count[4 * part[i] + 4 - m_npoints[i]] += 1
    # counting sort by (colour, point count descending)
    start = np.zeros(len(count) + 1, np.int64)
    for key in range(len(count)):
        start[key + 1] = start[key] + count[key]
    for i in range(m):
        if color[i] >= 0:
            key = 4 * part[i] + 4 - m_npoints[i]
            order[start[key]] = i
            start[key] += 1
    total = start[len(count)]
    nb = 0
    wide = 0
    direct = -1
    off = 0
    prev = -1
    shared = STRIDE  # overflow blocks placed in the current shared region
    region = 0
    for s in range(total):
        i = order[s]
        c = color[i]
        if part[i] != prev or c >= COLORS or blk_lanes[nb - 1] == L:
            blk_start[nb] = s
            blk_lanes[nb] = 0
            blk_slots[nb] = m_npoints[i]
            if c == DIRECT and direct < 0:
                direct = nb
                shared = STRIDE  # a region of its own: its first block may have more points
            if c >= COLORS:
                # An overflow block has one lane, so it uses one float of each row of STRIDE: STRIDE of
                # them share one region, each shifted by one float (lane 0 of block r sits where lane r
                # of a full block would). Given a region each, a pile where every body touches hundreds
                # of others (nearly all manifolds in the overflow) took STRIDE times the memory: 72 kB
                # per manifold, 16 GB for 1000 bodies spawned at one point. The region is sized for its
                # first block, the one with the most points (point counts descend within a colour).
                if shared == STRIDE:
                    shared = 0
                    region = off
                    off += m_npoints[i] * NF * STRIDE
                blk_off[nb] = region + shared
                shared += 1
            else:
                blk_off[nb] = off
                off += m_npoints[i] * NF * STRIDE
            nb += 1
            prev = part[i]
            if c < COLORS:
                wide = nb
        j = blk_lanes[nb - 1]
        for p in range(m_npoints[i]):
            cidx[m_first[i] + p] = blk_off[nb - 1] + p * NF * STRIDE + j
        blk_lanes[nb - 1] = j + 1
    return nb, wide, direct if direct >= 0 else nb, off, k


@kernel(same_types=True)
def same_graph(m, mb_a, mb_b, m_npoints, moving, island, last_count, last_a, last_b, last_code):
    """Whether ``color_contacts`` would colour this step's ``m`` manifolds exactly as it coloured last
    step's, whose inputs ``last_count[0]``, ``last_a``, ``last_b`` and ``last_code`` hold: the same
    manifolds, in the same order, between the same bodies, with the same point counts, each body as
    moving as then and each manifold in a block solver's island or not as then (all that the colouring
    reads: it is a function of these). Overwrites them with this step's.

    What it buys: a stack or a pyramid at rest keeps its contact graph for many steps, and its colouring
    (some 10 µs of the S2 pyramid's 0.7 ms step) is then kept instead of made again; the check is one
    pass over the manifolds. A ``last_count[0]`` of −1 (``ContactSolverData``, after its arrays were
    reallocated) matches no step."""
    same = m == last_count[0]
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        flags = (1 if moving[a] else 0) + (2 if moving[b] else 0) + (4 if island[i] >= 0 else 0)
        code = 8 * m_npoints[i] + flags
        same = same and last_a[i] == a and last_b[i] == b and last_code[i] == code
        last_a[i] = a
        last_b[i] = b
        last_code[i] = code
    last_count[0] = m
    return same


REGION_BINS = 256
REGION_MANIFOLDS = 1024
"""The fewest manifolds per region (``body_regions``) that ``World`` asks for, whatever the thread count:
each region's manifolds fill blocks of their own in every colour, so a region of few manifolds leaves
many lanes of its blocks empty (measured with two regions only, on a machine of two cores)."""


@helper(inline="always")
def _bin(x, lo, scale):
    """The histogram bin of coordinate ``x`` (``body_regions``); bin 0 for a coordinate that is not a
    finite number, so that no index can fall outside the histogram."""
    k = (x - lo) * scale
    return int(k) if 0.0 <= k <= REGION_BINS else 0


@kernel(same_types=True)
def body_regions(n, moving, pos, regions):
    """Each body's region, 0 to ``regions`` − 1: slabs across the axis along which the moving bodies
    spread most, each holding about as many of them (cut at the quantiles of a histogram of
    ``REGION_BINS`` bins); a body that does not move, or any body when ``regions`` is 1, gets region
    0. One region per thread: a spatial partition of the contact graph, as a parallel solver's "islands"
    or domains are, for locality only.

    What it buys: ``color_contacts`` keeps the manifolds of a region together within each colour, so the
    thread that solves a region's blocks in one colour solves them in the next too, and finds their
    bodies' rows (``bodies.solver``, 64 bytes each) in its own cache. Before, a colour's blocks came by
    point count first, so on the S1 pile of cubes and balls a thread's part of a colour held the
    four-point manifolds of the whole pile: a body's row was last written by the other core in 16-21 %
    of the gathers, 2.3 % now (by index halves of the bodies instead of slabs: 9 %; S3's balls, all of
    one point count, 7 % before, 1.9 % now). A solver pass over the pile of 4096 on two threads took
    80 µs (warm start) and 121 µs (plain) against 112-141 and 136-170 (one thread: 125 and 199); whole
    steps, with and without alternated every 10 steps on one world, 7.29 and 8.40 ms against 7.52 and
    8.58 (20th percentile, two runs). S3 within the noise. Why it is correct: the blocks of a colour
    share no moving body and each lane's arithmetic is its own, so which manifolds share a block and in
    which order a colour's blocks are solved change no result; the state hashes of the showcase scenes,
    S3 and the pile on one and two threads are those of the colouring without regions."""
    out = np.zeros(max(n, 1), np.int64)
    if regions <= 1:
        return out
    # the axis of the largest spread, from the first moving body's position on (scalars and plain
    # comparisons: each numpy or builtin function used here would be one more for numba to compile)
    count = 0
    x0 = x1 = y0 = y1 = z0 = z1 = 0.0
    for i in range(n):
        if moving[i]:
            x, y, z = pos[i, 0], pos[i, 1], pos[i, 2]
            if count == 0:
                x0 = x1 = x
                y0 = y1 = y
                z0 = z1 = z
            if x < x0:
                x0 = x
            if x > x1:
                x1 = x
            if y < y0:
                y0 = y
            if y > y1:
                y1 = y
            if z < z0:
                z0 = z
            if z > z1:
                z1 = z
            count += 1
    if count == 0:
        return out
    axis, lo, spread = 0, x0, x1 - x0
    if y1 - y0 > spread:
        axis, lo, spread = 1, y0, y1 - y0
    if z1 - z0 > spread:
        axis, lo, spread = 2, z0, z1 - z0
    scale = REGION_BINS / spread if spread > 0.0 else 0.0
    hist = np.zeros(REGION_BINS + 1, np.int64)  # the farthest body falls in the extra bin
    for i in range(n):
        if moving[i]:
            hist[_bin(pos[i, axis], lo, scale)] += 1
    region_of_bin = np.zeros(REGION_BINS + 1, np.int64)
    seen = 0
    for b in range(REGION_BINS + 1):
        region_of_bin[b] = seen * regions // count
        seen += hist[b]
    for i in range(n):
        if moving[i]:
            out[i] = region_of_bin[_bin(pos[i, axis], lo, scale)]
    return out
