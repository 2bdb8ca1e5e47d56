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
from .jit import kernel

COLORS = 32  # colours tried before a manifold goes to the overflow (one bit each in an int64 mask)
DIRECT = COLORS + 1  # the class after the overflow: the block solver's manifolds
PARALLEL_BLOCKS = 4
"""The fewest blocks that are shared out over the threads (the coloured blocks of a solver pass,
``contact_solver.solve_colours``; the blocks of ``contact_prepare.prepare_contacts``): the blocks of a
colour share no moving body, so they can run side by side; with fewer, the parallel launch costs more
than it saves."""


@kernel
def color_contacts(m, mb_a, mb_b, m_npoints, moving, m_first, cidx, blocks, mask, island):
    """Colour the manifolds and cut the colours into ``blocks`` (a ``Blocks`` record, filled here).

    Greedy colouring: manifold by manifold, the lowest colour that neither of its moving bodies already
    has (``mask`` holds a bit per colour per body). Within a colour the manifolds are ordered by point
    count, largest first, so that a block's lanes have like counts; runs of up to ``L`` make the blocks.
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
    count = np.zeros((COLORS + 2) * 4, np.int64)
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
            count[4 * DIRECT + 4 - m_npoints[i]] += 1
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
        count[4 * c + 4 - m_npoints[i]] += 1
    # counting sort by (colour, point count descending)
    start = np.zeros(len(count) + 1, np.int64)
    for key in range(len(count)):
        start[key + 1] = start[key] + count[key]
    for i in range(m):
        if color[i] >= 0:
            key = 4 * color[i] + 4 - m_npoints[i]
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
        if c != prev or c >= COLORS or blk_lanes[nb - 1] == L:
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
            prev = c
            if c < COLORS:
                wide = nb
        j = blk_lanes[nb - 1]
        for p in range(m_npoints[i]):
            cidx[m_first[i] + p] = blk_off[nb - 1] + p * NF * STRIDE + j
        blk_lanes[nb - 1] = j + 1
    return nb, wide, direct if direct >= 0 else nb, off, k


@kernel
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
