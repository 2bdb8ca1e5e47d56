"""The event log: the collision begin and end events of the session's run (``Timeline.log``), newest first,
in a table of time, step, event, bodies, the impulse of a begin and, for an impact, the speed the bodies
met at (in amber). "Selected body
only" keeps the rows of the selected body. Clicking a row goes to its step on the timeline (the world
becomes what it was then) and selects the dynamic body of the pair; the rows of the cursor's step are
highlighted, and the table scrolls to them whenever the cursor moves.
"""

from __future__ import annotations

from imgui_bundle import imgui

from ..engine import Body
from ..i18n import _
from ..timeline import LogEntry
from .context import UiContext
from .lesson import view_span

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
AMBER = imgui.ImVec4(1.0, 0.78, 0.25, 1.0)
SIZE = (560.0, 230.0)


class EventLogWindow:
    """The event log window over one ``UiContext``; ``draw()`` once per frame inside the ImGui frame.

    After each frame ``rect`` is its screen rectangle (None when hidden) and ``rows`` the rows drawn,
    as ``(entry, (x0, y0, x1, y1))``; ``note`` says why the last click could not go to its step."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.shown = False
        self.only_selected = False
        self.rect: tuple[float, float, float, float] | None = None
        self.rows: list[tuple[LogEntry, tuple[float, float, float, float]]] = []
        self.note = ""
        self._followed: int | None = None  # the cursor's step the table last scrolled to
        self._clicked: LogEntry | None = None  # the row clicked last, to scroll to

    def toggle(self) -> None:
        """Show the window if it is hidden, hide it if it shows."""
        self.shown = not self.shown

    def entries(self) -> list[LogEntry]:
        """The log's entries to show, newest first: all, or with "Selected body only" those of the
        selected body (none when nothing is selected)."""
        session = self.ctx.session
        log = list(reversed(session.timeline.log))
        if not self.only_selected:
            return log
        body = session.selected
        if body is None:
            return []
        return [e for e in log if e.involves(body.index, body.generation)]

    def draw(self) -> None:
        """Draw the window, unless it is hidden (its close button, the timeline's checkbox)."""
        self.rect = None
        self.rows = []
        if not self.shown:
            return
        left, _right = view_span(self.ctx)
        h = self.ctx.window_size[1]
        # first shown above the timeline strip at the left of the view; the user may move and resize it
        imgui.set_next_window_pos(imgui.ImVec2(left + 10.0, h - 120.0 - SIZE[1]), imgui.Cond_.first_use_ever)
        imgui.set_next_window_size(imgui.ImVec2(*SIZE), imgui.Cond_.first_use_ever)
        imgui.set_next_window_bg_alpha(0.9)
        flags = imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing
        visible, still_open = imgui.begin(_("Event log") + "###eventlog", True, flags)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        self.ctx.ui_rects.append(self.rect)
        if visible:
            try:
                self._body()
            except Exception as exc:  # noqa: BLE001 - a failing control is shown in the panel
                self.ctx.session.report("the event log", exc)
        imgui.end()
        if not still_open:
            self.shown = False

    def _body(self) -> None:
        session = self.ctx.session
        timeline = session.timeline
        self.only_selected = imgui.checkbox(_("Selected body only"), self.only_selected)[1]
        entries = self.entries()
        imgui.same_line()
        begins = sum(1 for e in entries if e.kind == "begin")
        imgui.text_colored(DIM, _("{n} events: {b} begins, {e} ends").format(n=len(entries), b=begins,
                                                                            e=len(entries) - begins))
        if self.only_selected and session.selected is None:
            imgui.text_colored(DIM, _("Click a body to select it."))
        if self.note:
            imgui.text_colored(AMBER, self.note)
        flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v | imgui.TableFlags_.scroll_y
                 | imgui.TableFlags_.sizing_stretch_prop)
        if not imgui.begin_table("events", 6, flags, imgui.ImVec2(0.0, 0.0)):
            return
        imgui.table_setup_scroll_freeze(0, 1)
        for title, weight in ((_("Time (s)"), 0.9), (_("Step"), 0.7), (_("Event"), 0.7), (_("Bodies"), 1.1),
                              (_("Impulse (N·s)"), 1.2), (_("Impact (m/s)"), 1.1)):
            imgui.table_setup_column(title, imgui.TableColumnFlags_.width_stretch, weight)
        imgui.table_headers_row()
        clipper = imgui.ListClipper()
        clipper.begin(len(entries))
        cursor = timeline.cursor
        # when the cursor moved (the timeline was scrubbed, stepped, played), show its step's rows: the
        # newest event at or before it, in the middle of the table
        # (or the row clicked, which may be any of its step's)
        follow = -1
        if cursor != self._followed and entries:
            follow = next((k for k, e in enumerate(entries) if e.step <= cursor), len(entries) - 1)
            if self._clicked is not None and self._clicked.step == cursor:
                follow = next((k for k, e in enumerate(entries) if e is self._clicked), follow)
            clipper.include_item_by_index(follow)
        self._followed, self._clicked = cursor, None
        while clipper.step():
            for k in range(clipper.display_start, clipper.display_end):
                self._row(k, entries[k], cursor)
                if k == follow:
                    imgui.set_scroll_here_y(0.5)
        clipper.end()
        imgui.end_table()

    def _row(self, k: int, e: LogEntry, cursor: int) -> None:
        imgui.table_next_row()
        imgui.table_next_column()
        flags = imgui.SelectableFlags_.span_all_columns | imgui.SelectableFlags_.allow_overlap
        if imgui.selectable(f"{e.time:.3f}##row{k}", e.step == cursor, flags)[0]:
            self.jump(e)
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.rows.append((e, (a.x, a.y, b.x, b.y)))
        imgui.table_next_column()
        imgui.text(str(e.step))
        imgui.table_next_column()
        imgui.text_colored(GREEN if e.kind == "begin" else DIM, _("begin") if e.kind == "begin" else _("end"))
        imgui.table_next_column()
        imgui.text(f"#{e.row_a} – #{e.row_b}")
        imgui.table_next_column()
        if e.impulse is not None:
            imgui.text(f"{e.impulse:.3g}")
        imgui.table_next_column()
        if e.impact:
            imgui.text_colored(AMBER, f"{e.impact_speed:.2f}")

    def jump(self, e: LogEntry) -> None:
        """Go to ``e``'s step on the timeline (when it is still kept) and select the pair's dynamic body
        (body A unless it is static)."""
        session = self.ctx.session
        timeline = session.timeline
        self.note = ""
        self._clicked = e
        if timeline.first_step <= e.step <= timeline.last_step:
            timeline.pause()
            timeline.seek(e.step)
        else:
            self.note = _("Step {step} is no longer kept: the timeline starts at step {first}.").format(
                step=e.step, first=timeline.first_step)
        world = session.world
        for row, gen in ((e.row_a, e.gen_a), (e.row_b, e.gen_b)):
            body = Body(world, row, gen)
            if body.alive and not body.static:
                session.select(body)
                return
