"""Threads: the step's parallel loops (``World.threads``) give the same state bit for bit whatever the
number of threads, since every parallel iteration writes only its own slots (the narrow phase's shares,
the solver's blocks of one colour, the contact preparation's blocks, the integrators' bodies).

The scene is large enough that every parallel loop takes its parallel path (``test_scene_takes_the_
parallel_paths`` checks the thresholds) once the world-size rule is lifted (``threads_for_any_size``: it
has fewer than ``PARALLEL_BODIES`` bodies, to keep the test short), and mixes every shape kind with a
joint.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys
from contextlib import contextmanager
from functools import cache

import numpy as np
import pytest

from sandbox.engine import Sphere, World, core
from sandbox.engine import world as world_module
from sandbox.engine.broadphase import BroadPhase
from sandbox.engine.core import contact_solver, graph_color, jit, manifold_cache
from sandbox.engine.core import threads as threads_module
from sandbox.engine.core.broadphase import PARALLEL_SWEEP
from sandbox.engine.core.contact_rows import L
from sandbox.engine.core.graph_color import COLORS, PARALLEL_BLOCKS
from sandbox.engine.core.narrowphase import PARALLEL_PAIRS, collide_pairs
from sandbox.engine.core.threads import (
    PARALLEL_BODIES,
    available_threads,
    run_on_threads,
    share_out,
    threads_in_use,
    use_threads,
)
from tests.test_determinism import mixed_pile

STEPS = 300
BODIES = 600


def mixed_scene(world: World) -> None:
    """``BODIES`` bodies of every kind in a pile (``test_determinism.mixed_pile``), two of them joined by
    a rod."""
    mixed_pile(world, BODIES)
    a, b = world.bodies[1], world.bodies[9]  # two spheres of the bottom layer, diagonal neighbours
    world.add_distance_joint(a, b)


def build(threads: int) -> World:
    w = World()
    w.threads = threads
    mixed_scene(w)
    return w


@contextmanager
def threads_for_any_size():
    """Every step on the threads the world asks for, however few its bodies (``threads.step_threads``),
    the manifold cache's two passes and the storing of the impulses on the threads however few rows
    they have (the mixed scene reuses a handful of manifolds), and the colouring beside the cache's
    remembering, its colours cut in a region per thread, however few manifolds there are
    (``world.SIDE_BY_SIDE``, ``graph_color.REGION_MANIFOLDS``)."""
    saved = (threads_module.PARALLEL_BODIES, manifold_cache.PARALLEL_ROWS, contact_solver.PARALLEL_STORE,
             world_module.SIDE_BY_SIDE, graph_color.REGION_MANIFOLDS)
    threads_module.PARALLEL_BODIES = 0
    manifold_cache.PARALLEL_ROWS = 1
    contact_solver.PARALLEL_STORE = 1
    world_module.SIDE_BY_SIDE = 0
    graph_color.REGION_MANIFOLDS = 1
    try:
        yield
    finally:
        (threads_module.PARALLEL_BODIES, manifold_cache.PARALLEL_ROWS, contact_solver.PARALLEL_STORE,
         world_module.SIDE_BY_SIDE, graph_color.REGION_MANIFOLDS) = saved


@cache
def final_hash(threads: int) -> str:
    """The state hash after ``STEPS`` steps of the mixed scene with ``threads`` threads."""
    w = build(threads)
    with threads_for_any_size():
        for _ in range(STEPS):
            w.step(1.0 / 60.0)
    return w.state_hash()


needs_two = pytest.mark.skipif(available_threads() < 2, reason="numba's thread pool has one thread")


def test_scene_takes_the_parallel_paths():
    w = build(available_threads())
    with threads_for_any_size():
        for _ in range(60):
            w.step(1.0 / 60.0)
        assert threads_in_use() == available_threads()
    colour = w._solver.color[: w.contacts.count]
    per_colour = np.bincount(colour[(colour >= 0) & (colour < COLORS)])
    assert len(w.pairs) >= PARALLEL_PAIRS
    assert (per_colour + L - 1).max() // L >= PARALLEL_BLOCKS  # a colour of that many blocks of L lanes
    assert w.cached_manifolds > 0  # manifolds reused from the cache, in the narrow phase on the threads
    assert w.joints


@needs_two
def test_a_world_below_parallel_bodies_steps_on_one_thread():
    w = build(available_threads())
    assert w.threads == available_threads() and len(w.bodies) < PARALLEL_BODIES
    w.step(1.0 / 60.0)
    assert threads_in_use() == 1  # the step's parallel loops ran on the calling thread alone
    with threads_for_any_size():
        w.step(1.0 / 60.0)
        assert threads_in_use() == available_threads()
    assert w.threads == available_threads()  # the setting itself is left as it was


@needs_two
def test_a_step_on_the_threads_leaves_every_manifold_whole():
    # the compaction's last pass (narrowphase.move_rows) runs on a worker beside the colouring
    # (World._respond): after the step every manifold must have the normal, points and depths that the
    # narrow phase gives in one go, from the poses the step started from
    w = build(available_threads())
    w.contact_cache = False  # every manifold collided afresh, none from the cache
    with threads_for_any_size():
        for _ in range(30):
            w.step(1.0 / 60.0)
        trace = w.step_traced(1.0 / 60.0)
    c, state = w.contacts, trace.narrow
    fresh = [np.zeros_like(a) for a in c.manifolds()]
    pairs = trace.pairs
    count = collide_pairs(pairs, len(pairs), state.kind, state.params, state.pos, state.quat, state.hulls,
                          state.margins, *fresh)
    assert count == c.count > 0
    used = np.arange(4) < fresh[3][:count, None]  # a manifold's point slots in use (the rest are stale)
    for name, a in zip(("body_a", "body_b", "normal", "npoints", "points_a", "points_b", "depth"), fresh,
                       strict=True):
        ours, theirs = getattr(c, name)[:count], a[:count]
        if name in ("points_a", "points_b", "depth"):
            ours, theirs = ours[used], theirs[used]
        np.testing.assert_array_equal(ours, theirs, err_msg=name)


@needs_two
def test_one_and_two_threads_give_the_same_state():
    assert final_hash(1) == final_hash(2)


def test_the_step_gives_the_same_state_through_the_kernels_entry_points(monkeypatch):
    # the tests call the step's same_types kernels through numba's type check (tests/conftest.py); the
    # app and the benchmarks call their entry points directly after the first call (jit.SameTypesDispatcher)
    checked = final_hash(1)
    names = (f"{core.__name__}.{m.name}" for m in pkgutil.iter_modules(core.__path__))
    modules = [importlib.import_module(name) for name in names]
    found = {id(k): k for m in modules for k in vars(m).values() if isinstance(k, jit.SameTypesDispatcher)}
    kernels = list(found.values())
    monkeypatch.setattr(jit, "CHECK_TYPES", False)
    try:
        w = build(1)
        with threads_for_any_size():
            for _ in range(STEPS):
                w.step(1.0 / 60.0)
        direct = [k for k in kernels if "_entry" in k.__dict__]
    finally:
        for k in kernels:
            k.__dict__.pop("_entry", None)
    assert len(direct) >= 15  # the step's kernels went straight to their entry points
    assert w.state_hash() == checked


@needs_two
def test_a_pool_of_one_thread_in_another_process_gives_the_same_state():
    # NUMBA_NUM_THREADS=1: every parallel loop takes one share, the plainest serial run there is
    code = "from tests.test_threads import final_hash; print(final_hash(1))"
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert other.stdout.strip() == final_hash(2)


@pytest.mark.parametrize("threads", sorted({1, available_threads()}))
def test_the_parallel_sweep_finds_the_brute_force_pairs(threads):
    # spheres scattered through a slab: more boxes than PARALLEL_SWEEP, and a fresh broad phase whose
    # pair array is too small at first, so that a share overflows its region and asks for more rows
    rng = np.random.default_rng(5)
    w = World()
    for p in rng.uniform((-12, 0, -12), (12, 3, 12), (PARALLEL_SWEEP + 300, 3)):
        w.add_body(Sphere(float(rng.uniform(0.2, 0.6))), position=p, mass=0.0 if p[1] < 0.3 else 1.0)
    d = w.data
    margins = np.full(d.n, 0.01)
    use_threads(threads)
    try:
        found = {}
        for method in ("brute", "sap"):
            found[method] = BroadPhase(method).update(d.n, d.alive, d.static, d.kind, d.params, d.pos, d.quat,
                                                      w.hulls.arrays(), margins).copy()
    finally:
        use_threads(available_threads())
    assert len(found["brute"]) > 1000
    np.testing.assert_array_equal(found["sap"], found["brute"])


def test_threads_default_to_the_pool_and_change_nothing_else():
    w = World()
    assert w.threads == available_threads()
    w.threads = 1
    assert w.threads == 1
    w.threads = np.int64(available_threads())
    assert w.threads == available_threads() and isinstance(w.threads, int)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "2", None, available_threads() + 1])
def test_bad_thread_counts_are_refused_by_name(bad):
    w = World()
    with pytest.raises(ValueError, match="threads must be an integer from 1 to") as err:
        w.threads = bad
    assert repr(bad) in str(err.value)
    assert w.threads == available_threads()


@needs_two
def test_share_out_gives_every_thread_in_use_a_fixed_set_of_shares_or_one_share_below_the_threshold():
    try:
        use_threads(2)
        assert share_out(500, 256, 32) == (2, 32)
        assert share_out(256, 256, 32) == (2, 32)
        assert share_out(255, 256, 32) == (1, 1)  # below the threshold: one share, on the calling thread
        assert share_out(500, 256, 1) == (1, 1)  # no more threads than shares
        use_threads(1)
        assert share_out(500, 256, 32) == (1, 1)  # one thread: one share, not 32 in a row
    finally:
        use_threads(available_threads())


def test_run_on_threads_runs_every_share_once_and_waits_for_all():
    seen = np.zeros(8, np.int64)

    def task(i, n):
        assert n == 8
        seen[i] += 1

    run_on_threads(task, 8)
    assert seen.tolist() == [1] * 8


def test_run_on_threads_raises_a_share_error_after_every_share_finished():
    done = []

    def task(i, n):
        if i == n - 1:
            raise RuntimeError(f"share {i} failed")
        done.append(i)

    with pytest.raises(RuntimeError, match="share 2 failed"):
        run_on_threads(task, 3)
    assert sorted(done) == [0, 1]
    with pytest.raises(ValueError, match="n must be at least 1, got 0"):
        run_on_threads(task, 0)


def test_run_on_threads_from_two_threads_at_once_runs_each_call_whole():
    """A lesson's check steps its own world in a thread of its own while the app steps the shown one: a
    call made while another thread's is handing out shares runs its shares itself, every one once."""
    import threading

    calls = 300
    seen = np.zeros((2, calls, 5), np.int64)
    failures = []

    def caller(c):
        try:
            for k in range(calls):
                def task(i, n, k=k):
                    seen[c, k, i] += 1
                run_on_threads(task, 5, more=k % 3 != 0)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=caller, args=(c,)) for c in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures and not any(t.is_alive() for t in threads)
    assert (seen == 1).all()


def test_run_on_threads_waits_for_a_slow_worker_share():
    """The calling thread waits for a share that runs long after its own (past its spinning, onto its
    50 µs checks), and sees what the share wrote."""
    import time

    out = np.zeros(3)

    def task(i, n):
        if i:
            time.sleep(0.02)
        out[i] = i + 1.0

    for more in (True, False):
        out[:] = 0.0
        run_on_threads(task, 3, more=more)
        assert out.tolist() == [1.0, 2.0, 3.0]


@needs_two
def test_the_solver_gets_lane_rows_for_the_threads_in_use_only(monkeypatch):
    """The solver runs a pass on one thread per set of lane rows it is handed
    (``contact_solver.solve_colours``): a step on one thread gets one set, so it makes no parallel launch
    per pass on a pool of several; a step on all threads gets a set for each."""
    from sandbox.engine.core import substeps
    from sandbox.engine.core.contact_rows import ND, NV, STRIDE

    seen = []
    real = substeps.run_substeps

    def spy(settings, bodies, contacts, *rest):
        seen.append((len(contacts.V), len(contacts.D)))
        return real(settings, bodies, contacts, *rest)

    monkeypatch.setattr(substeps, "run_substeps", spy)
    w = build(available_threads())
    w.step(1.0 / 60.0)  # below PARALLEL_BODIES: one thread
    with threads_for_any_size():
        w.step(1.0 / 60.0)
    n = available_threads()
    assert seen == [(NV * STRIDE, ND * STRIDE), (NV * STRIDE * n, ND * STRIDE * n)]


SHARED_STEPS = 40


def hash_with_three_lane_sets(threads: int) -> str:
    """The state hash after ``SHARED_STEPS`` steps of the mixed scene on ``threads`` threads, the solver
    handed three sets of lane rows whatever the thread count."""
    from sandbox.engine.contacts import ContactSolverData
    from sandbox.engine.core.contact_rows import ND, NV, STRIDE

    def three_sets(self, threads_in_use):
        return np.zeros(NV * STRIDE * 3, np.float32), np.zeros(ND * STRIDE * 3, np.float32)

    ContactSolverData.lane_rows = three_sets
    w = build(threads)
    with threads_for_any_size():
        for _ in range(SHARED_STEPS):
            w.step(1.0 / 60.0)
    return w.state_hash()


@pytest.mark.parametrize("threads", sorted({1, available_threads()}))
def test_a_pass_shared_out_over_more_shares_than_threads_neither_hangs_nor_changes_the_state(threads):
    """``solve_colours`` runs one share per set of lane rows, its threads taking the blocks of a colour
    from shared counters and waiting for one another at the colour's end (``atomics.py``). Handed three
    sets while the pool runs fewer threads, the pool runs some shares one after another on one thread:
    the first of them must solve what the others do not reach, and none may wait for a share that has
    not started (run in another process, so that a hang fails the test), and the state is the one
    thread's, bit for bit."""
    reference = build(1)
    with threads_for_any_size():
        for _ in range(SHARED_STEPS):
            reference.step(1.0 / 60.0)
    code = ("from tests.test_threads import hash_with_three_lane_sets as h; "
            f"print(h({threads}))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           timeout=300)
    assert other.stdout.strip() == reference.state_hash()


def test_body_regions_cut_the_moving_bodies_into_slabs_of_equal_counts_across_their_widest_spread():
    from sandbox.engine.core.graph_color import REGION_BINS, body_regions

    rng = np.random.default_rng(3)
    n = 2000
    pos = rng.uniform((-1.0, 0.0, -10.0), (1.0, 2.0, 10.0), (n, 3))  # widest along z
    moving = np.ones(n, np.bool_)
    moving[:100] = False
    for regions in (1, 2, 3, 4):
        region = body_regions(n, moving, pos, regions)
        assert (region[:100] == 0).all()  # a body that does not move: region 0
        r, z = region[moving], pos[moving, 2]
        counts = np.bincount(r, minlength=regions)
        assert len(counts) == regions
        # equal counts to within a histogram bin of bodies (some 1900 / REGION_BINS each, 3x for luck)
        assert np.abs(counts - moving.sum() / regions).max() <= 3 * moving.sum() / REGION_BINS + 1
        # slabs: every body of a region lies below every body of the next, along z (up to a shared bin)
        for k in range(regions - 1):
            assert z[r == k].max() <= z[r == k + 1].min() + 20.0 / REGION_BINS


def test_body_regions_survive_bodies_that_are_not_finite_or_all_in_one_place():
    from sandbox.engine.core.graph_color import body_regions

    pos = np.zeros((5, 3))
    moving = np.ones(5, np.bool_)
    assert (body_regions(5, moving, pos, 2) >= 0).all()  # no spread at all
    pos[1] = (np.nan, 0.0, 0.0)
    pos[2] = (np.inf, 1.0, 0.0)
    pos[3] = (1.0, 2.0, 3.0)
    region = body_regions(5, moving, pos, 2)
    assert ((region >= 0) & (region < 2)).all()


def test_each_colour_keeps_a_regions_manifolds_together():
    """``color_contacts`` orders a colour's manifolds by region (``body_regions``: one per thread) before
    point count, and cuts no block across two regions, so that the solver's thread for a region takes a
    run of blocks of its own in every colour. Here 200 manifolds of disjoint pairs (all of colour 0),
    their regions alternating in the manifolds' order, their point counts varying."""
    from sandbox.engine.contacts import ContactSolverData
    from sandbox.engine.core.graph_color import color_contacts

    m = 200
    body_a, body_b = np.arange(0, 2 * m, 2), np.arange(1, 2 * m, 2)
    npoints = np.arange(m) % 4 + 1
    moving = np.ones(2 * m, np.bool_)
    body_region = (np.arange(2 * m) // 2) % 2  # manifold i's bodies are in region i mod 2
    s = ContactSolverData()
    s.ensure(int(npoints.sum()), m, 2 * m)
    blocks = s.blocks_record()
    first = np.zeros(m, np.int64)
    nb, wide, *_ = color_contacts(m, body_a, body_b, npoints, moving, first, s.cidx, blocks, s.mask,
                                  np.full(m, -1, np.int64), body_region, 2)
    assert wide == nb and (blocks.color[:m] == 0).all()
    block_regions = []
    for b in range(nb):
        lanes = blocks.order[blocks.start[b]:blocks.start[b] + blocks.lanes[b]]
        assert len(set(body_region[body_a[lanes]])) == 1  # no block across two regions
        block_regions.append(body_region[body_a[lanes[0]]])
    assert block_regions == sorted(block_regions) and set(block_regions) == {0, 1}
    assert sorted(blocks.order[:m]) == list(range(m))  # every manifold once
