"""The timeline strip: a window along the bottom of the view (between the Lesson window and the panel)
over the session's ``Timeline`` (``sandbox/timeline.py``), as MuJoCo's simulate has its history slider and
Box2D's samples their replay bar.

It shows the transport buttons (play backwards, step back, pause, step forward, play), the cursor's time
and step, a slider over the kept steps with the impacts ticked on it (yellow) and the step where the run
left the abandoned one (red, with the abandoned run's stretch shaded), and the history's length (seconds)
with what it costs in memory. Dragging the slider seeks: the world becomes what it was at that step. The
strip opens with T (or the panel's checkbox) and is hidden at first.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from imgui_bundle import imgui

from ..i18n import _
from ..timeline import MAX_SECONDS, MIN_SECONDS
from .context import UiContext
from .event_log import EventLogWindow
from .lesson import view_span

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)
IMPACT_TICK = 0xFF40C8FF  # ImGui colours are 0xAABBGGRR: amber
DIVERGENCE_LINE = 0xFF4050FF  # red
ABANDONED_BAND = 0x285060FF  # the abandoned run's stretch, translucent red
ICON = 0xFFE6E6E6
MARGIN = 10.0
BUTTON = 30.0
"""Side of the square transport buttons (window points)."""
MEASURE_SECONDS = 0.5
"""The memory figure is measured again at most this often (wall-clock seconds): it walks every kept step."""
GRAB_PADDING = 2.0
"""ImGui's slider keeps its grab this far inside the frame (``imgui_widgets.cpp``, SliderBehaviorT)."""


def slider_x(step: int, first: int, last: int, x0: float, x1: float, grab_min: float) -> float:
    """The window x of the centre of an integer slider's grab at ``step`` for a slider over
    ``first``..``last`` drawn from ``x0`` to ``x1``: ImGui's own mapping for discrete sliders (the grab
    is ``width / (range + 1)`` wide, at least ``grab_min``, and its centre travels the width less the
    grab and the padding)."""
    width = x1 - x0 - 2.0 * GRAB_PADDING
    span = last - first
    grab = min(max(width / (span + 1), grab_min), width)
    start = x0 + GRAB_PADDING + 0.5 * grab
    return start if span <= 0 else start + (width - grab) * (step - first) / span


def _same_line_if_fits(width: float, right: bool = False, gap: float = 16.0) -> None:
    """Continue the current row when ``width`` more points fit on it (pushed to its right end with
    ``right``), else start a new row."""
    imgui.same_line(0.0, gap)
    avail = imgui.get_content_region_avail().x
    if avail < width:
        imgui.new_line()
    elif right:
        imgui.set_cursor_pos_x(imgui.get_cursor_pos_x() + avail - width)


def _icon(draw: imgui.ImDrawList, kind: str, a: imgui.ImVec2, b: imgui.ImVec2) -> None:
    """Draw a transport icon (``back``, ``step_back``, ``pause``, ``step``, ``play``) in the button
    rectangle ``a``–``b``: triangles and bars, so that no font has to have the glyphs."""
    cx, cy = 0.5 * (a.x + b.x), 0.5 * (a.y + b.y)
    s = 0.28 * (b.y - a.y)
    V = imgui.ImVec2

    def triangle(tip: float, direction: float) -> None:
        draw.add_triangle_filled(V(tip, cy), V(tip - direction * 1.6 * s, cy - s),
                                 V(tip - direction * 1.6 * s, cy + s), ICON)

    def bar(x: float) -> None:
        draw.add_rect_filled(V(x - 0.25 * s, cy - s), V(x + 0.25 * s, cy + s), ICON)

    if kind == "play":
        triangle(cx + 0.8 * s, 1.0)
    elif kind == "back":
        triangle(cx - 0.8 * s, -1.0)
    elif kind == "pause":
        bar(cx - 0.5 * s)
        bar(cx + 0.5 * s)
    elif kind == "step":
        triangle(cx + 0.4 * s, 1.0)
        bar(cx + 0.75 * s)
    elif kind == "step_back":
        triangle(cx - 0.4 * s, -1.0)
        bar(cx - 0.75 * s)


class TimelineWindow:
    """The timeline strip over one ``UiContext``; ``draw()`` once per frame inside the ImGui frame.

    After each frame ``rect`` is the strip's screen rectangle (None when hidden), ``slider_rect`` the
    slider's, ``buttons`` the transport buttons' rectangles by name (``back``, ``step_back``, ``pause``,
    ``step``, ``play``), ``ticks`` the window x of each impact tick drawn and ``divergence_x`` that of the
    divergence marker (None when not drawn): tests press and read them."""

    def __init__(self, ctx: UiContext, event_log: EventLogWindow) -> None:
        self.ctx = ctx
        self.event_log = event_log
        self.shown = False
        self.rect: tuple[float, float, float, float] | None = None
        self.slider_rect: tuple[float, float, float, float] | None = None
        self.buttons: dict[str, tuple[float, float, float, float]] = {}
        self.ticks: list[float] = []
        self.divergence_x: float | None = None
        self._measured: tuple[float, int, object] = (-math.inf, 0, None)  # (when, bytes, of which history)

    def toggle(self) -> None:
        """Show the strip if it is hidden, hide it if it shows (the T key)."""
        self.shown = not self.shown

    def panel_toggles(self) -> None:
        """The panel's checkboxes that show the strip and the event log."""
        changed, shown = imgui.checkbox(_("Timeline (T)"), self.shown)
        if changed:
            self.shown = shown
        imgui.same_line()
        changed, shown = imgui.checkbox(_("Event log"), self.event_log.shown)
        if changed:
            self.event_log.shown = shown

    # --- the frame ------------------------------------------------------------------------------------
    def draw(self) -> None:
        """Draw the strip (when shown), after recording a change the user made at the cursor since the
        last frame, so that a branch shows at once."""
        self.rect = self.slider_rect = self.divergence_x = None
        self.buttons, self.ticks = {}, []
        if not self.shown:
            return
        session = self.ctx.session
        self._guarded("the timeline", session.timeline.poll)
        w, h = self.ctx.window_size
        left, right = view_span(self.ctx)
        width = max(right - left - 2.0 * MARGIN, 200.0)
        # the bottom edge placed, the height fitted to the contents (0: auto-fit on that axis)
        imgui.set_next_window_pos(imgui.ImVec2(left + MARGIN, h - MARGIN), imgui.Cond_.always,
                                  imgui.ImVec2(0.0, 1.0))
        imgui.set_next_window_size(imgui.ImVec2(width, 0.0), imgui.Cond_.always)
        imgui.set_next_window_bg_alpha(0.88)
        flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.no_move
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing
                 | imgui.WindowFlags_.no_nav)
        imgui.begin("##timeline", None, flags)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        self.ctx.ui_rects.append(self.rect)
        self._guarded("the timeline", self._contents)
        imgui.end()

    def _guarded(self, what: str, fn: Callable[[], object]) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - a failing control is shown in the panel, the app goes on
            self.ctx.session.report(what, exc)

    def _button(self, name: str, tooltip: str) -> bool:
        """A square transport button with its icon; returns whether it was pressed."""
        pressed = imgui.button(f"##{name}", imgui.ImVec2(BUTTON, BUTTON - 6.0))
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.buttons[name] = (a.x, a.y, b.x, b.y)
        _icon(imgui.get_window_draw_list(), name, a, b)
        if imgui.is_item_hovered():
            imgui.set_tooltip(tooltip)
        imgui.same_line(0.0, 4.0)
        return pressed

    def _contents(self) -> None:
        session = self.ctx.session
        timeline, sim = session.timeline, session.sim
        if self._button("back", _("Play backwards")):
            timeline.play_back()
        if self._button("step_back", _("Step back (Left arrow)")):
            timeline.step_back()
        if self._button("pause", _("Pause (P)")):
            timeline.pause()
        if self._button("step", _("Step forward (Right arrow)")):
            session.single_step()
        if self._button("play", _("Play (P)")):
            timeline.playing_back = False
            sim.paused = False
        imgui.same_line(0.0, 12.0)
        imgui.align_text_to_frame_padding()
        state = (_("playing backwards") if timeline.playing_back else _("paused") if sim.paused
                 else _("replaying") if timeline.in_past else _("recording"))
        imgui.text(_("t = {t:.2f} s · step {step}").format(t=session.world.time, step=timeline.cursor))
        imgui.same_line()
        imgui.text_colored(YELLOW if timeline.playing_back or timeline.in_past else DIM, state)
        if timeline.divergence is not None:
            branched = _("branched at step {step}").format(step=timeline.divergence)
            ghosts, forget = _("Ghosts"), _("Forget")
            style = imgui.get_style()
            _same_line_if_fits(imgui.calc_text_size(branched).x + imgui.get_frame_height()
                               + style.item_inner_spacing.x + imgui.calc_text_size(ghosts).x
                               + imgui.calc_text_size(forget).x + 2.0 * style.frame_padding.x
                               + 2.0 * style.item_spacing.x)
            imgui.text_colored(RED, branched)
            imgui.same_line()
            timeline.show_ghosts = imgui.checkbox(ghosts + "##ghosts", timeline.show_ghosts)[1]
            if imgui.is_item_hovered():
                imgui.set_tooltip(_("Draw the abandoned run faintly where it differs"))
            imgui.same_line()
            if imgui.small_button(forget + "##forget"):
                timeline.forget_abandoned()
        self._settings(timeline)
        self._slider(timeline)

    def _settings(self, timeline) -> None:
        """The history's length and memory, and the event log's checkbox: on the first row when they fit
        there, else on a row of their own."""
        label = _("History (s)")
        now = time.monotonic()
        if now - self._measured[0] >= MEASURE_SECONDS or self._measured[2] is not timeline.history:
            self._measured = (now, timeline.nbytes(), timeline.history)
        size = self._measured[1]
        memory = (_("{mb:.1f} MB").format(mb=size / 2**20) if size >= 2**20
                  else _("{kb:.0f} kB").format(kb=size / 2**10))
        if timeline.memory_limited:
            memory += " " + _("(memory cap)")
        log = _("Event log")
        style = imgui.get_style()
        gap = style.item_spacing.x
        need = (imgui.calc_text_size(label).x + gap + 90.0 + gap + imgui.calc_text_size(memory).x + gap
                + imgui.get_frame_height() + style.item_inner_spacing.x + imgui.calc_text_size(log).x)
        _same_line_if_fits(need, right=True)
        imgui.text_colored(DIM, label)
        imgui.same_line()
        imgui.set_next_item_width(90.0)
        changed, seconds = imgui.slider_float("##history", timeline.seconds, MIN_SECONDS, MAX_SECONDS, "%.0f",
                                              imgui.SliderFlags_.logarithmic)
        if changed:
            timeline.seconds = min(max(seconds, MIN_SECONDS), MAX_SECONDS)
        if imgui.is_item_hovered():
            imgui.set_tooltip(_("How far back the timeline reaches; {kept:.1f} s kept now").format(
                kept=timeline.kept_seconds))
        imgui.same_line()
        imgui.text_colored(DIM, memory)
        imgui.same_line()
        changed, shown = imgui.checkbox(log + "##log", self.event_log.shown)
        if changed:
            self.event_log.shown = shown

    def _slider(self, timeline) -> None:
        """The slider over the kept steps, with the impacts, the divergence and the abandoned stretch
        drawn on it."""
        first, last = timeline.first_step, timeline.last_step
        imgui.set_next_item_width(-1.0)
        changed, step = imgui.slider_int("##cursor", timeline.cursor, first, last,
                                         _("step %d of {first}–{last}").format(first=first, last=last))
        if changed and step != timeline.cursor:
            timeline.pause()
            timeline.seek(min(max(step, first), last))
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.slider_rect = (a.x, a.y, b.x, b.y)
        draw = imgui.get_window_draw_list()
        grab_min = imgui.get_style().grab_min_size
        V = imgui.ImVec2

        def x(s: int) -> float:
            return slider_x(s, first, last, a.x, b.x, grab_min)

        if timeline.divergence is not None and timeline.abandoned is not None:
            end = min(timeline.abandoned.last, last)
            if end > timeline.divergence:
                draw.add_rect_filled(V(x(timeline.divergence), a.y + 2), V(x(end), b.y - 2), ABANDONED_BAND)
        drawn: set[int] = set()
        third = (b.y - a.y) / 3.0
        for s, *_pair in timeline.impacts:
            if first <= s <= last:
                px = x(s)
                if int(px) in drawn:  # one tick per pixel column: a pile's hundreds of impacts stay cheap
                    continue
                drawn.add(int(px))
                draw.add_line(V(px, a.y + 1), V(px, a.y + third), IMPACT_TICK, 2.0)
                draw.add_line(V(px, b.y - third), V(px, b.y - 1), IMPACT_TICK, 2.0)
                self.ticks.append(px)
        if timeline.divergence is not None and first <= timeline.divergence <= last:
            px = x(timeline.divergence)
            draw.add_line(V(px, a.y - 3), V(px, b.y + 3), DIVERGENCE_LINE, 2.0)
            draw.add_triangle_filled(V(px - 5, a.y - 4), V(px + 5, a.y - 4), V(px, a.y + 3), DIVERGENCE_LINE)
            self.divergence_x = px
