"""The A/B view: the session's comparison (``sandbox.compare``) drawn as lanes one above the other, a
caption over each lane, a window per lane besides A listing the settings it changes (with the controls
to change them), and the figures of every lane side by side in a strip under the lanes.

**Why stacked lanes.** At 1280×720 the view between the panel (370 px) and the Lesson window (340 px) is
570 px wide. Side by side, each lane would be 285 px wide and 720 tall, and a scene, wider than tall (a
row of balls, bullets flying at a wall), would shrink to fit the width. Stacked, each lane is 570 × 272,
about the shape of the view itself, so the scene keeps most of its size; the figures sit in one strip
under both, a column per lane. Without the Lesson window the lanes are 910 px wide.

**One camera.** The lanes are seen by the user's camera. A's lane is drawn with the whole window's
projection, moved up by a lens shift (``LaneCamera``) so that the scene sits in the top lane: the mouse
picks, drags and orbits in A's lane exactly as in the normal view. Each other lane is the same picture
moved down by whole lanes, drawn only inside its lane (the renderer's ``region``). The mouse acts on A
only, since A is the session's world: over the other lanes it does nothing (they count as UI for it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
from imgui_bundle import imgui

from ..compare import Comparison, Figures, Lane
from ..engine import SETTINGS, World
from ..i18n import N_, _
from ..render import Camera, Highlight, Renderer
from .context import LESSON_WIDTH, PANEL_WIDTH, UiContext, _fits
from .lesson import LABEL_PAD, draw_plates, visible_labels

FIGURES_HEIGHT = 176.0
"""Height of the figures strip under the lanes (window points)."""
LANE_BORDERS = (0xFFFFB070, 0xFF40B0FF, 0xFF70E070)
"""Each lane's colour (ImGui 0xAABBGGRR): A blue, B orange, C green, for its caption and its column."""
LANE_TEXT = tuple(imgui.ImVec4(*c) for c in ((0.45, 0.72, 1.0, 1.0), (1.0, 0.70, 0.25, 1.0),
                                            (0.45, 0.88, 0.45, 1.0)))
DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
MAX_PULL_BACK = 3.0
"""When a lane opens, the camera backs off along its line of sight until the bodies fit in the lane, at
most this factor of the framed distance."""
BIG_STATIC = 10.0
"""Static bodies of a bounding radius above this (m) are grounds and floors: the lane's framing leaves
them out; smaller ones (a wall, a pad, a ramp) are fitted with the moving bodies."""
SETTING_NAMES = {"ccd": N_("Continuous collision (CCD)"), "substeps": N_("Sub-steps"),
                 "broadphase": N_("Broad phase"), "contact_cache": N_("Reuse resting manifolds")}
"""Names of world settings whose identifier does not read well capitalised (as the panel names them)."""

Rect = tuple[float, float, float, float]


class LaneCamera(Camera):
    """A ``Camera`` whose picture is moved up by ``shift`` (in normalised device units: 2 is the
    window's height) with an off-axis projection, as a shift lens moves a photograph without turning the
    camera. ``projection_matrix``, ``project`` and ``ray`` agree, so picking stays exact."""

    def __init__(self, *args, shift: float = 0.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.shift = float(shift)

    @classmethod
    def like(cls, camera: Camera, shift: float, distance: float | None = None) -> LaneCamera:
        """A lane camera at ``camera``'s target and angles (and distance, unless given), with ``shift``;
        Home (``reset``) brings it back there."""
        return cls(target=camera.target, distance=camera.distance if distance is None else distance,
                   yaw=camera.yaw, pitch=camera.pitch, fov_y=camera.fov_y, near=camera.near, far=camera.far,
                   shift=shift)

    def projection_matrix(self, aspect: float):
        """The perspective projection followed by a move of ``shift`` up in normalised device
        coordinates: y_clip += shift · w_clip."""
        m = super().projection_matrix(aspect)
        m[1] += self.shift * m[3]
        return m

    def ray(self, px: float, py: float, width: float, height: float):
        """The ray through window pixel ``(px, py)``: that of the unshifted camera at the pixel
        ``shift · height / 2`` lower."""
        return super().ray(px, py + 0.5 * self.shift * height, width, height)

    def project(self, point, width: float, height: float) -> tuple[float, float]:
        """Window pixel of world ``point``: the unshifted camera's, ``shift · height / 2`` higher (the
        inverse of ``ray``; ``Camera.project`` works in floats, not through ``projection_matrix``)."""
        px, py = super().project(point, width, height)
        return px, py - 0.5 * self.shift * height


def free_columns(ctx: UiContext) -> tuple[float, float]:
    """The window columns ``(x0, x1)`` between the Lesson window and the panel (where lanes are seen)."""
    w, _h = ctx.window_size
    left = LESSON_WIDTH if ctx.show_lesson and ctx.session.lesson is not None else 0.0
    return left, w - (PANEL_WIDTH if ctx.show_panel else 0.0)


def lane_rects(ctx: UiContext, count: int) -> list[Rect]:
    """The window rectangles ``(x0, y0, x1, y1)`` (top-left origin, the window's whole width) of
    ``count`` lanes stacked from the top, above the figures strip."""
    w, h = ctx.window_size
    height = max(h - FIGURES_HEIGHT, 2.0 * count) / count
    return [(0.0, k * height, float(w), (k + 1) * height) for k in range(count)]


def lane_shift(rect: Rect, window_height: float) -> float:
    """The lens shift that moves the window's centre line to the middle of lane ``rect``."""
    middle = 0.5 * (rect[1] + rect[3])
    return 1.0 - 2.0 * middle / window_height


def _framed(ctx: UiContext, rect: Rect) -> LaneCamera:
    """The scene's usual camera (``UiContext.framing_camera``) turned into A's lane camera and backed off
    along its line of sight, in steps of 10 %, until the bodies (all but the grounds: ``BIG_STATIC``) and
    the lesson's labels fit in the lane."""
    world = ctx.session.world
    start = ctx.framing_camera(world)
    w, h = ctx.window_size
    shift = lane_shift(rect, h)
    d = world.data
    live = d.alive[: d.n] & (~d.static[: d.n] | (d.radius[: d.n] < BIG_STATIC))
    pos, rad = d.pos[: d.n][live], d.radius[: d.n][live]
    # each body's extreme points along the axes (its bounding sphere's)
    points = [p + s * r * axis for p, r in zip(pos, rad, strict=True) for s in (-1.0, 1.0)
              for axis in np.eye(3)]
    lesson = ctx.session.lesson
    if lesson is not None and ctx.show_labels:
        try:
            labels = lesson.labels(world, ctx.session.bodies)
            points += [np.asarray(label.position, float) for label in labels]
        except Exception:  # noqa: BLE001 - a failing label function is the Lesson window's to report
            pass
    points = np.array(points, float).reshape(-1, 3)
    points = points[np.isfinite(points).all(axis=1)]
    x0, x1 = free_columns(ctx)
    fit = (x0 + 12.0, rect[1] + 12.0, x1 - 12.0, rect[3] - 12.0)
    camera = LaneCamera.like(start, shift)
    while not _fits(camera, points, fit, w, h) and camera.distance < MAX_PULL_BACK * start.distance:
        camera = LaneCamera.like(start, shift, 1.1 * camera.distance)
    return camera


def lane_camera(ctx: UiContext, rects: list[Rect]) -> LaneCamera:
    """The user's camera as A's lane camera: framed for the lane when it is not one yet (the comparison
    has just opened, or a reset framed the scene anew), its shift kept on A's lane as the window
    changes."""
    camera = ctx.camera
    if not isinstance(camera, LaneCamera):
        camera = ctx.camera = _framed(ctx, rects[0])
    camera.shift = lane_shift(rects[0], ctx.window_size[1])
    return camera


def render_lanes(renderer: Renderer, ctx: UiContext, highlight: Highlight,
                 framebuffer_size: tuple[int, int], extras: Callable[[World], dict] | None = None) -> float:
    """Draw each lane's world into its lane of the current framebuffer (``framebuffer_size`` pixels),
    A's with the mouse's ``highlight``, the others with only the selection; returns the milliseconds the
    renderer took in all. ``extras(world)``, if given, are more keyword arguments of ``Renderer.render``
    for the lane of ``world`` (the lesson visuals' ``overlay`` and ``tint``)."""
    session = ctx.session
    comparison = session.compare
    comparison.follow(session.sim)
    sims = [session.sim, *(lane.sim for lane in comparison.lanes)]
    rects = lane_rects(ctx, len(sims))
    camera = lane_camera(ctx, rects)
    w, h = ctx.window_size
    fbw, fbh = framebuffer_size
    sx, sy = fbw / w, fbh / h
    total = 0.0
    for k, (sim, rect) in enumerate(zip(sims, rects, strict=True)):
        x0, y0, x1, y1 = rect
        region = (round(x0 * sx), round(fbh - y1 * sy), max(round((x1 - x0) * sx), 1),
                  max(round((y1 - y0) * sy), 1))
        seen = camera if k == 0 else LaneCamera.like(camera, lane_shift(rect, h))
        marks = highlight if k == 0 else Highlight(selected=highlight.selected)
        pos, quat = sim.interpolated()
        more = extras(sim.world) if extras is not None else {}
        renderer.render(sim.world, seen, ctx.options, marks, pos=pos, quat=quat, region=region, **more)
        total += renderer.last_ms
    return total


def setting_label(name: str) -> str:
    """A world setting's name as the panel shows it: "warm_starting" → "Warm starting", "ccd" →
    "Continuous collision (CCD)" (``SETTING_NAMES``)."""
    return _(SETTING_NAMES.get(name) or name.replace("_", " ").capitalize())


def value_text(value: object) -> str:
    """A setting's value for a caption or a hint: on / off, a number in short form, or the choice."""
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def lane_caption(comparison: Comparison, k: int, a_world) -> str:
    """The caption over lane ``k`` (0 is A): its letter and its label, or for an unlabelled lane the
    settings it changes."""
    if k == 0:
        return f"A · {_(comparison.label_a) if comparison.label_a else _('the panel’s settings')}"
    lane = comparison.lanes[k - 1]
    if lane.label:
        return f"{lane.name} · {_(lane.label)}"
    changed = ", ".join(f"{setting_label(n)}: {value_text(v)}" for n, v in lane.settings.items()
                        if getattr(a_world, n) != v)
    return f"{lane.name} · {changed or _('same settings as A')}"


def setting_control(name: str, value: object) -> tuple[bool, object]:
    """The panel's kind of control for world setting ``name`` (a checkbox, a choice box, a slider over
    the setting's range, logarithmic for wide ones); returns (changed, value)."""
    s = SETTINGS[name]
    label = f"{setting_label(name)}##{name}"
    if s.kind == "bool":
        return imgui.checkbox(label, bool(value))
    if s.kind == "choice":
        index = s.choices.index(value) if value in s.choices else 0
        changed, index = imgui.combo(label, index, list(s.choices))
        return changed, s.choices[index]
    wide = s.max > 100 * max(abs(s.default), 1e-9) or s.max - s.min > 100
    flags = imgui.SliderFlags_.logarithmic if wide else 0
    unit = f" {s.unit}" if s.unit else ""
    if s.kind == "int":
        changed, new = imgui.slider_int(label, int(value), int(s.min), int(s.max), "%d", flags)
        return changed, min(max(int(new), int(s.min)), int(s.max))
    high = min(s.max, max(20.0 * s.default, 1.0)) if wide else s.max
    changed, new = imgui.slider_float(label, float(value), float(s.min), float(high), f"%.3g{unit}", flags)
    return changed, min(max(float(new), s.min), s.max)


class CompareWindow:
    """The A/B view's windows and captions over one ``UiContext``; ``draw()`` once per frame inside
    the ImGui frame (the lanes themselves are drawn by ``render_lanes`` before it).

    After each frame ``figures`` holds the strip's rows as drawn (each a list of cell texts, the first
    the row's title), ``captions`` the captions drawn over the lanes, ``rect`` the strip's window
    rectangle and ``lane_rects`` the lanes' (None and empty without a comparison)."""

    what = N_("the A/B view")
    """What a failure while drawing it is reported as."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.figures: list[list[str]] = []
        self.captions: list[tuple[float, float, str]] = []
        self.rect: Rect | None = None
        self.lane_rects: list[Rect] = []
        self.buttons: dict[str, Rect] = {}
        self.toggle_rects: dict[str, Rect] = {}
        """The panel's A/B, Plots and Ledger buttons as drawn last (``window_toggles``)."""

    def open(self) -> None:
        """Open A/B on the current scene: lane B a copy of A's state now, with no setting changed."""
        self.ctx.session.open_compare()

    def close(self) -> None:
        """Back to one world and its usual camera."""
        self.ctx.session.close_compare()
        self._restore_camera()

    def _restore_camera(self) -> None:
        if isinstance(self.ctx.camera, LaneCamera):
            self.ctx.camera = self.ctx.framing_camera(self.ctx.session.world)

    # --- the frame --------------------------------------------------------------------------------
    def draw(self) -> None:
        """Captions, lane windows and the figures strip of the session's comparison (if any)."""
        ctx = self.ctx
        comparison = ctx.session.compare
        self.figures, self.captions, self.rect, self.lane_rects, self.buttons = [], [], None, [], {}
        if comparison is None:
            self._restore_camera()  # closed elsewhere (another scene)
            return
        comparison.follow(ctx.session.sim)
        rects = self.lane_rects = lane_rects(ctx, 1 + len(comparison.lanes))
        lane_camera(ctx, rects)
        ctx.ui_rects.extend(rects[1:])  # the mouse acts on A: nothing to pick in the other lanes
        self._captions(comparison, rects)
        self._lane_labels(comparison, rects)
        for lane, rect in zip(comparison.lanes, rects[1:], strict=True):
            self._lane_window(comparison, lane, rect)
        self._strip(comparison)

    def _captions(self, comparison: Comparison, rects: list[Rect]) -> None:
        """Each lane's caption at the top right of its lane, in the lane's colour."""
        x0, x1 = free_columns(self.ctx)
        for k, rect in enumerate(rects):
            text = lane_caption(comparison, k, self.ctx.session.world)
            half = 0.5 * imgui.calc_text_size(text).x + LABEL_PAD
            self.captions += draw_plates([(x1 - 10.0 - half, rect[1] + 16.0, text)], border=LANE_BORDERS[k],
                                         span=(x0, x1))

    def _lane_labels(self, comparison: Comparison, rects: list[Rect]) -> None:
        """The lesson's labels for each lane besides A, from that lane's world, inside its lane (A's own
        are drawn by the Lesson window)."""
        ctx = self.ctx
        lesson = ctx.session.lesson
        if lesson is None or not ctx.show_labels:
            return
        camera = ctx.camera
        for k, (lane, rect) in enumerate(zip(comparison.lanes, rects[1:], strict=True), start=1):
            if not lane.bodies or not all(b.alive for b in lane.bodies):
                continue
            try:
                labels = lesson.labels(lane.world, lane.bodies)
            except Exception:  # noqa: BLE001 - the Lesson window reports a failing label function for A
                continue
            seen = replace(ctx, camera=LaneCamera.like(camera, lane_shift(rect, ctx.window_size[1])))
            inside = [(x, y, t) for x, y, t in visible_labels(seen, labels) if rect[1] + 8.0 <= y <= rect[3]]
            draw_plates(inside, border=LANE_BORDERS[k], span=free_columns(ctx))

    def _button(self, text: str, size: imgui.ImVec2 | None = None) -> bool:
        pressed = imgui.button(text, size if size is not None else imgui.ImVec2(0, 0))
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.buttons[text] = (a.x, a.y, b.x, b.y)
        return pressed

    def _lane_window(self, comparison: Comparison, lane: Lane, rect: Rect) -> None:
        """Lane ``lane``'s settings window at the top right of its lane (folded at first for a lesson's
        lane): each setting it changes with its control, a button that gives it A's value back, a box to
        change one more, and a restart from A's state."""
        ctx = self.ctx
        _x0, x1 = free_columns(ctx)
        imgui.set_next_window_pos(imgui.ImVec2(x1 - 10.0, rect[1] + 32.0), imgui.Cond_.always,
                                  imgui.ImVec2(1.0, 0.0))
        imgui.set_next_window_bg_alpha(0.86)
        # a lesson's lane says in its caption what it changes: its window starts folded, out of the view
        imgui.set_next_window_collapsed(bool(lane.label), imgui.Cond_.appearing)
        flags = (imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_move
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing)
        title = _("{lane}: what differs from A").format(lane=lane.name)
        visible, _open = imgui.begin(f"{title}###lane{lane.name}", None, flags)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        ctx.ui_rects.append((pos.x, pos.y, pos.x + size.x, pos.y + size.y))
        if visible:
            try:
                self._lane_body(comparison, lane)
            except ValueError as exc:
                ctx.session.report(N_("a lane's settings window"), exc)
        imgui.end()

    def _lane_body(self, comparison: Comparison, lane: Lane) -> None:
        session = self.ctx.session
        imgui.push_item_width(150.0)
        differences = comparison.differences(lane, session.sim)
        if not differences:
            imgui.text_colored(DIM, _("Nothing yet: it runs as A does."))
        for name, a_value, value in differences:
            changed, new = setting_control(name, value)
            if changed:
                comparison.set_setting(lane, name, new)
            imgui.same_line()
            if imgui.small_button(_("as A") + f"##{lane.name}{name}"):
                comparison.clear_setting(lane, name, session.sim)
            if imgui.is_item_hovered():
                imgui.set_tooltip(_("Give {lane} A's value: {value}").format(lane=lane.name,
                                                                            value=value_text(a_value)))
        others = [n for n in SETTINGS if n not in lane.settings]
        names = [_("Change a setting…"), *(setting_label(n) for n in others)]
        changed, index = imgui.combo(f"##add{lane.name}", 0, names)
        if changed and index > 0:
            name = others[index - 1]
            comparison.set_setting(lane, name, first_difference(name, getattr(session.world, name)))
        imgui.pop_item_width()
        if self._button(_("Start again from A's state") + f"##copy{lane.name}"):
            comparison.copy_state(lane, session.sim)
        if imgui.is_item_hovered():
            imgui.set_tooltip(_("Copy A's bodies as they are now into {lane}, keeping {lane}'s settings "
                                "(after you moved, added or removed bodies in A)").format(lane=lane.name))
        if lane.note:
            imgui.push_text_wrap_pos(imgui.get_cursor_pos_x() + 300.0)
            imgui.text_colored(YELLOW, _(lane.note).format(**lane.note_values))
            imgui.pop_text_wrap_pos()

    def _strip(self, comparison: Comparison) -> None:
        """The figures of every lane, a column each, in a strip under the lanes."""
        ctx, session = self.ctx, self.ctx.session
        w, h = ctx.window_size
        x0, x1 = free_columns(ctx)
        imgui.set_next_window_pos(imgui.ImVec2(x0, h - FIGURES_HEIGHT), imgui.Cond_.always)
        imgui.set_next_window_size(imgui.ImVec2(x1 - x0, FIGURES_HEIGHT), imgui.Cond_.always)
        flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_scrollbar)
        world = session.world
        title = _("A/B: the lanes step together · step {n} · t = {t:.2f} s").format(n=world.steps,
                                                                                     t=world.time)
        visible, still_open = imgui.begin(f"{title}###ab", True, flags)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        ctx.ui_rects.append(self.rect)
        if visible:
            self._table(comparison)
        imgui.end()
        if not still_open:
            self.close()

    def _table(self, comparison: Comparison) -> None:
        session = self.ctx.session
        worlds = [session.world, *(lane.world for lane in comparison.lanes)]
        figures = [Figures.of(world) for world in worlds]
        rows = [[_("Energy (J)"), *(_("{e:.2f} (kinetic {k:.2f})").format(e=f.energy, k=f.kinetic)
                                    for f in figures)],
                [_("Deepest overlap"), *(f"{1000.0 * f.deepest:.1f} mm" for f in figures)],
                [_("Contacts"), *(f"{manifolds(f.manifolds)}, {points(f.points)}" for f in figures)],
                [_("Step time"), *(f"{f.step_ms:.2f} ms" for f in figures)],
                [_("Same as A"), "—", *(same_text(lane) for lane in comparison.lanes)]]
        self.figures = rows
        flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v
                 | imgui.TableFlags_.sizing_stretch_prop)
        if not imgui.begin_table("figures", len(worlds) + 1, flags):
            return
        imgui.table_setup_column("", imgui.TableColumnFlags_.width_fixed,
                                 max(imgui.calc_text_size(r[0]).x for r in rows) + 10.0)
        for k in range(len(worlds)):
            imgui.table_setup_column(lane_caption(comparison, k, session.world),
                                     imgui.TableColumnFlags_.width_stretch)
        imgui.table_next_row(imgui.TableRowFlags_.headers)
        imgui.table_next_column()
        for k in range(len(worlds)):
            imgui.table_next_column()
            imgui.text_colored(LANE_TEXT[k], lane_caption(comparison, k, session.world))
        for row in rows:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text_colored(DIM, row[0])
            for k, cell in enumerate(row[1:]):
                imgui.table_next_column()
                if row is rows[-1] and k > 0:
                    imgui.text_colored(GREEN if comparison.lanes[k - 1].diverged_at is None else YELLOW, cell)
                else:
                    imgui.text(cell)
        imgui.end_table()


def manifolds(n: int) -> str:
    """"1 manifold", "3 manifolds"."""
    return (_("{n} manifold") if n == 1 else _("{n} manifolds")).format(n=n)


def points(n: int) -> str:
    """"1 point", "3 points"."""
    return (_("{n} point") if n == 1 else _("{n} points")).format(n=n)


def same_text(lane: Lane) -> str:
    """Whether ``lane`` is still in A's exact state, or since which step it is not."""
    if lane.diverged_at is None:
        return _("identical")
    return _("differs from step {n}").format(n=lane.diverged_at)


def first_difference(name: str, a_value: object) -> object:
    """The value a lane takes when the user picks setting ``name`` to change: the other state of a
    switch, the next choice, or A's value for a number (which the user then drags)."""
    s = SETTINGS[name]
    if s.kind == "bool":
        return not bool(a_value)
    if s.kind == "choice":
        return s.choices[(s.choices.index(a_value) + 1) % len(s.choices)]
    return a_value



def window_toggles(compare: CompareWindow, plots, ledger) -> dict[str, tuple[float, float, float, float]]:
    """One row of three buttons that open and close the A/B lanes, the Plots window (``plots``) and the
    restitution ledger (``ledger``), each lit while its view shows; returns the buttons' rectangles by
    their English name ("A/B", "Plots", "Ledger")."""
    session = compare.ctx.session
    toggles = (("A/B", _("A/B lanes"), session.compare is not None,
                compare.close if session.compare is not None else compare.open),
               ("Plots", _("Plots"), plots.open, plots.toggle),
               ("Ledger", _("Ledger"), ledger.open, ledger.toggle))
    third = imgui.ImVec2((imgui.get_content_region_avail().x - 16.0) / 3.0, 0.0)
    rects = {}
    for k, (key, text, shown, toggle) in enumerate(toggles):
        if k:
            imgui.same_line()
        if shown:
            imgui.push_style_color(imgui.Col_.button, imgui.get_style_color_vec4(imgui.Col_.button_active))
        pressed = imgui.button(f"{text}##toggle{key}", third)
        if shown:
            imgui.pop_style_color()
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        rects[key] = (a.x, a.y, b.x, b.y)
        if pressed:
            toggle()
    compare.toggle_rects = rects
    return rects
