"""Renderer and camera tests: offscreen rendering checked by regions (no golden images), and the
camera's picking maths (``ray`` and ``project`` are inverses) and constraints (never below ground)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.engine import Box, Sphere, World
from sandbox.render import Camera, Highlight, Renderer, RenderOptions
from sandbox.render.camera import MIN_EYE_HEIGHT

W, H = 200, 150


def _context():
    moderngl = pytest.importorskip("moderngl")
    errors = []
    for kwargs in ({"backend": "egl"}, {}):
        try:
            return moderngl.create_context(standalone=True, **kwargs)
        except Exception as e:  # noqa: BLE001 - try every backend before giving up
            errors.append(f"{kwargs or 'default'}: {e}")
    pytest.skip("no OpenGL context could be made: " + "; ".join(errors))


@pytest.fixture(scope="module")
def gl():
    """A standalone context, a renderer and a W×H target framebuffer."""
    ctx = _context()
    fbo = ctx.framebuffer([ctx.renderbuffer((W, H), 4)], ctx.depth_renderbuffer((W, H)))
    renderer = Renderer(ctx, W, H)
    yield ctx, fbo, renderer
    renderer.release()
    fbo.release()
    ctx.release()


def _world(with_ball: bool = True) -> tuple[World, int]:
    world = World()
    world.add_body(Box((50.0, 0.5, 50.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    ball = world.add_body(Sphere(0.5), position=(0.0, 0.5, 0.0)) if with_ball else None
    world.add_body(Box((0.4, 0.4, 0.4)), position=(2.0, 0.4, 0.0))
    return world, (ball.index if ball else -1)


def _draw(gl, world, camera, options=None, highlight=None, **poses) -> np.ndarray:
    """The rendered image as (H, W, 3) uint8, row 0 at the top (window pixel convention)."""
    ctx, fbo, renderer = gl
    fbo.use()
    renderer.render(world, camera, options or RenderOptions(), highlight or Highlight(), **poses)
    img = np.frombuffer(fbo.read(components=3), np.uint8).reshape(H, W, 3)
    return img[::-1].astype(np.int32)


def _pixel(img: np.ndarray, px: float, py: float) -> np.ndarray:
    return img[int(py), int(px)]


def test_body_is_drawn_where_camera_projects_it(gl):
    camera = Camera(target=(0.0, 0.5, 0.0), distance=6.0)
    with_ball, ball = _world(True)
    without, _ = _world(False)
    img = _draw(gl, with_ball, camera)
    empty = _draw(gl, without, camera)
    px, py = camera.project(with_ball.data.pos[ball], W, H)
    assert abs(px - W / 2) < 1 and abs(py - H / 2) < 1
    # the ball's pixel differs clearly from the ground seen there without it, and is its own colour
    assert np.abs(_pixel(img, px, py) - _pixel(empty, px, py)).sum() > 60
    # far from the ball (top-left: sky, bottom-left: ground) nothing changed
    for x, y in ((5, 5), (5, H - 5)):
        assert np.abs(img[y, x] - empty[y, x]).sum() < 6


def test_interpolated_poses_move_the_body(gl):
    camera = Camera(target=(0.0, 0.5, 0.0), distance=6.0)
    world, ball = _world(True)
    pos = world.data.pos[: world.data.n].copy()
    pos[ball] = (-1.5, 0.5, 0.0)
    moved = _draw(gl, world, camera, pos=pos)
    still = _draw(gl, world, camera)
    new_px = camera.project(pos[ball], W, H)
    old_px = camera.project(world.data.pos[ball], W, H)
    assert np.abs(_pixel(moved, *new_px) - _pixel(still, *new_px)).sum() > 60
    assert np.abs(_pixel(moved, *old_px) - _pixel(still, *old_px)).sum() > 60


def test_contact_markers_follow_the_toggle(gl):
    world, _ = _world(True)
    for _ in range(5):
        world.step(1.0 / 60.0)
    assert world.contacts.count > 0
    camera = Camera(target=(1.0, 0.3, 0.0), distance=5.0, pitch=0.6)
    off = _draw(gl, world, camera, RenderOptions(contacts=False, shadows=False))
    off_again = _draw(gl, world, camera, RenderOptions(contacts=False, shadows=False))
    on = _draw(gl, world, camera, RenderOptions(contacts=True, shadows=False))
    assert np.array_equal(off, off_again)
    changed = np.abs(on - off).sum(axis=2) > 30
    assert changed.sum() > 10
    marker = on[changed]
    # the markers' centres are red (contacts) or orange (speculative), their rims dark
    assert ((marker[:, 0] > 180) & (marker[:, 2] < 110)).sum() >= 3


def test_debug_options_all_on_render(gl):
    world, ball = _world(True)
    world.step(1.0 / 60.0)
    camera = Camera(target=(1.0, 0.5, 0.0), distance=7.0)
    anchor = world.data.pos[ball]
    options = RenderOptions(contacts=True, normals=True, aabbs=True, broadphase=True, velocities=True,
                            normal_scale="impulse")
    highlight = Highlight(hovered=ball, selected=ball, grabbed=ball, grab_line=(anchor, anchor + 1.0),
                          grab_force=(0.0, 20.0, 0.0))
    plain = _draw(gl, world, camera)
    busy = _draw(gl, world, camera, options, highlight)
    assert (np.abs(busy - plain).sum(axis=2) > 30).sum() > 100


def test_target_without_depth_draws_the_same_scene(gl):
    """A framebuffer with no depth buffer (a window made without one) gets the renderer's own buffer,
    resolved colour-only into it: the image matches the one drawn straight into a target with depth."""
    ctx, _fbo, renderer = gl
    world, _ = _world(True)
    camera = Camera(target=(0.0, 0.5, 0.0), distance=6.0)
    with_depth = _draw(gl, world, camera)
    colour_only = ctx.framebuffer([ctx.renderbuffer((W, H), 4)])
    try:
        colour_only.use()
        renderer.render(world, camera, RenderOptions(), Highlight())
        assert ctx.error == "GL_NO_ERROR"
        img = np.frombuffer(colour_only.read(components=3), np.uint8).reshape(H, W, 3)[::-1].astype(np.int32)
    finally:
        colour_only.release()
    assert np.abs(img - with_depth).mean() < 2.0


def test_debug_batch_keeps_runs_and_layout():
    from sandbox.render.debug_draw import ARROWS, WIRE_BOXES, Batch

    batch = Batch()
    for _ in range(2):  # the second frame reuses the grown arrays
        batch.clear()
        batch.lines(np.zeros((3000, 3)), np.ones((3000, 3)), (1.0, 0.0, 0.0, 1.0), 2.0)
        batch.lines([(0.0, 0.0, 0.0)], [(0.0, 1.0, 0.0)], [(0.0, 1.0, 0.0, 1.0)], 2.0)
        batch.wire_boxes(np.zeros((2000, 3)), np.ones((2000, 3)), (0.0, 1.0, 0.0, 1.0), 1.5)
        batch.wire_boxes([(0.0, 0.0, 0.0)], [(1.0, 2.0, 3.0)], [(0.5, 0.5, 0.5, 1.0)], 1.5)
        batch.arrows([(0.0, 0.0, 0.0)], [(0.0, 2.0, 0.0)], (0.0, 0.0, 1.0, 1.0), 3.0)
        batch.points([(1.0, 2.0, 3.0)], (1.0, 1.0, 1.0, 1.0), 8.0)
    lines, runs = batch.line_array()
    # adjacent blocks of one width (and primitive) merge into one run, one draw call
    assert runs == [(2.0, 0, 6002)]
    assert np.array_equal(lines[1, :3], (1.0, 1.0, 1.0)) and np.array_equal(lines[0, 3:8], (1, 0, 0, 1, 2))
    assert np.array_equal(lines[6001], (0, 1, 0, 0, 1, 0, 1, 2))
    instances, instance_runs = batch.instance_array()
    assert instance_runs == [(WIRE_BOXES, 1.5, 0, 2001), (ARROWS, 3.0, 2001, 1)]
    assert np.array_equal(instances[2000], (0, 0, 0, 1, 2, 3, 0.5, 0.5, 0.5, 1))
    assert np.array_equal(instances[2001], (0, 0, 0, 0, 2, 0, 0, 0, 1, 1))
    assert np.array_equal(batch.point_array(), [[1, 2, 3, 1, 1, 1, 1, 8]])


def test_box_template_is_the_twelve_edges():
    from sandbox.render.debug_draw import BOX_CORNERS

    ends = BOX_CORNERS.reshape(12, 2, 3)
    assert np.all(np.abs(ends[:, 0] - ends[:, 1]).sum(axis=1) == 1)  # each edge runs along one axis
    assert len({tuple(e.ravel()) for e in np.sort(ends, axis=1)}) == 12


def test_instanced_boxes_and_arrows_are_drawn(gl):
    """AABBs (wire boxes) and velocity arrows, expanded on the GPU from one instance each, colour
    pixels in their colours: green box edges around the cube, a blue arrow above it."""
    world, _ = _world(False)
    world.step(1.0 / 60.0)  # the broad phase's boxes
    cube = world.data.n - 1
    world.data.vel[cube] = (0.0, 8.0, 0.0)  # an arrow 1.6 m up from the centre
    camera = Camera(target=(2.0, 1.0, 0.0), distance=5.0, yaw=0.0, pitch=0.2)
    plain = _draw(gl, world, camera, RenderOptions(shadows=False))
    boxes = _draw(gl, world, camera, RenderOptions(shadows=False, aabbs=True, xray=False))
    arrows = _draw(gl, world, camera, RenderOptions(shadows=False, velocities=True, xray=False))
    green = (boxes[:, :, 1] > 150) & (boxes[:, :, 0] < 120) & (np.abs(boxes - plain).sum(axis=2) > 60)
    blue = (arrows[:, :, 2] > 180) & (arrows[:, :, 0] < 120) & (np.abs(arrows - plain).sum(axis=2) > 60)
    assert green.sum() > 60
    px, py = camera.project(world.data.pos[cube] + (0.0, 1.2, 0.0), W, H)
    assert blue[int(py) - 3:int(py) + 4, int(px) - 3:int(px) + 4].any()


def test_bad_options_raise():
    with pytest.raises(ValueError, match="normal_scale"):
        RenderOptions(normal_scale="size").validate()
    with pytest.raises(ValueError, match="msaa"):
        RenderOptions(msaa=-2).validate()
    with pytest.raises(ValueError, match="distance"):
        Camera(distance=-1.0)
    with pytest.raises(ValueError, match="px"):
        Camera().ray(float("nan"), 0.0, W, H)


@pytest.mark.parametrize("size", [(800, 600), (1920, 1080), (333, 777)])
def test_ray_and_project_are_inverses_at_corners_and_centre(size):
    width, height = size
    camera = Camera(target=(1.0, 2.0, -3.0), distance=12.0, yaw=-2.1, pitch=0.7)
    for px, py in ((0.0, 0.0), (width, 0.0), (0.0, height), (width, height), (width / 2, height / 2)):
        origin, direction = camera.ray(px, py, width, height)
        assert np.allclose(origin, camera.eye)
        assert math.isclose(np.linalg.norm(direction), 1.0, rel_tol=1e-12)
        for t in (0.5, 10.0, 300.0):
            back = camera.project(origin + t * direction, width, height)
            assert np.allclose(back, (px, py), atol=1e-6)


def test_project_then_ray_hits_the_point_after_resize():
    camera = Camera()
    point = np.array([0.7, 1.3, -0.4])
    for width, height in ((640, 480), (1280, 400), (300, 900)):
        px, py = camera.project(point, width, height)
        origin, direction = camera.ray(px, py, width, height)
        t = np.dot(point - origin, direction)
        assert np.allclose(origin + t * direction, point, atol=1e-9)


def test_view_projection_matches_project():
    camera = Camera(target=(0.0, 1.0, 0.0), distance=8.0, yaw=0.3, pitch=0.2)
    p = np.array([1.0, 0.5, 2.0, 1.0])
    clip = camera.projection_matrix(4 / 3) @ camera.view_matrix() @ p
    ndc = clip[:2] / clip[3]
    px, py = camera.project(p[:3], 400, 300)
    assert np.allclose((px, py), ((ndc[0] + 1) * 200, (1 - ndc[1]) * 150))


moves = st.lists(st.tuples(st.sampled_from(["orbit", "pan", "zoom", "focus"]),
                           st.floats(-5000, 5000), st.floats(-5000, 5000)), max_size=25)


@settings(max_examples=200, deadline=None)
@given(moves)
def test_camera_never_goes_below_the_ground(sequence):
    camera = Camera()
    for op, a, b in sequence:
        if op == "orbit":
            camera.orbit(a, b)
        elif op == "pan":
            camera.pan(a, b, 600)
        elif op == "zoom":
            camera.zoom(a / 500.0)
        else:
            camera.focus((a / 100.0, b / 100.0, 0.0), 0.5)
        assert camera.eye[1] >= MIN_EYE_HEIGHT - 1e-9
        assert abs(camera.pitch) < math.pi / 2
        assert camera.distance > 0.0
    camera.reset()
    assert np.allclose(camera.eye, Camera().eye)


def test_resting_contacts_get_visible_normals_in_both_scales():
    from sandbox.render.debug_draw import MIN_NORMAL_LENGTH, Batch, build_debug

    world, _ = _world(True)
    for _ in range(30):
        world.step(1.0 / 60.0)  # the ball and the box rest on the ground: tiny depths, small impulses
    assert world.contacts.count > 0
    n = world.data.n
    for scale in ("depth", "impulse"):
        batch = Batch()
        build_debug(batch, world, RenderOptions(normals=True, normal_scale=scale), Highlight(),
                    world.data.pos[:n], np.ones((n, 3), np.float32))
        arrows, runs = batch.instance_array()
        assert runs and runs[0][0] == "arrows"
        lengths = np.linalg.norm(arrows[:, 3:6], axis=1)
        assert lengths.min() >= MIN_NORMAL_LENGTH - 1e-6, scale


def test_contact_normals_are_drawn_over_the_contact_dots(gl):
    world, _ = _world(True)
    for _ in range(30):
        world.step(1.0 / 60.0)
    camera = Camera(target=(1.0, 0.3, 0.0), distance=5.0, pitch=0.5)
    dots = _draw(gl, world, camera, RenderOptions(contacts=True, shadows=False, xray=False))
    both = _draw(gl, world, camera, RenderOptions(contacts=True, normals=True, shadows=False, xray=False))
    yellow = lambda img: (img[..., 0] > 200) & (img[..., 1] > 170) & (img[..., 2] < 110)  # noqa: E731
    c = world.contacts
    over = 0
    for i in range(int(c.count)):
        for k in range(int(c.npoints[i])):
            px, py = camera.project(c.points_b[i, k], W, H)
            if 2 <= px < W - 2 and 2 <= py < H - 2:
                centre = (slice(int(py) - 1, int(py) + 2), slice(int(px) - 1, int(px) + 2))
                over += bool(yellow(both[centre]).any()) and not yellow(dots[centre]).any()
    assert over >= 2  # the yellow shaft shows on top of the red dot where the arrow starts


# A/B lanes draw each world into its own region of the window (sandbox/ui/compare_window.py)
@pytest.mark.parametrize("msaa", [0, 4])
def test_the_renderer_draws_inside_its_region_only(msaa):
    ctx = _context()
    w, h = 160, 120
    fbo = ctx.framebuffer([ctx.renderbuffer((w, h), 4)], ctx.depth_renderbuffer((w, h)))
    renderer = Renderer(ctx, w, h)
    world = World()
    world.add_body(Box((50, 0.5, 50)), position=(0, -0.5, 0), mass=0)
    world.add_body(Sphere(0.5), position=(0, 0.5, 0))
    fbo.use()
    fbo.clear(1.0, 0.0, 1.0, 1.0)
    renderer.render(world, Camera(target=(0, 0.5, 0), distance=6.0), RenderOptions(msaa=msaa), Highlight(),
                    region=(0, 0, w, h // 2))
    img = np.frombuffer(fbo.read(components=3), np.uint8).reshape(h, w, 3)  # row 0 at the bottom
    magenta = (img == (255, 0, 255)).all(axis=2)
    assert magenta[h // 2:].all()  # the upper half kept what was there
    assert not magenta[:h // 2].any()  # the lower half drawn
    with pytest.raises(ValueError, match="region"):
        renderer.render(world, Camera(), RenderOptions(), Highlight(), region=(0, 0, 0, 10))
    renderer.release()
    fbo.release()
    ctx.release()
