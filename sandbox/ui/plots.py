"""The Plots window: the world's figures step by step (``sandbox.series``), series picked by the user,
one plot per kind of quantity, and a scatter of the restitution ledger's measured e against the
configured e.

The plots are implot's (part of imgui-bundle). Time runs along x, in simulated seconds. While the
simulation runs, each plot follows the last ``span`` seconds; paused, it freezes and the user can zoom
and pan it; when the world's step changes while paused (a timeline scrubbed back or forward, a single
step) it follows that step: the series are indexed by step and drawn up to the world's current one.

Every plot's Export button writes its series to ``<folder>/<scene>-<plot>.csv`` atomically (a temporary
file moved into place, so a failed write leaves no partial file): the columns are ``step``, ``time`` and
the plot's picked series, named as in ``series.COLUMNS`` (``kinetic``, ``momentum_x``, ``ms_collide``,
``body_height``, ...), one row per recorded step up to the current one. The scatter's Export writes the
ledger's rows (``ledger.IMPACT_COLUMNS``, the headless run's ``--impacts`` file). A file that cannot be
written gives a red line in the window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from imgui_bundle import imgui, implot

from ..engine import STAGES
from ..i18n import N_, _
from ..series import CsvExportError, Recorder, file_stem, write_impacts_csv
from .compare_window import free_columns
from .context import UiContext

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
PLOT_HEIGHT = 150.0
IMPACTS = "impacts"
"""The key of the measured-e scatter (its CSV holds the ledger's rows)."""


@dataclass(frozen=True)
class PlotSpec:
    """One plot: its ``key`` (ImGui id and file name), ``title`` and y-axis ``unit`` (marked with
    ``N_``: translated when drawn), the ``series`` it can show as ``(column, label)``, and the columns
    picked at first (``default``)."""

    key: str
    title: str
    unit: str
    series: tuple[tuple[str, str], ...]
    default: tuple[str, ...]


PLOTS = (
    PlotSpec("energy", N_("Energy"), "J", (("kinetic", N_("kinetic")), ("potential", N_("potential")),
                                          ("total", N_("total"))), ("kinetic", "potential", "total")),
    PlotSpec("momentum", N_("Linear momentum"), "kg·m/s",
             (("momentum_x", "x"), ("momentum_y", "y"), ("momentum_z", "z")), ("momentum_x", "momentum_y")),
    PlotSpec("angular_momentum", N_("Angular momentum (about the origin)"), "kg·m²/s",
             (("angular_momentum_x", "x"), ("angular_momentum_y", "y"), ("angular_momentum_z", "z")),
             ("angular_momentum_z",)),
    PlotSpec("contacts", N_("Contacts"), "",
             (("pairs", N_("broad-phase pairs")), ("manifolds", N_("manifolds")),
              ("contact_points", N_("contact points"))), ("pairs", "manifolds", "contact_points")),
    PlotSpec("stages", N_("Time per stage"), "ms",
             (("ms_total", N_("whole step")), *((f"ms_{s}", s.replace("_", " ")) for s in STAGES)),
             ("ms_total", "ms_collide")),
    PlotSpec("body", N_("Selected body"), "",
             (("body_height", N_("height (m)")), ("body_speed", N_("speed (m/s)")),
              ("body_spin", N_("spin (rad/s)"))), ("body_height",)),
)
PLOTS_BY_KEY = {p.key: p for p in PLOTS}


def export_line(message: tuple[bool, str] | None, hint: str) -> None:
    """One line under the folder box, always there so that nothing below it moves: the last export's
    ``message`` (green, or red when it failed), else the dim ``hint``; the whole text in a tooltip."""
    ok, text = message if message is not None else (None, hint)
    imgui.text_colored(DIM if ok is None else GREEN if ok else RED, text)
    if imgui.is_item_hovered():
        imgui.set_tooltip(text)


def export_csv(write: Callable[[], int], path: Path) -> tuple[int, tuple[bool, str]]:
    """Run ``write`` (which writes a CSV to ``path`` and returns its rows) and say how it went: (rows,
    the line ``export_line`` shows). A failure is reported, not raised, and counts 0 rows."""
    try:
        rows = write()
    except (CsvExportError, OSError, ValueError) as exc:
        return 0, (False, _("Could not export: {error}").format(error=exc))
    return rows, (True, _("Wrote {n} rows to {path}").format(n=rows, path=path))


class PlotsWindow:
    """The Plots window over one ``UiContext``, reading the session's ``Recorder``; ``draw()`` once
    per frame. ``open`` shows it (and makes the recorder record); ``picked`` maps each plot's key to its
    picked columns; ``folder`` is where exports go; ``message`` is the last export's line and whether
    it failed; ``buttons`` the rectangles of the Export buttons drawn last frame, by plot key."""

    what = N_("the Plots window")
    """What a failure while drawing it is reported as."""

    def __init__(self, ctx: UiContext, recorder: Recorder) -> None:
        self.ctx = ctx
        self.recorder = recorder
        self.open = False
        self.picked: dict[str, list[str]] = {p.key: list(p.default) for p in PLOTS}
        self.expanded: dict[str, bool] = {p.key: p.key == "energy" for p in PLOTS}
        self.expanded[IMPACTS] = False
        self.span = 20.0
        self.folder = "."
        self.message: tuple[bool, str] | None = None
        self.buttons: dict[str, tuple[float, float, float, float]] = {}
        self.drawn: dict[str, list[str]] = {}
        """The series drawn last frame, by plot key (what a test checks)."""
        self.shown_steps = 0
        """How many recorded steps the plots drew last frame (those up to the world's step)."""
        self._last_step: int | None = None

    def toggle(self) -> None:
        """Show the window if hidden, hide it if shown."""
        self.open = not self.open

    # --- export --------------------------------------------------------------------------------------
    def path(self, key: str) -> Path:
        """Where plot ``key``'s CSV goes: ``<folder>/<scene>-<key>.csv``."""
        return Path(self.folder) / f"{file_stem(self.ctx.session.scene_name)}-{key}.csv"

    def export(self, key: str) -> int:
        """Write plot ``key``'s series (or, for the scatter, the ledger's impacts) up to the world's step
        to ``path(key)``; sets ``message`` either way and returns the rows written (0 on failure)."""
        session = self.ctx.session
        self.recorder.follow(session.world)
        step = session.world.steps
        path = self.path(key)
        if key == IMPACTS:
            rows, self.message = export_csv(
                lambda: write_impacts_csv(path, self.recorder.impacts(step)), path)
        else:
            rows, self.message = export_csv(
                lambda: self.recorder.series.write_csv(path, self.picked[key], step), path)
        return rows

    # --- the frame --------------------------------------------------------------------------------------
    def draw(self) -> None:
        """The window (when ``open``); keeps the recorder recording while it shows."""
        recorder, session = self.recorder, self.ctx.session
        recorder.series_on = self.open
        self.buttons, self.drawn = {}, {}
        if not self.open:
            recorder.ledger_users.discard("plots")
            return
        w, h = self.ctx.window_size
        imgui.set_next_window_pos(imgui.ImVec2(max(free_columns(self.ctx)[1] - 600.0, 0.0), 40.0),
                                  imgui.Cond_.first_use_ever)
        imgui.set_next_window_size(imgui.ImVec2(590.0, min(620.0, h - 60.0)), imgui.Cond_.first_use_ever)
        imgui.set_next_window_size_constraints(imgui.ImVec2(360.0, 200.0), imgui.ImVec2(w, h))
        visible, still_open = imgui.begin(_("Plots") + "###plots", True, imgui.WindowFlags_.no_saved_settings)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.ctx.ui_rects.append((pos.x, pos.y, pos.x + size.x, pos.y + size.y))
        if visible:
            try:
                self._body()
            except Exception as exc:  # noqa: BLE001 - a failing plot is shown, the app goes on
                session.report(self.what, exc)
        imgui.end()
        if not still_open:
            self.open = False
        if not (self.open and self.expanded[IMPACTS]):
            recorder.ledger_users.discard("plots")

    def _body(self) -> None:
        session, recorder = self.ctx.session, self.recorder
        world = session.world
        recorder.follow(world)
        step = world.steps
        follow = not session.sim.paused or step != self._last_step
        self._last_step = step
        since = recorder.since
        imgui.push_text_wrap_pos(0.0)
        if since is None:
            imgui.text_colored(DIM, _("Recording starts with the next step."))
        elif since > 0:
            imgui.text_colored(DIM, _("Recording since step {n}; Reset (R) records the scene from its start.")
                               .format(n=since))
        imgui.pop_text_wrap_pos()
        imgui.push_item_width(150.0)
        changed, span = imgui.slider_float(_("Seconds shown") + "##span", self.span, 1.0, 120.0, "%.0f s",
                                           imgui.SliderFlags_.logarithmic)
        if changed:
            self.span = min(max(span, 1.0), 120.0)
        imgui.same_line()
        _c, self.folder = imgui.input_text(_("CSV folder") + "##folder", self.folder)
        imgui.pop_item_width()
        export_line(self.message, _("Export CSV writes {path}").format(
            path=self.path("<plot>")))
        time = recorder.series.column("time", step)
        self.shown_steps = len(time)
        for spec in PLOTS:
            self._plot(spec, time, step, follow)
        self._impacts(step)

    def _export_button(self, key: str, enabled: bool = True) -> None:
        imgui.same_line(max(imgui.get_content_region_avail().x + imgui.get_cursor_pos_x() - 110.0,
                            imgui.get_cursor_pos_x()))
        if not enabled:
            imgui.begin_disabled()
        pressed = imgui.small_button(_("Export CSV") + f"##{key}")
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.buttons[key] = (a.x, a.y, b.x, b.y)
        if imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
            imgui.set_tooltip(str(self.path(key)))
        if not enabled:
            imgui.end_disabled()
        if pressed:
            self.export(key)

    def _header(self, key: str, title: str) -> bool:
        imgui.set_next_item_open(self.expanded[key])
        self.expanded[key] = imgui.collapsing_header(f"{title}###{key}",
                                                     imgui.TreeNodeFlags_.allow_overlap)
        return self.expanded[key]

    def _plot(self, spec: PlotSpec, time: np.ndarray, step: int, follow: bool) -> None:
        unit = f" ({spec.unit})" if spec.unit else ""
        is_open = self._header(spec.key, _(spec.title) + unit)
        picked = self.picked[spec.key]
        self._export_button(spec.key, bool(picked) and len(time) > 0)
        if not is_open:
            return
        for k, (column, label) in enumerate(spec.series):
            if k:
                imgui.same_line()
            changed, on = imgui.checkbox(f"{_(label)}##{spec.key}{column}", column in picked)
            if changed:
                # kept in the plot's own order
                picked[:] = [c for c, _label in spec.series if (c == column and on)
                             or (c != column and c in picked)]
        if not picked:
            imgui.text_colored(DIM, _("Pick a series to plot it."))
            return
        if spec.key == "body" and (self.ctx.session.selected is None):
            imgui.text_colored(DIM, _("Click a body to select it: its height, speed and spin are recorded."))
        if not implot.begin_plot(f"##{spec.key}", imgui.ImVec2(-1, PLOT_HEIGHT), implot.Flags_.no_mouse_text):
            return
        flags = implot.AxisFlags_.auto_fit if follow else 0
        implot.setup_axes(_("time (s)"), spec.unit, 0, flags)
        if follow and len(time):
            end = float(time[-1])
            implot.setup_axis_limits(implot.ImAxis_.x1, max(float(time[0]), end - self.span), max(end, 1e-6),
                                     implot.Cond_.always)
        implot.setup_legend(implot.Location_.north_west, 0)
        drawn = []
        for column, label in spec.series:
            if column in picked and len(time):
                implot.plot_line(_(label), time, self.recorder.series.column(column, step))
                drawn.append(column)
        self.drawn[spec.key] = drawn
        implot.end_plot()

    def _impacts(self, step: int) -> None:
        """The measured e of every impact against its configured e, on the line e measured = e
        configured that Newton's law of restitution predicts."""
        recorder = self.recorder
        is_open = self._header(IMPACTS, _("Measured e against configured e (restitution ledger)"))
        rows = recorder.impacts(step)
        self._export_button(IMPACTS, bool(rows))
        if not is_open:
            recorder.ledger_users.discard("plots")
            return
        recorder.ledger_users.add("plots")
        if recorder.ledger_since is None:
            imgui.text_colored(DIM, _("The ledger starts with the next step; Reset (R) to see every impact."))
        size = imgui.ImVec2(-1, PLOT_HEIGHT + 60.0)
        if not implot.begin_plot(f"##{IMPACTS}", size, implot.Flags_.no_mouse_text):
            return
        implot.setup_axes(_("configured e"), _("measured e = −v′ₙ/vₙ"))
        implot.setup_axes_limits(-0.05, 1.1, -0.05, 1.15, implot.Cond_.once)
        implot.setup_legend(implot.Location_.north_west, 0)
        line = np.array([0.0, 1.0])
        implot.plot_line(_("Newton: measured = configured"), line, line)
        if rows:
            configured = np.array([r.combined for r in rows])
            measured = np.array([r.measured for r in rows])
            implot.plot_scatter(_("impacts"), configured, measured)
        self.drawn[IMPACTS] = ["measured"] if rows else []
        implot.end_plot()

