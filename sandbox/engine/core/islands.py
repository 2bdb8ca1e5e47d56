"""Sleeping: islands of touching bodies that have been slow for long enough stop being simulated.

An island is a connected component of the graph whose nodes are the dynamic bodies and whose edges are
touching contacts and joints between two dynamic bodies (static bodies do not connect islands: a whole
pile resting on the ground would otherwise be one island). Components come from union–find with path
halving (Tarjan 1975).
"""

from __future__ import annotations

from .jit import helper, kernel


@helper
def find(parent, i):
    """Root of ``i``'s set, halving the path on the way up."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@helper
def union(parent, i, j):
    ri = find(parent, i)
    rj = find(parent, j)
    if ri != rj:
        # the smaller index becomes the root: deterministic, independent of the edge order
        if ri < rj:
            parent[rj] = ri
        else:
            parent[ri] = rj


@kernel
def update_sleep(n, alive, static, awake, vel, angvel, radius, sleep_time, m, mb_a, mb_b, m_npoints,
                 m_depth, nj, jb, dt, lin_threshold, ang_threshold, time_to_sleep, island, island_min):
    """Advance every awake dynamic body's rest timer, group bodies into islands, and put to sleep each
    island whose bodies have all rested for ``time_to_sleep`` seconds; an island that touches an awake
    body stays awake with it. Islands are joined through every manifold with points (touching or
    speculative), the same rule by which ``wake_touched`` wakes them. A body rests while its speed is
    under ``lin_threshold`` and its rim speed |ω|·radius under ``ang_threshold``. Writes each body's
    island root into ``island`` (−1 for static).
    Returns the number of bodies put to sleep."""
    parent = island
    for i in range(n):
        parent[i] = i
        if not alive[i] or static[i]:
            continue
        if awake[i]:
            v2 = vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2
            w2 = (angvel[i, 0] ** 2 + angvel[i, 1] ** 2 + angvel[i, 2] ** 2) * radius[i] ** 2
            if v2 < lin_threshold * lin_threshold and w2 < ang_threshold * ang_threshold:
                sleep_time[i] += dt
            else:
                sleep_time[i] = 0.0
    for k in range(m):
        a = mb_a[k]
        b = mb_b[k]
        if static[a] or static[b]:
            continue
        # every manifold joins its bodies, speculative ones included: ``wake_touched`` wakes a sleeping
        # island through any manifold (an approaching body must wake what it is about to hit), so an
        # island must also take in every body it has a manifold with; with a stricter rule here (only
        # points closer than 5 mm) two islands a centimetre apart woke each other, step after step
        if m_npoints[k] > 0:
            union(parent, a, b)
    for j in range(nj):
        a = jb[j, 0]
        b = jb[j, 1]
        if b >= 0 and not static[a] and not static[b]:
            union(parent, a, b)
    for i in range(n):
        island_min[i] = 1e300
    for i in range(n):
        if not alive[i] or static[i]:
            continue
        r = find(parent, i)
        # a sleeping member counts as rested: it only sleeps because its island did
        t = sleep_time[i] if awake[i] else time_to_sleep
        island_min[r] = min(island_min[r], t)
    slept = 0
    for i in range(n):
        if not alive[i] or static[i]:
            island[i] = -1
            continue
        r = find(parent, i)
        island[i] = r
    for i in range(n):
        if island[i] < 0:
            continue
        if island_min[island[i]] >= time_to_sleep:
            if awake[i]:
                awake[i] = False
                slept += 1
                for k in range(3):
                    vel[i, k] = 0.0
                    angvel[i, k] = 0.0
        elif not awake[i]:
            awake[i] = True
            sleep_time[i] = 0.0
    return slept


@kernel
def wake_touched(m, mb_a, mb_b, static, awake, sleep_time, island, n):
    """Wake every sleeping island touched by an awake dynamic body through a manifold. Returns how many
    bodies woke."""
    woke = 0
    for k in range(m):
        a = mb_a[k]
        b = mb_b[k]
        for side in range(2):
            s = a if side == 0 else b
            o = b if side == 0 else a
            if static[s] or awake[s] or static[o] or not awake[o]:
                continue
            root = island[s]
            for i in range(n):
                if island[i] == root and not awake[i]:
                    awake[i] = True
                    sleep_time[i] = 0.0
                    woke += 1
    return woke
