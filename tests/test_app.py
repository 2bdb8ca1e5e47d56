"""The application: the fixed-timestep loop and its interpolation, the command line, scene files, and
what a real window shows (checked by regions of the screenshot, never against golden images).

Window tests need an X display: CI runs them under ``xvfb-run``."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from sandbox.__main__ import main, parse_args
from sandbox.engine import Box, Sphere, World
from sandbox.scene_file import SceneFileError, load_scene_file, save_scene_file

ROOT = Path(__file__).resolve().parents[1]
needs_display = pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (xvfb-run)")


def read_png(path: Path) -> np.ndarray:
    """Decode the 8-bit RGB, filter-0 PNGs that ``write_png`` makes, as (h, w, 3) uint8."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if tag == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    w, h = size
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(h, w, 3)


# --- the fixed-timestep loop (no window) ---------------------------------------------------------------


def falling_world() -> World:
    w = World()
    w.add_body(Sphere(0.5), position=(0.0, 5.0, 0.0), angular_velocity=(0.0, 3.0, 0.0))
    return w


def test_accumulator_takes_whole_steps_and_keeps_the_remainder():
    from sandbox.app import Simulation

    sim = Simulation(falling_world(), dt=1 / 60)
    assert sim.advance(0.045) == 2
    assert sim.accumulator == pytest.approx(0.045 - 2 / 60)
    assert sim.advance(0.01) == 1  # the leftover and 0.01 s make one more step
    assert sim.steps == 3 and sim.time == pytest.approx(3 / 60)


def test_step_cap_drops_the_backlog_so_a_slow_frame_never_snowballs():
    from sandbox.app import Simulation

    sim = Simulation(falling_world(), dt=1 / 60, max_steps=4)
    assert sim.advance(10.0) == 4
    assert sim.accumulator < sim.dt


def test_pause_time_scale_and_single_step():
    from sandbox.app import Simulation

    sim = Simulation(falling_world(), dt=1 / 60)
    sim.paused = True
    assert sim.advance(1.0) == 0
    sim.step()
    assert sim.steps == 1
    sim.paused = False
    sim.time_scale = 0.05
    taken = sum(sim.advance(1 / 60) for _ in range(40))
    assert taken == 2  # 40 frames of 1/60 s at 0.05× make 2/60 s of simulated time


def test_interpolation_blends_between_the_last_two_states():
    from sandbox.app import Simulation

    sim = Simulation(falling_world(), dt=1 / 60)
    sim.advance(1 / 60)
    before = sim._prev_pos.copy(), sim._prev_quat.copy()
    now = sim.world.data.pos[:1].copy(), sim.world.data.quat[:1].copy()
    sim.accumulator = 0.5 * sim.dt
    pos, quat = sim.interpolated()
    np.testing.assert_allclose(pos, 0.5 * (before[0] + now[0]))
    mid = before[1] + now[1]
    np.testing.assert_allclose(quat, mid / np.linalg.norm(mid, axis=1, keepdims=True))
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0)


def test_interpolation_takes_the_short_arc_and_skips_new_rows():
    from sandbox.app import Simulation

    sim = Simulation(falling_world(), dt=1 / 60)
    sim.advance(1 / 60)
    sim._prev_quat[0] = -sim.world.data.quat[0]  # the same rotation, opposite sign
    sim.world.add_body(Box((0.5, 0.5, 0.5)), position=(3.0, 1.0, 0.0))
    sim.accumulator = 0.25 * sim.dt
    pos, quat = sim.interpolated()
    assert abs(abs(float(np.dot(quat[0], sim.world.data.quat[0]))) - 1.0) < 1e-9
    np.testing.assert_allclose(pos[1], sim.world.data.pos[1])


# --- scene files ---------------------------------------------------------------------------------------


def test_example_scene_file_loads_every_shape_kind():
    build = load_scene_file(ROOT / "assets" / "scenes" / "example.json")
    w = World()
    build(w)
    kinds = set(w.data.kind[: w.data.n].tolist())
    assert kinds == {0, 1, 2, 3}
    assert w.restitution_rule == "max"


def test_saved_world_loads_back_the_same(tmp_path):
    w = World()
    w.add_body(Box((5.0, 0.5, 5.0)), position=(0, -0.5, 0), mass=0.0)
    b = w.add_body(Sphere(0.3), position=(1.0, 2.0, 3.0), mass=2.5, restitution=0.7, velocity=(1, 0, 0))
    save_scene_file(w, tmp_path / "s.json")
    w2 = World()
    load_scene_file(tmp_path / "s.json")(w2)
    b2 = w2.bodies[1]
    np.testing.assert_allclose(b2.position, b.position)
    np.testing.assert_allclose(b2.linear_velocity, (1, 0, 0))
    assert b2.mass == pytest.approx(2.5) and b2.restitution == pytest.approx(0.7)
    assert w2.bodies[0].static


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not valid JSON"),
    ("[1, 2]", "top level"),
    ('{"bodies": [{"shape": "cone"}]}', "bodies[0]: unknown shape 'cone'"),
    ('{"bodies": [{"shape": "sphere"}]}', "needs 'radius'"),
    ('{"bodies": [{"shape": "sphere", "radius": -1}]}', "radius must be positive"),
    ('{"bodies": [{"shape": "box", "half_extents": [1, 1, 1], "colour": 1}]}', "unknown key(s) 'colour'"),
    ('{"world": {"broadphase": "magic"}, "bodies": []}', "world.broadphase"),
    ('{"world": {"wind": 3}, "bodies": []}', "unknown world setting"),
])
def test_bad_scene_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SceneFileError, match=None) as info:
        load_scene_file(path)
    assert message in str(info.value) and str(path) in str(info.value)


# --- the command line ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["--scene", "nosuchscene"], "unknown scene 'nosuchscene'"),
    (["--frames", "0"], "--frames: must be a positive integer"),
    (["--frames", "-3"], "--frames: must be a positive integer"),
    (["--frames", "ten"], "--frames: must be a positive integer"),
    (["--width", "0"], "--width: must be a positive integer"),
    (["--height", "-1"], "--height: must be a positive integer"),
    (["--screenshot", "x.png"], "--screenshot needs --frames"),
    (["--frames", "2", "--screenshot", "/no/such/folder/x.png"], "does not exist"),
    (["--frames", "2", "--screenshot", "/proc/x.png"], "cannot write"),
    (["--frames", "2", "--screenshot", "shot.jpg"], "must name a .png file"),
    (["--scene", "missing.json"], "bad scene file: cannot read scene file missing.json"),
    (["--debug-draw", "contacts,wobble"], "--debug-draw: expected names from contacts"),
    (["--debug-draw", ","], "--debug-draw: expected names from"),
])
def test_bad_arguments_exit_2_with_a_message(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_scene_file_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text('{"bodies": [{"shape": "sphere", "radius": 0}]}')
    with pytest.raises(SystemExit) as info:
        main(["--scene", str(path)])
    assert info.value.code == 2
    assert "bodies[0]: radius must be positive" in capsys.readouterr().err


def test_good_arguments_parse():
    args, scene = parse_args(["--scene", "pyramid", "--frames", "5", "--screenshot", "/tmp/s.png",
                              "--width", "640", "--height", "480"])
    assert (args.frames, args.width, args.height, scene) == (5, 640, 480, "pyramid")
    _, built = parse_args(["--scene", str(ROOT / "assets" / "scenes" / "example.json")])
    assert callable(built)
    args, _ = parse_args(["--debug-draw", "contacts, normals"])
    assert args.debug_draw == ("contacts", "normals")
    assert parse_args([])[0].debug_draw == ()


class _Screen:
    """A display screen that offers only configs without multisampling (as some displays do)."""

    def __init__(self, depth: bool) -> None:
        self.depth = depth
        self.asked = []

    def get_matching_configs(self, template):
        self.asked.append(template)
        ok = not template.sample_buffers and (self.depth or not template.depth_size)
        return [template] if ok else []


def test_window_config_falls_back_from_msaa_to_depth_only_to_pyglet_default():
    pytest.importorskip("pyglet")
    if not os.environ.get("DISPLAY"):
        pytest.skip("importing the app opens pyglet's shadow window: needs an X display (xvfb-run)")
    from sandbox.app import WINDOW_CONFIGS, choose_window_config

    screen = _Screen(depth=True)
    chosen = choose_window_config(screen)
    assert screen.asked[0].samples == 4 and screen.asked[0].depth_size == 24
    assert chosen is screen.asked[1] and chosen.depth_size == 24 and not chosen.sample_buffers
    screen = _Screen(depth=False)
    assert choose_window_config(screen) is None
    assert len(screen.asked) == len(WINDOW_CONFIGS)


def test_png_writer_round_trip(tmp_path):
    from sandbox.app import write_png

    img = np.random.default_rng(1).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    write_png(tmp_path / "a.png", img)
    np.testing.assert_array_equal(read_png(tmp_path / "a.png"), img)


# --- a real window ---------------------------------------------------------------------------------------


@needs_display
def test_cli_screenshot_has_the_scene_and_the_panel(tmp_path):
    shot = tmp_path / "shot.png"
    scene = ROOT / "assets" / "scenes" / "example.json"
    run = subprocess.run([sys.executable, "-m", "sandbox", "--scene", str(scene), "--frames", "3",
                          "--screenshot", str(shot), "--width", "900", "--height", "500"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "Compiling physics kernels".lower() in run.stderr.lower()
    img = read_png(shot).astype(float)
    assert img.shape == (500, 900, 3)
    from sandbox.ui.panel import PANEL_WIDTH

    panel = img[:, 900 - int(PANEL_WIDTH) + 5:]
    scene_part = img[:, : 900 - int(PANEL_WIDTH) - 5]
    # the panel is a dark, mostly flat window; the scene is a bright sky and floor
    assert panel.mean() < 0.5 * scene_part.mean()
    assert scene_part.std() > 5.0


@pytest.fixture(scope="module")
def app():
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs an X display (xvfb-run)")
    from sandbox.app import App

    a = App(scene="empty", width=900, height=500, visible=True)
    a.options.shadows = False
    yield a
    a.close()


def box_on_ground(world: World) -> None:
    world.add_body(Box((10.0, 0.5, 10.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    world.add_body(Box((0.6, 0.6, 0.6)), position=(0.0, 0.6, 0.0), mass=1.0)


def settle(app, frames: int = 2):
    app.run(frames=frames)
    return app.read_pixels().astype(float)


def patch(img: np.ndarray, px: float, py: float, r: int = 4) -> np.ndarray:
    x, y = int(px), int(py)
    return img[y - r:y + r + 1, x - r:x + r + 1]


def tap(app, symbol: int, modifiers: int = 0) -> None:
    """Press and release a key; pyglet queues events sent from outside its dispatch, so flush them."""
    app.window.dispatch_event("on_key_press", symbol, modifiers)
    app.window.dispatch_event("on_key_release", symbol, modifiers)
    app.window.dispatch_events()


@needs_display
def test_body_is_drawn_where_the_camera_projects_it(app):
    assert app.load_scene(box_on_ground)
    app.sim.paused = True
    with_box = settle(app)
    body = app.sim.world.bodies[1]
    w, h = app.window_size()
    px, py = app.camera.project(body.center_of_mass, w, h)
    assert 0 < px < w - 400 and 0 < py < h
    app.sim.world.remove_body(body)
    without = settle(app)
    assert np.abs(patch(with_box, px, py) - patch(without, px, py)).mean() > 20.0
    # far from the body nothing changed
    assert np.abs(patch(with_box, 40, h - 40) - patch(without, 40, h - 40)).mean() < 2.0


@needs_display
def test_panel_is_drawn_and_hides_with_h(app):
    from pyglet.window import key

    assert app.load_scene(box_on_ground)
    app.sim.paused = True
    shown = settle(app, 1)
    tap(app, key.H)
    hidden = settle(app, 1)
    tap(app, key.H)
    w, _ = app.window_size()
    region = slice(w - 300, w - 20)
    assert np.abs(shown[:, region] - hidden[:, region]).mean() > 20.0
    assert app.show_panel


@needs_display
def test_contact_markers_are_drawn_when_their_toggle_is_on(app):
    assert app.load_scene(box_on_ground)
    app.sim.paused = False
    app.run(frames=20)  # the box settles onto the ground: contacts exist
    app.sim.paused = True
    contacts = app.sim.world.contacts
    assert contacts.count > 0
    app.options.contacts = False
    off = settle(app, 1)
    app.options.contacts = True
    try:
        on = settle(app, 1)
    finally:
        app.options.contacts = False
    w, h = app.window_size()
    changed = 0
    for k in range(int(contacts.npoints[0])):
        px, py = app.camera.project(contacts.points_b[0, k], w, h)
        changed += np.abs(patch(on, px, py, 3) - patch(off, px, py, 3)).mean() > 10.0
    assert changed >= 2
    assert np.abs(on[:60, 250:400] - off[:60, 250:400]).mean() < 1.0  # the sky is untouched
