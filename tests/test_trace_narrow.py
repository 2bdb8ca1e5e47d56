"""The narrow phase taken apart (StepTrace.pair): the separating axes a box or hull pair tested, the axis
chosen, the reference and incident faces and every clip pass, the points removed, the closest points of
round shapes and GJK's simplices; the retraced pair gives the step's own manifold, and a traced step
stays the step, bit for bit. Then the stepper's pair view (sandbox/ui/stepper_pair.py) on a real trace."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from sandbox import scenes
from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World
from sandbox.engine.core.sat import ABS_TOL, REL_TOL

DT = 1.0 / 60.0
CUBE = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])


def quiet_world() -> World:
    """A world without gravity or cache, so that the bodies sit where they are put for the step traced."""
    w = World()
    w.gravity = (0.0, 0.0, 0.0)
    w.contact_cache = False
    return w


def turn(axis, angle: float) -> tuple[float, float, float, float]:
    """The unit quaternion (x, y, z, w) of a turn by ``angle`` radians about ``axis``."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    s = math.sin(angle / 2)
    return (float(a[0] * s), float(a[1] * s), float(a[2] * s), math.cos(angle / 2))


def on_ground(w: World, shape, position, orientation=(0.0, 0.0, 0.0, 1.0)):
    ground = w.add_body(Box((2.0, 0.5, 2.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    body = w.add_body(shape, position=position, orientation=orientation)
    return ground, body


def incident_points(p) -> np.ndarray:
    """The manifold's points on the incident body (the body that does not hold the reference face)."""
    return p.manifold.points_b if p.manifold.body_a.index == p.body_a and p.reference_body == "A" \
        else p.manifold.points_a


def test_box_resting_on_a_box_tests_15_axes_and_clips_to_the_manifold():
    w = quiet_world()
    ground, cube = on_ground(w, Box(0.5), (0.1, 0.49, -0.2), turn((0, 1, 0), 0.3))
    trace = w.step_traced(DT)
    p = trace.pair(ground.index, cube.index)
    assert p is not None and p.kinds == ("box", "box")
    assert len(p.axes) == 15
    assert [g for g, _, _ in p.features] == ["face A"] * 3 + ["face B"] * 3 + ["edge"] * 9
    assert p.axes[0][0] == "face A x" and p.axes[6][0] == "edge A x × B x"
    # the chosen axis: the least penetration (largest separation) among the face axes, no edge clearly
    # better (REL_TOL, ABS_TOL: sat.py's bias towards faces)
    seps = np.array([s for _, _, s in p.axes])
    faces = seps[:6]
    assert p.chosen is not None and p.chosen < 6
    assert seps[p.chosen] == faces.max()
    best_edge = np.nanmax(seps[6:])
    assert not best_edge > faces.max() + (1 - REL_TOL) * abs(faces.max()) + ABS_TOL
    assert seps[p.chosen] == pytest.approx(-0.01, abs=1e-9)  # the cube sinks 1 cm into the ground
    # the chosen axis is the manifold's normal, and the manifold is the world's
    world_m = next(m for m in w.manifolds if {m.body_a.index, m.body_b.index} == {ground.index, cube.index})
    for field in ("normal", "points_a", "points_b", "depths"):
        assert np.array_equal(getattr(p.manifold, field), getattr(world_m, field))
    assert np.allclose(p.axes[p.chosen][1], p.manifold.normal, atol=1e-12)
    assert np.allclose(p.manifold.normal, [0, 1, 0] if p.body_a == ground.index else [0, -1, 0], atol=1e-12)
    # the faces: the ground's top (a 4 m square) and the cube's bottom (a 1 m square), 1 cm apart
    assert p.reference_face.shape == (4, 3) and p.incident_face.shape == (4, 3)
    assert np.allclose(p.reference_face[:, 1], 0.0) and np.allclose(p.incident_face[:, 1], -0.01)
    # four side planes, and the last clip pass holds the manifold's points (the cube's bottom corners)
    planes = [f"side plane {k} of the reference face" for k in range(1, 5)]
    assert [label for label, _ in p.clip_passes] == planes
    last = p.clip_passes[-1][1]
    for q in incident_points(p):
        assert np.min(np.linalg.norm(last - q, axis=1)) < 1e-9
    assert len(p.manifold.depths) == 4 and p.removed == []
    # the retraced test wrote the step's manifold exactly
    assert np.array_equal(p.result.points_a, world_m.points_a)
    assert np.array_equal(p.result.depths, world_m.depths)


def test_pair_is_the_same_either_way_round_and_none_for_a_pair_never_tested():
    w = quiet_world()
    ground, cube = on_ground(w, Box(0.5), (0.0, 0.49, 0.0))
    far = w.add_body(Sphere(0.3), position=(0.0, 5.0, 0.0))
    trace = w.step_traced(DT)
    p = trace.pair(cube.index, ground.index)
    assert p is trace.pair(ground.index, cube.index)
    assert {p.body_a, p.body_b} == {ground.index, cube.index}
    assert trace.pair(far.index, ground.index) is None  # not a candidate pair: the narrow phase never ran
    assert trace.touching_pairs() == [(p.manifold.body_a.index, p.manifold.body_b.index)]


def test_tilted_box_loses_the_points_above_the_reference_face():
    w = quiet_world()
    angle = 0.3
    # the cube turned about x, its lowest edge 1 cm into the ground: clipping keeps the whole incident
    # face, of which the two corners on the raised edge lie far above the ground
    low = 0.5 * (math.cos(angle) + math.sin(angle))
    ground, cube = on_ground(w, Box(0.5), (0.0, low - 0.01, 0.0), turn((1, 0, 0), angle))
    p = w.step_traced(DT).pair(ground.index, cube.index)
    assert p.features[p.chosen][0] in ("face A", "face B")
    above = [(q, d) for reason, q, d in p.removed if reason == "above"]
    assert len(above) == 2
    assert all(d < -p.margin for _, d in above)
    raised = math.sin(angle) - 0.01  # the raised edge of the 1 m face, above the ground
    assert all(d == pytest.approx(-raised, abs=1e-9) for _, d in above)
    assert len(p.manifold.depths) == 2 and np.allclose(p.manifold.depths, 0.01, atol=1e-9)
    assert len(p.kept) == 2 and np.allclose(p.kept_depths, 0.01, atol=1e-9)


def test_octagonal_prism_is_reduced_to_four_points():
    w = quiet_world()
    ring = [(0.5 * math.cos(k * math.pi / 4), 0.5 * math.sin(k * math.pi / 4)) for k in range(8)]
    prism = ConvexHull([(x, y, z) for x, z in ring for y in (-0.25, 0.25)])
    ground, body = on_ground(w, prism, (0.0, 0.24, 0.0))
    p = w.step_traced(DT).pair(ground.index, body.index)
    assert p.kinds == ("box", "hull")
    assert len(p.incident_face) == 8 and len(p.kept) == 8
    dropped = [q for reason, q, _ in p.removed if reason == "reduction"]
    assert len(dropped) == 4 and len(p.manifold.depths) == 4
    kept_set = {tuple(np.round(q, 9)) for q in p.kept}
    final = {tuple(np.round(q, 9)) for q in p.manifold.points_b}
    assert final | {tuple(np.round(q, 9)) for q in dropped} == kept_set
    assert p.axes[0][0] == "face A -x" and p.axis_label(p.chosen) == "face A +y"


def test_hull_pair_tests_every_face_and_the_gauss_map_edge_pairs():
    w = quiet_world()
    big = ConvexHull(CUBE * [4.0, 1.0, 4.0])
    small = ConvexHull(scenes.random_hull_points(np.random.default_rng(3), 0.5))
    base = w.add_body(big, position=(0.0, -0.5, 0.0), mass=0.0)
    lowest = float((small.points - small.center)[:, 1].min())
    top = w.add_body(small, position=(0.0, -lowest - 0.005 - small.center[1], 0.0))
    p = w.step_traced(DT).pair(base.index, top.index)
    assert p.kinds == ("hull", "hull")
    groups = [g for g, _, _ in p.features]
    a_hull, b_hull = (big, small) if p.body_a == base.index else (small, big)
    assert groups.count("face A") == len(a_hull.faces) and groups.count("face B") == len(b_hull.faces)
    assert 0 < groups.count("edge") <= len(a_hull.edges) * len(b_hull.edges)
    for _, axis, sep in p.axes:
        assert math.isnan(sep) or abs(np.linalg.norm(axis) - 1.0) < 1e-12
        assert math.isnan(sep) or sep <= p.margin
    assert np.allclose(p.axes[p.chosen][1], p.manifold.normal, atol=1e-12)
    assert p.manifold.depths.max() == pytest.approx(0.005, abs=1e-9)
    last = p.clip_passes[-1][1]
    for q in incident_points(p):
        assert np.min(np.linalg.norm(last - q, axis=1)) < 1e-9


def test_separated_pair_is_traced_up_to_the_separating_axis():
    w = quiet_world()
    a = w.add_body(Box(0.5), position=(0.0, 0.0, 0.0), orientation=turn((0, 1, 0), math.pi / 4))
    b = w.add_body(Box(0.5), position=(1.15, 0.0, 1.15))
    trace = w.step_traced(DT)
    assert len(trace.pairs) == 1  # their bounding boxes overlap: a candidate pair
    p = trace.pair(a.index, b.index)
    assert p.result is None and p.manifold is None and p.chosen is None
    assert p.separating == len(p.axes) - 1 and p.axes[-1][2] > p.margin
    # A's face along the diagonal separates them: gap = centre distance − 0.5 − B's half-diagonal
    gap = 1.15 * math.sqrt(2) - 0.5 - 0.5 * math.sqrt(2)
    assert p.axes[-1][2] == pytest.approx(gap, abs=1e-9)
    assert p.reference_face is None and p.clip_passes == []


def test_sphere_sphere_closest_points_are_the_centres():
    w = quiet_world()
    ca, cb = np.array([0.0, 1.0, 0.0]), np.array([0.3, 1.5, -0.2])
    a = w.add_body(Sphere(0.4), position=ca)
    b = w.add_body(Sphere(0.3), position=cb)
    p = w.step_traced(DT).pair(a.index, b.index)
    assert p.axes == [] and p.chosen is None
    d = float(np.linalg.norm(cb - ca))
    assert np.array_equal(p.closest.point_a, ca) and np.array_equal(p.closest.point_b, cb)
    assert p.closest.distance == pytest.approx(d, abs=1e-12)
    assert p.manifold.depths[0] == pytest.approx(0.4 + 0.3 - d, abs=1e-12)
    assert np.allclose(p.manifold.normal, (cb - ca) / d, atol=1e-12)


def test_capsule_capsule_closest_points_of_the_segments():
    w = quiet_world()
    # A along x (the capsule's axis is its local y), B along z 0.45 m above it and 0.3 m along A's axis:
    # the segments' closest points are (0.3, 0, 0) and (0.3, 0.45, 0)
    a = w.add_body(Capsule(0.25, 0.5), position=(0.0, 0.0, 0.0), orientation=turn((0, 0, 1), math.pi / 2))
    b = w.add_body(Capsule(0.25, 0.5), position=(0.3, 0.45, 0.1), orientation=turn((1, 0, 0), math.pi / 2))
    p = w.step_traced(DT).pair(a.index, b.index)
    assert p.kinds == ("capsule", "capsule")
    assert np.allclose(p.closest.point_a, [0.3, 0.0, 0.0], atol=1e-12)
    assert np.allclose(p.closest.point_b, [0.3, 0.45, 0.0], atol=1e-12)
    assert p.closest.distance == pytest.approx(0.45, abs=1e-12)
    assert p.manifold.depths[0] == pytest.approx(0.5 - 0.45, abs=1e-12)


def test_sphere_on_a_hull_records_gjk_simplices():
    w = quiet_world()
    hull = ConvexHull(CUBE)
    base = w.add_body(hull, position=(0.0, 0.0, 0.0), mass=0.0)
    ball = w.add_body(Sphere(0.3), position=(0.2, 0.79, -0.1))
    p = w.step_traced(DT).pair(base.index, ball.index)
    assert p.kinds == ("sphere", "hull") and p.body_a == ball.index
    c = p.closest
    assert np.allclose(c.point_a, [0.2, 0.79, -0.1], atol=1e-12)  # the centre
    assert np.allclose(c.point_b, [0.2, 0.5, -0.1], atol=1e-12)  # below it on the top face
    assert c.distance == pytest.approx(0.29, abs=1e-12)
    assert len(c.simplices) >= 2 and c.simplices[0].iteration == 0
    dist = [s.distance for s in c.simplices]
    assert all(later <= earlier + 1e-12 for earlier, later in zip(dist, dist[1:], strict=False))
    assert dist[-1] == pytest.approx(0.29, abs=1e-12)
    last = c.simplices[-1]
    assert np.allclose(last.weights.sum(), 1.0) and len(last.on_polyhedron) == len(last.weights)
    assert p.manifold.depths[0] == pytest.approx(0.01, abs=1e-12)


def test_edge_contact_records_the_two_edges():
    w = quiet_world()
    # two cubes crossed edge to edge: A turned 45° about z (an edge along z on top), B turned 45° about
    # x (an edge along x below), their edges 1 cm into each other
    r = 0.5 * math.sqrt(2)
    a = w.add_body(Box(0.5), position=(0.0, 0.0, 0.0), orientation=turn((0, 0, 1), math.pi / 4))
    b = w.add_body(Box(0.5), position=(0.0, 2 * r - 0.01, 0.0), orientation=turn((1, 0, 0), math.pi / 4))
    p = w.step_traced(DT).pair(a.index, b.index)
    assert p.features[p.chosen][0] == "edge"
    assert p.edges is not None and p.reference_face is None
    assert p.closest.distance == pytest.approx(0.01, abs=1e-9)
    assert np.allclose(p.closest.point_a, [0.0, r, 0.0], atol=1e-9)
    assert np.allclose(p.axes[p.chosen][1], p.manifold.normal, atol=1e-12)


@pytest.mark.parametrize("cache", [True, False])
def test_retraced_pairs_give_the_steps_manifolds(cache):
    w = World()
    scenes.SCENES["showcase"](w)
    w.contact_cache = cache
    for _ in range(40):
        w.step(DT)
    trace = w.step_traced(DT)
    assert trace.touching_pairs()
    reused = 0
    for a, b in trace.touching_pairs():
        p = trace.pair(a, b)
        assert p.manifold is not None and not p.truncated
        if p.reused:
            reused += 1
            continue
        touching = p.result.depths >= 0
        assert np.array_equal(p.result.points_a[touching], p.manifold.points_a)
        assert np.array_equal(p.result.normal, p.manifold.normal)
        if p.chosen is not None:
            assert np.allclose(p.axes[p.chosen][1], p.manifold.normal, atol=1e-9)
    assert (reused > 0) == cache


def test_step_traced_is_step_bit_for_bit_over_100_steps_of_every_shape():
    w = World()
    scenes.SCENES["showcase"](w)
    kinds = {int(k) for k in w.data.kind[: w.data.n]}
    assert kinds == {0, 1, 2, 3}  # sphere, box, capsule, hull
    plain, traced = copy.deepcopy(w), copy.deepcopy(w)
    for step in range(100):
        plain.step(DT)
        trace = traced.step_traced(DT)
        if step % 10 == 0:  # retracing pairs leaves the world alone
            for a, b in trace.touching_pairs():
                trace.pair(a, b)
    assert traced.state_hash() == plain.state_hash()
    assert np.array_equal(traced.contacts.depth[: traced.contacts.count],
                          plain.contacts.depth[: plain.contacts.count])


# ---------------------------------------------------------------------------------------------------
# the stepper's pair view


@pytest.fixture(scope="module")
def imgui_frame():
    """A Dear ImGui and ImPlot context without a window or renderer (which claims to handle textures, so
    that ImGui builds its font atlas itself): ``frame()`` opens a frame and a window to draw into, and
    closes them when the block ends."""
    from contextlib import contextmanager

    from imgui_bundle import imgui, implot

    ctx = imgui.create_context()
    plot_ctx = implot.create_context()
    io = imgui.get_io()
    io.display_size = imgui.ImVec2(1280, 720)
    io.delta_time = 1 / 60
    io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
    io.set_ini_filename("")  # no imgui.ini left behind

    @contextmanager
    def frame():
        imgui.new_frame()
        imgui.begin("stepper")
        try:
            yield
        finally:
            imgui.end()
            imgui.render()

    yield frame
    implot.destroy_context(plot_ctx)
    imgui.destroy_context(ctx)


@pytest.fixture
def english():
    """The view's labels in English (the source text), whatever the environment asks for."""
    from sandbox.i18n import language, set_language

    before = language()
    set_language("en")
    yield
    set_language(before)


def settled_showcase_trace():
    w = World()
    scenes.SCENES["showcase"](w)
    for _ in range(45):
        w.step(DT)
    return w, w.step_traced(DT)


def test_pair_view_draws_every_sub_step_and_puts_the_manifold_into_the_scene(imgui_frame, english):
    from sandbox.i18n import set_language
    from sandbox.render.debug_draw import Batch
    from sandbox.ui.stepper_pair import PairView

    w, trace = settled_showcase_trace()
    view = PairView()
    view.choose(trace, None, None)
    a, b = trace.touching_pairs()[0]
    assert {view.body_a, view.body_b} == {a, b}  # the deepest touching pair
    p = trace.pair(a, b)
    for stage in ("narrow phase", "manifold"):
        labels = view.substeps(trace, stage)
        assert labels
        for sub in range(len(labels)):
            with imgui_frame():
                view.draw_panel(trace, stage, sub)
            batch = Batch()
            view.draw_scene(trace, stage, sub, batch)
            assert len(batch.line_array()[0]) + len(batch.point_array()) + len(batch.instance_array()[0]) > 0
    set_language("pt_BR")  # every formatted string fills in Portuguese too
    try:
        assert view.substeps(trace, "manifold")[-1] == "contatos finais"
        for stage in ("narrow phase", "manifold"):
            for sub in range(len(view.substeps(trace, stage))):
                with imgui_frame():
                    view.draw_panel(trace, stage, sub)
    finally:
        set_language("en")
    final = view.substeps(trace, "manifold").index("final contacts")
    batch = Batch()
    view.draw_scene(trace, "manifold", final, batch)
    drawn = batch.point_array()[:, :3]
    for q in np.vstack([p.manifold.points_a, p.manifold.points_b]):
        assert np.min(np.linalg.norm(drawn - q, axis=1)) < 1e-5  # float32 vertices


def test_pair_view_sub_steps_follow_the_pair(imgui_frame, english):
    from sandbox.render.debug_draw import Batch
    from sandbox.ui.stepper_pair import PairView

    w = quiet_world()
    ground, cube = on_ground(w, Box(0.5), (0.0, 0.49, 0.0))
    a = w.add_body(Sphere(0.3), position=(1.5, 0.29, 0.0))
    hull = w.add_body(ConvexHull(CUBE), position=(-1.2, 0.5, 0.0), mass=0.0)
    ball = w.add_body(Sphere(0.3), position=(-1.2, 1.29, 0.0))
    trace = w.step_traced(DT)
    view = PairView()
    view.choose(trace, ground.index, cube.index)
    assert view.substeps(trace, "narrow phase") == ["faces of A", "faces of B", "edge pairs", "chosen axis"]
    assert view.substeps(trace, "manifold") == [
        "reference and incident faces", "clip: side plane 1", "clip: side plane 2", "clip: side plane 3",
        "clip: side plane 4", "removed above the reference face", "reduction to four", "final contacts"]
    view.choose(trace, a.index, ground.index)
    assert view.substeps(trace, "narrow phase") == ["closest points"]
    view.choose(trace, ball.index, hull.index)
    labels = view.substeps(trace, "narrow phase")
    assert labels[0] == "GJK iteration 0" and labels[-1] == "closest points"
    for sub in range(len(labels)):
        with imgui_frame():
            view.draw_panel(trace, "narrow phase", sub)
        view.draw_scene(trace, "narrow phase", sub, Batch())
    view.choose(trace, a.index, ball.index)  # not a candidate pair
    assert view.pair is None and view.substeps(trace, "narrow phase") == []
    with imgui_frame():
        view.draw_panel(trace, "narrow phase", 0)  # says so, does not fail
    view.draw_scene(trace, "narrow phase", 0, Batch())
