"""A/B comparisons (``sandbox/compare.py``, ``sandbox/ui/compare_window.py``): lanes copied bit for bit from
A, stepping in lockstep; identical settings stay identical; each lesson's side-by-side preset shows what
its formula predicts in each lane (CCD off lets the bullet through, CCD on stops it; projection leaves
the ball's velocity in free fall, impulses stop it, penalty springs let it sink deeper); lanes follow a
timeline back; the lens-shifted lane camera picks exactly; the renderer draws into one lane only; and, in
a real 1280×720 window, the lanes, their captions, their settings windows and the figures strip."""

from __future__ import annotations

import doctest
import math
import os

import numpy as np
import pytest
from app_driver import click, open_app

import sandbox.compare
from sandbox import scenes
from sandbox.compare import Comparison, Figures, check_lanes
from sandbox.engine import Box, Sphere, World
from sandbox.lessons import DT, LESSONS_BY_NAME, G, tunnel_passes
from sandbox.session import Session

W, H = 1280, 720
needs_display = pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (xvfb-run)")


def side_by_side(name: str) -> dict:
    """The lesson's side-by-side preset."""
    return next(p for p in LESSONS_BY_NAME[name].presets if "compare" in p)


def test_the_modules_examples_run():
    assert doctest.testmod(sandbox.compare).failed == 0


# --- the model --------------------------------------------------------------------------------------


def test_a_lane_with_the_same_settings_stays_identical_for_200_steps():
    session = Session()
    assert session.load_scene("showcase")  # every shape kind, stacks, contacts of every pair
    for _ in range(10):
        session.sim.step()
    ab = session.open_compare()
    lane = ab.lanes[0]
    assert lane.world.state_hash() == session.world.state_hash()
    for _ in range(200):
        session.sim.step()
    assert lane.world.steps == session.world.steps == 210
    assert lane.world.state_hash() == session.world.state_hash()
    assert lane.diverged_at is None


def test_a_changed_setting_makes_the_lane_differ_and_the_lane_can_give_it_back():
    session = Session()
    assert session.load_scene("bounce row")
    ab = session.open_compare()
    lane = ab.lanes[0]
    ab.set_setting(lane, "substeps", 1)
    assert lane.world.substeps == 1 and session.world.substeps == 4
    for _ in range(60):
        session.sim.step()
    assert lane.diverged_at is not None and 1 <= lane.diverged_at <= 60
    assert ab.differences(lane, session.sim) == [("substeps", 4, 1)]
    ab.clear_setting(lane, "substeps", session.sim)
    assert lane.world.substeps == 4 and ab.differences(lane, session.sim) == []
    with pytest.raises(ValueError, match="substeps"):
        ab.set_setting(lane, "substeps", 0)
    assert lane.world.substeps == 4 and "substeps" not in lane.settings


def test_a_setting_changed_in_a_reaches_the_lanes_that_do_not_change_it():
    session = Session()
    assert session.load_scene("bounce")
    ab = session.open_compare([{"label": "", "settings": {}}, {"label": "", "settings": {"ccd": False}}])
    lane = ab.lanes[0]
    session.set_setting("restitution_rule", "max")
    session.set_setting("gravity", (0.0, -1.62, 0.0))
    session.set_setting("ccd", True)
    session.sim.step()
    assert lane.world.restitution_rule == "max"
    np.testing.assert_array_equal(lane.world.gravity, (0.0, -1.62, 0.0))
    assert lane.world.ccd is False  # the lane's own setting stays


def test_the_bullet_lesson_side_by_side_ccd_off_lets_it_through_ccd_on_stops_it():
    session = Session()
    assert session.load_scene("bullet")
    for _ in range(5):
        session.sim.step()
    session.apply_preset(side_by_side("bullet"))
    ab = session.compare
    lane = ab.lanes[0]
    assert session.world.steps == 0 and lane.world.steps == 0  # from the scene's start
    assert (ab.label_a, lane.label) == ("CCD off", "CCD on")
    assert session.world.ccd is False and lane.world.ccd is True
    for _ in range(60):  # 1 s: 300 m/s covers the 7.5 m to the wall in 25 ms
        session.sim.step()
    a_bullet, b_bullet = session.bodies[0], lane.bodies[0]
    assert a_bullet.position[0] > 0.1  # through the wall (its back face at x = 0.1)
    assert b_bullet.position[0] < 0.0  # stopped in front of it
    # the lesson's own check passes in each lane
    assert LESSONS_BY_NAME["bullet"].check(session.world, session.bodies).startswith("PASS")
    assert LESSONS_BY_NAME["bullet"].check(lane.world, lane.bodies).startswith("PASS")
    assert session.reset() and lane is ab.lanes[0] and ab.lanes[0].world.steps == 0
    assert ab.lanes[0].world.ccd is True and session.world.ccd is False  # reset keeps both lanes


def test_the_tunnelling_lesson_side_by_side_matches_the_formula_in_both_lanes():
    session = Session()
    assert session.load_scene("tunnelling")
    session.apply_preset(side_by_side("tunnelling"))
    lane = session.compare.lanes[0]
    for _ in range(90):
        session.sim.step()
    for world, bodies in ((session.world, session.bodies), (lane.world, lane.bodies)):
        through = [float(b.position[0]) > scenes.TUNNEL_WALL for b in bodies]
        assert through == [tunnel_passes(world, v) for v in scenes.TUNNEL_SPEEDS]
    assert not any(float(b.position[0]) > scenes.TUNNEL_WALL for b in lane.bodies)  # CCD on: all stop
    assert sum(float(b.position[0]) > scenes.TUNNEL_WALL for b in session.bodies) == 3  # 60, 150, 300 m/s


def test_the_responses_lesson_runs_three_lanes_that_each_respond_their_way():
    session = Session()
    assert session.load_scene("responses")
    session.apply_preset(side_by_side("responses"))
    ab = session.compare
    assert [session.world.response, *(lane.world.response for lane in ab.lanes)] == [
        "impulse", "projection", "penalty"]
    deepest = [0.0, 0.0, 0.0]
    for _ in range(120):
        session.sim.step()
        for k, world in enumerate((session.world, *(lane.world for lane in ab.lanes))):
            deepest[k] = max(deepest[k], Figures.of(world).deepest)
    impulse, projection, penalty = session.bodies[0], ab.lanes[0].bodies[0], ab.lanes[1].bodies[0]
    assert abs(impulse.linear_velocity[1]) < 0.05  # stopped dead
    # projection moves the ball out but leaves its velocity as in free fall: −g·t
    assert projection.linear_velocity[1] == pytest.approx(-G * session.world.time, rel=0.01)
    assert abs(projection.position[1] - 0.4) < 0.01
    assert abs(penalty.linear_velocity[1]) < 0.05 and deepest[2] > deepest[0]  # the spring lets it sink in
    assert all(lane.diverged_at == 1 for lane in ab.lanes)


def test_lanes_follow_a_back_through_their_history():
    session = Session()
    assert session.load_scene("bounce row")
    ab = session.open_compare([{"label": "", "settings": {}}, {"label": "", "settings": {"substeps": 1}}])
    lane = ab.lanes[0]
    hashes, snaps = {}, {}
    for _ in range(150):
        session.sim.step()
        hashes[lane.world.steps] = lane.world.state_hash()
        if session.world.steps in (40, 130):
            snaps[session.world.steps] = session.world.snapshot()
    diverged = lane.diverged_at
    for back in (130, 40):  # a timeline restores an earlier step of A
        session.world.restore(snaps[back])
        ab.follow(session.sim)
        assert lane.world.steps == back and lane.world.state_hash() == hashes[back]
    assert (lane.diverged_at is None) == (diverged > 40)
    for _ in range(10):  # and steps on from there, in lockstep again
        session.sim.step()
    assert lane.world.steps == 50 and lane.world.state_hash() == hashes[50]


def test_another_scene_closes_the_comparison_and_bad_lanes_change_nothing():
    session = Session()
    assert session.load_scene("bounce")
    session.open_compare()
    assert session.load_scene("bounce row") and session.compare is None
    assert session.sim.watchers == [session.timeline]  # the comparison left; the timeline stays
    for lanes, words in (([{"label": "", "settings": {}}], "2 or 3 lanes"),
                         ([{"label": "", "settings": {}}] * 4, "2 or 3 lanes"),
                         ([{"settings": {}}, {"settings": {"no_such": 1}}], "lane B: unknown setting"),
                         ([{"settings": {"ccd": "yes"}}, {"settings": {}}], "lane A: ccd must be True"),
                         ([{"settings": {}}, {"settings": {}, "colour": 1}], "unknown keys"),
                         ([{"settings": {}}, {"label": 3, "settings": {}}], "label must be a string"),
                         ("AB", "list of lanes")):
        with pytest.raises(ValueError, match=words):
            session.open_compare(lanes)
        assert session.compare is None and session.world.ccd is True
    assert check_lanes([{"settings": {"substeps": np.int64(2)}}, {}])[0]["settings"] == {"substeps": 2}


def test_a_lane_can_start_again_from_as_changed_state():
    session = Session()
    assert session.load_scene("bounce")
    ab = session.open_compare()
    lane = ab.lanes[0]
    session.world.add_body(Sphere(0.3), position=(2.0, 3.0, 0.0))  # added to A by hand
    session.sim.step()
    assert lane.world.state_hash() != session.world.state_hash() and lane.diverged_at == 1
    ab.copy_state(lane, session.sim)
    assert lane.world.state_hash() == session.world.state_hash() and lane.diverged_at is None
    for _ in range(30):
        session.sim.step()
    assert lane.world.state_hash() == session.world.state_hash()


def test_a_lane_far_behind_starts_again_from_a_and_says_so():
    w = World()
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0)
    ball = w.add_body(Sphere(0.5), position=(0, 3, 0))
    from sandbox.session import Simulation

    a = Simulation(w)
    ab = Comparison(a, [ball], check_lanes([{}, {}]))
    for _ in range(700):  # stepped without telling the comparison
        w.step(DT)
    ab.follow(a)
    lane = ab.lanes[0]
    assert lane.world.steps == 700 and lane.note.format(**lane.note_values) == (
        "started again from A at step 700: it was 700 steps behind")
    assert lane.world.state_hash() == w.state_hash()


# --- the view ---------------------------------------------------------------------------------------


def test_the_lane_camera_picks_exactly_what_it_projects():
    from sandbox.render import Camera
    from sandbox.ui.compare_window import LaneCamera, lane_shift

    plain = Camera(target=(0, 1, 0), distance=8.0, yaw=0.4, pitch=0.3)
    lane = LaneCamera.like(plain, shift=lane_shift((0, 0, W, 272), H))
    point = np.array([0.7, 1.4, -0.3])
    px, py = plain.project(point, W, H)
    lx, ly = lane.project(point, W, H)
    assert lx == pytest.approx(px) and ly == pytest.approx(py - 0.5 * lane.shift * H)
    assert lane.project(plain.target, W, H)[1] == pytest.approx(136.0)  # the middle of the lane
    origin, direction = lane.ray(lx, ly, W, H)
    t = float(np.dot(point - origin, direction))
    np.testing.assert_allclose(origin + t * direction, point, atol=1e-9)


# --- in the app -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app():
    yield from open_app("bounce row")



@needs_display
def test_the_panels_ab_button_opens_identical_lanes_that_look_the_same(app):
    app.ui.show_lesson = False
    assert app.ui.load_scene("bounce row")
    app.session.sim.paused = False
    app.run(frames=2)
    window = app.panel.compare
    click(app, window.toggle_rects["A/B"])
    ab = app.session.compare
    assert ab is not None and len(ab.lanes) == 1
    app.run(frames=20)
    rects = window.lane_rects
    assert len(rects) == 2 and rects[0][3] == pytest.approx(rects[1][1])
    assert [c[2] for c in window.captions] == ["A · the panel’s settings", "B · same settings as A"]
    assert window.figures[-1] == ["Same as A", "—", "identical"]
    assert window.figures[0][1] == window.figures[0][2]  # the same energy
    # identical worlds look identical: lane B is lane A's picture one lane lower (away from the captions
    # and the settings window at the right)
    app.session.sim.paused = True
    app.ui.show_labels = False  # (the lesson's labels have the lane's colour in B)
    app.run(frames=1)
    img = app.read_pixels().astype(int)
    app.ui.show_labels = True
    top, height = int(rects[0][1]), int(rects[0][3] - rects[0][1])
    a = img[top + 40:top + height - 4, 220:560]  # right of the status overlay
    b = img[top + height + 40:top + 2 * height - 4, 220:560]
    assert a.std() > 5.0  # there is a scene in it
    assert np.abs(a - b).mean() < 1.0
    # the camera's target shows in the middle of lane A, where the mouse picks
    cam = app.ui.camera
    assert cam.project(cam.target, W, H)[1] == pytest.approx(0.5 * (rects[0][1] + rects[0][3]), abs=1.0)
    click(app, window.toggle_rects["A/B"])
    assert app.session.compare is None and type(app.ui.camera).__name__ == "Camera"


@needs_display
def test_the_bullet_lessons_preset_shows_ccd_off_and_on_lanes_with_their_figures(app):
    app.ui.show_lesson = True
    assert app.ui.load_scene("bullet")
    app.session.sim.paused = True
    app.run(frames=3)  # the Lesson window's layout settles in its second frame
    label = side_by_side("bullet")["label"]
    click(app, app.panel.lesson.buttons[label])
    ab = app.session.compare
    assert ab is not None and (ab.label_a, ab.lanes[0].label) == ("CCD off", "CCD on")
    app.session.sim.paused = False
    app.run(frames=40)
    window = app.panel.compare
    assert [c[2] for c in window.captions] == ["A · CCD off", "B · CCD on"]
    assert app.session.bodies[0].position[0] > 0.1 and ab.lanes[0].bodies[0].position[0] < 0.0
    rows = {row[0]: row[1:] for row in window.figures}
    assert rows["Same as A"][1].startswith("differs from step")
    assert rows["Contacts"] == ["0 manifolds, 0 points", "1 manifold, 1 point"]  # only B's bullet touches
    x0, y0, x1, y1 = window.rect
    assert y1 == pytest.approx(H) and x0 == pytest.approx(340.0) and y1 - y0 > 150
    # the lane's settings window lists what B changes; a click in B's lane selects nothing in A
    assert any(r[1] > window.lane_rects[1][1] for r in app.ui.ui_rects)
    app.session.sim.paused = True
    lane_b = window.lane_rects[1]
    click(app, (400, lane_b[1] + 100, 402, lane_b[1] + 102))
    assert app.session.selected is None
    assert app.ui.load_scene("bounce row") and app.session.compare is None
    app.run(frames=1)
    assert window.captions == [] and window.rect is None


def test_figures_of_a_world():
    w = World()
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0)
    w.add_body(Sphere(0.5), position=(0, 0.49, 0), mass=2.0, velocity=(1.0, 0.0, 0.0))
    w.step(DT)
    f = Figures.of(w)
    assert f.step == 1 and f.time == pytest.approx(DT)
    assert f.manifolds == 1 and f.points == 1 and 0.0 <= f.deepest < 0.011
    assert f.kinetic == pytest.approx(w.kinetic_energy()) and f.energy == pytest.approx(
        w.kinetic_energy() + w.potential_energy())
    assert f.step_ms == pytest.approx(sum(w.timings.values())) and not math.isnan(f.step_ms)
