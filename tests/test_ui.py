"""Mouse and keyboard through pyglet events dispatched to a real window: hover, grab and drag, click to
select, ctrl-click to push, the camera, the pixel-to-ray mapping, shortcuts, spawning, and errors shown
in the panel while the app keeps running.

Needs an X display: CI runs it under ``xvfb-run``."""

from __future__ import annotations

import os

import numpy as np
import pytest
from pyglet.window import key, mouse

from sandbox.engine import Box, Sphere, World
from sandbox.ui import spawn

pytestmark = pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (xvfb-run)")

W, H = 900, 520


@pytest.fixture(scope="module")
def app():
    from sandbox.app import App

    a = App(scene="empty", width=W, height=H, visible=True)
    a.ui.options.shadows = False
    yield a
    a.close()


def two_bodies(world: World) -> None:
    world.add_body(Box((10.0, 0.5, 10.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    world.add_body(Sphere(0.5), position=(-1.2, 0.5, 0.0), mass=1.0)
    world.add_body(Box((0.5, 0.5, 0.5)), position=(1.2, 0.5, 0.0), mass=1.0)


def fresh(app, builder=two_bodies, paused: bool = True):
    """Load ``builder`` with a fixed camera, the panel hidden, and draw a frame (the UI's rectangles
    and the hover state come from the last frame)."""
    from sandbox.render import Camera

    assert app.ui.load_scene(builder)
    app.ui.camera = Camera(target=(0.0, 0.5, 0.0), distance=7.0, yaw=0.0, pitch=0.3)
    app.ui.show_panel = False
    app.session.sim.paused = paused
    app.run(frames=1)
    return app.session.sim.world


def send(app, event: str, *args) -> None:
    """Dispatch one pyglet event to the window's handlers (pyglet queues events sent from outside its
    dispatch loop, so flush the queue right away)."""
    app.window.dispatch_event(event, *args)
    app.window.dispatch_events()


def screen_of(app, point) -> tuple[int, int]:
    """pyglet coordinates (bottom-left origin, integer pixels) of the pixel showing world ``point``."""
    w, h = app.window_size()
    px, py = app.ui.camera.project(np.asarray(point, float), w, h)
    return int(px), int(h - py)


def test_hover_picks_the_body_under_the_cursor(app):
    world = fresh(app)
    sphere, box = world.bodies[1], world.bodies[2]
    send(app, "on_mouse_motion", *screen_of(app, sphere.center_of_mass), 0, 0)
    assert app.interaction.hovered == sphere
    assert app.interaction.highlight().hovered == sphere.index
    send(app, "on_mouse_motion", *screen_of(app, box.center_of_mass), 0, 0)
    assert app.interaction.hovered == box
    send(app, "on_mouse_motion", W // 2, H - 5, 0, 0)  # the sky
    assert app.interaction.hovered is None
    assert app.interaction.highlight().hovered == -1


def test_press_drag_release_pulls_the_body_towards_the_cursor(app):
    world = fresh(app, paused=False)
    box = world.bodies[2]
    start = box.center_of_mass
    x, y = screen_of(app, start)
    send(app, "on_mouse_press", x, y, mouse.LEFT, 0)
    assert app.interaction.grab is not None and app.interaction.grab_body == box
    send(app, "on_mouse_drag", x, y + 150, 0, 150, mouse.LEFT, 0)
    target = app.interaction.grab.target
    assert target[1] > start[1] + 1.0  # the target is well above the box, on the camera-facing plane
    assert app.interaction.highlight().grab_line is not None
    app.run(frames=40)
    moved = box.center_of_mass
    assert np.linalg.norm(moved - target) < 0.5 * np.linalg.norm(start - target)
    send(app, "on_mouse_release", x, y + 150, mouse.LEFT, 0)
    assert app.interaction.grab is None and not world.grabs
    assert app.session.selected is None  # a drag is not a click


def test_wheel_while_dragging_moves_the_target_away(app):
    world = fresh(app)
    box = world.bodies[2]
    x, y = screen_of(app, box.center_of_mass)
    send(app, "on_mouse_press", x, y, mouse.LEFT, 0)
    eye = app.ui.camera.eye
    before = np.linalg.norm(app.interaction.grab.target - eye)
    send(app, "on_mouse_scroll", x, y, 0, 3)
    after = np.linalg.norm(app.interaction.grab.target - eye)
    assert after > 1.2 * before
    distance = app.ui.camera.distance
    send(app, "on_mouse_release", x, y, mouse.LEFT, 0)
    assert app.ui.camera.distance == distance  # the wheel moved the grab, not the camera


def test_click_selects_and_a_click_on_nothing_deselects(app):
    world = fresh(app)
    sphere = world.bodies[1]
    x, y = screen_of(app, sphere.center_of_mass)
    send(app, "on_mouse_press", x, y, mouse.LEFT, 0)
    send(app, "on_mouse_release", x, y, mouse.LEFT, 0)
    assert app.session.selected == sphere
    assert app.interaction.highlight().selected == sphere.index
    send(app, "on_mouse_press", W // 2, H - 5, mouse.LEFT, 0)
    send(app, "on_mouse_release", W // 2, H - 5, mouse.LEFT, 0)
    assert app.session.selected is None


def test_ctrl_click_pushes_the_body_along_the_ray(app):
    world = fresh(app)
    box = world.bodies[2]
    x, y = screen_of(app, box.center_of_mass + np.array([0.0, 0.3, 0.0]))
    _, direction = app.ui.cursor_ray(x, y)
    send(app, "on_mouse_press", x, y, mouse.LEFT, key.MOD_CTRL)
    send(app, "on_mouse_release", x, y, mouse.LEFT, key.MOD_CTRL)
    dv = app.interaction.settings.push_speed
    np.testing.assert_allclose(box.linear_velocity, dv * direction, atol=1e-9)
    assert np.linalg.norm(box.angular_velocity) > 0.1  # pushed above the centre: it also spins
    assert app.interaction.grab is None


def test_right_drag_orbits_shift_right_drag_pans_and_the_wheel_zooms(app):
    fresh(app)
    cam = app.ui.camera
    yaw, target, distance = cam.yaw, cam.target.copy(), cam.distance
    send(app, "on_mouse_press", 200, 200, mouse.RIGHT, 0)
    send(app, "on_mouse_drag", 260, 200, 60, 0, mouse.RIGHT, 0)
    send(app, "on_mouse_release", 260, 200, mouse.RIGHT, 0)
    assert cam.yaw != yaw and np.allclose(cam.target, target)
    send(app, "on_mouse_press", 200, 200, mouse.RIGHT, key.MOD_SHIFT)
    send(app, "on_mouse_drag", 260, 200, 60, 0, mouse.RIGHT, key.MOD_SHIFT)
    send(app, "on_mouse_release", 260, 200, mouse.RIGHT, key.MOD_SHIFT)
    assert not np.allclose(cam.target, target)
    send(app, "on_mouse_scroll", 200, 200, 0, 2)
    assert cam.distance < distance


def check_corners(app) -> None:
    w, h = app.window_size()
    for x, y in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, h // 2)):
        origin, direction = app.ui.cursor_ray(x, y)
        px, py = app.ui.camera.project(origin + 5.0 * direction, w, h)
        # pyglet's pixel (x, y) from the bottom is the camera's pixel centre (x + ½, h − y − ½)
        assert px == pytest.approx(x + 0.5, abs=1e-6)
        assert py == pytest.approx(h - y - 0.5, abs=1e-6)


def test_pixel_to_ray_is_exact_at_the_corners_and_after_a_resize(app):
    fresh(app)
    check_corners(app)
    try:
        app.window.set_size(640, 400)
        app.run(frames=2)
        assert app.window_size() == (640, 400)
        assert (app.renderer.width, app.renderer.height) == app.window.get_framebuffer_size()
        check_corners(app)
        # hover still finds the body after the resize
        sphere = app.session.sim.world.bodies[1]
        send(app, "on_mouse_motion", *screen_of(app, sphere.center_of_mass), 0, 0)
        assert app.interaction.hovered == sphere
    finally:
        app.window.set_size(W, H)
        app.run(frames=1)


def test_mouse_over_the_panel_does_not_touch_the_scene(app):
    world = fresh(app)
    app.ui.show_panel = True
    app.run(frames=1)
    x0, y0, x1, y1 = app.ui.ui_rects[-1]
    x, y = int(0.5 * (x0 + x1)), H - int(0.5 * (y0 + y1))
    assert app.over_ui(x, y)
    count = len(world.bodies)
    send(app, "on_mouse_press", x, y, mouse.LEFT, 0)
    send(app, "on_mouse_release", x, y, mouse.LEFT, 0)
    assert app.interaction.grab is None and len(world.bodies) == count


def test_a_failing_scene_builder_is_shown_in_the_panel_and_the_app_goes_on(app):
    world = fresh(app)
    app.ui.show_panel = True
    app.session.errors = []
    app.run(frames=1)
    before = app.read_pixels().astype(int)
    bodies = len(world.bodies)

    def broken(w: World) -> None:
        w.add_body(Sphere(1.0))
        raise RuntimeError("the builder broke")

    assert not app.ui.load_scene(broken)
    assert "the builder broke" in app.session.errors[-1]
    assert app.session.sim.world is world and len(world.bodies) == bodies  # nothing the user had is lost
    assert not app.ui.load_scene("no such scene")
    assert "unknown scene" in app.session.errors[-1]
    app.run(frames=2)
    after = app.read_pixels().astype(int)
    x0, y0, x1, y1 = (int(v) for v in app.ui.ui_rects[-1])
    red = lambda img: ((img[..., 0] > 200) & (img[..., 1] < 140) & (img[..., 2] < 140))  # noqa: E731
    assert red(after[y0:y1, x0:x1]).sum() > 50 + red(before[y0:y1, x0:x1]).sum()
    assert app.session.sim.world is world


def yellow(img: np.ndarray) -> int:
    """How many pixels of ``img`` are the overlay's warning yellow."""
    return int(((img[..., 0] > 200) & (img[..., 1] > 150) & (img[..., 2] < 120)).sum())


def test_the_overlay_says_when_the_step_cap_slows_the_simulation(app):
    fresh(app, paused=False)
    sim = app.session.sim
    app.run(frames=20)
    assert not sim.behind
    calm = yellow(app.read_pixels()[:130, :520])
    try:
        sim.max_steps = 1
        for _ in range(30):
            app.frame(0.1)  # frames of 0.1 s need 6 steps; the cap allows 1
        assert sim.behind and sim.slowed_by == "step cap"
        assert sim.real_rate == pytest.approx((1 / 60) / 0.1, rel=0.02)
        slowed = yellow(app.read_pixels()[:130, :520])
    finally:
        sim.max_steps = 4
    assert slowed > calm + 200


def test_the_app_rests_when_paused_and_not_while_a_body_is_held(app):
    world = fresh(app)
    assert app.resting()
    x, y = screen_of(app, world.bodies[2].center_of_mass)
    send(app, "on_mouse_press", x, y, mouse.LEFT, 0)
    app.session.sim.paused = False
    assert app.interaction.grab is not None and not app.resting()
    send(app, "on_mouse_release", x, y, mouse.LEFT, 0)
    app.session.sim.paused = True
    assert app.resting()


def test_keyboard_shortcuts(app):
    world = fresh(app)
    count = len(world.bodies)
    send(app, "on_mouse_motion", W // 3, H // 2, 0, 0)
    send(app, "on_key_press", key.SPACE, 0)
    assert len(world.bodies) == count + 1
    shot = world.bodies[-1]
    assert np.linalg.norm(shot.linear_velocity) == pytest.approx(app.ui.spawn.shot_speed)
    send(app, "on_key_press", key.E, 0)
    assert len(world.bodies) == count + 1 + app.ui.spawn.count
    steps = app.session.sim.steps
    send(app, "on_key_press", key.O, 0)
    assert app.session.sim.steps == steps + 1 and app.session.sim.paused
    send(app, "on_key_press", key.P, 0)
    assert not app.session.sim.paused
    send(app, "on_key_press", key.P, 0)
    assert app.session.sim.paused
    app.session.selected = world.bodies[1]
    send(app, "on_key_press", key.F, 0)
    np.testing.assert_allclose(app.ui.camera.target, world.bodies[1].center_of_mass)
    send(app, "on_key_press", key.DELETE, 0)
    assert app.session.selected is None and len(world.bodies) == count + app.ui.spawn.count
    send(app, "on_key_press", key.R, 0)
    assert len(app.session.sim.world.bodies) == count and app.session.sim.world is not world
    send(app, "on_key_press", key.ESCAPE, 0)
    assert not app.closed  # Escape deselects; it never closes the window


def test_spawn_structures_through_the_public_api():
    w = World()
    s = spawn.SpawnSettings(tower_height=5, wall_width=3, wall_height=2, pile_count=7, count=3,
                            shape="mixed")
    assert len(spawn.tower(w, s, (0, 0, 0))) == 5
    assert len(spawn.wall(w, s, (3, 0, 0))) == 3 + (2 + 2)
    assert len(spawn.pile(w, s, (0, 0, 5))) == 7
    dropped = spawn.drop(w, s, (0, 0, -5))
    assert len({int(w.data.kind[b.index]) for b in dropped}) == 3
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    assert spawn.clear_dynamic(w) == 5 + 7 + 7 + 3
    assert len(w.bodies) == 1 and w.bodies[0].static
    with pytest.raises(ValueError, match="shape"):
        spawn.make_shape("cone", 1.0)
    with pytest.raises(ValueError, match="direction"):
        spawn.shoot(w, s, (0, 1, 0), (0, 0, 0))


def test_the_panel_energy_cache_follows_the_world_and_skips_an_unchanged_one():
    from sandbox.ui.panel import EnergyCache

    world = World()
    two_bodies(world)
    cache = EnergyCache()
    assert cache(world) == (world.kinetic_energy(), world.potential_energy())
    ball = world.bodies[1]
    ball.linear_velocity = (2.0, 0.0, 0.0)
    kinetic, _potential = cache(world)
    assert kinetic == pytest.approx(0.5 * 1.0 * 2.0**2)  # ½·m·v², the ball at rest otherwise
    calls = []
    world.kinetic_energy = lambda: calls.append(1) or 0.0  # counts the computations from here on
    cache(world)
    assert calls == []  # nothing changed: the last energies are reused
    ball.position = (0.0, 3.0, 0.0)
    cache(world)
    assert calls == [1]


def test_the_lesson_windows_live_check_agrees_with_body_alive():
    from sandbox.ui.lesson import LiveCheck

    world = World()
    two_bodies(world)
    bodies = world.bodies
    check = LiveCheck()
    assert check(world, bodies) and check(world, []) and all(b.alive for b in bodies)
    world.remove_body(bodies[2])
    assert not check(world, bodies) and not all(b.alive for b in bodies)
    world.add_body(Sphere(0.2), position=(0.0, 2.0, 0.0), mass=1.0)  # reuses the row, a new generation
    assert not check(world, bodies)
    assert check(world, bodies[:2])
