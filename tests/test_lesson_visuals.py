"""The lesson visuals (``sandbox/ui/lesson_visuals.py``): the ray from the cursor, the swept volumes of the
last step and the flashes on collision events, as pure bookkeeping and in a real 1280×720 window.

The window tests drive the app through its event handlers and read its pixels, as tests/test_lesson_ui.py
does; they need an X display: run under ``xvfb-run``."""

from __future__ import annotations

import os

import numpy as np
import pytest
from app_driver import open_app, send
from pyglet.window import mouse

from sandbox import scenes
from sandbox.engine import Box, Sphere, World
from sandbox.lessons import LESSONS_BY_NAME, lesson_visuals
from sandbox.ui.lesson_visuals import (
    FLASH_SECONDS,
    Flashes,
    Sweep,
    facing_circles,
    fade,
    sweep_band,
    sweep_between,
)

needs_display = pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (xvfb-run)")

W, H = 1280, 720
DT = 1.0 / 60.0


# --- the bookkeeping ----------------------------------------------------------------------------------

def _flying(speed: float) -> tuple[World, list]:
    world = World(gravity=(0.0, 0.0, 0.0))
    world.linear_damping = 0.0
    fast = world.add_body(Sphere(0.1), position=(0.0, 2.0, 0.0), velocity=(speed, 0.0, 0.0))
    slow = world.add_body(Sphere(0.5), position=(0.0, 2.0, 3.0), velocity=(1.0, 0.0, 0.0))
    wall = world.add_body(Box((0.05, 1.0, 1.0)), position=(30.0, 2.0, 0.0), mass=0.0)
    return world, [fast, slow, wall]


def test_a_sweep_spans_each_fast_bodys_step_and_leaves_out_slow_static_and_replaced_ones():
    world, (fast, slow, wall) = _flying(60.0)
    d = world.data
    before = d.pos[: d.n].copy(), d.generation[: d.n].copy()
    world.step(DT)
    sweep = sweep_between(*before, world)
    assert sweep.step == world.steps
    # 60 m/s · dt = 1 m, several radii: drawn; 1 m/s · dt = 1.7 cm of a 0.5 m ball: not; the wall is static
    assert sweep.rows.tolist() == [fast.index]
    np.testing.assert_allclose(sweep.end[0] - sweep.start[0], (60.0 * DT, 0.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(sweep.start[0], before[0][fast.index])
    np.testing.assert_allclose(sweep.end[0], fast.position)
    assert sweep.radius[0] == pytest.approx(0.1)
    # a row whose body was removed and replaced during the step is not swept from the old body's place
    before = d.pos[: d.n].copy(), d.generation[: d.n].copy()
    world.step(DT)
    before[1][fast.index] += 1
    assert sweep_between(*before, world).rows.tolist() == []


def test_the_band_runs_from_start_to_end_beside_the_motion_and_the_circles_face_the_eye():
    sweep = Sweep(1, np.array([0]), np.array([[0.0, 0.0, 0.0]]), np.array([[2.0, 0.0, 0.0]]), np.array([0.5]))
    eye = np.array([1.0, 0.0, 10.0])
    a, b = sweep_band(sweep, eye, (-1.0, 1.0))
    np.testing.assert_allclose(b - a, [[2.0, 0.0, 0.0]] * 2)
    # across the motion (x) and the line of sight (z): ± 0.5 along y
    np.testing.assert_allclose(np.sort(a[:, 1]), [-0.5, 0.5])
    centres = np.array([[0.0, 0.0, 0.0], [3.0, 1.0, -2.0]])
    a, b = facing_circles(centres, np.array([1.0, 2.0]), eye, segments=16)
    assert a.shape == (32, 3)
    offsets = a.reshape(2, 16, 3) - centres[:, None, :]
    np.testing.assert_allclose(np.linalg.norm(offsets, axis=2), [[1.0] * 16, [2.0] * 16])
    sight = (centres - eye) / np.linalg.norm(centres - eye, axis=1, keepdims=True)
    np.testing.assert_allclose(np.einsum("kij,kj->ki", offsets, sight), 0.0, atol=1e-12)
    np.testing.assert_allclose(b.reshape(2, 16, 3)[:, :-1], a.reshape(2, 16, 3)[:, 1:])  # one closed loop


def test_a_flash_fades_linearly_over_its_time_and_never_shows_before_its_event():
    ages = np.array([0.0, 0.5 * FLASH_SECONDS, FLASH_SECONDS, 2.0 * FLASH_SECONDS, np.inf, -0.01])
    np.testing.assert_allclose(fade(ages), [1.0, 0.5, 0.0, 0.0, 0.0, 0.0])


def test_flashes_follow_the_begin_and_end_events_of_dynamic_bodies_only():
    world = World()
    scenes.SCENES["events"](world)
    flashes = Flashes()
    begin_step = None
    for _ in range(60):
        world.step(DT)
        flashes.record(world)
        if any(e.kind == "begin" for e in world.events):
            begin_step = world.steps
            break
    assert begin_step is not None
    event = next(e for e in world.events if e.kind == "begin")
    ball = event.body_b if event.body_a.static else event.body_a
    begin, end = flashes.strengths(world)
    assert begin[ball.index] == 1.0 and end[ball.index] == 0.0
    assert begin[0] == 0.0  # the ground: static, never flashes
    ended = False
    for _ in range(5):
        world.step(DT)
        flashes.record(world)
        ended = ended or any(e.kind == "end" for e in world.events)
        if ended:
            break
    begin, end = flashes.strengths(world)
    assert ended and end[ball.index] == 1.0
    assert begin[ball.index] == pytest.approx(1.0 - (world.steps - begin_step) * DT / FLASH_SECONDS)
    world.remove_body(ball)
    assert flashes.strengths(world)[1][ball.index] == 0.0  # a removed body does not flash


def test_the_three_lessons_turn_on_their_visuals():
    assert lesson_visuals(LESSONS_BY_NAME["raycasts"]) == ("cursor_ray",)
    assert lesson_visuals(LESSONS_BY_NAME["tunnelling"]) == ("sweeps",)
    assert lesson_visuals(LESSONS_BY_NAME["events"]) == ("flashes",)
    assert lesson_visuals(LESSONS_BY_NAME["bounce"]) == ()
    assert lesson_visuals(None) == ()


# --- in the app -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def app():
    yield from open_app("raycasts")


def load(app, scene: str) -> None:
    app.ui.show_lesson = app.ui.show_panel = True
    assert app.ui.load_scene(scene)
    app.session.sim.paused = True
    send(app, "on_mouse_motion", 600, 700, 0, 0)
    app.run(frames=1)


def window_point(app, point) -> tuple[float, float]:
    """The window point (top-left origin) of world ``point``."""
    return app.ui.camera.project(np.asarray(point, float), W, H)


def pixels_around(image: np.ndarray, x: float, y: float, r: int = 3) -> np.ndarray:
    xi, yi = int(round(x)), int(round(y))
    return image[yi - r:yi + r + 1, xi - r:xi + r + 1].reshape(-1, 3).astype(int)


@needs_display
def test_the_cursor_ray_hits_what_world_raycast_hits_and_is_drawn_at_the_hit(app):
    load(app, "raycasts")
    assert app.ui.options.cursor_ray  # the lesson turned it on
    capsule = app.session.bodies[6]  # the middle row's capsule, centre (1.5, 0.9, 0)
    x, y = window_point(app, capsule.position + np.array([0.0, 0.3, 0.0]))
    px, py = int(x), H - int(y)
    send(app, "on_mouse_motion", px, py, 0, 0)
    app.run(frames=1)
    ray = app.visuals.ray
    origin, direction = app.ui.cursor_ray(px, py)
    want = app.session.world.raycast(origin, direction)
    assert ray is not None and ray.hit is not None and want is not None
    assert ray.hit.body == capsule == want.body
    np.testing.assert_allclose(ray.hit.point, want.point, atol=1e-12)
    np.testing.assert_allclose(ray.hit.normal, want.normal, atol=1e-12)
    assert app.visuals.label[2] == f"capsule · t = {want.distance:.2f} m"
    lx, ly = app.visuals.label[:2]
    on = app.read_pixels()
    hx, hy = window_point(app, want.point)
    assert abs(hx - (px + 0.5)) < 1.0 and abs(hy - (H - py - 0.5)) < 1.0  # the hit lies under the cursor
    app.ui.options.cursor_ray = False
    app.run(frames=1)
    off = app.read_pixels()
    app.ui.options.cursor_ray = True
    # the white hit point at the hit's pixel, the label's plate just above it
    assert (pixels_around(on, hx, hy, 2).min(axis=1) > 230).sum() >= 5
    assert np.abs(pixels_around(on, hx, hy) - pixels_around(off, hx, hy)).mean() > 40
    assert ly < hy and np.abs(pixels_around(on, lx, ly, 6) - pixels_around(off, lx, ly, 6)).mean() > 40


@needs_display
def test_the_ray_stays_where_it_was_cast_while_the_view_orbits_and_a_miss_is_drawn_faint(app):
    load(app, "raycasts")
    capsule = app.session.bodies[6]
    x, y = window_point(app, capsule.position + np.array([0.0, 0.3, 0.0]))
    px, py = int(x), H - int(y)
    send(app, "on_mouse_motion", px, py, 0, 0)
    app.run(frames=1)
    cast = app.visuals.ray
    send(app, "on_mouse_press", px, py, mouse.RIGHT, 0)
    for k in range(8):
        send(app, "on_mouse_drag", px + 10 * (k + 1), py, 10, 0, mouse.RIGHT, 0)
        app.run(frames=1)
    send(app, "on_mouse_release", px + 80, py, mouse.RIGHT, 0)
    app.run(frames=2)
    assert app.visuals.ray is cast  # the same ray, now seen from the side
    on = app.read_pixels()
    middle = cast.origin + 0.7 * (np.asarray(cast.hit.point) - cast.origin)
    mx, my = window_point(app, middle)
    app.ui.options.cursor_ray = False
    app.run(frames=1)
    off = app.read_pixels()
    app.ui.options.cursor_ray = True
    assert np.abs(pixels_around(on, mx, my, 2) - pixels_around(off, mx, my, 2)).max() > 60
    # moving the cursor casts again: up into the sky, a miss
    send(app, "on_mouse_motion", 600, 710, 0, 0)
    app.run(frames=1)
    assert app.visuals.ray is not cast and app.visuals.ray.hit is None
    assert app.visuals.label[2] == "no hit"


@needs_display
def test_grabbing_still_works_with_the_cursor_ray_on(app):
    load(app, "events")
    app.ui.options.cursor_ray = True
    ball = app.session.bodies[0]
    x, y = window_point(app, ball.position)
    px, py = int(x), H - int(y)
    send(app, "on_mouse_motion", px, py, 0, 0)
    app.run(frames=1)
    assert app.interaction.hovered == ball and app.visuals.ray.hit.body == ball
    send(app, "on_mouse_press", px, py, mouse.LEFT, 0)
    send(app, "on_mouse_drag", px, py + 40, 0, 40, mouse.LEFT, 0)
    app.run(frames=1)
    assert app.session.grab_body == ball and app.visuals.ray is None  # the grab spring is drawn instead
    send(app, "on_mouse_release", px, py + 40, mouse.LEFT, 0)
    app.run(frames=1)
    assert app.session.grab is None
    app.ui.options.cursor_ray = False


def _step(app, n: int = 1) -> None:
    for _ in range(n):
        app.session.single_step()
    app.run(frames=1)


@needs_display
def test_the_sweep_spans_v_dt_and_jumps_over_the_wall_without_ccd(app):
    load(app, "tunnelling")
    assert app.ui.options.sweeps and not app.ui.options.cursor_ray  # the raycasts lesson's ray went off
    app.session.set_setting("ccd", False)
    assert app.ui.reset()
    app.session.sim.paused = True
    bullet = app.session.bodies[2]  # 60 m/s: 1 m per step
    wall_front, wall_back = 0.0, scenes.TUNNEL_WALL
    jumped = None
    for _ in range(6):
        _step(app)
        sweep = app.visuals.sweep(app.session.world)
        assert sweep.step == app.session.world.steps
        row = list(sweep.rows).index(bullet.index)
        np.testing.assert_allclose(sweep.end[row] - sweep.start[row], (60.0 * DT, 0.0, 0.0), atol=1e-9)
        if sweep.start[row][0] < wall_front and sweep.end[row][0] > wall_back:
            jumped = sweep.start[row], sweep.end[row]
            break
    assert jumped is not None  # one step began in front of the wall and ended behind it
    # drawn: the band's middle, inside the wall's thickness, changes colour when the sweeps are on
    middle = 0.5 * (jumped[0] + jumped[1])
    mx, my = window_point(app, middle)
    on = app.read_pixels()
    app.ui.options.sweeps = False
    app.run(frames=1)
    off = app.read_pixels()
    app.ui.options.sweeps = True
    assert np.abs(pixels_around(on, mx, my, 2) - pixels_around(off, mx, my, 2)).max() > 60


@needs_display
def test_the_lanes_keep_their_own_sweeps(app):
    load(app, "tunnelling")
    lesson = app.session.lesson
    app.session.apply_preset(lesson.presets[2])  # side by side: CCD off | CCD on
    app.session.sim.paused = True
    app.run(frames=1)
    lane = app.session.compare.lanes[0]
    assert lane.world.ccd and not app.session.world.ccd
    fastest = app.session.bodies[4]  # 300 m/s
    for _ in range(2):
        _step(app)
    a = app.visuals.sweep(app.session.world)
    b = app.visuals.sweep(lane.world)
    assert a.step == b.step == app.session.world.steps == 2
    ra, rb = list(a.rows).index(fastest.index), list(b.rows).index(fastest.index)
    # A (no CCD) jumps the wall in step 2; B (CCD) is caught in front of it
    assert a.start[ra][0] < 0.0 and a.end[ra][0] > scenes.TUNNEL_WALL
    assert b.start[rb][0] == pytest.approx(a.start[ra][0]) and b.end[rb][0] < 0.0
    app.session.close_compare()
    app.run(frames=1)


@needs_display
def test_a_ball_flashes_in_the_frame_after_its_begin_event_and_stops_later(app):
    load(app, "events")
    assert app.ui.options.flashes and not app.ui.options.sweeps
    ball = app.session.bodies[0]  # dropped from 1 m: first touch after √(2h/g) = 0.45 s
    world = app.session.world

    def ball_colour() -> np.ndarray:
        x, y = window_point(app, ball.position)
        return pixels_around(app.read_pixels(), x, y, 2).mean(axis=0)

    before = None
    for _ in range(40):
        _step(app)
        if any(e.kind == "begin" and ball in (e.body_a, e.body_b) for e in world.events):
            break
        before = ball_colour()
    else:
        pytest.fail("the ball never touched the ground")
    flashing = ball_colour()
    assert np.abs(flashing - before).max() > 60  # its own colour turned white
    assert flashing.min() > 200
    _step(app, round(1.1 * FLASH_SECONDS / DT))  # (its next touch is half a second later)
    assert not any(ball in (e.body_a, e.body_b) for e in world.events)
    assert np.abs(ball_colour() - before).max() < 30  # its own colour again
