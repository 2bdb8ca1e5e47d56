"""Collision events: which body pairs started and stopped touching in the last step.

Both steps' touching pairs are kept as sorted keys ``min(a, b)·n + max(a, b)``, so comparing them is one
merge of two sorted lists (the merge step of merge sort), linear in the number of pairs."""

from __future__ import annotations

import numpy as np

from .jit import kernel


@kernel(same_types=True)
def diff_touching(new_keys, new_rows, old_keys, nbodies, alive, awake, out_keys, begin_rows, end_keys):
    """Merge this step's touching keys ``new_keys`` (sorted, with their manifold rows ``new_rows``) with
    last step's ``old_keys`` (sorted).

    A new key missing from the old list is a begin (its manifold row goes to ``begin_rows``); an old key
    missing from the new list is an end (``end_keys``), unless both bodies sleep, in which case they are
    still touching but were not collided, and the key is carried over; pairs with a removed body were
    ended when it was removed. ``out_keys`` receives the merged touching keys for the next step.
    Returns (number of out_keys, number of begins, number of ends)."""
    i = 0
    j = 0
    no = 0
    nb = 0
    ne = 0
    while i < len(new_keys) or j < len(old_keys):
        if j >= len(old_keys) or (i < len(new_keys) and new_keys[i] < old_keys[j]):
            begin_rows[nb] = new_rows[i]
            nb += 1
            out_keys[no] = new_keys[i]
            no += 1
            i += 1
        elif i >= len(new_keys) or old_keys[j] < new_keys[i]:
            key = old_keys[j]
            a = key // nbodies
            b = key % nbodies
            if alive[a] and alive[b]:
                if not awake[a] and not awake[b]:
                    out_keys[no] = key
                    no += 1
                else:
                    end_keys[ne] = key
                    ne += 1
            j += 1
        else:
            out_keys[no] = new_keys[i]
            no += 1
            i += 1
            j += 1
    return no, nb, ne


@kernel(same_types=True)
def touching_keys(m, pair_keys, touching, keys, rows):
    """The pairs touching after the step, as sorted keys (``keys``) with their manifold rows (``rows``):
    the ``pair_keys`` of the ``m`` manifolds with ``touching`` set (a point overlaps or took an impulse: a
    bounce can start and end within a step; ``contact_solver.store_impulses`` fills both). Manifolds come
    sorted by pair, so the keys usually are; if not, they are sorted here. Returns how many."""
    t = 0
    for i in range(m):
        if touching[i]:
            keys[t] = pair_keys[i]
            rows[t] = i
            t += 1
    for k in range(1, t):
        if keys[k] < keys[k - 1]:
            # sorted as float64 (exact: keys stay below 2**53): the broad phase's sort is compiled for
            # float64 keys, and numba compiles the merge sort again for each key type
            order = np.argsort(keys[:t].astype(np.float64), kind="mergesort")
            sorted_keys = keys[:t][order]
            sorted_rows = rows[:t][order]
            for r in range(t):  # a loop, not keys[:t] = ... (see substeps.run_substeps)
                keys[r] = sorted_keys[r]
                rows[r] = sorted_rows[r]
            break
    return t
