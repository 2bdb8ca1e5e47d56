"""The Lesson window and the lesson's labels in the 3D view.

When the session's scene has a lesson (``sandbox.lessons``), a window at the left of the view shows its
text (the idea, the formula, what to try, what to look at, what to expect), a button per preset (world
settings applied through the session, so that Reset keeps them), a button that runs the lesson's check
on a fresh copy of the scene in the background and shows its PASS / FAIL line, and the engine files
and functions that compute the concept. The lesson's labels are drawn each frame as text at the
projected 3D points, on ImGui's background draw list (under every window), each on a dark plate so it
reads over the bright sky and floor.

The window can be closed (its close button, the panel's checkbox, or the L key); that choice is the
user's and is kept from scene to scene (``UiContext.show_lesson``).
"""

from __future__ import annotations

import math

import numpy as np
from imgui_bundle import imgui

from ..i18n import N_, _
from ..lessons import no_labels
from .context import LESSON_WIDTH, PANEL_WIDTH, UiContext

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
FORMULA_BG = imgui.ImVec4(0.16, 0.19, 0.24, 1.0)
LABEL_TEXT = 0xFFFFFFFF  # ImGui colours are 0xAABBGGRR
LABEL_PLATE = 0xB4141210
LABEL_BORDER = 0x70FFC070
LABEL_PAD = 4.0
WINDOW_FLAGS = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
                | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing)
FORMULA_FLAGS = imgui.ChildFlags_.auto_resize_y | imgui.ChildFlags_.always_use_window_padding
TOP = 96.0
"""The Lesson window's top edge (window coordinates), below the status overlay."""


def visible_labels(ctx: UiContext, labels) -> list[tuple[float, float, str]]:
    """The ``labels`` (``sandbox.lessons.Label``) in front of the camera, as window points (top-left
    origin) with their text in the current language; labels behind the eye (or nearer than the near
    plane) are left out, since a projection would mirror them onto the screen."""
    cam = ctx.camera
    w, h = ctx.window_size
    out = []
    for label in labels:
        depth = cam.depth(label.position)  # in floats: numpy's per-call cost would dominate for one point
        if not (math.isfinite(depth) and depth > cam.near):
            continue
        x, y = cam.project(label.position, w, h)
        out.append((x, y, _(label.text)))
    return out


def view_span(ctx: UiContext) -> tuple[float, float]:
    """The window columns ``(x0, x1)`` of the view that the Lesson window and the panel leave free."""
    lesson = ctx.show_lesson and ctx.session.lesson is not None
    return (LESSON_WIDTH if lesson else 0.0, ctx.window_size[0] - (PANEL_WIDTH if ctx.show_panel else 0.0))


def place_plates(items: list[tuple[float, float, str]], span: tuple[float, float] = (-1e9, 1e9),
                 ) -> list[tuple[float, float, float, float, str]]:
    """The plate rectangles ``(x0, y0, x1, y1, text)`` for labels ``(x, y, text)`` centred on their
    points, slid sideways into the window columns ``span`` (the view between the windows), and a plate
    that would overlap one placed before it (from the top of the screen down) moved down just below it:
    labels of bodies lined up along the line of sight stay readable."""
    placed: list[tuple[float, float, float, float, str]] = []
    for x, y, text in sorted(items, key=lambda item: item[1]):
        size = imgui.calc_text_size(text)
        hw, hh = 0.5 * size.x + LABEL_PAD, 0.5 * size.y + LABEL_PAD
        cx = x
        if span[0] <= x <= span[1]:  # (a label whose point is under a window stays there with it)
            cx = min(max(x, span[0] + hw), span[1] - hw)
        x0, y0, x1, y1 = cx - hw, y - hh, cx + hw, y + hh
        moved = True
        while moved:
            moved = False
            for a0, b0, a1, b1, _text in placed:
                if x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1:
                    y0, y1, moved = b1 + 1.0, b1 + 1.0 + 2.0 * hh, True
        placed.append((x0, y0, x1, y1, text))
    return placed


def draw_plates(items: list[tuple[float, float, str]], border: int = LABEL_BORDER,
                span: tuple[float, float] = (-1e9, 1e9)) -> list[tuple[float, float, str]]:
    """Write each ``(x, y, text)`` on a dark rounded plate (readable over the bright sky and floor) at
    window point ``(x, y)``, or below the labels it would cover (``place_plates``) with a thin line back
    to its point (``span``: as for ``place_plates``), on the background draw list: under every window.
    Returns the plates' centres."""
    draw = imgui.get_background_draw_list()
    centres = []
    for (x0, y0, x1, y1, text), (x, y, _text) in zip(place_plates(items, span),
                                                 sorted(items, key=lambda i: i[1]), strict=True):
        if not (y0 <= y <= y1 and x0 <= x <= x1):  # moved: a leader from the label's point to its plate
            draw.add_line(imgui.ImVec2(x, y), imgui.ImVec2(0.5 * (x0 + x1), y0), border, 1.0)
        draw.add_rect_filled(imgui.ImVec2(x0, y0), imgui.ImVec2(x1, y1), LABEL_PLATE, 4.0)
        draw.add_rect(imgui.ImVec2(x0, y0), imgui.ImVec2(x1, y1), border, 4.0)
        draw.add_text(imgui.ImVec2(x0 + LABEL_PAD, y0 + LABEL_PAD), LABEL_TEXT, text)
        centres.append((0.5 * (x0 + x1), 0.5 * (y0 + y1), text))
    return centres


class LiveCheck:
    """Whether every body of a list of handles is still alive in its world (``Body.alive`` of each),
    tested on the world's arrays at once: a Python loop over the handles costs about a millisecond a
    frame for the thousand of the pile. The handles' rows and generations are read once per list (a
    scene's list of bodies never changes)."""

    def __init__(self) -> None:
        self._bodies: list | None = None
        self._rows: np.ndarray | slice = np.zeros(0, np.int64)
        self._generations = np.zeros(0, np.int64)
        self._last_row = -1

    def __call__(self, world, bodies: list) -> bool:
        if bodies is not self._bodies:
            self._bodies = bodies
            rows = np.array([b.index for b in bodies], np.int64)
            self._generations = np.array([b.generation for b in bodies], np.int64)
            self._last_row = int(rows.max()) if len(rows) else -1
            # a scene's bodies are usually rows first..last in order: read as a slice, without copies
            consecutive = len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows)))
            self._rows = slice(int(rows[0]), int(rows[0]) + len(rows)) if consecutive else rows
        rows, d = self._rows, world.data
        if len(self._generations) == 0:
            return True
        if self._last_row >= d.capacity:  # the world was restored to before the row existed
            return False
        # a slice reads a view, an index array a copy: the same test either way
        return bool(d.alive[rows].all() and (d.generation[rows] == self._generations).all())


class LessonWindow:
    """The Lesson window over one ``UiContext``; ``draw()`` once per frame inside the ImGui frame.

    After each frame ``shown_title`` is the lesson title the window showed, in the language it showed
    it in (None when it was not
    drawn), ``rect`` its screen rectangle ``(x0, y0, x1, y1)``, ``drawn_labels`` the labels drawn in
    the view as ``(x, y, text)``, (x, y) the centre of each label's plate (window points), and
    ``buttons`` the screen rectangles of its buttons by
    their text (tests press them through the mouse)."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.shown_title: str | None = None
        self.rect: tuple[float, float, float, float] | None = None
        self.drawn_labels: list[tuple[float, float, str]] = []
        self.buttons: dict[str, tuple[float, float, float, float]] = {}
        self.label_error: str | None = None
        self._label_scene: str | None = None
        self._all_alive = LiveCheck()

    def toggle(self) -> None:
        """Show the Lesson window if it is hidden, hide it if it shows (the L key)."""
        self.ctx.show_lesson = not self.ctx.show_lesson

    # --- the frame ------------------------------------------------------------------------------------
    def draw(self) -> None:
        """Draw the labels and, unless the user closed it, the window of the session's lesson."""
        self.shown_title = self.rect = None
        self.buttons = {}
        lesson = self.ctx.session.lesson
        self._labels(lesson)
        if lesson is None or not self.ctx.show_lesson:
            return
        w, h = self.ctx.window_size
        imgui.set_next_window_pos(imgui.ImVec2(10, TOP), imgui.Cond_.always)
        imgui.set_next_window_size(imgui.ImVec2(LESSON_WIDTH - 20, max(h - TOP - 10, 120)),
                                   imgui.Cond_.always)
        imgui.set_next_window_bg_alpha(0.88)
        title = _(lesson.title)
        visible, still_open = imgui.begin(_("Lesson: {title}").format(title=title) + "###lesson", True,
                                          WINDOW_FLAGS)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        self.ctx.ui_rects.append(self.rect)
        if visible:
            self.shown_title = title
            try:
                self._body(lesson)
            except Exception as exc:  # noqa: BLE001 - a failing control is shown, the app goes on
                self.ctx.session.report(N_("the Lesson window"), exc)
        imgui.end()
        if not still_open:
            self.ctx.show_lesson = False  # the user closed it: it stays closed until L or the panel

    def _button(self, text: str, size: imgui.ImVec2 | None = None) -> bool:
        """A full-width button labelled ``text`` (already translated), its rectangle kept by that text."""
        pressed = imgui.button(text, size if size is not None else imgui.ImVec2(-1, 0))
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.buttons[text] = (a.x, a.y, b.x, b.y)
        return pressed

    def _body(self, lesson) -> None:
        session = self.ctx.session
        wrap = imgui.push_text_wrap_pos
        wrap(0.0)
        imgui.text(_(lesson.concept))
        imgui.spacing()
        # the formula on its own shaded strip, in the accent colour: the line the lesson is about
        imgui.push_style_color(imgui.Col_.child_bg, FORMULA_BG)
        imgui.begin_child("##formula", imgui.ImVec2(-1, 0), FORMULA_FLAGS)
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(ACCENT, _(lesson.formula))
        imgui.pop_text_wrap_pos()
        imgui.end_child()
        imgui.pop_style_color()
        for heading, text in ((_("Try this"), lesson.try_this), (_("Look at"), lesson.look_at),
                              (_("Expect"), lesson.expect)):
            imgui.separator_text(heading)
            imgui.text(_(text))
        imgui.pop_text_wrap_pos()

        if lesson.presets:
            imgui.separator_text(_("Presets"))
            for preset in lesson.presets:
                if self._button(_(preset["label"])):
                    session.apply_preset(preset)
            imgui.text_colored(DIM, _("Reset (R) replays the scene with them."))

        imgui.separator_text(_("Check"))
        check = session.check
        if check.running:
            imgui.begin_disabled()
            self._button(_("Checking…"))
            imgui.end_disabled()
        elif self._button(_("Check against the formula")):
            session.start_check()
        if check.verdict is not None:
            wrap(0.0)
            color = GREEN if check.verdict.startswith("PASS") else RED
            imgui.text_colored(color, _(check.verdict))
            imgui.pop_text_wrap_pos()
        elif not check.running:
            wrap(0.0)
            imgui.text_colored(DIM, _("Runs the scene afresh (with your settings) and measures it."))
            imgui.pop_text_wrap_pos()

        imgui.separator_text(_("In the engine"))
        wrap(0.0)
        for ref in lesson.engine_refs:
            imgui.bullet()  # bullet_text would not wrap a long path
            imgui.text(ref)
        imgui.pop_text_wrap_pos()
        _changed, self.ctx.show_labels = imgui.checkbox(_("Labels in the view") + "##labels",
                                                        self.ctx.show_labels)
        if self.label_error:
            wrap(0.0)
            imgui.text_colored(RED, _("labels: {error}").format(error=self.label_error))
            imgui.pop_text_wrap_pos()

    # --- labels -----------------------------------------------------------------------------------------
    def _labels(self, lesson) -> None:
        """Draw the lesson's labels at their projected points, each on a plate, under every window."""
        self.drawn_labels = []
        session = self.ctx.session
        if session.scene_name != self._label_scene:
            self._label_scene, self.label_error = session.scene_name, None
        if lesson is None or lesson.labels is no_labels or not self.ctx.show_labels or self.label_error:
            return  # (with no labels, no check of the thousand bodies of the pile's lesson either)
        if not self._all_alive(session.world, session.bodies):
            return  # the user deleted a body the labels follow: their figures no longer apply
        try:
            labels = lesson.labels(session.world, session.bodies)
        except Exception as exc:  # noqa: BLE001 - a label function is lesson code: say it once, go on
            self.label_error = f"{type(exc).__name__}: {exc}"
            return
        self.drawn_labels = draw_plates(visible_labels(self.ctx, labels), span=view_span(self.ctx))
