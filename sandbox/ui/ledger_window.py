"""The Restitution ledger window: a row for every impact above the restitution threshold
(``sandbox.ledger``) with its time, the two bodies, their configured coefficients, the pair's e under the
world's combine rule, the approach and separation speeds along the normal, the measured e = −v′ₙ/vₙ,
the kinetic energy before and after and the momentum change; under it a summary of measured against
configured e, one line per configured value.

The rows are the session recorder's ledger (``series.Recorder``), which runs while this window shows;
like the plots they go up to the world's current step, so they follow a timeline. Export writes them
(``ledger.IMPACT_COLUMNS``, the headless ``--impacts`` file) to ``<folder>/<scene>-impacts.csv``.
"""

from __future__ import annotations

from pathlib import Path

from imgui_bundle import imgui

from ..i18n import N_, _
from ..ledger import Impact, RestitutionSummary
from ..series import Recorder, file_stem, write_impacts_csv
from .compare_window import free_columns
from .context import UiContext
from .plots import export_csv, export_line

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
CLOSE_ENOUGH = 0.03
"""A summary line is green when the measured mean is within 3 % of the configured e (0.03 absolute for
e = 0), the tolerance the ledger's tests hold it to."""

IMPACT_HEADERS = (N_("t (s)"), N_("bodies"), N_("e₁"), N_("e₂"), N_("rule"), N_("e (rule)"),
                  N_("vₙ in (m/s)"), N_("v′ₙ out (m/s)"), N_("e measured"), N_("KE before (J)"),
                  N_("KE after (J)"), N_("Δp (kg·m/s)"))
SUMMARY_HEADERS = (N_("configured e"), N_("impacts"), N_("measured, mean"), N_("lowest"), N_("highest"),
                   N_("mean error"))


def impact_cells(row: Impact) -> list[str]:
    """The texts of one impact's row, in the order of ``IMPACT_HEADERS``."""
    dp = row.momentum_change
    return [f"{row.time:.3f}", f"#{row.body_a} – #{row.body_b}", f"{row.restitution_a:.2f}",
            f"{row.restitution_b:.2f}", row.rule, f"{row.combined:.3f}", f"{row.approach_speed:.2f}",
            f"{row.separation_speed:.2f}", f"{row.measured:.3f}", f"{row.kinetic_before:.3f}",
            f"{row.kinetic_after:.3f}", f"{dp[0]:+.2f}, {dp[1]:+.2f}, {dp[2]:+.2f}"]


def summary_cells(s: RestitutionSummary) -> list[str]:
    """The texts of one summary line, in the order of ``SUMMARY_HEADERS``: a relative mean error, or
    for e = 0 (where a relative error means nothing) the absolute one."""
    if s.configured > 0:
        error = f"{100.0 * s.mean_error:.1f} %"
    else:
        error = _("{x:.3f} absolute").format(x=s.mean_error)
    return [f"{s.configured:.3f}", str(s.count), f"{s.mean:.3f}", f"{s.lowest:.3f}", f"{s.highest:.3f}",
            error]


def within_tolerance(s: RestitutionSummary) -> bool:
    """Whether the measured mean of summary line ``s`` is within ``CLOSE_ENOUGH`` of its configured e."""
    if s.configured > 0:
        return abs(s.mean - s.configured) <= CLOSE_ENOUGH * s.configured
    return abs(s.mean) <= CLOSE_ENOUGH


class LedgerWindow:
    """The ledger window over one ``UiContext``, reading the session's ``Recorder``; ``draw()`` once per
    frame. ``open`` shows it (and runs the ledger). After each frame ``shown_rows`` and ``shown_summary``
    hold the cell texts drawn (what a test compares with the model), ``message`` the last export's line."""

    what = N_("the ledger window")
    """What a failure while drawing it is reported as."""

    def __init__(self, ctx: UiContext, recorder: Recorder) -> None:
        self.ctx = ctx
        self.recorder = recorder
        self.open = False
        self.folder = "."
        self.message: tuple[bool, str] | None = None
        self.shown_rows: list[list[str]] = []
        self.shown_summary: list[list[str]] = []
        self.export_rect: tuple[float, float, float, float] | None = None
        self._count = 0

    def toggle(self) -> None:
        """Show the window if hidden, hide it if shown."""
        self.open = not self.open

    def path(self) -> Path:
        """Where the export goes: ``<folder>/<scene>-impacts.csv``."""
        return Path(self.folder) / f"{file_stem(self.ctx.session.scene_name)}-impacts.csv"

    def export(self) -> int:
        """Write the impacts up to the world's step to ``<folder>/<scene>-impacts.csv``; sets ``message``
        and returns the rows written (0 on failure)."""
        session = self.ctx.session
        self.recorder.follow(session.world)
        path = self.path()
        rows, self.message = export_csv(
            lambda: write_impacts_csv(path, self.recorder.impacts(session.world.steps)), path)
        return rows

    def draw(self) -> None:
        """The window (when ``open``); keeps the ledger running while it shows."""
        recorder = self.recorder
        self.shown_rows, self.shown_summary, self.export_rect = [], [], None
        if not self.open:
            recorder.ledger_users.discard("ledger window")
            return
        recorder.ledger_users.add("ledger window")
        _w, h = self.ctx.window_size
        x0, x1 = free_columns(self.ctx)
        imgui.set_next_window_pos(imgui.ImVec2(x0 + 10.0, max(h - 400.0, 96.0)), imgui.Cond_.first_use_ever)
        imgui.set_next_window_size(imgui.ImVec2(max(min(840.0, x1 - x0 - 20.0), 360.0), 380.0),
                                   imgui.Cond_.first_use_ever)
        visible, still_open = imgui.begin(_("Restitution ledger") + "###ledger", True,
                                          imgui.WindowFlags_.no_saved_settings)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.ctx.ui_rects.append((pos.x, pos.y, pos.x + size.x, pos.y + size.y))
        if visible:
            try:
                self._body()
            except Exception as exc:  # noqa: BLE001 - a failing window is shown, the app goes on
                self.ctx.session.report(self.what, exc)
        imgui.end()
        if not still_open:
            self.open = False
            recorder.ledger_users.discard("ledger window")

    def _body(self) -> None:
        session, recorder = self.ctx.session, self.recorder
        world = session.world
        recorder.follow(world)
        rows = recorder.impacts(world.steps)
        imgui.text(_("Rule: {rule} · impacts slower than {v:g} m/s do not bounce · {n} impacts")
                   .format(rule=world.restitution_rule, v=world.restitution_threshold, n=len(rows)))
        if recorder.ledger_since is None:
            imgui.text_colored(DIM, _("The ledger starts with the next step."))
        elif recorder.ledger_since > 0:
            imgui.text_colored(DIM, _("Since step {n}; Reset (R) records the scene from its start.")
                               .format(n=recorder.ledger_since))
        imgui.push_item_width(200.0)
        _c, self.folder = imgui.input_text(_("CSV folder") + "##ledgerfolder", self.folder)
        imgui.pop_item_width()
        imgui.same_line()
        if not rows:
            imgui.begin_disabled()
        if imgui.button(_("Export CSV") + "##ledger"):
            self.export()
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.export_rect = (a.x, a.y, b.x, b.y)
        if not rows:
            imgui.end_disabled()
        export_line(self.message, _("Export CSV writes {path}").format(path=self.path()))

        summary = recorder.summary(world.steps)
        style = imgui.get_style()
        row = imgui.get_text_line_height() + 2.0 * style.cell_padding.y
        # the summary below the impacts: its header and up to six lines (it scrolls beyond), its title
        summary_height = min(len(summary) + 1, 7) * row + 2.0
        below = summary_height + imgui.get_frame_height_with_spacing() + 2.0 * style.item_spacing.y
        self._impacts(rows, max(imgui.get_content_region_avail().y - below, 3.0 * row))
        imgui.separator_text(_("Measured against configured e"))
        self._summary(summary, summary_height)

    def _impacts(self, rows: list[Impact], height: float) -> None:
        flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v | imgui.TableFlags_.scroll_y
                 | imgui.TableFlags_.scroll_x | imgui.TableFlags_.sizing_fixed_fit)
        if not imgui.begin_table("impacts", len(IMPACT_HEADERS), flags, imgui.ImVec2(0.0, height)):
            return
        imgui.table_setup_scroll_freeze(0, 1)
        for title in IMPACT_HEADERS:
            imgui.table_setup_column(_(title))
        imgui.table_headers_row()
        for row in rows:
            cells = impact_cells(row)
            self.shown_rows.append(cells)
            imgui.table_next_row()
            for k, cell in enumerate(cells):
                imgui.table_next_column()
                if k == 8:  # the measured e, against the configured one beside it
                    imgui.text_colored(GREEN if abs(row.measured - row.combined) <= max(
                        CLOSE_ENOUGH * row.combined, CLOSE_ENOUGH) else YELLOW, cell)
                else:
                    imgui.text(cell)
        if len(rows) > self._count:  # a new impact: show it
            imgui.set_scroll_here_y(1.0)
        self._count = len(rows)
        imgui.end_table()

    def _summary(self, summary: list[RestitutionSummary], height: float) -> None:
        if not summary:
            imgui.text_colored(DIM, _("No impact yet."))
            return
        flags = (imgui.TableFlags_.row_bg | imgui.TableFlags_.borders_inner_v | imgui.TableFlags_.scroll_y
                 | imgui.TableFlags_.sizing_fixed_fit)
        if not imgui.begin_table("summary", len(SUMMARY_HEADERS), flags, imgui.ImVec2(0.0, height)):
            return
        imgui.table_setup_scroll_freeze(0, 1)
        for title in SUMMARY_HEADERS:
            imgui.table_setup_column(_(title))
        imgui.table_headers_row()
        for s in summary:
            cells = summary_cells(s)
            self.shown_summary.append(cells)
            imgui.table_next_row()
            for k, cell in enumerate(cells):
                imgui.table_next_column()
                if k == 2:
                    imgui.text_colored(GREEN if within_tolerance(s) else YELLOW, cell)
                else:
                    imgui.text(cell)
        imgui.end_table()

