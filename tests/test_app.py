"""The application: the command line (bad arguments, no display, window sizes), the set-up script,
scene files, and what a real window shows (checked by regions of the screenshot, never against golden
images). The fixed-timestep clock is tested headless in ``test_session.py``.

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
    (["--width", "100000", "--height", "50000"], "--width: must be at most 8192 pixels, got 100000"),
    (["--height", "8193"], "--height: must be at most 8192 pixels, got 8193"),
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


def run_sandbox(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sandbox", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_no_display_is_one_line_and_exit_2():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    run = run_sandbox(["--frames", "1"], env)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and "Traceback" not in run.stderr
    assert "no display" in lines[0] and "xvfb-run" in lines[0]


def test_a_window_too_large_is_refused_before_it_opens():
    run = run_sandbox(["--width", "100000", "--height", "50000"], dict(os.environ))
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "sandbox: error: argument --width: must be at most 8192 pixels, got 100000 (see sandbox --help)"]


# --- the set-up script -------------------------------------------------------------------------------------

FAKE_PYTHON = """#!/bin/sh
# A stand-in python3 that reports $FAKE_VERSION, makes a "venv" holding a copy of itself, and fails every
# pip install the way pip does when a package needs a newer Python.
case "$1" in
  -c) echo "$FAKE_VERSION"; exit 0 ;;
  -m) if [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit $?; fi
      echo "ERROR: Package 'sandbox' requires a different Python: $FAKE_VERSION not in '>=3.11'" >&2
      exit 1 ;;
esac
exit 1
"""


def setup_copy(tmp_path: Path, version: str) -> tuple[Path, dict[str, str]]:
    """A copy of what ``scripts/setup.sh`` needs, and an environment whose ``python3`` is the fake one
    reporting ``version`` (the real .venv is never touched)."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    for name in ("scripts/setup.sh", "pyproject.toml"):
        (project / name).write_text((ROOT / name).read_text())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_VERSION": version, "HOME": str(tmp_path)}
    return project, env


def run_setup(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(project / "scripts" / "setup.sh")], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)


def test_setup_refuses_an_old_python_and_creates_nothing(tmp_path):
    project, env = setup_copy(tmp_path, "3.10")
    run = run_setup(project, env)
    assert run.returncode == 2, run.stderr
    assert "needs Python 3.11 or newer, but python3 is 3.10" in run.stderr
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "scripts"]


def test_setup_removes_a_venv_that_failed_to_install(tmp_path):
    project, env = setup_copy(tmp_path, "3.12")
    run = run_setup(project, env)
    assert run.returncode != 0 and "requires a different Python" in run.stderr
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "scripts"]


def test_setup_replaces_a_venv_made_by_an_old_python(tmp_path):
    project, env = setup_copy(tmp_path, "3.10")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "python").write_text((tmp_path / "bin" / "python3").read_text())
    (project / ".venv" / "bin" / "python").chmod(0o755)
    run = run_setup(project, env)
    assert "building it again" in run.stderr
    assert run.returncode == 2 and not (project / ".venv").exists()


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


@needs_display  # write_png lives in sandbox.app, whose import connects to the display
def test_png_writer_round_trip(tmp_path):
    from sandbox.app import write_png

    img = np.random.default_rng(1).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    write_png(tmp_path / "a.png", img)
    np.testing.assert_array_equal(read_png(tmp_path / "a.png"), img)


# --- a real window ---------------------------------------------------------------------------------------


@needs_display
def test_cli_screenshot_has_the_scene_and_the_panel(tmp_path):
    from sandbox.warmup import cache_is_warm

    shot = tmp_path / "shot.png"
    scene = ROOT / "assets" / "scenes" / "example.json"
    cold = not cache_is_warm()
    run = subprocess.run([sys.executable, "-m", "sandbox", "--scene", str(scene), "--frames", "3",
                          "--screenshot", str(shot), "--width", "900", "--height", "500"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    # the compile notice only when there is something to compile
    assert ("Compiling physics kernels".lower() in run.stderr.lower()) == cold
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
    a.ui.options.shadows = False
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
    assert app.ui.load_scene(box_on_ground)
    app.session.sim.paused = True
    with_box = settle(app)
    body = app.session.sim.world.bodies[1]
    w, h = app.window_size()
    px, py = app.ui.camera.project(body.center_of_mass, w, h)
    assert 0 < px < w - 400 and 0 < py < h
    app.session.sim.world.remove_body(body)
    without = settle(app)
    assert np.abs(patch(with_box, px, py) - patch(without, px, py)).mean() > 20.0
    # far from the body nothing changed
    assert np.abs(patch(with_box, 40, h - 40) - patch(without, 40, h - 40)).mean() < 2.0


@needs_display
def test_panel_is_drawn_and_hides_with_h(app):
    from pyglet.window import key

    assert app.ui.load_scene(box_on_ground)
    app.session.sim.paused = True
    shown = settle(app, 1)
    tap(app, key.H)
    hidden = settle(app, 1)
    tap(app, key.H)
    w, _ = app.window_size()
    region = slice(w - 300, w - 20)
    assert np.abs(shown[:, region] - hidden[:, region]).mean() > 20.0
    assert app.ui.show_panel


@needs_display
def test_contact_markers_are_drawn_when_their_toggle_is_on(app):
    assert app.ui.load_scene(box_on_ground)
    app.session.sim.paused = False
    app.run(frames=20)  # the box settles onto the ground: contacts exist
    app.session.sim.paused = True
    contacts = app.session.sim.world.contacts
    assert contacts.count > 0
    app.ui.options.contacts = False
    off = settle(app, 1)
    app.ui.options.contacts = True
    try:
        on = settle(app, 1)
    finally:
        app.ui.options.contacts = False
    w, h = app.window_size()
    changed = 0
    for k in range(int(contacts.npoints[0])):
        px, py = app.ui.camera.project(contacts.points_b[0, k], w, h)
        changed += np.abs(patch(on, px, py, 3) - patch(off, px, py, 3)).mean() > 10.0
    assert changed >= 2
    assert np.abs(on[:60, 250:400] - off[:60, 250:400]).mean() < 1.0  # the sky is untouched
