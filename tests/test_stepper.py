"""The pipeline stepper (Step through) and the contact inspector: a stepped-through run is an ordinary run,
the stages' data agree with the engine and with the formulas a student would use, and in a real
1280×720 window every stage is drawn, checked region by region (window tests need ``xvfb-run``)."""

from __future__ import annotations

import copy
import inspect
import os

import numpy as np
import pytest
from app_driver import open_app, send

from sandbox import scenes
from sandbox.engine import Box, World
from sandbox.session import DEFAULT_DT, Session
from sandbox.ui.context import UiContext
from sandbox.ui.inspector import (
    PERSISTENCE_DISTANCE,
    ContactAges,
    friction_state,
    match_points,
    pair_keys,
    read_contact,
)
from sandbox.ui.stepper import (
    STAGES,
    CodeRef,
    Stepper,
    classify_pairs,
    convergence_series,
    function_source,
    pass_label,
)

needs_display = pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (xvfb-run)")
W, H = 1280, 720
G = 9.81


def stepper_on(scene, steps: int = 0) -> Stepper:
    """A stepper over a fresh session of ``scene`` advanced ``steps`` ordinary steps."""
    session = Session()
    assert session.load_scene(scene)
    for _ in range(steps):
        session.sim.step()
    return Stepper(UiContext(session))


def walk_one_step(stepper: Stepper) -> None:
    """Press Next until the stepper has taken the next step apart, visiting every stage and sub-step."""
    number = stepper.step.number
    visited = set()
    while stepper.step.number == number:
        visited.add(stepper.key)
        stepper.next()
    assert visited == {s.key for s in STAGES}


# --- the mode finishes the step exactly as an ordinary step -----------------------------------------------


@pytest.mark.parametrize("leave_at", ["broad phase", "solver", "sleep and events"])
def test_a_stepped_through_run_equals_an_ordinary_run(leave_at):
    plain = stepper_on("showcase", 20).ctx.session
    stepper = stepper_on("showcase", 20)
    session = stepper.ctx.session
    stepper.enter()  # takes step 21 apart
    assert session.sim.paused and session.world.steps == 21
    for _ in range(3):
        walk_one_step(stepper)  # steps 22, 23, 24
    stepper.jump(stepper.key_index(leave_at))
    stepper.leave()  # whatever stage shows, the step stays taken
    for _ in range(4):
        plain.sim.step()
    assert session.world.state_hash() == plain.world.state_hash()
    assert session.sim.steps == plain.sim.steps == 24
    assert session.sim.time == pytest.approx(plain.sim.time)
    for _ in range(30):  # and the two go on together
        plain.sim.step()
        session.sim.step()
    assert session.world.state_hash() == plain.world.state_hash()


def test_leaving_runs_on_a_world_that_ran_and_keeps_a_paused_one_paused():
    stepper = stepper_on("showcase")
    sim = stepper.ctx.session.sim
    sim.paused = False
    stepper.enter()
    assert sim.paused and stepper.active
    stepper.leave()
    assert not sim.paused and not stepper.active and sim.accumulator == 0.0
    sim.paused = True
    stepper.toggle()
    stepper.toggle()
    assert sim.paused


def test_running_the_world_leaves_the_mode_and_a_step_taken_elsewhere_is_noticed():
    stepper = stepper_on("showcase", 5)
    session = stepper.ctx.session
    stepper.enter()
    assert stepper.stale() is None
    session.single_step()  # O while stepping through
    assert stepper.stale() is not None and stepper.poses("pos", "quat") == ("pos", "quat")
    stepper.next()  # "Take the next step apart"
    assert stepper.stale() is None and stepper.step.number == session.sim.steps
    session.toggle_pause()  # P: run
    stepper.update()
    assert not stepper.active


def test_the_bodies_are_drawn_before_the_step_until_integration():
    stepper = stepper_on("showcase", 10)
    d = stepper.ctx.session.world.data
    before = d.pos[: d.n].copy()
    stepper.enter()
    after = d.pos[: d.n].copy()
    assert not np.array_equal(before, after)
    for k, stage in enumerate(STAGES):
        stepper.jump(k)
        pos, _ = stepper.poses(None, None)
        want = before if k < stepper.key_index("integration") else after
        assert np.array_equal(pos, want), stage.key


def test_taking_the_step_again_with_new_settings_is_the_step_with_them():
    stepper = stepper_on("showcase", 15)
    world = stepper.ctx.session.world
    twin = copy.deepcopy(world)
    stepper.enter()
    world.iterations = 3
    world.warm_starting = False
    stepper.retake()
    twin.iterations = 3
    twin.warm_starting = False
    twin.step(DEFAULT_DT)
    assert world.state_hash() == twin.state_hash()
    labels = [p.label for p in stepper.step.trace.solver]
    assert labels[0] == "substep 1 / cold start" and labels.count("substep 1 / solve 1") == 1


# --- what the stages show ------------------------------------------------------------------------------


def test_candidate_pairs_are_classified_as_the_narrow_phase_found_them():
    stepper = stepper_on("showcase", 30)
    stepper.enter()
    step = stepper.step
    table = step.pair_table
    c = step.contacts
    assert len(table["a"]) == len(step.trace.pairs)
    touching = {frozenset((int(m.body_a.index), int(m.body_b.index))) for m in step.trace.manifolds}
    for a, b, result, row in zip(table["a"], table["b"], table["result"], table["row"], strict=True):
        pair = frozenset((int(a), int(b)))
        assert (result == 0) == (pair in touching)
        if row >= 0:  # the manifold's own order: its normal points from a to b
            assert (c["body_a"][row], c["body_b"][row]) == (a, b)
        else:
            assert result == 2
    # a pair with no manifold; and an empty list
    none = classify_pairs(np.array([[0, 1]]), {k: v[:0] for k, v in c.items()})
    assert none["result"].tolist() == [2] and none["depth"][0] == -np.inf


def test_the_deepest_pair_is_shown_first_and_a_chosen_pair_is_kept_across_steps():
    stepper = stepper_on("showcase", 30)
    stepper.enter()
    table = stepper.step.pair_table
    k = int(np.argmax(table["depth"]))
    assert stepper.pair == (table["a"][k], table["b"][k])
    last = len(table["a"]) - 1
    stepper.choose_pair(table["a"][last], table["b"][last])
    chosen = stepper.pair
    walk_one_step(stepper)
    assert stepper.pair == chosen
    # selecting a body (a click on it) shows its deepest pair
    table = stepper.step.pair_table
    body = int(table["b"][0])
    stepper.ctx.session.select(stepper.ctx.session.world.body(body))
    stepper.update()
    assert body in stepper.pair
    mine = (table["a"] == body) | (table["b"] == body)
    shown = np.flatnonzero((np.minimum(table["a"], table["b"]) == min(stepper.pair))
                           & (np.maximum(table["a"], table["b"]) == max(stepper.pair)))
    assert table["depth"][shown[0]] == table["depth"][mine].max()


def test_the_convergence_plot_falls_within_a_sub_step():
    w = World()
    w.sleeping = False
    scenes.ground(w)
    for k in range(6):
        w.add_body(Box((0.5, 0.5, 0.5)), position=(0.02 * k, 0.5 + k, 0))
    for _ in range(20):
        w.step(DEFAULT_DT)
    w.substeps, w.iterations = 1, 30
    series = dict((name, (xs, ys)) for name, xs, ys in convergence_series(w.step_traced(DEFAULT_DT)))
    xs, ys = series["1"]
    assert xs.tolist() == list(range(1, 32))  # iterations 1..30 and relax; the warm start is left out
    assert ys[29] < 0.2 * ys[:3].max()
    assert "restitution" in series


def test_pass_labels_read_in_words():
    assert pass_label("substep 2 / solve 3") == "sub-step 2: iteration 3"
    assert pass_label("substep 1 / warm start") == "sub-step 1: warm start"
    assert pass_label("restitution") == "restitution"


def test_solver_arrows_are_the_traced_impulses_as_world_vectors():
    """The friction impulses of the trace, given along each point's two tangents, become world vectors of
    the same length lying in the contact plane; the normal impulses are the trace's."""
    stepper = stepper_on("showcase", 30)
    stepper.enter()
    step = stepper.step
    stepper.jump(stepper.key_index("solver"), 4)
    points = stepper.current_points()
    p = step.trace.solver[4]
    idx = step.solver_index
    has = idx >= 0
    assert has.sum() == len(step.trace.point_manifold)
    np.testing.assert_array_equal(points.normal_impulse[has], p.normal[idx[has]])
    np.testing.assert_allclose(np.linalg.norm(points.friction[has], axis=1),
                               np.linalg.norm(p.friction[idx[has]], axis=1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.einsum("ij,ij->i", points.friction[has], points.normal[has]), 0.0,
                               atol=1e-12)
    np.testing.assert_array_equal(points.vel, p.velocity)


def test_the_tangent_basis_is_the_engines():
    from sandbox.engine.core.vecmath import tangent_basis as engine_basis
    from sandbox.render.stepper_draw import tangent_basis

    rng = np.random.default_rng(3)
    normals = rng.normal(size=(200, 3))
    normals = np.concatenate([normals, np.eye(3), -np.eye(3), [[0.57735, 0.57735, 0.57735]]])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    t1, t2 = tangent_basis(normals)
    for n, a, b in zip(normals, t1, t2, strict=True):
        e1, e2 = engine_basis(tuple(n))
        np.testing.assert_allclose(a, e1, atol=1e-12)
        np.testing.assert_allclose(b, e2, atol=1e-12)


def test_persistence_distance_is_the_engines():
    from sandbox.engine.core.contact_prepare import PERSISTENCE_DISTANCE as ENGINE

    assert PERSISTENCE_DISTANCE == ENGINE


def test_show_code_gives_each_function_as_inspect_does():
    """Every function a stage can show (its own list, each broad-phase method's kernel, each pair test)
    reads as ``inspect.getsourcelines`` reads the Python function or the numba kernel's ``py_func``."""
    import importlib

    refs = {ref for stage in STAGES for ref in stage.code}
    refs |= {CodeRef("engine/core/broadphase.py", f"{m}_pairs") for m in ("brute", "sap", "grid", "octree")}
    kinds = ("sphere", "box", "capsule", "hull")
    for i, a in enumerate(kinds):
        for b in kinds[i:]:
            module = "polyhedra.py" if "sphere" not in a + b and "capsule" not in a + b else "rounded.py"
            refs.add(CodeRef(f"engine/core/{module}", f"{a}_{b}"))
    for ref in refs:
        path, first, text = function_source(ref)
        module = importlib.import_module(path[:-3].replace("/", "."))
        obj = module
        for part in ref.name.split("."):
            obj = getattr(obj, part)
        lines, start = inspect.getsourcelines(getattr(obj, "py_func", obj))
        assert (first, text) == (start, "".join(lines).rstrip("\n")), ref


# --- the contact inspector --------------------------------------------------------------------------------


def box_on_ground(speed: float = 0.0, mu: float = 0.5) -> tuple[World, object]:
    w = World()
    w.add_body(Box((5.0, 0.5, 5.0)), position=(0, -0.5, 0), mass=0.0, friction=mu)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0), mass=2.0, friction=mu)
    for _ in range(30):
        w.step(DEFAULT_DT)
    box.linear_velocity = (speed, 0.0, 0.0)
    return w, box


def stepper_for(world: World) -> Stepper:
    session = Session(world)
    session.scene_name = "custom"
    return Stepper(UiContext(session))


@pytest.mark.parametrize("speed", [0.0, 3.0])
def test_a_resting_box_carries_its_weight_and_a_sliding_one_is_on_the_friction_cone(speed):
    """Σλn = m·g·h for a box resting on the ground (the weight's impulse over one sub-step h = dt/4: the
    solver's impulses are per sub-step); a box sliding at 3 m/s has every point on the cone, |λt| = μ·λn,
    so Σ|λt| = μ·m·g·h (Coulomb; within 1 %: a pass clamps the friction against the normal impulse of the
    pass before); one at rest sticks, its friction impulses adding up to no net push."""
    w, box = box_on_ground(speed)
    stepper = stepper_for(w)
    stepper.enter()
    stepper.jump(stepper.key_index("integration"))
    points = stepper.current_points()
    mine = np.flatnonzero(points.body_b == box.index)
    assert len(mine) == 4
    total = points.normal_impulse[mine].sum()
    h = DEFAULT_DT / w.substeps
    assert points.h == h
    assert total == pytest.approx(2.0 * G * h, rel=0.05)
    readings = [read_contact(w, points, j) for j in mine]
    assert all(r.mu == pytest.approx(0.5) for r in readings)
    friction = sum(float(np.linalg.norm(r.friction)) for r in readings)
    if speed:
        assert {r.state for r in readings} == {"slides"}
        assert friction == pytest.approx(0.5 * total, rel=0.01)
        assert all(r.slip > 1.0 for r in readings)  # still sliding after the step
    else:
        assert {r.state for r in readings} == {"sticks"}
        net = np.sum([r.friction for r in readings], axis=0)
        assert np.linalg.norm(net) < 1e-3 * total


def test_the_relative_velocity_is_that_of_the_material_points():
    """v_rel = (v_B + ω_B × r_B) − (v_A + ω_A × r_A): a box spinning about y on the ground slips at ω·|r| at
    each corner, across the anchor, and neither approaches nor separates."""
    w, box = box_on_ground()
    box.angular_velocity = (0.0, 2.0, 0.0)
    stepper = stepper_for(w)
    stepper.enter()
    stepper.jump(stepper.key_index("narrow phase"))
    points = stepper.current_points()
    for j in np.flatnonzero(points.body_b == box.index):
        r = read_contact(w, points, j)
        assert r.normal_impulse is None and r.friction is None  # not computed yet at this stage
        arm = r.anchor_b - r.normal * float(r.anchor_b @ r.normal)
        assert r.slip == pytest.approx(2.0 * np.linalg.norm(arm), rel=1e-6)
        # the normal points from the box (A) to the ground (B) or the other way: either way, no approach
        assert abs(r.normal_speed) < 1e-6
        np.testing.assert_allclose(r.relative_velocity @ arm, 0.0, atol=1e-9)


def test_friction_state_follows_coulombs_law():
    f = np.array([0.3, 0.4, 0.0])  # |λt| = 0.5
    assert friction_state(1.0, f, 0.5, 0.0) == "slides"  # on the rim: μ·λn = 0.5
    assert friction_state(1.0, f, 0.6, 0.0) == "sticks"  # inside: 0.5 < 0.6
    assert friction_state(0.0, f, 0.6, 0.0) == "free"
    assert friction_state(1.0, None, 0.5, 0.001) == "sticks"  # without λt: by the slip speed
    assert friction_state(1.0, None, 0.5, 0.5) == "slides"


def test_ages_count_the_steps_a_point_has_lasted_and_keep_last_steps_impulse():
    w = World()
    w.sleeping = False  # a sleeping pair has no solver points, so no warm start to compare with
    w.add_body(Box((5.0, 0.5, 5.0)), position=(0, -0.5, 0), mass=0.0)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.6, 0), mass=1.0)
    ages = ContactAges()
    ages.observe(w)  # no contacts yet
    first = None
    for step in range(1, 40):
        w.step(DEFAULT_DT)
        ages.observe(w)
        c = w.contacts
        if c.count and first is None:
            first = step
    assert first is not None
    c = w.contacts
    found = ages.lookup(int(c.body_a[0]), int(c.body_b[0]), c.points_a[0, 0])
    assert found is not None
    assert found[:2] == (39 - first + 1, False)
    stored = c.impulse[0, 0]
    # the next step, taken apart, starts this point from the impulse it ended the last step with: the
    # warm start that the trace records, and that the ages remember as the point's previous impulse
    stepper = stepper_for(w)
    stepper.inspector.ages = ages
    stepper.enter()
    stepper.jump(stepper.key_index("solver"))
    points = stepper.current_points()
    j = int(np.flatnonzero((points.row == 0) & (points.slot == 0))[0])
    age, from_start, previous = ages.lookup(int(points.body_a[j]), int(points.body_b[j]), points.point_a[j])
    assert (age, from_start) == (40 - first + 1, False)
    assert points.warm[j] == previous == stored
    assert read_contact(w, points, j, ages).warm == stored
    assert box.alive


def test_match_points_follows_a_point_within_the_persistence_distance():
    keys = pair_keys([1, 1, 2], [5, 5, 7])
    points = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 0, 0]])
    now = np.array([[0.02, 0, 0], [1.0, 0.06, 0], [0.0, 0, 0]])
    assert match_points(keys, points, pair_keys([1, 1, 3], [5, 5, 7]), now).tolist() == [0, -1, -1]


def test_picking_takes_the_point_under_the_cursor():
    from sandbox.render import Camera

    w, _box = box_on_ground()
    stepper = stepper_for(w)
    stepper.enter()
    stepper.jump(stepper.key_index("manifold"))
    ctx = stepper.ctx
    ctx.camera = Camera(target=(0.0, 0.0, 0.0), distance=4.0, yaw=0.3, pitch=0.5)
    points = stepper.current_points()
    x, y = ctx.camera.project(points.point_b[2], *ctx.window_size)
    h = ctx.window_size[1]
    assert stepper.click(x, h - y, 1, 0)
    assert stepper.inspector.index == 2 and stepper.inspector.reading is not None
    assert not stepper.click(5.0, h - 5.0, 1, 0)  # far from every point
    assert not stepper.click(x, h - y, 4, 0)  # the right button orbits, never picks


def test_the_stepper_catalogue_translates_every_string():
    import ast
    from pathlib import Path

    from sandbox.i18n import read_po

    root = Path(__file__).resolve().parents[1] / "sandbox"
    catalogue = read_po(root / "locale" / "pt_BR" / "LC_MESSAGES" / "stepper.po")
    for name in ("ui/stepper.py", "ui/inspector.py"):
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and isinstance(node.args[0], ast.Constant)):
                assert node.args[0].value in catalogue, node.args[0].value


# --- a real window ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app():
    yield from open_app("showcase")


def click(app, x: float, y: float) -> None:
    """A left click at window point (x, y) (top-left origin), over two frames as ImGui needs."""
    px, py = int(x), H - int(y)
    send(app, "on_mouse_motion", px, py, 0, 0)
    app.run(frames=1)
    send(app, "on_mouse_press", px, py, 1, 0)
    app.run(frames=1)
    send(app, "on_mouse_release", px, py, 1, 0)
    app.run(frames=1)


def press(app, name: str) -> None:
    """Click the stepper's control ``name`` where it was drawn last frame."""
    x0, y0, x1, y1 = app.panel.stepper.buttons[name]
    click(app, 0.5 * (x0 + x1), 0.5 * (y0 + y1))


def tap(app, symbol: int) -> None:
    send(app, "on_key_press", symbol, 0)
    send(app, "on_key_release", symbol, 0)


def view_region(img: np.ndarray) -> np.ndarray:
    """The part of the view between the stepper window and the panel."""
    from sandbox.ui.context import PANEL_WIDTH
    from sandbox.ui.stepper import STEPPER_WIDTH

    return img[100:H - 20, int(STEPPER_WIDTH) + 40:W - int(PANEL_WIDTH) - 20]


@needs_display
def test_every_stage_is_drawn_in_the_window_and_in_the_view(app, tmp_path):
    from pyglet.window import key

    assert app.ui.load_scene("showcase")
    app.session.sim.paused = True
    for _ in range(30):
        app.session.sim.step()
    app.run(frames=1)
    tap(app, key.S)
    app.run(frames=2)
    stepper = app.panel.stepper
    assert stepper.active and stepper.rect is not None
    x0, y0, x1, y1 = (int(v) for v in stepper.rect)
    assert (x0, y0) == (10, 96) and x1 - x0 == 430 and y1 > H - 20  # the left of the view, under the overlay
    panels = {}
    for stage in STAGES:
        press(app, f"stage {stage.key}")
        if stage.key == "solver":
            stepper.sub = 5
        stepper.show_drawing = True
        app.run(frames=1)
        assert stepper.drawn_stage == stage.key and not app.session.errors
        on = app.read_pixels().astype(int)
        stepper.show_drawing = False
        app.run(frames=1)
        off = app.read_pixels().astype(int)
        from sandbox.app import write_png

        write_png(tmp_path / f"{stage.key}.png", on.astype(np.uint8))
        window = on[y0 + 40:y1 - 10, x0 + 5:x1 - 5]
        scene = view_region(on)
        assert window.mean() < 0.6 * scene.mean(), stage.key  # a dark panel over the bright scene
        panels[stage.key] = window
        changed = np.abs(view_region(on) - view_region(off)).max(axis=2) > 40
        # every stage draws something in the view, except "sleep and events" when nothing happened
        if stage.key != "sleep and events" or stepper.step.events or (
                stepper.step.awake_before & ~stepper.step.awake_after).any():
            assert changed.sum() > 30, stage.key
    stepper.show_drawing = True
    keys = list(panels)
    for a, b in zip(keys, keys[1:], strict=False):  # each stage's panel is its own
        assert np.abs(panels[a] - panels[b]).mean() > 3.0, (a, b)


@needs_display
def test_the_chosen_pairs_points_are_drawn_where_they_project(app):
    stepper = app.panel.stepper
    if not stepper.active:
        stepper.enter()
    stepper.jump(stepper.key_index("manifold"))
    stepper.focus_pair()
    stepper.show_drawing = True
    app.run(frames=1)
    on = app.read_pixels().astype(int)
    stepper.show_drawing = False
    app.run(frames=1)
    off = app.read_pixels().astype(int)
    stepper.show_drawing = True
    c = stepper.step.contacts
    row = stepper._pair_row(stepper.step)
    assert row >= 0
    hits = 0
    for p in c["points_b"][row, : int(c["npoints"][row])]:
        x, y = app.ui.camera.project(p, W, H)
        patch = (slice(int(y) - 3, int(y) + 4), slice(int(x) - 3, int(x) + 4))
        hits += np.abs(on[patch] - off[patch]).mean() > 20.0
    assert hits >= 1


@needs_display
def test_clicking_a_contact_point_in_the_stepper_inspects_it_in_the_window(app):
    stepper = app.panel.stepper
    if not stepper.active:
        stepper.enter()
    stepper.jump(stepper.key_index("solver"), 3)
    stepper.focus_pair()
    app.run(frames=1)
    row = stepper._pair_row(stepper.step)
    x, y = app.ui.camera.project(stepper.step.contacts["points_b"][row, 0], W, H)
    click(app, x, y)
    inspector = stepper.inspector
    assert inspector.active and inspector.reading is not None
    assert inspector.reading.normal_impulse is not None and inspector.reading.friction is not None
    assert "iteration" in inspector.reading.note
    x0, y0, x1, y1 = inspector.rect  # its section, inside the stepper window: nothing covers the view
    sx0, sy0, sx1, sy1 = stepper.rect
    assert sx0 <= x0 and x1 <= sx1 and sy0 <= y0 and y1 <= sy1
    inspector.clear()


@needs_display
def test_next_and_previous_walk_the_stages_and_s_leaves(app):
    from pyglet.window import key

    stepper = app.panel.stepper
    if not stepper.active:
        tap(app, key.S)
        app.run(frames=1)
    stepper.jump(0)
    app.run(frames=1)
    press(app, "next")
    assert stepper.key == "narrow phase"
    press(app, "previous")
    assert stepper.key == "broad phase"
    number = stepper.step.number
    stepper.jump(len(STAGES) - 1)
    app.run(frames=1)
    press(app, "next")  # "Next step": the next step taken apart
    assert stepper.step.number == number + 1 and stepper.key == "broad phase"
    press(app, "code")
    assert stepper.code_open
    app.run(frames=1)
    press(app, "code")
    app.run(frames=1)  # (ImGui holds the keyboard in the frame of a click)
    tap(app, key.S)
    app.run(frames=1)
    assert not stepper.active and stepper.rect is None and app.session.sim.paused


@needs_display
def test_clicking_a_contact_point_opens_the_inspector_in_normal_running(app):
    assert app.ui.load_scene("box-box")
    app.session.sim.paused = False
    app.run(frames=40)
    app.session.sim.paused = True
    app.ui.options.contacts = True
    app.run(frames=1)
    stepper = app.panel.stepper
    c = app.session.world.contacts
    assert c.count > 0
    x, y = app.ui.camera.project(c.points_b[0, 0], W, H)
    click(app, x, y)
    inspector = stepper.inspector
    assert inspector.active and inspector.reading is not None and inspector.rect is not None
    assert inspector.reading.friction is None and inspector.reading.normal_impulse > 0.0
    assert app.session.selected is None  # the click inspected the contact, it did not select the body
    x0, y0, x1, y1 = inspector.rect
    assert x1 - x0 > 250 and y1 > H - 30
    app.ui.options.contacts = False
    inspector.clear()
    app.run(frames=1)
    click(app, x, y)
    assert not inspector.active  # with the points hidden, a click selects as before


@needs_display
def test_the_stepper_takes_the_1000_body_pile_apart(app):
    """Tracing records every point and pass of the pile; the culled pairs (half a million) are counted,
    not drawn; every stage draws without an error."""
    assert app.ui.load_scene("pile")
    for _ in range(120):
        app.session.sim.step()
    stepper = app.panel.stepper
    stepper.enter()
    step = stepper.step
    assert len(step.alive) == 1001 and len(step.trace.point_manifold) > 1000
    for k in range(len(STAGES)):
        stepper.jump(k)
        app.run(frames=1)
        assert stepper.drawn_stage == STAGES[k].key
    assert not app.session.errors
    assert "culled" not in step.cache  # not listed, let alone drawn
    stepper.leave()


class FakePairView:
    """The narrow-phase view's interface (``sandbox/ui/stepper_pair.PairView``), recording its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def choose(self, trace, a, b) -> None:
        self.calls.append(("choose", a, b))

    def substeps(self, trace, stage: str) -> list[str]:
        return ["axes", "clip 1", "clip 2"] if stage == "narrow phase" else ["points"]

    def draw_panel(self, trace, stage: str, sub: int) -> None:
        self.calls.append(("panel", stage, sub))

    def draw_scene(self, trace, stage: str, sub: int, batch) -> None:
        self.calls.append(("scene", stage, sub))
        batch.points(np.zeros((1, 3)), (1.0, 1.0, 1.0, 1.0), 5.0)


def test_the_narrow_phase_view_is_told_the_pair_and_steps_through_its_sub_steps():
    from sandbox.render.debug_draw import Batch

    stepper = stepper_on("showcase", 30)
    view = stepper.pair_view = FakePairView()
    stepper.enter()
    assert view.calls[-1] == ("choose", *stepper.pair)
    stepper.jump(stepper.key_index("narrow phase"))
    seen = []
    while stepper.key == "narrow phase":
        batch = Batch()
        stepper.overlay(batch)
        seen.append(view.calls[-1])
        stepper.next()
    assert seen == [("scene", "narrow phase", k) for k in range(3)]
    assert stepper.key == "manifold" and stepper.substeps(stepper.stage) == ["points"]
    stepper.previous()
    assert (stepper.key, stepper.sub) == ("narrow phase", 2)
    stepper.choose_pair(*stepper.pair[::-1])
    assert view.calls[-1] == ("choose", *stepper.pair)
