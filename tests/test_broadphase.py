"""Broad phase: the four methods give exactly the pairs of a naive numpy oracle, and their AABBs and debug
structures are right."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.engine.broadphase import BroadPhase
from sandbox.engine.core.layout import BOX, CAPSULE, HULL, SPHERE
from sandbox.engine.shapes import ConvexHull, pack_hulls

HULL_POINTS = np.array([[1.0, 0.0, 0.0], [-0.5, 0.8, 0.1], [-0.4, -0.7, 0.3], [0.1, 0.2, -0.9],
                        [0.3, 0.5, 0.6]])
H = pack_hulls([ConvexHull(HULL_POINTS)])


def random_scene(seed: int, n: int, extent: float, ground: bool) -> tuple:
    """Arrays of a random scene: mixed shapes and sizes, random orientations, ~20% static, ~10% dead
    rows, and optionally a huge static ground box at row 0."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 4, n)
    params = np.zeros((n, 4))
    params[:, :3] = rng.uniform(0.05, 1.0, (n, 3)) * rng.choice([1.0, 3.0], (n, 1), p=[0.9, 0.1])
    params[kind == HULL, 0] = 0.0
    pos = rng.uniform(-extent, extent, (n, 3))
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1)[:, None]
    alive = rng.random(n) > 0.1
    static = rng.random(n) < 0.2
    if ground:
        kind[0] = BOX
        params[0] = (200.0, 1.0, 200.0, 0.0)
        pos[0] = (0.0, -1.0, 0.0)
        quat[0] = (0.0, 0.0, 0.0, 1.0)
        alive[0] = True
        static[0] = True
    margin = rng.uniform(0.0, 0.05, n)
    return n, alive, static, kind, params, pos, quat, H, margin


def oracle_pairs(n, alive, static, aabb_min, aabb_max) -> np.ndarray:
    """All pairs i < j of live, not both static bodies with overlapping closed boxes, by numpy."""
    lo, hi = aabb_min[:n], aabb_max[:n]
    overlap = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    keep = alive[:n, None] & alive[None, :n] & ~(static[:n, None] & static[None, :n])
    return np.argwhere(np.triu(overlap & keep, k=1)).astype(np.int64)


def all_methods(scene: tuple) -> dict[str, np.ndarray]:
    bp = BroadPhase()
    out = {}
    for method in BroadPhase.METHODS:
        bp.method = method
        out[method] = bp.update(*scene).copy()
        assert bp.pair_count == len(out[method])
    out["oracle"] = oracle_pairs(scene[0], scene[1], scene[2], bp.aabb_min, bp.aabb_max)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 120), extent=st.sampled_from([0.5, 3.0, 10.0]),
       ground=st.booleans())
def test_methods_match_oracle(seed, n, extent, ground):
    if ground and n == 0:
        n = 1
    results = all_methods(random_scene(seed, n, extent, ground))
    expected = results.pop("oracle")
    for method, pairs in results.items():
        assert pairs.dtype == np.int64 and pairs.shape == (len(expected), 2), method
        np.testing.assert_array_equal(pairs, expected, err_msg=method)


def test_no_static_pairs_and_sorted():
    scene = random_scene(7, 300, 4.0, True)
    static = scene[2]
    for method, pairs in all_methods(scene).items():
        assert len(pairs) > 0
        assert not np.any(static[pairs[:, 0]] & static[pairs[:, 1]]), method
        assert np.all(pairs[:, 0] < pairs[:, 1]), method
        keys = pairs[:, 0] * 1000 + pairs[:, 1]
        assert np.all(np.diff(keys) > 0), method


def boxes(centres, half, static=None) -> tuple:
    centres = np.asarray(centres, float)
    n = len(centres)
    params = np.zeros((n, 4))
    params[:, :3] = half
    quat = np.zeros((n, 4))
    quat[:, 3] = 1.0
    st_ = np.zeros(n, bool) if static is None else np.asarray(static)
    return n, np.ones(n, bool), st_, np.full(n, BOX), params, centres, quat, H, np.zeros(n)


@pytest.mark.parametrize("offset", [0.0, 0.5, 1.0, 7.25, -3.0])
def test_touching_boxes_count(offset):
    # Unit boxes face to face, edge to edge and corner to corner: every touching pair is reported,
    # wherever the contact plane falls relative to grid cells and octree splits.
    c = [(offset, 0, 0), (offset + 1, 0, 0), (offset + 1, 1, 0), (offset + 2, 2, 1), (offset + 5, 0, 0)]
    results = all_methods(boxes(c, 0.5))
    expected = np.array([[0, 1], [0, 2], [1, 2], [2, 3]])
    for method, pairs in results.items():
        np.testing.assert_array_equal(pairs, expected, err_msg=method)


def test_touching_at_octree_split():
    # Two boxes meeting exactly on the root's splitting plane x = 0, and a gap of one ulp elsewhere.
    c = [(-0.5, 0, 0), (0.5, 0, 0), (-0.5, 5, 0), (np.nextafter(0.5, 1.0), 5, 0)]
    results = all_methods(boxes(c, 0.5))
    for method, pairs in results.items():
        np.testing.assert_array_equal(pairs, [[0, 1]], err_msg=method)


def test_many_pairs_grow_the_buffer():
    rng = np.random.default_rng(3)
    scene = boxes(rng.uniform(-0.2, 0.2, (150, 3)), 0.5)
    for method, pairs in all_methods(scene).items():
        assert len(pairs) == 150 * 149 // 2, method


def test_sap_coherent_updates_and_new_bodies():
    rng = np.random.default_rng(11)
    scene = list(random_scene(5, 200, 6.0, True))
    bp = BroadPhase("sap")
    for step in range(12):
        pos = scene[5]
        # Small drifts (the insertion sort), then a shuffle (the full re-sort), then new rows.
        pos[1:] += rng.normal(0.0, 0.05 if step < 6 else 3.0, pos[1:].shape)
        if step == 9:
            extra = random_scene(6, 40, 6.0, False)
            scene = [240] + [np.concatenate([a, b]) for a, b in zip(scene[1:7], extra[1:7], strict=True)] \
                + [H, np.concatenate([scene[8], extra[8]])]
        pairs = bp.update(*scene)
        expected = oracle_pairs(scene[0], scene[1], scene[2], bp.aabb_min, bp.aabb_max)
        np.testing.assert_array_equal(pairs, expected)


def test_aabbs_exact():
    s = np.sqrt(0.5)
    q_y45 = (0.0, np.sin(np.pi / 8), 0.0, np.cos(np.pi / 8))
    q_z90 = (0.0, 0.0, s, s)
    kind = np.array([SPHERE, BOX, CAPSULE, HULL, SPHERE])
    params = np.array([[0.5, 0, 0, 0], [1.0, 2.0, 1.0, 0], [0.3, 1.0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]])
    pos = np.array([[1.0, 2.0, 3.0], [0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0]])
    quat = np.array([(0, 0, 0, 1.0), q_y45, q_z90, q_y45, (0, 0, 0, 1.0)])
    alive = np.array([True, True, True, True, False])
    bp = BroadPhase()
    bp.update(5, alive, np.zeros(5, bool), kind, params, pos, quat, H, np.full(5, 0.1))
    np.testing.assert_allclose(bp.aabb_min[0], [0.4, 1.4, 2.4])
    np.testing.assert_allclose(bp.aabb_max[0], [1.6, 2.6, 3.6])
    e = np.sqrt(2.0) + 0.1  # box (1, 2, 1) turned 45° about y: x and z extents √2
    np.testing.assert_allclose(bp.aabb_max[1], [e, 2.1, e])
    np.testing.assert_allclose(bp.aabb_max[2], [1.4, 0.4, 0.4], atol=1e-12)  # capsule lying along x
    c45 = np.cos(np.pi / 4)
    r = np.array([[c45, 0, c45], [0, 1, 0], [-c45, 0, c45]])
    world = ConvexHull(HULL_POINTS).vertices @ r.T + pos[3]
    np.testing.assert_allclose(bp.aabb_min[3], world.min(axis=0) - 0.1, atol=1e-12)
    np.testing.assert_allclose(bp.aabb_max[3], world.max(axis=0) + 0.1, atol=1e-12)
    assert bp.aabb_min.shape == (5, 3)


def test_method_setter_rejects_bad_name():
    bp = BroadPhase()
    with pytest.raises(ValueError, match="brute, sap, grid, octree.*quadtree"):
        bp.method = "quadtree"
    with pytest.raises(ValueError, match="bvh"):
        BroadPhase("bvh")


def test_debug_structures():
    scene = random_scene(2, 150, 5.0, True)
    n, alive = scene[0], scene[1]
    live = np.flatnonzero(alive[:n])
    bp = BroadPhase("sap")
    assert bp.debug()["intervals"].shape == (0, 2)
    bp.update(*scene)
    d = bp.debug()
    assert d["method"] == "sap" and d["axis"] in (0, 1, 2)
    np.testing.assert_array_equal(np.sort(d["order"]), live)
    np.testing.assert_array_equal(d["intervals"][:, 0], bp.aabb_min[d["order"], d["axis"]])
    np.testing.assert_array_equal(d["intervals"][:, 1], bp.aabb_max[d["order"], d["axis"]])
    assert np.all(np.diff(d["intervals"][:, 0]) >= 0)

    bp.method = "grid"
    bp.update(*scene)
    d = bp.debug()
    assert d["method"] == "grid" and d["cell_size"] > 0 and d["cells"].dtype == np.int64
    assert 0 in d["oversize"]  # the ground is kept out of the grid
    hashed = np.setdiff1d(live, d["oversize"])
    lower_cells = np.floor(bp.aabb_min[hashed] / d["cell_size"]).astype(np.int64)
    cells = {tuple(c) for c in d["cells"]}
    assert all(tuple(c) in cells for c in lower_cells)
    assert len(cells) == len(d["cells"])

    bp.method = "octree"
    bp.update(*scene)
    d = bp.debug()
    assert d["method"] == "octree" and d["depth"][0] == 0 and len(d["depth"]) >= 1
    assert np.all(d["nodes_max"] > d["nodes_min"])
    root_lo, root_hi = d["nodes_min"][0], d["nodes_max"][0]
    assert np.all(root_lo <= bp.aabb_min[live]) and np.all(bp.aabb_max[live] <= root_hi)
    assert np.all((d["nodes_min"] >= root_lo) & (d["nodes_max"] <= root_hi))
    sizes = d["nodes_max"][:, 0] - d["nodes_min"][:, 0]
    np.testing.assert_allclose(sizes, sizes[0] / 2.0 ** d["depth"])

    bp.method = "brute"
    assert bp.debug() == {"method": "brute"}


def test_empty_and_all_dead():
    bp = BroadPhase()
    for method in BroadPhase.METHODS:
        bp.method = method
        scene = boxes(np.zeros((0, 3)), 0.5)
        assert bp.update(*scene).shape == (0, 2)
        n, alive, *rest = boxes(np.zeros((3, 3)), 0.5)
        assert bp.update(n, np.zeros(3, bool), *rest).shape == (0, 2)
        assert bp.ms >= 0.0
