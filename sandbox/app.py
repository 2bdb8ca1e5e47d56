"""The desktop application: a pyglet window, a fixed-timestep simulation loop, the moderngl renderer and
the Dear ImGui panel.

The loop follows Fiedler's "Fix your timestep!" (2004): real time accumulates, the world advances in
whole steps of ``dt`` (at most ``max_steps`` per frame, so that a slow step slows the simulation down
instead of freezing the app), and the frame is drawn between the last two states, at
``alpha = accumulator / dt``.
"""

from __future__ import annotations

import struct
import sys
import time
import traceback
import zlib
from collections.abc import Callable
from pathlib import Path

import imgui_bundle
import moderngl
import numpy as np
import OpenGL.GL as gl
import pyglet
from imgui_bundle import imgui
from imgui_bundle.python_backends.pyglet_backend import PygletProgrammablePipelineRenderer
from pyglet.window import key

from .engine import Box, Capsule, ConvexHull, Sphere, World
from .engine.validate import positive_float
from .render import Camera, Renderer, RenderOptions
from .scene_file import load_scene_file
from .scenes import DEFAULT_SCENE, SCENES
from .ui.interaction import Interaction
from .ui.panel import PANEL_WIDTH, Panel
from .ui.spawn import SpawnSettings, drop, shoot

DEFAULT_DT = 1.0 / 60.0
MAX_STEPS_PER_FRAME = 4
MAX_FRAME_SECONDS = 0.25
"""Longer frames (a window drag, a breakpoint) count as this long, so the backlog stays bounded."""
CLEAR_COLOR = (0.09, 0.10, 0.12)
FONT_PATH = Path(imgui_bundle.__file__).parent / "assets" / "fonts" / "Roboto" / "Roboto-Regular.ttf"


class Simulation:
    """A world advanced at a fixed time step, with the state before the last step kept for drawing
    in between (positions lerped, orientations nlerped).

    ``time_scale`` slows or speeds the simulation against the wall clock; ``paused`` stops it (``step``
    still advances by one step); ``steps_last_frame`` and ``step_ms`` report the last frame's work."""

    def __init__(self, world: World, dt: float = DEFAULT_DT, max_steps: int = MAX_STEPS_PER_FRAME) -> None:
        self.world = world
        self.dt = positive_float("dt", dt)
        self.max_steps = max_steps
        self.time_scale = 1.0
        self.paused = False
        self.accumulator = 0.0
        self.time = 0.0
        self.steps = 0
        self.steps_last_frame = 0
        self.step_ms = 0.0
        self.sync()

    def sync(self) -> None:
        """Forget the previous state: draw the current one as is (after a teleport, a spawn, a load)."""
        d = self.world.data
        self._prev_pos = d.pos[: d.n].copy()
        self._prev_quat = d.quat[: d.n].copy()
        self._prev_gen = d.generation[: d.n].copy()

    def step(self) -> None:
        """Advance the world by exactly one step of ``dt``, keeping the state before it."""
        d = self.world.data
        self._prev_pos = d.pos[: d.n].copy()
        self._prev_quat = d.quat[: d.n].copy()
        self._prev_gen = d.generation[: d.n].copy()
        self.world.step(self.dt)
        self.time += self.dt
        self.steps += 1

    def advance(self, real_seconds: float) -> int:
        """Account ``real_seconds`` of wall-clock time and take the whole steps it pays for (at most
        ``max_steps``; the rest of a larger backlog is dropped). Returns the number of steps taken."""
        self.steps_last_frame = 0
        if self.paused:
            return 0
        self.accumulator += min(max(real_seconds, 0.0), MAX_FRAME_SECONDS) * self.time_scale
        start = time.perf_counter()
        while self.accumulator >= self.dt and self.steps_last_frame < self.max_steps:
            self.step()
            self.accumulator -= self.dt
            self.steps_last_frame += 1
        if self.accumulator >= self.dt:
            self.accumulator %= self.dt
        if self.steps_last_frame:
            self.step_ms = 1000.0 * (time.perf_counter() - start) / self.steps_last_frame
        return self.steps_last_frame

    @property
    def alpha(self) -> float:
        """Where the drawn state lies between the previous step (0) and the current one (1)."""
        return 1.0 if self.paused else min(self.accumulator / self.dt, 1.0)

    def interpolated(self) -> tuple[np.ndarray, np.ndarray]:
        """Centre-of-mass positions ``(n, 3)`` and unit quaternions ``(n, 4)`` of rows ``[:n]`` at
        ``alpha``: rows that are new or were reused since the last step are drawn where they are."""
        d = self.world.data
        n = d.n
        pos, quat = d.pos[:n].copy(), d.quat[:n].copy()
        a = self.alpha
        m = min(n, len(self._prev_pos))
        if a >= 1.0 or m == 0:
            return pos, quat
        same = self._prev_gen[:m] == d.generation[:m]
        p0, q0 = self._prev_pos[:m], self._prev_quat[:m].copy()
        # q and -q are the same rotation: blend along the shorter arc
        q0[np.einsum("ij,ij->i", q0, quat[:m]) < 0.0] *= -1.0
        blend_p = p0 + (pos[:m] - p0) * a
        blend_q = q0 + (quat[:m] - q0) * a
        blend_q /= np.linalg.norm(blend_q, axis=1, keepdims=True)
        pos[:m] = np.where(same[:, None], blend_p, pos[:m])
        quat[:m] = np.where(same[:, None], blend_q, quat[:m])
        return pos, quat


def warm_up() -> float:
    """Run every kind of pair, a raycast and a grab once on a tiny world, so that numba compiles (or
    loads from its cache) the kernels before the first frame. Returns the seconds it took."""
    start = time.perf_counter()
    w = World()
    w.add_body(Box((4.0, 0.5, 4.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    gem = ConvexHull(np.array([(0, 0.5, 0), (0.4, 0, 0), (-0.4, 0, 0.1), (0, 0, 0.4), (0, -0.4, -0.3)]))
    shapes = (Sphere(0.3), Box((0.3, 0.3, 0.3)), Capsule(0.2, 0.3), gem)
    for k, shape in enumerate(shapes):
        for j in range(2):
            w.add_body(shape, position=(0.5 * k - 0.75, 0.3 + 0.45 * j, 0.1 * j), mass=1.0)
    body = w.bodies[-1]
    grab = w.grab(body, body.center_of_mass)
    for _ in range(3):
        w.step(DEFAULT_DT)
    w.release(grab)
    w.raycast((0.0, 5.0, 0.0), (0.0, -1.0, 0.0))
    return time.perf_counter() - start


def write_png(path: str | Path, rgb: np.ndarray) -> None:
    """Write an ``(h, w, 3)`` uint8 image as an 8-bit RGB PNG (PNG spec, ISO/IEC 15948: one IHDR,
    one zlib IDAT of scanlines each led by filter byte 0, IEND)."""
    h, w, _ = rgb.shape
    raw = np.hstack([np.zeros((h, 1), np.uint8), np.ascontiguousarray(rgb, np.uint8).reshape(h, w * 3)])

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
    Path(path).write_bytes(png + chunk(b"IEND", b""))


class _ImGuiBackend(PygletProgrammablePipelineRenderer):
    """imgui-bundle's pyglet backend, fed events by the ``App`` (so that the app decides who gets the
    mouse) and timed by the app's own clock instead of ``pyglet.clock.tick``."""

    def __init__(self, window: pyglet.window.Window) -> None:
        super().__init__(window, attach_callbacks=False)
        self._window = window

    def process_inputs(self, frame_seconds: float = DEFAULT_DT) -> None:
        self.io.delta_time = max(frame_seconds, 1e-4)


def _style_imgui() -> None:
    imgui.style_colors_dark()
    style = imgui.get_style()
    style.window_rounding = 6.0
    style.frame_rounding = 4.0
    style.grab_rounding = 4.0
    style.child_rounding = 4.0
    style.popup_rounding = 4.0
    style.scrollbar_rounding = 6.0
    style.window_border_size = 0.0
    style.window_padding = imgui.ImVec2(10, 10)
    style.frame_padding = imgui.ImVec2(6, 4)
    style.item_spacing = imgui.ImVec2(8, 6)
    accent = imgui.ImVec4(0.26, 0.55, 0.90, 1.0)
    for idx, col in ((imgui.Col_.header, imgui.ImVec4(0.20, 0.30, 0.42, 1.0)),
                     (imgui.Col_.header_hovered, imgui.ImVec4(0.25, 0.40, 0.58, 1.0)),
                     (imgui.Col_.header_active, accent),
                     (imgui.Col_.check_mark, accent),
                     (imgui.Col_.slider_grab, accent),
                     (imgui.Col_.window_bg, imgui.ImVec4(0.11, 0.12, 0.14, 0.94)),
                     (imgui.Col_.title_bg_active, imgui.ImVec4(0.16, 0.22, 0.30, 1.0))):
        style.set_color_(idx, col)


WINDOW_CONFIGS: tuple[dict, ...] = (
    {"sample_buffers": 1, "samples": 4, "depth_size": 24},
    {"depth_size": 24},
    {"depth_size": 16},
)
"""The window framebuffers asked for, best first: 4× MSAA with depth (the renderer draws straight into
it), then depth without MSAA (the renderer then anti-aliases in its own buffer, ``RenderOptions.msaa``),
each as an OpenGL 3.3 core profile, double-buffered config. If the display has none of them, pyglet's default
is used; the renderer copes with any (without depth it draws into its own buffer too)."""


def choose_window_config(screen) -> pyglet.gl.Config | None:
    """The first of ``WINDOW_CONFIGS`` that ``screen`` (a ``pyglet.display.Screen``) can provide,
    completed for it, or None (pyglet's default) when it has none of them."""
    for extra in WINDOW_CONFIGS:
        # not forward-compatible: that flag would forbid the debug drawing's wide lines
        template = pyglet.gl.Config(double_buffer=True, major_version=3, minor_version=3, **extra)
        try:
            configs = screen.get_matching_configs(template)
        except (pyglet.window.NoSuchConfigException, pyglet.gl.ContextException):
            continue
        if configs:
            return configs[0]
    return None


SceneSource = str | Callable[[World], None]


class App:
    """The sandbox window.

    ``scene`` is a name from ``sandbox.scenes.SCENES``, a path to a JSON scene file, or a builder
    ``f(world)``. ``visible=False`` opens the window hidden (tests). Use ``run()`` for the interactive
    loop, or ``run(frames=N)`` to draw N frames of exactly one ``dt`` each (reproducible)."""

    def __init__(self, scene: SceneSource = DEFAULT_SCENE, width: int = 1280, height: int = 720,
                 visible: bool = True) -> None:
        self.window = pyglet.window.Window(width, height, caption="sandbox — rigid-body physics",
                                           resizable=True, visible=visible, vsync=True,
                                           config=choose_window_config(pyglet.display.get_display()
                                                                       .get_default_screen()))
        self.window.switch_to()
        self.ctx = moderngl.create_context()
        self.window_samples = int(self.window.config.samples or 0) if self.window.config.sample_buffers else 0
        self.imgui_context = imgui.create_context()
        io = imgui.get_io()
        io.set_ini_filename("")
        if FONT_PATH.exists():
            io.fonts.add_font_from_file_ttf(str(FONT_PATH), 15.0)
        _style_imgui()
        self.imgui = _ImGuiBackend(self.window)
        fbw, fbh = self.window.get_framebuffer_size()
        self.renderer = Renderer(self.ctx, fbw, fbh)
        # without a multisample window the renderer anti-aliases in its own buffer, at some cost
        self.options = RenderOptions(msaa=0 if self.window_samples > 1 else 4)
        self.camera = Camera()
        self.spawn = SpawnSettings()
        self.interaction = Interaction(self)
        self.panel = Panel(self)
        self.errors: list[str] = []
        self.closed = False
        self.show_panel = True
        self.frames = 0
        self.fps = 0.0
        self.ui_ms = 0.0
        self.ui_rects: list[tuple[float, float, float, float]] = []
        self.scene_name = ""
        self._scene_builder: Callable[[World], None] | None = None
        self._last_time = time.perf_counter()
        self._gl_error_seen = False
        self.sim = Simulation(World())
        self.window.push_handlers(self)
        self._compile_notice()
        if not self.load_scene(scene):
            self.sim = Simulation(World())

    # --- start-up -------------------------------------------------------------------------------
    def _compile_notice(self) -> None:
        """Say that numba is compiling (on screen and on stderr), then warm the kernels up."""
        print("sandbox: compiling physics kernels (first launch only; cached afterwards)...",
              file=sys.stderr, flush=True)
        self.window.dispatch_events()
        self.ctx.screen.use()
        self.ctx.clear(*CLEAR_COLOR)
        self.imgui.process_inputs()
        imgui.new_frame()
        w, h = self.window_size()
        imgui.set_next_window_pos(imgui.ImVec2(w * 0.5, h * 0.5), 0, imgui.ImVec2(0.5, 0.5))
        flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
                 | imgui.WindowFlags_.no_inputs)
        imgui.begin("##compiling", None, flags)
        imgui.text("Compiling physics kernels…")
        imgui.text_disabled("first launch only: numba caches them for the next time")
        imgui.end()
        imgui.render()
        self.imgui.render(imgui.get_draw_data())
        self.window.flip()
        seconds = warm_up()
        print(f"sandbox: physics ready in {seconds:.1f} s", file=sys.stderr, flush=True)

    # --- scenes -----------------------------------------------------------------------------------
    def resolve_scene(self, scene: SceneSource) -> tuple[str, Callable[[World], None]]:
        """The display name and builder of ``scene`` (a name, a file path or a builder); ValueError
        for an unknown name or a bad file."""
        if callable(scene):
            return getattr(scene, "__name__", "custom"), scene
        if scene in SCENES:
            return scene, SCENES[scene]
        if scene.endswith(".json") or Path(scene).is_file():
            return Path(scene).name, load_scene_file(scene)
        raise ValueError(f"unknown scene {scene!r}: expected one of {', '.join(SCENES)} or a .json file")

    def load_scene(self, scene: SceneSource) -> bool:
        """Build ``scene`` into a fresh world, carrying the user's solver settings over, and switch to
        it. On any error the current world stays as it was and the error is shown; returns success."""
        try:
            name, builder = self.resolve_scene(scene)
            world = World()
            old = self.sim.world
            for attr in ("broadphase", "response", "ccd", "sleeping", "substeps", "iterations",
                         "restitution_rule"):
                setattr(world, attr, getattr(old, attr))
            builder(world)
        except Exception as exc:  # noqa: BLE001 - a scene is user code: any failure is shown, not fatal
            self.report(f"loading scene {getattr(scene, '__name__', scene)!r}", exc)
            return False
        self.interaction.release_all()
        self.interaction.forget()
        sim = Simulation(world, self.sim.dt, self.sim.max_steps)
        sim.time_scale = self.sim.time_scale
        sim.paused = self.sim.paused
        self.sim = sim
        self.scene_name, self._scene_builder = name, builder
        self.camera = self._frame_camera(world)
        return True

    def reset(self) -> bool:
        """Rebuild the current scene from its builder."""
        if self._scene_builder is None:
            return False
        return self.load_scene(self._scene_builder)

    def _frame_camera(self, world: World) -> Camera:
        """A camera that sees the scene's dynamic bodies (or the origin in an empty scene), centred
        in the part of the window that the panel leaves free."""
        d = world.data
        live = d.alive[: d.n] & ~d.static[: d.n]
        if not live.any():
            return Camera()
        pos, rad = d.pos[: d.n][live], d.radius[: d.n][live]
        lo, hi = (pos - rad[:, None]).min(axis=0), (pos + rad[:, None]).max(axis=0)
        centre = 0.5 * (lo + hi)
        radius = 0.5 * float(np.linalg.norm(hi - lo))
        centre[1] = max(0.85 * centre[1], 0.5)
        camera = Camera(target=centre, distance=min(max(2.6 * radius + 3.0, 8.0), 150.0))
        if self.show_panel:
            camera.pan(-0.5 * PANEL_WIDTH, 0.0, self.window_size()[1])
            camera = Camera(target=camera.target, distance=camera.distance)  # Home returns here
        return camera

    # --- errors -----------------------------------------------------------------------------------
    def report(self, what: str, exc: BaseException) -> None:
        """Show an error in the panel (the last few are kept) and print its traceback."""
        message = f"{what}: {type(exc).__name__}: {exc}"
        self.errors = [*self.errors[-4:], message]
        print(f"sandbox: error while {message}", file=sys.stderr)
        traceback.print_exception(exc, file=sys.stderr)

    # --- geometry -------------------------------------------------------------------------------
    def window_size(self) -> tuple[int, int]:
        """The window's size in window coordinates (those of mouse events)."""
        return self.window.get_size()

    def cursor_ray(self, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
        """The world ray through the centre of the pixel at pyglet coordinates ``(x, y)`` (integer
        pixels, origin at the bottom-left): in the camera's top-left convention that centre is
        ``(x + 0.5, height - y - 0.5)``."""
        w, h = self.window_size()
        return self.camera.ray(x + 0.5, h - y - 0.5, w, h)

    def over_ui(self, x: float, y: float) -> bool:
        """Whether pyglet point ``(x, y)`` is over an ImGui window drawn last frame, or ImGui is busy
        with a widget (a slider being dragged)."""
        _, h = self.window_size()
        top = h - y
        if imgui.is_any_item_active():
            return True
        return any(x0 <= x <= x1 and y0 <= top <= y1 for x0, y0, x1, y1 in self.ui_rects)

    def view_centre_point(self) -> np.ndarray:
        """Where the ray through the middle of the view meets the scene (or the ground plane y = 0, or
        the camera's target): the place the panel's spawn buttons build at."""
        w, h = self.window_size()
        return self.point_under(0.5 * w, 0.5 * h)

    def point_under(self, x: float, y: float) -> np.ndarray:
        """The surface point under pyglet ``(x, y)``: a body, else the plane y = 0, else the target."""
        origin, direction = self.cursor_ray(x, y)
        hit = self.sim.world.raycast(origin, direction)
        if hit is not None:
            return np.asarray(hit.point, dtype=float)
        if direction[1] < -1e-6:
            return origin + direction * (-origin[1] / direction[1])
        return self.camera.target.copy()

    # --- pyglet events ------------------------------------------------------------------------------
    def on_mouse_motion(self, x, y, dx, dy):
        self.imgui.on_mouse_motion(x, y, dx, dy)
        if self.over_ui(x, y):
            self.interaction.leave()
        else:
            self.interaction.on_mouse_motion(x, y)

    def on_mouse_press(self, x, y, button, modifiers):
        self.imgui.on_mouse_motion(x, y, 0, 0)
        self.imgui.on_mouse_press(x, y, button, modifiers)
        if not self.over_ui(x, y):
            self._guard("mouse press", self.interaction.on_mouse_press, x, y, button, modifiers)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.imgui.on_mouse_motion(x, y, dx, dy)
        self._guard("mouse drag", self.interaction.on_mouse_drag, x, y, dx, dy, buttons, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self.imgui.on_mouse_release(x, y, button, modifiers)
        self._guard("mouse release", self.interaction.on_mouse_release, x, y, button, modifiers)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.imgui.on_mouse_scroll(x, y, scroll_x, scroll_y)
        if not self.over_ui(x, y):
            self._guard("mouse wheel", self.interaction.on_mouse_scroll, x, y, scroll_y)

    def on_mouse_leave(self, x, y):
        self.interaction.leave()

    def on_text(self, text):
        self.imgui.on_text(text)

    def on_key_release(self, symbol, modifiers):
        self.imgui.on_key_release(symbol, modifiers)
        return pyglet.event.EVENT_HANDLED

    def on_key_press(self, symbol, modifiers):
        self.imgui.on_key_press(symbol, modifiers)
        if not imgui.get_io().want_capture_keyboard:
            self._guard("shortcut", self.shortcut, symbol, modifiers)
        # never let pyglet's default handler close the window on Escape
        return pyglet.event.EVENT_HANDLED

    def on_resize(self, width, height):
        fbw, fbh = self.window.get_framebuffer_size()
        self.renderer.resize(fbw, fbh)
        self.imgui.on_resize(width, height)

    def on_close(self):
        self.closed = True
        return pyglet.event.EVENT_HANDLED

    def _guard(self, what: str, fn: Callable, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - whatever goes wrong in a handler is shown, not fatal
            self.report(what, exc)

    # --- actions (keys and panel) ---------------------------------------------------------------
    def shortcut(self, symbol: int, modifiers: int) -> None:
        """The keyboard shortcuts listed in the Help section."""
        ia = self.interaction
        if symbol == key.Q and modifiers & key.MOD_CTRL:
            self.closed = True
        elif symbol == key.P:
            self.sim.paused = not self.sim.paused
        elif symbol in (key.O, key.PERIOD):
            self.single_step()
        elif symbol == key.R:
            self.reset()
        elif symbol == key.SPACE:
            self.shoot()
        elif symbol == key.E:
            self.drop_at_cursor()
        elif symbol == key.F:
            self.focus_selected()
        elif symbol == key.HOME:
            self.camera.reset()
        elif symbol in (key.DELETE, key.BACKSPACE):
            self.delete_selected()
        elif symbol == key.ESCAPE:
            ia.release_all()
            ia.selected = None
        elif symbol == key.H:
            self.show_panel = not self.show_panel

    def single_step(self) -> None:
        """Pause, then advance exactly one step."""
        self.sim.paused = True
        self.sim.step()

    def shoot(self) -> None:
        """Launch the spawn shape from the eye through the cursor (or the view's centre)."""
        w, h = self.window_size()
        x, y = self.interaction.cursor or (0.5 * w, 0.5 * h)
        origin, direction = self.cursor_ray(x, y)
        shoot(self.sim.world, self.spawn, origin + direction * (1.0 + 2.0 * self.spawn.size), direction)

    def drop_at_cursor(self) -> None:
        """Drop the spawn shapes above the point under the cursor (or the view's centre)."""
        w, h = self.window_size()
        x, y = self.interaction.cursor or (0.5 * w, 0.5 * h)
        drop(self.sim.world, self.spawn, self.point_under(x, y))

    def focus_selected(self) -> None:
        """Point the camera at the selected (or hovered) body."""
        body = self.interaction.selected or self.interaction.hovered
        if body is not None:
            radius = float(self.sim.world.data.radius[body.index])
            self.camera.focus(body.center_of_mass, max(radius, 0.25))

    def delete_selected(self) -> None:
        body = self.interaction.selected
        if body is not None and body.alive:
            if self.interaction.grab_body == body:
                self.interaction.release_all()
            self.sim.world.remove_body(body)
        self.interaction.validate()

    # --- the frame ------------------------------------------------------------------------------------
    def frame(self, frame_seconds: float) -> None:
        """One frame: advance the simulation by ``frame_seconds`` of wall-clock time, draw the scene
        and the panel into the back buffer."""
        self.frames += 1
        try:
            self.sim.advance(frame_seconds)
        except Exception as exc:  # noqa: BLE001 - keep the app alive and the world inspectable
            self.sim.paused = True
            self.report("stepping the world (paused)", exc)
        self._guard("mouse update", self.interaction.update)
        self.ctx.screen.use()
        self.ctx.clear(*CLEAR_COLOR)
        try:
            pos, quat = self.sim.interpolated()
            self.renderer.render(self.sim.world, self.camera, self.options, self.interaction.highlight(),
                                 pos=pos, quat=quat)
        except Exception as exc:  # noqa: BLE001
            self.report("drawing the scene", exc)
        start = time.perf_counter()
        self.ctx.screen.use()
        self._drain_gl_errors()
        self.imgui.process_inputs(frame_seconds)
        imgui.new_frame()
        self.ui_rects = []
        self.panel.draw()
        imgui.render()
        self.imgui.render(imgui.get_draw_data())
        self.ui_ms = 1000.0 * (time.perf_counter() - start)

    def _drain_gl_errors(self) -> None:
        """Clear a GL error left by the scene pass (reported once on stderr): the ImGui backend checks
        errors after each GL call and would otherwise raise on the stale one."""
        error = self.ctx.error
        if error != "GL_NO_ERROR" and not self._gl_error_seen:
            self._gl_error_seen = True
            print(f"sandbox: the scene pass left {error}", file=sys.stderr)

    def read_pixels(self) -> np.ndarray:
        """The back buffer as an ``(h, w, 3)`` uint8 array, top row first (framebuffer pixels)."""
        fbw, fbh = self.window.get_framebuffer_size()
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
        gl.glReadBuffer(gl.GL_BACK)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        data = gl.glReadPixels(0, 0, fbw, fbh, gl.GL_RGB, gl.GL_UNSIGNED_BYTE)
        return np.frombuffer(data, np.uint8).reshape(fbh, fbw, 3)[::-1].copy()

    def run(self, frames: int | None = None, screenshot: str | Path | None = None) -> None:
        """The main loop. With ``frames``, draw that many frames, each advancing the simulation by
        exactly one ``dt`` (so a run is reproducible), save the last one to ``screenshot`` (PNG) if
        given, and return; without, run until the window closes."""
        if frames is not None and frames <= 0:
            raise ValueError(f"frames must be positive, got {frames}")
        done = 0
        while not self.closed and (frames is None or done < frames):
            now = time.perf_counter()
            real = now - self._last_time
            self._last_time = now
            if real > 0.0:
                self.fps = 0.9 * self.fps + 0.1 / real if self.fps else 1.0 / real
            self.window.switch_to()
            self.window.dispatch_events()
            if self.closed:
                break
            self.frame(self.sim.dt / self.sim.time_scale if frames is not None else real)
            done += 1
            if screenshot is not None and done == frames:
                write_png(screenshot, self.read_pixels())
            self.window.flip()
            if frames is None and not self.window.vsync:
                # without vsync, do not spin faster than a fast display
                time.sleep(max(0.0, 1.0 / 240.0 - (time.perf_counter() - now)))

    def close(self) -> None:
        """Destroy the window and the ImGui context."""
        self.window.switch_to()
        self.imgui.shutdown()
        imgui.destroy_context(self.imgui_context)
        self.window.close()

