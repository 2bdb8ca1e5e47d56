"""The Dear ImGui panel: simulation controls, world settings, spawning, the selected body, mouse tools,
debug drawing, statistics and help, each under a collapsible header; a status overlay at the top-left
and a tooltip over the hovered body.

Every widget acts right away (immediate mode), on the ``UiContext`` it was given: commands go to the
session, view settings to the context. Each section is drawn inside its own error
guard, so a bad value or a failing action shows a red message and the rest of the panel keeps working.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from imgui_bundle import imgui, implot

from ..engine import (
    BROADPHASES,
    KIND_NAMES,
    PARALLEL_BODIES,
    RESPONSES,
    RESTITUTION_RULES,
    SETTINGS,
    STAGE_GROUPS,
    STAGES,
)
from ..i18n import LANGUAGES, N_, _, language, set_language
from ..lessons import Label
from ..render.debug_draw import broadphase_caption, broadphase_legend
from ..scenes import SCENES
from ..series import Recorder
from ..session import MAX_FRAME_SECONDS, Simulation, scene_files
from . import spawn
from .compare_window import CompareWindow, window_toggles
from .context import PANEL_WIDTH, UiContext
from .event_log import EventLogWindow
from .interaction import Interaction
from .ledger_window import LedgerWindow
from .lesson import LessonWindow, draw_plates, view_span, visible_labels
from .plots import PlotsWindow
from .stepper import Stepper
from .timeline_window import TimelineWindow

HISTORY = 240
ENERGY_PERIOD = 0.25
"""Seconds between two samples of the energy while the Stats section, the only place it shows, is closed:
its I·ω costs a millisecond or more for a thousand bodies, so the history the section shows when it
opens is sampled at 4 Hz until then (each sample held over the frames between), every frame while open."""
DEBUG_TOGGLES = (("shadows", N_("Shadows")), ("grid", N_("Ground grid")),
                 ("outlines", N_("Selection outlines")), ("contacts", N_("Contact points")),
                 ("normals", N_("Contact normals")),
                 ("aabbs", N_("Bounding boxes (AABB)")), ("broadphase", N_("Broad-phase structure")),
                 ("velocities", N_("Velocities")), ("grab_spring", N_("Grab spring and force")),
                 ("joints", N_("Joints")), ("xray", N_("X-ray (hidden debug lines faint)")),
                 ("cursor_ray", N_("Ray from the cursor")), ("sweeps", N_("Swept volumes of the last step")),
                 ("flashes", N_("Flash on collision events")))
NORMAL_SCALES = ("depth", "impulse")
# the panel's sections, top to bottom: (title, name of the method that draws the section's contents)
SECTIONS = ((N_("Simulation"), "_simulation"), (N_("World"), "_world"), (N_("Advanced"), "_advanced"),
            (N_("Spawn"), "_spawn"), (N_("Selected body"), "_selected"), (N_("Mouse tools"), "_mouse"),
            (N_("Debug draw"), "_debug"), (N_("Stats"), "_stats"), (N_("Help"), "_help"))
# what a failing part of the frame is reported as, made once: a message with values costs microseconds
# to make, and the panel names a dozen parts a frame
SECTION_ERRORS = {title: N_("panel section {title}", title=title) for title, _method in SECTIONS}
TIMELINE, EVENT_LOG, STEPPER = N_("the timeline"), N_("the event log"), N_("the stepper")
CAPTION, LANGUAGE_BOX = N_("the broad-phase caption"), N_("the Language box")
SHOWING_ERRORS = N_("showing errors")
# the Advanced section: settings the seed tutorials discuss, each shown with its one-line meaning from the
# engine's SETTINGS table; (name, slider is logarithmic)
ADVANCED = (("penalty_hertz", True), ("penalty_damping_ratio", True), ("contact_hertz", True),
            ("contact_damping_ratio", True), ("max_push_velocity", True), ("restitution_threshold", False),
            ("linear_slop", False), ("speculative_distance", False), ("warm_starting", False),
            ("block_solver", False), ("friction_rule", False), ("contact_solver", False),
            ("linear_damping", True), ("angular_damping", True))
# the windows' flags, combined once (an enum's | costs more than the window it sets up)
OVERLAY_FLAGS = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
                 | imgui.WindowFlags_.no_focus_on_appearing | imgui.WindowFlags_.no_nav
                 | imgui.WindowFlags_.no_saved_settings)
# the panel has an always-visible scrollbar: when the open sections are taller than the window, it shows
PANEL_FLAGS = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
               | imgui.WindowFlags_.always_vertical_scrollbar)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)

HELP = (  # (the single-letter keys are the same in every language)
    (N_("Left drag a body"), N_("grab it with a spring; the wheel moves it nearer / farther")),
    (N_("Left click"), N_("select a body (empty space: deselect)")),
    (N_("Ctrl + left click"), N_("push the body along the view ray")),
    (N_("Right drag"), N_("orbit the camera")),
    (N_("Middle drag, Shift + right drag"), N_("pan")),
    (N_("Wheel"), N_("zoom")),
    (N_("Space"), N_("shoot the spawn shape through the cursor")),
    ("E", N_("drop the spawn shape above the cursor")),
    ("P", N_("pause / run")),
    (N_("O or ."), N_("single step (pauses)")),
    ("R", N_("reset the scene")),
    ("F", N_("focus the camera on the selected body")),
    (N_("Home"), N_("reset the view")),
    (N_("Delete / Backspace"), N_("delete the selected body")),
    (N_("Esc"), N_("let go, deselect")),
    ("H", N_("hide / show the panel")),
    ("L", N_("hide / show the Lesson window")),
    ("S", N_("step through: take the next step apart, stage by stage (again: leave)")),
    ("T", N_("hide / show the timeline")),
    (N_("Left / Right arrow"), N_("step back / forward through the timeline (pauses)")),
    ("Ctrl + Q", N_("quit")),
)


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun in the right number: "1 body", "2 bodies", "0 bodies"."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def scene_choices(session_scene: str, files: list[str]) -> tuple[str, ...]:
    """The scene list: the built-in scenes, then the scene files of ``assets/scenes`` (by file name),
    then the current scene if it is neither (a file loaded from elsewhere), so that the box always
    names what is loaded."""
    names = (*SCENES, *(f for f in files if f not in SCENES))
    return names if not session_scene or session_scene in names else (*names, session_scene)


def _choice(label: str, value: str, options: tuple[str, ...], shown: list[str] | None = None,
            ) -> tuple[bool, str]:
    """A combo box over ``options``, listed as ``shown`` (default: the options themselves, which are then
    engine names such as "sap" or scene names, the same in every language); returns (changed, the chosen
    option).

    Drawn as ``imgui.combo`` draws it (ImGui's ``Combo``: the box with the current item, and while it is
    open a list of selectables, each under its index as id), but the list is handed to ImGui only while
    it is open: ``imgui.combo`` converts every item to a C++ string each frame, closed or not."""
    index = options.index(value) if value in options else 0
    changed = False
    if imgui.begin_combo(label, (options if shown is None else shown)[index]):
        for i, text in enumerate(options if shown is None else shown):
            imgui.push_id(i)
            selected = i == index
            if imgui.selectable(text, selected)[0] and not selected:
                changed, index = True, i
            if selected:
                imgui.set_item_default_focus()
            imgui.pop_id()
        imgui.end_combo()
    return changed, options[index]


def slowdown_note(sim: Simulation) -> str:
    """The line that says why ``sim`` runs slower than real time (``Simulation.slowed_by``)."""
    if sim.slowed_by == "step cap":
        return _("slowed by the step cap: frames last longer than {steps} steps ({ms:.0f} ms)").format(
            steps=sim.max_steps, ms=1000.0 * sim.max_steps * sim.dt / sim.time_scale)
    return _("slowed: frames over {ms:.0f} ms count as {ms:.0f} ms").format(ms=1000.0 * MAX_FRAME_SECONDS)


class EnergyCache:
    """A world's kinetic and potential energy (``World.kinetic_energy``, ``potential_energy``), computed
    again only when what they depend on has changed since the last call (the bodies, their masses,
    inertia, positions and velocities, gravity): comparing the bytes of those arrays with those of the
    last call costs tens of microseconds for a thousand bodies, the energies' I·ω a millisecond or more."""

    FIELDS = ("alive", "static", "mass", "gravity_scale", "pos", "vel", "angvel", "inv_inertia")

    def __init__(self) -> None:
        self._world = None
        self._state = b""
        self._energies = (0.0, 0.0)

    def __call__(self, world) -> tuple[float, float]:
        """(kinetic, potential) in J."""
        d = world.data
        state = b"".join([*(getattr(d, name)[: d.n].tobytes() for name in self.FIELDS),
                          np.asarray(world.gravity, dtype=float).tobytes()])
        if world is not self._world or state != self._state:
            self._energies = (world.kinetic_energy(), world.potential_energy())
            self._world, self._state = world, state
        return self._energies


def _push(history: np.ndarray, value) -> None:
    """Shift ``history`` one place towards the start along its last axis (dropping the oldest entry) and
    put ``value`` at the end: a history of the last frames, kept in place."""
    history[..., :-1] = history[..., 1:]
    history[..., -1] = value


def _row(label: str, value: str) -> None:
    """One label–value row of a two-column table (the label dimmed, the value wrapped in its column)."""
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.text_colored(DIM, label)
    imgui.table_next_column()
    imgui.push_text_wrap_pos(0.0)
    imgui.text(value)
    imgui.pop_text_wrap_pos()


class Panel:
    """The ImGui windows over one ``UiContext`` and its mouse ``Interaction``; ``draw()`` is called once
    per frame between ``new_frame`` and ``render``."""

    def __init__(self, ctx: UiContext, interaction: Interaction) -> None:
        self.ctx = ctx
        self.interaction = interaction
        self.scene_path = "assets/scenes/example.json"
        self.save_path = "my_scene.json"
        self.saved = ""
        # the histories, rows of one array shifted with one call a frame: the energy, the step time, then
        # each stage's time
        self._history = np.zeros((2 + len(STAGES), HISTORY), np.float32)
        self.energy, self.step_ms, self.stage_ms = self._history[0], self._history[1], self._history[2:]
        self.kinetic = self.potential = 0.0
        """The energies (J) of the last sample, those of the ``energy`` history's last entry."""
        self._energy_at = -np.inf  # perf_counter() of the last energy sample
        self._energies = EnergyCache()
        self._stats_open = False  # whether the Stats section was open last frame
        self._saved_gravity = np.array([0.0, -9.81, 0.0])
        self.lesson = LessonWindow(ctx)
        self.event_log = EventLogWindow(ctx)
        self.timeline = TimelineWindow(ctx, self.event_log)
        self.recorder = Recorder(lambda: ctx.session.selected)
        ctx.session.sim.watchers.append(self.recorder)  # the session hands its watchers from world to world
        self.compare = CompareWindow(ctx)
        self.plots = PlotsWindow(ctx, self.recorder)
        self.ledger = LedgerWindow(ctx, self.recorder)
        self.stepper = Stepper(ctx)
        self.overflow = 0.0
        """How far (pixels) the panel's open sections reach below its window last frame (0: they fit)."""
        self.overflow_x = 0.0
        """How far (pixels) the widest item of the panel (a label beside its slider, in the current
        language) reached past the panel's right edge last frame (0: every label fits)."""
        self._files = {path.name: path for path in scene_files()}
        self._scene_choices: tuple[str | None, tuple[str, ...]] = (None, ())  # (for the scene, the list)
        self._selected_before = None
        self.reload_rect: tuple[float, float, float, float] | None = None
        """Where the Reload button of a scene file was drawn last (window points, top-left origin)."""
        self.language_rect: tuple[float, float, float, float] | None = None
        """Where the Language box was drawn last (window points, top-left origin)."""
        self.language_items: dict[str, tuple[float, float, float, float]] = {}
        """Where each language of the Language box's open list was drawn last, by code (empty: closed)."""

    # --- frame -----------------------------------------------------------------------------------------
    def draw(self) -> None:
        """Draw the overlay, the tooltip and (unless hidden with H) the panel."""
        self._record_history()
        self._overlay()
        self._tooltip()
        self.lesson.draw()
        self._guarded(TIMELINE, self.timeline.draw)
        self._guarded(EVENT_LOG, self.event_log.draw)
        for window in (self.compare, self.plots, self.ledger):
            self._guarded(window.what, window.draw)
        self._guarded(STEPPER, self.stepper.draw)
        if self.ctx.options.broadphase:
            self._guarded(CAPTION, self._broadphase_caption)
        if self.ctx.show_panel:
            self._panel()
        else:
            self._stats_open = False

    def _broadphase_caption(self) -> None:
        """Name what the broad-phase drawing shows, in the view beside it (sort and sweep's lanes)."""
        caption = broadphase_caption(self.ctx.session.world)
        if caption is not None:
            draw_plates(visible_labels(self.ctx, [Label(*caption)]),
                        span=view_span(self.ctx))

    def _record_history(self) -> None:
        """One entry more in each history (the oldest dropped): the energy (sampled anew every frame
        while the Stats section is open, every ``ENERGY_PERIOD`` otherwise), the step time and the stages'."""
        world = self.ctx.session.world
        now = time.perf_counter()
        if self._stats_open or now - self._energy_at >= ENERGY_PERIOD:
            self._energy_at = now
            try:
                self.kinetic, self.potential = self._energies(world)
            except Exception:  # noqa: BLE001 - statistics never stop the frame
                self.kinetic = self.potential = float("nan")
        t = world.timings
        _push(self._history, [self.kinetic + self.potential, sum(t.values()),
                              *(t.get(stage, 0.0) for stage in STAGES)])

    def _remember_rect(self) -> None:
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.ctx.ui_rects.append((pos.x, pos.y, pos.x + size.x, pos.y + size.y))

    def _guarded(self, what: str, section: Callable[[], None]) -> None:
        try:
            section()
        except Exception as exc:  # noqa: BLE001 - a failing control must not take the app down
            self.ctx.session.report(what, exc)

    def _overlay(self) -> None:
        ctx, session, sim = self.ctx, self.ctx.session, self.ctx.session.sim
        imgui.set_next_window_pos(imgui.ImVec2(10, 10))
        imgui.set_next_window_bg_alpha(0.55)
        imgui.begin("##status", None, OVERLAY_FLAGS)
        self._remember_rect()
        imgui.text_colored(ACCENT, session.scene_name or _("(no scene)"))
        imgui.same_line()
        if sim.paused:
            imgui.text_colored(YELLOW, "  " + _("PAUSED"))
        elif sim.behind:
            imgui.text_colored(YELLOW, "  " + _("{rate:.2f}× real time (set {scale:g}×)").format(
                rate=sim.real_rate, scale=sim.time_scale))
        else:
            imgui.text_colored(DIM, f"  {sim.time_scale:g}×")
        world = sim.world
        idle = _(" (idle)") if ctx.stats.idle else ""
        bodies = counted(int(np.count_nonzero(world.data.alive[: world.data.n])), _("body"), _("bodies"))
        imgui.text(_("{bodies}   t = {time:.2f} s   {fps:.0f} FPS{idle}").format(
            bodies=bodies, time=sim.time, fps=ctx.stats.fps, idle=idle))
        imgui.text_colored(DIM, _("step {step:.2f} ms · render {render:.2f} ms").format(
            step=sim.step_ms, render=ctx.stats.render_ms))
        if sim.behind:
            imgui.text_colored(YELLOW, slowdown_note(sim))
        if session.errors:
            imgui.text_colored(RED, _("{n} error(s): see the panel").format(n=len(session.errors)))
        imgui.end()

    def _tooltip(self) -> None:
        ia = self.interaction
        body = ia.hovered
        if body is None or ia.grab is not None or not body.alive or imgui.get_io().want_capture_mouse:
            return
        kind = KIND_NAMES[int(self.ctx.session.world.data.kind[body.index])]
        mass = _("static") if body.static else f"{body.mass:.3g} kg"
        speed = float(np.linalg.norm(body.linear_velocity))
        imgui.set_tooltip(f"#{body.index} {_(kind)} · {mass} · {speed:.2f} m/s")

    def _panel(self) -> None:
        w, h = self.ctx.window_size
        imgui.set_next_window_pos(imgui.ImVec2(w - PANEL_WIDTH, 0))
        imgui.set_next_window_size(imgui.ImVec2(PANEL_WIDTH, h))
        imgui.begin(_("sandbox") + "###panel", None, PANEL_FLAGS)
        self._remember_rect()
        imgui.push_item_width(PANEL_WIDTH * 0.56)
        self._guarded(LANGUAGE_BOX, self._language)
        self._guarded(SHOWING_ERRORS, self._errors)
        # Open at first: only Simulation, the controls used all the time. Stats (a table, the stage tree
        # and three plots) cannot fit under it in a 1280x720 window, and its key figures (bodies, step
        # and render time, frame rate) are in the overlay anyway; open, it scrolls with the always-shown
        # scrollbar. "Selected body" opens by itself when a body gets selected.
        selected = self.ctx.session.selected
        self._stats_open = False
        for title, method in SECTIONS:
            if title == "Selected body" and selected is not None and selected != self._selected_before:
                imgui.set_next_item_open(True)
            # the id after ### is the English title: a section stays open when the language changes
            header_flags = imgui.TreeNodeFlags_.default_open if title == "Simulation" else 0
            if imgui.collapsing_header(_(title) + "###" + title, header_flags):
                self._stats_open |= method == "_stats"
                self._guarded(SECTION_ERRORS[title], getattr(self, method))
        self._selected_before = selected
        self.overflow = max(0.0, imgui.get_cursor_pos_y() - imgui.get_scroll_y() - h)
        window = imgui.internal.get_current_window()
        self.overflow_x = max(0.0, window.dc.cursor_max_pos.x - window.content_region_rect.max.x)
        imgui.pop_item_width()
        imgui.end()

    # --- sections --------------------------------------------------------------------------------------
    def _language(self) -> None:
        """The Language box: every language named in itself; a choice switches the whole app at once (the
        next frame draws in it) and keeps it for the rest of the run."""
        current = language()
        self.language_items = {}
        if imgui.begin_combo(_("Language") + "##language", LANGUAGES[current]):
            for code, name in LANGUAGES.items():
                clicked, _selected = imgui.selectable(name, code == current)
                a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
                self.language_items[code] = (a.x, a.y, b.x, b.y)
                if clicked and code != current:
                    set_language(code)
            imgui.end_combo()
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.language_rect = (a.x, a.y, b.x, b.y)

    def _errors(self) -> None:
        session = self.ctx.session
        if not session.errors:
            return
        for message in session.errors:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(RED, _(message))
            imgui.pop_text_wrap_pos()
        if imgui.small_button(_("Dismiss errors")):
            session.errors = []
        imgui.separator()

    def _simulation(self) -> None:
        # rows 2 px closer than elsewhere: with the timeline's, the stepper's and the A/B toggles this
        # section would otherwise push the panel past a 1280x720 window
        imgui.push_style_var(imgui.StyleVar_.item_spacing, imgui.ImVec2(8, 4))
        try:
            self._simulation_rows()
        finally:
            imgui.pop_style_var()

    def _simulation_rows(self) -> None:
        ctx, session, sim = self.ctx, self.ctx.session, self.ctx.session.sim
        full = imgui.ImVec2(110, 0)
        if imgui.button((_("Run") + "##run") if sim.paused else (_("Pause") + "##pause"), full):
            session.toggle_pause()
        imgui.same_line()
        if imgui.button(_("Step") + "##step", full):
            session.single_step()
        imgui.same_line()
        if imgui.button(_("Reset") + "##reset", imgui.ImVec2(-1, 0)):
            ctx.reset()
        self.timeline.panel_toggles()
        if sim.paused or sim.real_rate is None:
            imgui.text_colored(DIM, _("step {n} · paused").format(n=sim.steps) if sim.paused
                               else _("step {n}").format(n=sim.steps))
        else:
            imgui.text_colored(YELLOW if sim.behind else DIM,
                               _("step {n} · {rate:.2f}× real time (set {scale:g}×)").format(
                                   n=sim.steps, rate=sim.real_rate, scale=sim.time_scale))
            if sim.behind:
                imgui.push_text_wrap_pos(0.0)
                imgui.text_colored(YELLOW, slowdown_note(sim))
                imgui.pop_text_wrap_pos()

        if self._scene_choices[0] != session.scene_name:  # the list depends on nothing else
            self._scene_choices = (session.scene_name, scene_choices(session.scene_name, list(self._files)))
        names = self._scene_choices[1]
        scene = session.scene_name if session.scene_name in names else names[0]
        if session.scene_path is not None:
            imgui.push_item_width(PANEL_WIDTH * 0.56 - 70)
        changed, name = _choice("##scene", scene, names)
        if changed and name != scene:
            ctx.load_scene(str(self._files[name]) if name in self._files and name not in SCENES else name)
        if session.scene_path is not None:
            imgui.pop_item_width()
            imgui.same_line()
            if imgui.button(_("Reload") + "##reload", imgui.ImVec2(62, 0)):
                ctx.load_scene(session.scene_path)  # reads the file again: edits made since show
            a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            self.reload_rect = (a.x, a.y, b.x, b.y)
            if imgui.is_item_hovered():
                imgui.set_tooltip(_("read {path} again").format(path=session.scene_path))
        imgui.same_line()
        imgui.text(_("Scene"))
        window_toggles(self.compare, self.plots, self.ledger)
        if session.lesson is not None:
            changed, show = imgui.checkbox(_("Lesson window (L)") + "##lesson", ctx.show_lesson)
            if changed:
                ctx.show_lesson = show
            imgui.same_line()  # two checkboxes to a row: at 1280x720 the panel has no row to spare
        if imgui.checkbox(_("Step through (S)") + "##stepper", self.stepper.active)[0]:
            self.stepper.toggle()
        _edited, self.scene_path = imgui.input_text("##load", self.scene_path)
        imgui.same_line()
        if imgui.button(_("Load file") + "##load_file", imgui.ImVec2(-1, 0)):
            ctx.load_scene(self.scene_path)
        _edited, self.save_path = imgui.input_text("##save", self.save_path)
        imgui.same_line()
        if imgui.button(_("Save world") + "##save_world", imgui.ImVec2(-1, 0)):
            self.saved = session.save(self.save_path)
        if self.saved:
            imgui.text_colored(DIM, _(self.saved))

        imgui.separator_text(_("Time"))
        changed, scale = imgui.slider_float(_("Time scale") + "##time_scale", sim.time_scale, 0.05, 4.0,
                                            "%.2f×", imgui.SliderFlags_.logarithmic)
        if changed:
            sim.time_scale = min(max(scale, 0.05), 4.0)
        changed, hz = imgui.slider_int(_("Step rate") + "##step_rate", round(1.0 / sim.dt), 15, 480,
                                       f"%d Hz · dt {1000 * sim.dt:.1f} ms")
        if changed:
            session.set_step_rate(hz)
        changed, n = imgui.slider_int(_("Steps / frame cap") + "##max_steps", sim.max_steps, 1, 16)
        if changed:
            sim.max_steps = n

        imgui.separator_text(_("Solver"))
        world = sim.world
        changed, n = imgui.slider_int(_("Sub-steps") + "##substeps", world.substeps, 1, 16)
        if changed:
            session.set_setting("substeps", n)
        changed, n = imgui.slider_int(_("Iterations") + "##iterations", world.iterations, 1, 50)
        if changed:
            session.set_setting("iterations", n)

    def _world(self) -> None:
        ctx, session, world = self.ctx, self.ctx.session, self.ctx.session.world
        g = np.asarray(world.gravity, dtype=float)
        on = bool(np.any(g != 0.0))
        changed, on_now = imgui.checkbox(_("Gravity") + "##gravity", on)
        if changed:
            if on_now:
                restored = self._saved_gravity if np.any(self._saved_gravity) else (0.0, -9.81, 0.0)
                session.set_setting("gravity", restored)
            else:
                self._saved_gravity = g.copy()
                session.set_setting("gravity", (0.0, 0.0, 0.0))
        changed, v = imgui.drag_float3(_("g (m/s²)") + "##g", g.tolist(), 0.05, -50.0, 50.0, "%.2f")
        if changed:
            session.set_setting("gravity", v)

        imgui.separator_text(_("Materials"))
        spawn_settings = ctx.spawn
        self._material_sliders(spawn_settings, "##world")
        if imgui.button(_("Apply to all bodies") + "##apply_all", imgui.ImVec2(-1, 0)):
            for body in world.bodies:
                body.restitution = spawn_settings.restitution
                body.friction = spawn_settings.friction
        changed, rule = _choice(_("Restitution rule") + "##restitution_rule", world.restitution_rule,
                                RESTITUTION_RULES)
        if changed:
            session.set_setting("restitution_rule", rule)

        imgui.separator_text(_("Methods"))
        changed, method = _choice(_("Response") + "##response", world.response, RESPONSES)
        if changed:
            session.set_setting("response", method)
        changed, method = _choice(_("Broad phase") + "##broadphase", world.broadphase, BROADPHASES)
        if changed:
            session.set_setting("broadphase", method)
        for name, label in (("ccd", N_("Continuous collision (CCD)")),
                            ("contact_cache", N_("Reuse resting manifolds")), ("sleeping", N_("Sleeping"))):
            changed, value = imgui.checkbox(_(label) + "##" + name, bool(getattr(world, name)))
            if changed:
                session.set_setting(name, value)

    def _advanced(self) -> None:
        """Every setting of ``ADVANCED``, each with its meaning underneath, changed through the session
        (validated by the engine, kept across a reset, saved with the scene)."""
        session, world = self.ctx.session, self.ctx.session.world
        for name, logarithmic in ADVANCED:
            s = SETTINGS[name]
            # the name and the meaning are the engine's (English), translated here as they are shown
            label = _(name.replace("_", " ").capitalize()) + "##" + name
            value = getattr(world, name)
            if s.kind == "bool":
                changed, new = imgui.checkbox(label, bool(value))
            elif s.kind == "choice":
                changed, new = _choice(label, value, s.choices)
            else:
                # a range around the default that a lesson needs, inside the setting's allowed range
                low = max(s.min, s.default / 100.0) if logarithmic else s.min
                high = min(s.max, max(20.0 * s.default, 0.05))
                flags = imgui.SliderFlags_.logarithmic if logarithmic else 0
                unit = f" {s.unit}" if s.unit else ""
                changed, new = imgui.slider_float(label, float(value), low, high, f"%.3g{unit}", flags)
                new = min(max(new, s.min), s.max)
            if changed:
                session.set_setting(name, new)
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(DIM, _(s.help))
            imgui.pop_text_wrap_pos()
        # the parallel loops' threads: a property of the machine (World.threads), not of the scene
        top = world.max_threads
        if top > 1:
            changed, n = imgui.slider_int(_("Threads") + "##threads", world.threads, 1, top, f"%d / {top}")
            if changed:
                session.set_setting("threads", min(max(n, 1), top))
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(DIM, _("threads the step's parallel loops run on (a world of fewer than {n} "
                                      "bodies steps on one: faster there); the results are the same bit for "
                                      "bit whatever the number").format(n=PARALLEL_BODIES))
            imgui.pop_text_wrap_pos()

    @staticmethod
    def _material_sliders(settings: spawn.SpawnSettings, suffix: str) -> None:
        changed, value = imgui.slider_float(_("Restitution") + suffix, settings.restitution, 0.0, 1.0, "%.2f")
        if changed:
            settings.restitution = max(value, 0.0)
        changed, value = imgui.slider_float(_("Friction") + suffix, settings.friction, 0.0, 2.0, "%.2f")
        if changed:
            settings.friction = max(value, 0.0)

    def _spawn(self) -> None:
        ctx, s = self.ctx, self.ctx.spawn
        world = ctx.session.world
        _changed, s.shape = _choice(_("Shape") + "##shape", s.shape, spawn.SHAPES,
                                    [_(k) for k in spawn.SHAPES])
        changed, value = imgui.slider_float(_("Size (m)") + "##size", s.size, 0.05, 2.0, "%.2f")
        if changed:
            s.size = max(value, 0.05)
        changed, value = imgui.slider_float(_("Mass (kg)") + "##spawn_mass", s.mass, 0.05, 1000.0, "%.2f",
                                            imgui.SliderFlags_.logarithmic)
        if changed:
            s.mass = max(value, 0.05)
        self._material_sliders(s, "##spawn")
        changed, n = imgui.slider_int(_("Count") + "##count", s.count, 1, 20)
        if changed:
            s.count = max(n, 1)
        if imgui.button(_("Drop at the view centre") + "##drop", imgui.ImVec2(-1, 0)):
            spawn.drop(world, s, ctx.view_centre_point())
        imgui.text_colored(DIM, _("E drops above the cursor · Space shoots"))
        changed, value = imgui.slider_float(_("Shot speed (m/s)") + "##shot_speed", s.shot_speed, 1.0, 150.0,
                                            "%.0f")
        if changed:
            s.shot_speed = max(value, 1.0)

        imgui.separator_text(_("Structures"))
        changed, n = imgui.slider_int(_("Tower height") + "##tower_height", s.tower_height, 1, 40)
        if changed:
            s.tower_height = max(n, 1)
        changed, wh = imgui.slider_int2(_("Wall width × height") + "##wall_size",
                                        [s.wall_width, s.wall_height], 1, 20)
        if changed:
            s.wall_width, s.wall_height = max(wh[0], 1), max(wh[1], 1)
        changed, n = imgui.slider_int(_("Pile count") + "##pile_count", s.pile_count, 1, 400)
        if changed:
            s.pile_count = max(n, 1)
        third = imgui.ImVec2((imgui.get_content_region_avail().x - 16) / 3, 0)
        if imgui.button(_("Tower") + "##tower", third):
            spawn.tower(world, s, ctx.view_centre_point())
        imgui.same_line()
        if imgui.button(_("Wall") + "##wall", third):
            spawn.wall(world, s, ctx.view_centre_point())
        imgui.same_line()
        if imgui.button(_("Pile") + "##pile", third):
            spawn.pile(world, s, ctx.view_centre_point())
        if imgui.button(_("Clear all dynamic bodies") + "##clear", imgui.ImVec2(-1, 0)):
            spawn.clear_dynamic(world)
            self.interaction.validate()

    def _selected(self) -> None:
        ctx, session = self.ctx, self.ctx.session
        body = session.selected
        if body is None or not body.alive:
            imgui.text_colored(DIM, _("Click a body to select it."))
            return
        world = session.world
        kind = KIND_NAMES[int(world.data.kind[body.index])]
        imgui.text_colored(ACCENT, f"#{body.index}  {body.shape!r}")
        imgui.same_line()
        imgui.text_colored(DIM, _("awake") if body.awake else _("asleep"))
        changed, static = imgui.checkbox(_("Static") + "##static", body.static)
        if changed:
            body.static = static
        if not body.static:
            changed, value = imgui.drag_float(_("Mass (kg)") + "##body_mass", body.mass, 0.05, 0.01, 1e4,
                                              "%.3f")
            if changed:
                body.mass = max(value, 0.01)
        changed, value = imgui.slider_float(_("Restitution") + f"##{kind}", body.restitution, 0.0, 1.0,
                                            "%.2f")
        if changed:
            body.restitution = max(value, 0.0)
        changed, value = imgui.slider_float(_("Friction") + f"##{kind}", body.friction, 0.0, 2.0, "%.2f")
        if changed:
            body.friction = max(value, 0.0)
        changed, v = imgui.drag_float3(_("Position") + "##position", body.position.tolist(), 0.02, 0.0, 0.0,
                                       "%.2f")
        if changed:
            body.position = v
            session.sim.sync()
        changed, v = imgui.drag_float3(_("Velocity") + "##velocity", body.linear_velocity.tolist(), 0.05, 0.0,
                                       0.0, "%.2f")
        if changed:
            body.linear_velocity = v
        changed, v = imgui.drag_float3(_("Spin (rad/s)") + "##spin", body.angular_velocity.tolist(), 0.05,
                                       0.0, 0.0, "%.2f")
        if changed:
            body.angular_velocity = v
        third = imgui.ImVec2((imgui.get_content_region_avail().x - 16) / 3, 0)
        if imgui.button(_("Focus (F)") + "##focus", third):
            ctx.focus(body)
        imgui.same_line()
        if imgui.button(_("Wake") + "##wake", third):
            body.awake = True
        imgui.same_line()
        if imgui.button(_("Delete") + "##delete", third):
            session.delete_selected()

    def _mouse(self) -> None:
        ia = self.interaction
        s = ia.settings
        changed = False
        c, value = imgui.slider_float(_("Grab force cap (×m·g)") + "##grab_cap", s.grab_force_g, 1.0, 1000.0,
                                      "%.0f", imgui.SliderFlags_.logarithmic)
        if c:
            s.grab_force_g, changed = max(value, 1.0), True
        c, value = imgui.slider_float(_("Spring frequency (Hz)") + "##grab_hz", s.grab_frequency, 0.5, 30.0,
                                      "%.1f")
        if c:
            s.grab_frequency, changed = max(value, 0.5), True
        c, value = imgui.slider_float(_("Damping ratio") + "##grab_damping", s.grab_damping, 0.0, 3.0, "%.2f")
        if c:
            s.grab_damping, changed = max(value, 0.0), True
        if changed:
            ia.apply_grab_settings()
        c, value = imgui.slider_float(_("Push Δv (m/s)") + "##push", s.push_speed, 0.1, 50.0, "%.1f",
                                      imgui.SliderFlags_.logarithmic)
        if c:
            s.push_speed = max(value, 0.1)
        if ia.grab is not None:
            force = float(np.linalg.norm(ia.grab.force))
            cap = ia.grab.max_force
            imgui.text(_("Grab force {force:.1f} N of {cap:.0f} N").format(force=force, cap=cap))
            imgui.progress_bar(min(force / cap, 1.0) if cap > 0 else 0.0, imgui.ImVec2(-1, 0))
        else:
            imgui.text_colored(DIM, _("Drag a body with the left button to grab it."))

    def _debug(self) -> None:
        opts = self.ctx.options
        for name, label in DEBUG_TOGGLES:
            changed, value = imgui.checkbox(_(label) + "##" + name, bool(getattr(opts, name)))
            if changed:
                setattr(opts, name, value)
        changed, scale = _choice(_("Normal length") + "##normal_scale", opts.normal_scale, NORMAL_SCALES,
                                 [_(k) for k in NORMAL_SCALES])
        if changed:
            opts.normal_scale = scale
        if opts.broadphase:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(DIM, broadphase_legend(self.ctx.session.world))
            imgui.pop_text_wrap_pos()

    def _stats(self) -> None:
        ctx, sim = self.ctx, self.ctx.session.sim
        world = sim.world
        d = world.data
        n = d.n
        live = d.alive[:n]
        static = live & d.static[:n]
        dynamic = live & ~d.static[:n]
        awake = int(np.count_nonzero(dynamic & d.awake[:n]))
        contacts = world.contacts
        m = int(contacts.count)
        points = int(contacts.npoints[:m].sum())
        t = world.timings
        ke, pe = self.kinetic, self.potential  # sampled this frame (``_record_history``)
        rows = ((_("Bodies"), _("{n}  ({awake} awake, {asleep} asleep, {static} static)").format(
                    n=int(live.sum()), awake=awake, asleep=int(dynamic.sum()) - awake,
                    static=int(static.sum()))),
                (_("Broad-phase pairs"), f"{len(world.pairs)}  ({world.broadphase})"),
                (_("Manifolds"), _("{m}  ({points} points, {reused} reused)").format(
                    m=m, points=points, reused=world.cached_manifolds)),
                (_("Step"), f"{sum(t.values()):.2f} ms"),
                (_("Render"), f"{ctx.stats.render_ms:.2f} ms   (UI {ctx.stats.ui_ms:.2f} ms)"),
                (_("Frame rate"), _("{fps:.0f} FPS  ({steps} steps this frame)").format(
                    fps=ctx.stats.fps, steps=sim.steps_last_frame)),
                (_("Energy"), _("{total:.1f} J  (kinetic {ke:.1f}, potential {pe:.1f})").format(
                    total=ke + pe, ke=ke, pe=pe)))
        if imgui.begin_table("stats", 2, imgui.TableFlags_.sizing_fixed_fit):
            # the label column as wide as its longest label, so that no label runs into its value
            imgui.table_setup_column("label", imgui.TableColumnFlags_.width_fixed,
                                     max(imgui.calc_text_size(label).x for label, _value in rows) + 12.0)
            imgui.table_setup_column("value", imgui.TableColumnFlags_.width_stretch)
            for label, value in rows:
                _row(label, value)
            imgui.end_table()
        self._stage_tree(t)
        avail = imgui.get_content_region_avail().x
        imgui.plot_lines("##energy", self.energy, overlay_text=_("total energy (J)"),
                         graph_size=imgui.ImVec2(avail, 48))
        imgui.plot_lines("##step", self.step_ms, overlay_text=_("step time (ms)"), scale_min=0.0,
                         graph_size=imgui.ImVec2(avail, 48))

    def _stage_tree(self, t: dict[str, float]) -> None:
        """The step's stages as a tree (World.STAGE_GROUPS: detection, response, sleep and events), each
        group with its total and its stages in the order they run, then the groups' history."""
        flags = imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg
        if imgui.begin_table("stages", 2, flags):
            for group, stages in STAGE_GROUPS:
                imgui.table_next_row()
                imgui.table_next_column()
                is_open = imgui.tree_node_ex(_(group.capitalize()) + "###" + group,
                                             imgui.TreeNodeFlags_.span_full_width)
                imgui.table_next_column()
                imgui.text(f"{sum(t.get(s, 0.0) for s in stages):.2f} ms")
                if is_open:
                    for stage in stages:
                        _row("   " + _(stage.replace("_", " ")), f"{t.get(stage, 0.0):.3f} ms")
                    imgui.tree_pop()
            imgui.end_table()
        if implot.begin_plot("##stages", imgui.ImVec2(-1, 110), implot.Flags_.no_mouse_text):
            implot.setup_axes("", "ms", implot.AxisFlags_.no_tick_labels,
                              implot.AxisFlags_.auto_fit)
            implot.setup_axis_limits(implot.ImAxis_.x1, 0, HISTORY - 1, implot.Cond_.always)
            implot.setup_legend(implot.Location_.north_west, 0)
            start = 0
            for group, stages in STAGE_GROUPS:
                rows = self.stage_ms[start:start + len(stages)].sum(axis=0)
                implot.plot_line(_(group) + "###" + group, np.ascontiguousarray(rows))
                start += len(stages)
            implot.end_plot()

    def _help(self) -> None:
        if imgui.begin_table("help", 2, imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg):
            for control, meaning in HELP:
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text_colored(ACCENT, _(control))
                imgui.table_next_column()
                imgui.push_text_wrap_pos(0.0)
                imgui.text(_(meaning))
                imgui.pop_text_wrap_pos()
            imgui.end_table()
