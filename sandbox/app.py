"""The desktop application: a pyglet window around a ``Session`` (the world, its fixed-step clock and
the commands), the moderngl renderer and the Dear ImGui panel.

The app owns the window, turns its events into session commands and mouse-tool calls, and draws frames.
The panel and the mouse tools get a ``UiContext`` (session, camera, options, spawn settings, window
size), never the app. Frames come as fast as the display takes them while anything moves; once
everything rests and the user is idle, a ``FramePacer`` slows them down (see ``App.run``).
"""

from __future__ import annotations

import struct
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import imgui_bundle
import moderngl
import numpy as np
import OpenGL.GL as gl
import pyglet
from imgui_bundle import imgui, implot

from .i18n import N_, _
from .render import Renderer, RenderOptions
from .scenes import DEFAULT_SCENE
from .session import DEFAULT_DT, FramePacer, SceneSource, Session
from .ui.compare_window import render_lanes
from .ui.context import UiContext
from .ui.imgui_backend import ImGuiBackend
from .ui.interaction import Interaction
from .ui.lesson_visuals import LessonVisuals
from .ui.panel import Panel
from .warmup import cache_is_warm, compile_parallel, warm_up

CLEAR_COLOR = (0.09, 0.10, 0.12)
WINDOW_CAPTION = N_("sandbox — rigid-body physics")
FONT_PATH = Path(imgui_bundle.__file__).parent / "assets" / "fonts" / "Roboto" / "Roboto-Regular.ttf"
FALLBACK_FONTS = (Path(imgui_bundle.__file__).parent / "assets" / "fonts" / "latex" / "latinmodern-math.otf",
                  Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
"""Merged under Roboto, in this order, for the glyphs it lacks (those present are used): the lessons'
formulas have arrows (← ⇒, in imgui-bundle's own Latin Modern Math) and subscript digits (I₁, which
DejaVu Sans has where installed)."""


def write_png(path: str | Path, rgb: np.ndarray) -> None:
    """Write an ``(h, w, 3)`` uint8 image as an 8-bit RGB PNG (PNG spec, ISO/IEC 15948: one IHDR,
    one zlib IDAT of scanlines each led by filter byte 0, IEND)."""
    h, w, _channels = rgb.shape
    raw = np.hstack([np.zeros((h, 1), np.uint8), np.ascontiguousarray(rgb, np.uint8).reshape(h, w * 3)])

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
    Path(path).write_bytes(png + chunk(b"IEND", b""))


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


class App:
    """The sandbox window.

    ``scene`` is a name from ``sandbox.scenes.SCENES``, a path to a JSON scene file, or a builder
    ``f(world)``. ``visible=False`` opens the window hidden (tests). Use ``run()`` for the interactive
    loop, or ``run(frames=N)`` to draw N frames of exactly one ``dt`` each (reproducible).

    ``session`` holds the world and its clock; ``ui`` is the context the panel and the mouse tools work
    in (camera, render options, spawn settings, window size)."""

    def __init__(self, scene: SceneSource = DEFAULT_SCENE, width: int = 1280, height: int = 720,
                 visible: bool = True) -> None:
        self.window = pyglet.window.Window(width, height, caption=_(WINDOW_CAPTION),
                                           resizable=True, visible=visible, vsync=True,
                                           config=choose_window_config(pyglet.display.get_display()
                                                                       .get_default_screen()))
        self.window.switch_to()
        self.ctx = moderngl.create_context()
        self.window_samples = int(self.window.config.samples or 0) if self.window.config.sample_buffers else 0
        self.imgui_context = imgui.create_context()
        implot.create_context()  # the panel's plots
        io = imgui.get_io()
        io.set_ini_filename("")
        if FONT_PATH.exists():
            io.fonts.add_font_from_file_ttf(str(FONT_PATH), 15.0)
            for fallback in FALLBACK_FONTS:
                if fallback.exists():
                    merged = imgui.ImFontConfig()
                    merged.merge_mode = True  # used only for glyphs that the fonts before it lack
                    io.fonts.add_font_from_file_ttf(str(fallback), 15.0, merged)
        _style_imgui()
        self.imgui = ImGuiBackend(self.window, self.ctx, DEFAULT_DT)
        fbw, fbh = self.window.get_framebuffer_size()
        self.renderer = Renderer(self.ctx, fbw, fbh)
        self.session = Session()
        # without a multisample window the renderer anti-aliases in its own buffer, at some cost
        self.ui = UiContext(self.session, options=RenderOptions(msaa=0 if self.window_samples > 1 else 4),
                            window_size=self.window.get_size())
        self.interaction = Interaction(self.ui)
        self.panel = Panel(self.ui, self.interaction)
        self.visuals = LessonVisuals(self.ui, self.interaction)
        self.pacer = FramePacer()
        self.closed = False
        self.frames = 0
        self._gl_error_seen = False
        self._warm_up_pending = False
        self.window.push_handlers(self)
        self._compile_notice()
        self.ui.load_scene(scene)

    # --- start-up -------------------------------------------------------------------------------
    def _compile_notice(self) -> None:
        """Get the physics kernels ready. With numba's cache warm they are only loaded, and only after the
        first frame is shown (``run``): the first frame needs none but those its scene's set-up calls,
        which numba loads as they are called. When the cache is cold (the first launch after an install
        or an update), compile them now in parallel helper processes (``warmup.py``) while the window
        says so and shows how far along it is."""
        if cache_is_warm():
            self._warm_up_pending = True
            return
        print("sandbox: compiling physics kernels (first launch only; cached afterwards)...",
              file=sys.stderr, flush=True)
        self._draw_compile_notice("")
        seconds = compile_parallel(lambda part, done, expected, name: self._draw_compile_notice(
            _("{part}: {done} of about {expected} compiled ({name})").format(
                part=_(part), done=done, expected=expected, name=name)))
        print(f"sandbox: physics ready in {seconds:.1f} s", file=sys.stderr, flush=True)

    def _draw_compile_notice(self, line: str) -> None:
        """One frame with the compile notice in the middle of the window, and ``line`` under it."""
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
        imgui.text(_("Compiling physics kernels…"))
        imgui.text_disabled(_("first launch only: numba caches them for the next time"))
        if line:
            imgui.text_disabled(line)
        imgui.end()
        imgui.render()
        self.imgui.render(imgui.get_draw_data())
        self.window.flip()

    # --- geometry -------------------------------------------------------------------------------
    def window_size(self) -> tuple[int, int]:
        """The window's size in window coordinates (those of mouse events)."""
        return self.window.get_size()

    def over_ui(self, x: float, y: float) -> bool:
        """Whether pyglet point ``(x, y)`` is over an ImGui window drawn last frame, or ImGui is busy
        with a widget (a slider being dragged)."""
        _width, h = self.window_size()
        top = h - y
        if imgui.is_any_item_active():
            return True
        return any(x0 <= x <= x1 and y0 <= top <= y1 for x0, y0, x1, y1 in self.ui.ui_rects)

    def _cursor_or_centre(self) -> tuple[float, float]:
        return self.interaction.cursor or self.ui.view_centre()

    # --- pyglet events ------------------------------------------------------------------------------
    # Every input handler tells the pacer first: input means full-rate frames for a moment.
    def on_mouse_motion(self, x, y, dx, dy):
        self._input()
        self.imgui.on_mouse_motion(x, y, dx, dy)
        if self.over_ui(x, y):
            self.interaction.leave()
        else:
            self._guard(N_("mouse motion"), self.interaction.on_mouse_motion, x, y)
            self.visuals.cursor_moved()

    def on_mouse_press(self, x, y, button, modifiers):
        self._input()
        self.imgui.on_mouse_motion(x, y, 0, 0)
        self.imgui.on_mouse_press(x, y, button, modifiers)
        if not self.over_ui(x, y) and not self.panel.stepper.click(x, y, button, modifiers):
            self._guard(N_("mouse press"), self.interaction.on_mouse_press, x, y, button, modifiers)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self._input()
        self.imgui.on_mouse_motion(x, y, dx, dy)
        self._guard(N_("mouse drag"), self.interaction.on_mouse_drag, x, y, dx, dy, buttons, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self._input()
        self.imgui.on_mouse_release(x, y, button, modifiers)
        self._guard(N_("mouse release"), self.interaction.on_mouse_release, x, y, button, modifiers)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self._input()
        self.imgui.on_mouse_scroll(x, y, scroll_x, scroll_y)
        if not self.over_ui(x, y):
            self._guard(N_("mouse wheel"), self.interaction.on_mouse_scroll, x, y, scroll_y)

    def on_mouse_leave(self, x, y):
        self._input()
        self.interaction.leave()

    def on_text(self, text):
        self._input()
        self.imgui.on_text(text)

    def on_key_release(self, symbol, modifiers):
        self._input()
        self.imgui.on_key_release(symbol, modifiers)
        return pyglet.event.EVENT_HANDLED

    def on_key_press(self, symbol, modifiers):
        self._input()
        self.imgui.on_key_press(symbol, modifiers)
        if not imgui.get_io().want_capture_keyboard:
            self._guard(N_("shortcut"), self.shortcut, symbol, modifiers)
        # never let pyglet's default handler close the window on Escape
        return pyglet.event.EVENT_HANDLED

    def on_resize(self, width, height):
        self._input()
        fbw, fbh = self.window.get_framebuffer_size()
        self.renderer.resize(fbw, fbh)
        self.imgui.on_resize(width, height)
        self.ui.window_size = (width, height)

    def on_expose(self):
        self._input()

    def on_close(self):
        self.closed = True
        return pyglet.event.EVENT_HANDLED

    def _input(self) -> None:
        self.pacer.input(time.perf_counter())

    def _guard(self, what: str, fn: Callable, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - whatever goes wrong in a handler is shown, not fatal
            self.session.report(what, exc)

    # --- keys ---------------------------------------------------------------------------------------
    def shortcut(self, symbol: int, modifiers: int) -> None:
        """The keyboard shortcuts listed in the Help section."""
        session, ui = self.session, self.ui
        key = pyglet.window.key
        if symbol == key.Q and modifiers & key.MOD_CTRL:
            self.closed = True
        elif symbol == key.P:
            session.toggle_pause()
        elif symbol in (key.O, key.PERIOD):
            session.single_step()
        elif symbol == key.R:
            ui.reset()
        elif symbol == key.SPACE:
            ui.shoot_through(*self._cursor_or_centre())
        elif symbol == key.E:
            ui.drop_above(*self._cursor_or_centre())
        elif symbol == key.F:
            ui.focus(session.selected or self.interaction.hovered)
        elif symbol == key.HOME:
            ui.camera.reset()
        elif symbol in (key.DELETE, key.BACKSPACE):
            session.delete_selected()
        elif symbol == key.ESCAPE:
            self.interaction.release_all()
            session.select(None)
        elif symbol == key.H:
            ui.show_panel = not ui.show_panel
        elif symbol == key.L:
            self.panel.lesson.toggle()
        elif symbol == key.T:
            self.panel.timeline.toggle()
        elif symbol == key.LEFT:
            session.timeline.step_back()
        elif symbol == key.RIGHT:
            session.single_step()
        elif symbol == key.S:
            self.panel.stepper.toggle()

    # --- the frame ------------------------------------------------------------------------------------
    def frame(self, frame_seconds: float) -> None:
        """One frame: advance the simulation by ``frame_seconds`` of wall-clock time, draw the scene
        and the panel into the back buffer."""
        self.frames += 1
        session, ui = self.session, self.ui
        ui.window_size = self.window_size()
        if self.window.caption != _(WINDOW_CAPTION):  # the language was switched
            self.window.set_caption(_(WINDOW_CAPTION))
        self._advance(frame_seconds)
        self._guard(N_("mouse update"), self.interaction.update)
        self._guard(N_("the lesson visuals"), self.visuals.update)
        self.ctx.screen.use()
        self.ctx.clear(*CLEAR_COLOR)
        render_ms = interp_ms = 0.0
        try:
            if session.compare is not None:  # A/B: one world per lane
                render_ms = render_lanes(self.renderer, ui, self.interaction.highlight(),
                                         self.window.get_framebuffer_size(), self.visuals.render_extras)
            else:
                start = time.perf_counter()
                pos, quat = self.panel.stepper.poses(*session.sim.interpolated())
                ghosts = session.timeline.ghosts(session.sim.alpha)
                extras = self.visuals.render_extras(session.world, self.panel.stepper.overlay)
                interp_ms = 1000.0 * (time.perf_counter() - start)
                self.renderer.render(session.world, ui.camera, ui.options, self.interaction.highlight(),
                                     pos=pos, quat=quat, ghosts=ghosts, **extras)
                render_ms = self.renderer.last_ms
        except Exception as exc:  # noqa: BLE001
            session.report(N_("drawing the scene"), exc)
        ui.stats.render_ms, ui.stats.interp_ms = render_ms, interp_ms
        start = time.perf_counter()
        self.ctx.screen.use()
        self._drain_gl_errors()
        self.imgui.process_inputs(frame_seconds)
        imgui.new_frame()
        ui.ui_rects = []
        self.panel.draw()
        self._guard(N_("the lesson visuals"), self.visuals.draw)
        imgui.render()
        built = time.perf_counter()
        self.imgui.render(imgui.get_draw_data())
        ui.stats.panel_ms = 1000.0 * (built - start)
        ui.stats.ui_ms = 1000.0 * (time.perf_counter() - start)

    def _drain_gl_errors(self) -> None:
        """Clear a GL error left by the scene pass (reported once on stderr): the ImGui backend's texture
        updates (PyOpenGL) check errors after each GL call and would otherwise raise on the stale one."""
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

    def _advance(self, seconds: float) -> None:
        """Advance the clock by ``seconds`` of wall-clock time; a failing step pauses and is shown."""
        try:
            self.session.sim.advance(seconds)
            self.session.timeline.tick(seconds)  # backward play, while the clock is paused
        except Exception as exc:  # noqa: BLE001 - keep the app alive and the world inspectable
            self.session.sim.paused = True
            self.session.report(N_("stepping the world (paused)"), exc)

    def resting(self) -> bool:
        """Whether the next frame could only differ from the last through input: the session rests
        (paused, or every body asleep, nothing grabbed) and no mouse button is held over the scene."""
        return self.session.resting and not self.interaction.busy

    def _wait_for_input(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking as soon as the window gets an event."""
        pyglet.app.platform_event_loop.step(seconds)

    def run(self, frames: int | None = None, screenshot: str | Path | None = None) -> None:
        """The main loop. With ``frames``, draw that many frames, each advancing the simulation by
        exactly one ``dt`` (so a run is reproducible), save the last one to ``screenshot`` (PNG) if
        given, and return; without, run until the window closes, drawing at the pacer's rate: in full
        while anything moves, at ``IDLE_FPS`` while everything rests and the user does nothing.

        While idling the clock still advances between frames (in slices no longer than it pays for
        in full), so a running simulation keeps real time even though it is seldom drawn."""
        if frames is not None and frames <= 0:
            raise ValueError(f"frames must be positive, got {frames}")
        done = 0
        last_draw = last_advance = time.perf_counter()
        stats = self.ui.stats
        while not self.closed and (frames is None or done < frames):
            self.window.switch_to()
            self.window.dispatch_events()
            if self.closed:
                break
            sim = self.session.sim
            if frames is None:
                now, resting = time.perf_counter(), self.resting()
                stats.idle = self.pacer.idle(now, resting)
                wait = self.pacer.wait(now, last_draw, resting)
                if wait > 0.0:
                    self._wait_for_input(min(wait, sim.max_steps * sim.dt / sim.time_scale))
                    now = time.perf_counter()
                    self._advance(now - last_advance)
                    last_advance = now
                    continue
            now = time.perf_counter()
            if now > last_draw:
                real = now - last_draw
                stats.fps = 0.9 * stats.fps + 0.1 / real if stats.fps and not stats.idle else 1.0 / real
            last_draw = now
            self.frame(sim.dt / sim.time_scale if frames is not None else now - last_advance)
            last_advance = now
            done += 1
            if screenshot is not None and done == frames:
                write_png(screenshot, self.read_pixels())
            self.window.flip()
            if self._warm_up_pending and not self.closed:
                # the first frame is on the screen: now load every kernel a session may reach, so that
                # no later first use (a raycast, a grab, a new pair of shapes) stalls a frame
                self._warm_up_pending = False
                warm_up()
            if frames is None and not self.window.vsync:
                # without vsync, do not spin faster than a fast display
                time.sleep(max(0.0, 1.0 / 240.0 - (time.perf_counter() - now)))

    def close(self) -> None:
        """Destroy the window and the ImGui context."""
        self.window.switch_to()
        self.imgui.shutdown()
        implot.destroy_context()
        imgui.destroy_context(self.imgui_context)
        self.window.close()
