"""The Dear ImGui panel: simulation controls, world settings, spawning, the selected body, mouse tools,
debug drawing, statistics and help, each under a collapsible header; a status overlay at the top-left
and a tooltip over the hovered body.

Every widget acts right away (immediate mode), on the ``UiContext`` it was given: commands go to the
session, view settings to the context. Each section is drawn inside its own error
guard, so a bad value or a failing action shows a red message and the rest of the panel keeps working.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from imgui_bundle import imgui, implot

from ..engine import BROADPHASES, KIND_NAMES, RESPONSES, RESTITUTION_RULES, SETTINGS, STAGE_GROUPS, STAGES
from ..lessons import Label
from ..render.debug_draw import broadphase_caption, broadphase_legend
from ..scenes import SCENES
from ..session import MAX_FRAME_SECONDS, Simulation, scene_files
from . import spawn
from .context import PANEL_WIDTH, UiContext
from .event_log import EventLogWindow
from .interaction import Interaction
from .lesson import LessonWindow, draw_plates, view_span, visible_labels
from .timeline_window import TimelineWindow

HISTORY = 240
DEBUG_TOGGLES = (("shadows", "Shadows"), ("grid", "Ground grid"), ("outlines", "Selection outlines"),
                 ("contacts", "Contact points"), ("normals", "Contact normals"),
                 ("aabbs", "Bounding boxes (AABB)"), ("broadphase", "Broad-phase structure"),
                 ("velocities", "Velocities"), ("grab_spring", "Grab spring and force"),
                 ("joints", "Joints"), ("xray", "X-ray (hidden debug lines faint)"))
NORMAL_SCALES = ("depth", "impulse")
# the Advanced section: settings the seed tutorials discuss, each shown with its one-line meaning from the
# engine's SETTINGS table; (name, slider is logarithmic)
ADVANCED = (("penalty_hertz", True), ("penalty_damping_ratio", True), ("contact_hertz", True),
            ("contact_damping_ratio", True), ("max_push_velocity", True), ("restitution_threshold", False),
            ("linear_slop", False), ("speculative_distance", False), ("warm_starting", False),
            ("friction_rule", False), ("contact_solver", False), ("linear_damping", True),
            ("angular_damping", True))
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)
DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)

HELP = (
    ("Left drag a body", "grab it with a spring; the wheel moves it nearer / farther"),
    ("Left click", "select a body (empty space: deselect)"),
    ("Ctrl + left click", "push the body along the view ray"),
    ("Right drag", "orbit the camera"),
    ("Middle drag, Shift + right drag", "pan"),
    ("Wheel", "zoom"),
    ("Space", "shoot the spawn shape through the cursor"),
    ("E", "drop the spawn shape above the cursor"),
    ("P", "pause / run"),
    ("O or .", "single step (pauses)"),
    ("R", "reset the scene"),
    ("F", "focus the camera on the selected body"),
    ("Home", "reset the view"),
    ("Delete / Backspace", "delete the selected body"),
    ("Esc", "let go, deselect"),
    ("H", "hide / show the panel"),
    ("L", "hide / show the Lesson window"),
    ("T", "hide / show the timeline"),
    ("Left / Right arrow", "step back / forward through the timeline (pauses)"),
    ("Ctrl + Q", "quit"),
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


def _choice(label: str, value: str, options: tuple[str, ...]) -> tuple[bool, str]:
    """A combo box over ``options``; returns (changed, the chosen option)."""
    index = options.index(value) if value in options else 0
    changed, index = imgui.combo(label, index, list(options))
    return changed, options[index]


def slowdown_note(sim: Simulation) -> str:
    """The line that says why ``sim`` runs slower than real time (``Simulation.slowed_by``)."""
    if sim.slowed_by == "step cap":
        return (f"slowed by the step cap: frames last longer than {sim.max_steps} steps "
                f"({1000.0 * sim.max_steps * sim.dt / sim.time_scale:.0f} ms)")
    cap_ms = 1000.0 * MAX_FRAME_SECONDS
    return f"slowed: frames over {cap_ms:.0f} ms count as {cap_ms:.0f} ms"


def _row(label: str, value: str) -> None:
    """One label–value row of a two-column table (the label dimmed)."""
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.text_colored(DIM, label)
    imgui.table_next_column()
    imgui.text(value)


class Panel:
    """The ImGui windows over one ``UiContext`` and its mouse ``Interaction``; ``draw()`` is called once
    per frame between ``new_frame`` and ``render``."""

    def __init__(self, ctx: UiContext, interaction: Interaction) -> None:
        self.ctx = ctx
        self.interaction = interaction
        self.scene_path = "assets/scenes/example.json"
        self.save_path = "my_scene.json"
        self.saved = ""
        self.energy = np.zeros(HISTORY, np.float32)
        self.step_ms = np.zeros(HISTORY, np.float32)
        self.stage_ms = np.zeros((len(STAGES), HISTORY), np.float32)  # per stage, per frame
        self._saved_gravity = np.array([0.0, -9.81, 0.0])
        self.lesson = LessonWindow(ctx)
        self.event_log = EventLogWindow(ctx)
        self.timeline = TimelineWindow(ctx, self.event_log)
        self.overflow = 0.0
        """How far (pixels) the panel's open sections reach below its window last frame (0: they fit)."""
        self._files = {path.name: path for path in scene_files()}
        self._selected_before = None
        self.reload_rect: tuple[float, float, float, float] | None = None
        """Where the Reload button of a scene file was drawn last (window points, top-left origin)."""

    # --- frame -----------------------------------------------------------------------------------------
    def draw(self) -> None:
        """Draw the overlay, the tooltip and (unless hidden with H) the panel."""
        self._record_history()
        self._overlay()
        self._tooltip()
        self.lesson.draw()
        self.timeline.draw()
        self.event_log.draw()
        if self.ctx.options.broadphase:
            self._guarded("the broad-phase caption", self._broadphase_caption)
        if self.ctx.show_panel:
            self._panel()

    def _broadphase_caption(self) -> None:
        """Name what the broad-phase drawing shows, in the view beside it (sort and sweep's lanes)."""
        caption = broadphase_caption(self.ctx.session.world)
        if caption is not None:
            draw_plates(visible_labels(self.ctx, [Label(tuple(caption[0]), caption[1])]),
                        span=view_span(self.ctx))

    def _record_history(self) -> None:
        world = self.ctx.session.world
        try:
            energy = world.kinetic_energy() + world.potential_energy()
        except Exception:  # noqa: BLE001 - statistics never stop the frame
            energy = float("nan")
        self.energy = np.roll(self.energy, -1)
        self.energy[-1] = energy
        self.step_ms = np.roll(self.step_ms, -1)
        self.step_ms[-1] = sum(world.timings.values())
        self.stage_ms = np.roll(self.stage_ms, -1, axis=1)
        self.stage_ms[:, -1] = [world.timings.get(stage, 0.0) for stage in STAGES]

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
        flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
                 | imgui.WindowFlags_.no_focus_on_appearing | imgui.WindowFlags_.no_nav
                 | imgui.WindowFlags_.no_saved_settings)
        imgui.begin("##status", None, flags)
        self._remember_rect()
        imgui.text_colored(ACCENT, session.scene_name or "(no scene)")
        imgui.same_line()
        if sim.paused:
            imgui.text_colored(YELLOW, "  PAUSED")
        elif sim.behind:
            imgui.text_colored(YELLOW, f"  {sim.real_rate:.2f}× real time (set {sim.time_scale:g}×)")
        else:
            imgui.text_colored(DIM, f"  {sim.time_scale:g}×")
        world = sim.world
        idle = " (idle)" if ctx.stats.idle else ""
        bodies = counted(len(world.bodies), "body", "bodies")
        imgui.text(f"{bodies}   t = {sim.time:.2f} s   {ctx.stats.fps:.0f} FPS{idle}")
        imgui.text_colored(DIM, f"step {sim.step_ms:.2f} ms · render {ctx.stats.render_ms:.2f} ms")
        if sim.behind:
            imgui.text_colored(YELLOW, slowdown_note(sim))
        if session.errors:
            imgui.text_colored(RED, f"{len(session.errors)} error(s): see the panel")
        imgui.end()

    def _tooltip(self) -> None:
        ia = self.interaction
        body = ia.hovered
        if body is None or ia.grab is not None or not body.alive or imgui.get_io().want_capture_mouse:
            return
        kind = KIND_NAMES[int(self.ctx.session.world.data.kind[body.index])]
        mass = "static" if body.static else f"{body.mass:.3g} kg"
        speed = float(np.linalg.norm(body.linear_velocity))
        imgui.set_tooltip(f"#{body.index} {kind} · {mass} · {speed:.2f} m/s")

    def _panel(self) -> None:
        w, h = self.ctx.window_size
        imgui.set_next_window_pos(imgui.ImVec2(w - PANEL_WIDTH, 0))
        imgui.set_next_window_size(imgui.ImVec2(PANEL_WIDTH, h))
        # an always-visible scrollbar: when the open sections are taller than the window, it shows
        flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
                 | imgui.WindowFlags_.always_vertical_scrollbar)
        imgui.begin("sandbox###panel", None, flags)
        self._remember_rect()
        imgui.push_item_width(PANEL_WIDTH * 0.56)
        self._guarded("showing errors", self._errors)
        # Open at first: only Simulation, the controls used all the time. Stats (a table, the stage tree
        # and three plots) cannot fit under it in a 1280x720 window, and its key figures (bodies, step
        # and render time, frame rate) are in the overlay anyway; open, it scrolls with the always-shown
        # scrollbar. "Selected body" opens by itself when a body gets selected.
        opened = imgui.TreeNodeFlags_.default_open
        selected = self.ctx.session.selected
        sections = (("Simulation", opened, self._simulation), ("World", 0, self._world),
                    ("Advanced", 0, self._advanced), ("Spawn", 0, self._spawn),
                    ("Selected body", 0, self._selected),
                    ("Mouse tools", 0, self._mouse), ("Debug draw", 0, self._debug),
                    ("Stats", 0, self._stats), ("Help", 0, self._help))
        for title, header_flags, section in sections:
            if title == "Selected body" and selected is not None and selected != self._selected_before:
                imgui.set_next_item_open(True)
            if imgui.collapsing_header(title, header_flags):
                self._guarded(f"panel section {title}", section)
        self._selected_before = selected
        self.overflow = max(0.0, imgui.get_cursor_pos_y() - imgui.get_scroll_y() - h)
        imgui.pop_item_width()
        imgui.end()

    # --- sections --------------------------------------------------------------------------------------
    def _errors(self) -> None:
        session = self.ctx.session
        if not session.errors:
            return
        for message in session.errors:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(RED, message)
            imgui.pop_text_wrap_pos()
        if imgui.small_button("Dismiss errors"):
            session.errors = []
        imgui.separator()

    def _simulation(self) -> None:
        ctx, session, sim = self.ctx, self.ctx.session, self.ctx.session.sim
        full = imgui.ImVec2(110, 0)
        if imgui.button("Run" if sim.paused else "Pause", full):
            session.toggle_pause()
        imgui.same_line()
        if imgui.button("Step", full):
            session.single_step()
        imgui.same_line()
        if imgui.button("Reset", imgui.ImVec2(-1, 0)):
            ctx.reset()
        imgui.text_colored(DIM, f"t = {sim.time:.2f} s   {sim.steps} steps   "
                                f"{sim.steps_last_frame} this frame")
        self.timeline.panel_toggles()
        if sim.real_rate is not None and not sim.paused:
            imgui.text_colored(YELLOW if sim.behind else DIM,
                               f"running at {sim.real_rate:.2f}× real time (set {sim.time_scale:g}×)")
            if sim.behind:
                imgui.push_text_wrap_pos(0.0)
                imgui.text_colored(YELLOW, slowdown_note(sim))
                imgui.pop_text_wrap_pos()

        names = scene_choices(session.scene_name, list(self._files))
        scene = session.scene_name if session.scene_name in names else names[0]
        if session.scene_path is not None:
            imgui.push_item_width(PANEL_WIDTH * 0.56 - 70)
        changed, name = _choice("##scene", scene, names)
        if changed and name != scene:
            ctx.load_scene(str(self._files[name]) if name in self._files and name not in SCENES else name)
        if session.scene_path is not None:
            imgui.pop_item_width()
            imgui.same_line()
            if imgui.button("Reload", imgui.ImVec2(62, 0)):
                ctx.load_scene(session.scene_path)  # reads the file again: edits made since show
            a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
            self.reload_rect = (a.x, a.y, b.x, b.y)
            if imgui.is_item_hovered():
                imgui.set_tooltip(f"read {session.scene_path} again")
        imgui.same_line()
        imgui.text("Scene")
        if session.lesson is not None:
            changed, show = imgui.checkbox("Lesson window (L)", ctx.show_lesson)
            if changed:
                ctx.show_lesson = show
        _, self.scene_path = imgui.input_text("##load", self.scene_path)
        imgui.same_line()
        if imgui.button("Load file", imgui.ImVec2(-1, 0)):
            ctx.load_scene(self.scene_path)
        _, self.save_path = imgui.input_text("##save", self.save_path)
        imgui.same_line()
        if imgui.button("Save world", imgui.ImVec2(-1, 0)):
            self.saved = session.save(self.save_path)
        if self.saved:
            imgui.text_colored(DIM, self.saved)

        imgui.separator_text("Time")
        changed, scale = imgui.slider_float("Time scale", sim.time_scale, 0.05, 4.0, "%.2f×",
                                            imgui.SliderFlags_.logarithmic)
        if changed:
            sim.time_scale = min(max(scale, 0.05), 4.0)
        changed, hz = imgui.slider_int("Step rate", round(1.0 / sim.dt), 15, 480,
                                       f"%d Hz · dt {1000 * sim.dt:.1f} ms")
        if changed:
            session.set_step_rate(hz)
        changed, n = imgui.slider_int("Steps / frame cap", sim.max_steps, 1, 16)
        if changed:
            sim.max_steps = n

        imgui.separator_text("Solver")
        world = sim.world
        changed, n = imgui.slider_int("Sub-steps", world.substeps, 1, 16)
        if changed:
            session.set_setting("substeps", n)
        changed, n = imgui.slider_int("Iterations", world.iterations, 1, 50)
        if changed:
            session.set_setting("iterations", n)

    def _world(self) -> None:
        ctx, session, world = self.ctx, self.ctx.session, self.ctx.session.world
        g = np.asarray(world.gravity, dtype=float)
        on = bool(np.any(g != 0.0))
        changed, on_now = imgui.checkbox("Gravity", on)
        if changed:
            if on_now:
                restored = self._saved_gravity if np.any(self._saved_gravity) else (0.0, -9.81, 0.0)
                session.set_setting("gravity", restored)
            else:
                self._saved_gravity = g.copy()
                session.set_setting("gravity", (0.0, 0.0, 0.0))
        changed, v = imgui.drag_float3("g (m/s²)", g.tolist(), 0.05, -50.0, 50.0, "%.2f")
        if changed:
            session.set_setting("gravity", v)

        imgui.separator_text("Materials")
        spawn_settings = ctx.spawn
        self._material_sliders(spawn_settings, "##world")
        if imgui.button("Apply to all bodies", imgui.ImVec2(-1, 0)):
            for body in world.bodies:
                body.restitution = spawn_settings.restitution
                body.friction = spawn_settings.friction
        changed, rule = _choice("Restitution rule", world.restitution_rule, RESTITUTION_RULES)
        if changed:
            session.set_setting("restitution_rule", rule)

        imgui.separator_text("Methods")
        changed, method = _choice("Response", world.response, RESPONSES)
        if changed:
            session.set_setting("response", method)
        changed, method = _choice("Broad phase", world.broadphase, BROADPHASES)
        if changed:
            session.set_setting("broadphase", method)
        for name, label in (("ccd", "Continuous collision (CCD)"),
                            ("contact_cache", "Reuse resting manifolds"), ("sleeping", "Sleeping")):
            changed, value = imgui.checkbox(label, bool(getattr(world, name)))
            if changed:
                session.set_setting(name, value)

    def _advanced(self) -> None:
        """Every setting of ``ADVANCED``, each with its meaning underneath, changed through the session
        (validated by the engine, kept across a reset, saved with the scene)."""
        session, world = self.ctx.session, self.ctx.session.world
        for name, logarithmic in ADVANCED:
            s = SETTINGS[name]
            label = name.replace("_", " ").capitalize()
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
            imgui.text_colored(DIM, s.help)
            imgui.pop_text_wrap_pos()

    @staticmethod
    def _material_sliders(settings: spawn.SpawnSettings, suffix: str) -> None:
        changed, value = imgui.slider_float(f"Restitution{suffix}", settings.restitution, 0.0, 1.0, "%.2f")
        if changed:
            settings.restitution = max(value, 0.0)
        changed, value = imgui.slider_float(f"Friction{suffix}", settings.friction, 0.0, 2.0, "%.2f")
        if changed:
            settings.friction = max(value, 0.0)

    def _spawn(self) -> None:
        ctx, s = self.ctx, self.ctx.spawn
        world = ctx.session.world
        _, s.shape = _choice("Shape", s.shape, spawn.SHAPES)
        changed, value = imgui.slider_float("Size (m)", s.size, 0.05, 2.0, "%.2f")
        if changed:
            s.size = max(value, 0.05)
        changed, value = imgui.slider_float("Mass (kg)", s.mass, 0.05, 1000.0, "%.2f",
                                            imgui.SliderFlags_.logarithmic)
        if changed:
            s.mass = max(value, 0.05)
        self._material_sliders(s, "##spawn")
        changed, n = imgui.slider_int("Count", s.count, 1, 20)
        if changed:
            s.count = max(n, 1)
        if imgui.button("Drop at the view centre", imgui.ImVec2(-1, 0)):
            spawn.drop(world, s, ctx.view_centre_point())
        imgui.text_colored(DIM, "E drops above the cursor · Space shoots")
        changed, value = imgui.slider_float("Shot speed (m/s)", s.shot_speed, 1.0, 150.0, "%.0f")
        if changed:
            s.shot_speed = max(value, 1.0)

        imgui.separator_text("Structures")
        changed, n = imgui.slider_int("Tower height", s.tower_height, 1, 40)
        if changed:
            s.tower_height = max(n, 1)
        changed, wh = imgui.slider_int2("Wall width × height", [s.wall_width, s.wall_height], 1, 20)
        if changed:
            s.wall_width, s.wall_height = max(wh[0], 1), max(wh[1], 1)
        changed, n = imgui.slider_int("Pile count", s.pile_count, 1, 400)
        if changed:
            s.pile_count = max(n, 1)
        third = imgui.ImVec2((imgui.get_content_region_avail().x - 16) / 3, 0)
        if imgui.button("Tower", third):
            spawn.tower(world, s, ctx.view_centre_point())
        imgui.same_line()
        if imgui.button("Wall", third):
            spawn.wall(world, s, ctx.view_centre_point())
        imgui.same_line()
        if imgui.button("Pile", third):
            spawn.pile(world, s, ctx.view_centre_point())
        if imgui.button("Clear all dynamic bodies", imgui.ImVec2(-1, 0)):
            spawn.clear_dynamic(world)
            self.interaction.validate()

    def _selected(self) -> None:
        ctx, session = self.ctx, self.ctx.session
        body = session.selected
        if body is None or not body.alive:
            imgui.text_colored(DIM, "Click a body to select it.")
            return
        world = session.world
        kind = KIND_NAMES[int(world.data.kind[body.index])]
        imgui.text_colored(ACCENT, f"#{body.index}  {body.shape!r}")
        imgui.same_line()
        imgui.text_colored(DIM, "awake" if body.awake else "asleep")
        changed, static = imgui.checkbox("Static", body.static)
        if changed:
            body.static = static
        if not body.static:
            changed, value = imgui.drag_float("Mass (kg)", body.mass, 0.05, 0.01, 1e4, "%.3f")
            if changed:
                body.mass = max(value, 0.01)
        changed, value = imgui.slider_float(f"Restitution##{kind}", body.restitution, 0.0, 1.0, "%.2f")
        if changed:
            body.restitution = max(value, 0.0)
        changed, value = imgui.slider_float(f"Friction##{kind}", body.friction, 0.0, 2.0, "%.2f")
        if changed:
            body.friction = max(value, 0.0)
        changed, v = imgui.drag_float3("Position", body.position.tolist(), 0.02, 0.0, 0.0, "%.2f")
        if changed:
            body.position = v
            session.sim.sync()
        changed, v = imgui.drag_float3("Velocity", body.linear_velocity.tolist(), 0.05, 0.0, 0.0, "%.2f")
        if changed:
            body.linear_velocity = v
        changed, v = imgui.drag_float3("Spin (rad/s)", body.angular_velocity.tolist(), 0.05, 0.0, 0.0,
                                       "%.2f")
        if changed:
            body.angular_velocity = v
        third = imgui.ImVec2((imgui.get_content_region_avail().x - 16) / 3, 0)
        if imgui.button("Focus (F)", third):
            ctx.focus(body)
        imgui.same_line()
        if imgui.button("Wake", third):
            body.awake = True
        imgui.same_line()
        if imgui.button("Delete", third):
            session.delete_selected()

    def _mouse(self) -> None:
        ia = self.interaction
        s = ia.settings
        changed = False
        c, value = imgui.slider_float("Grab force cap (× m·g)", s.grab_force_g, 1.0, 1000.0, "%.0f",
                                      imgui.SliderFlags_.logarithmic)
        if c:
            s.grab_force_g, changed = max(value, 1.0), True
        c, value = imgui.slider_float("Spring frequency (Hz)", s.grab_frequency, 0.5, 30.0, "%.1f")
        if c:
            s.grab_frequency, changed = max(value, 0.5), True
        c, value = imgui.slider_float("Damping ratio", s.grab_damping, 0.0, 3.0, "%.2f")
        if c:
            s.grab_damping, changed = max(value, 0.0), True
        if changed:
            ia.apply_grab_settings()
        c, value = imgui.slider_float("Push Δv (m/s)", s.push_speed, 0.1, 50.0, "%.1f",
                                      imgui.SliderFlags_.logarithmic)
        if c:
            s.push_speed = max(value, 0.1)
        if ia.grab is not None:
            force = float(np.linalg.norm(ia.grab.force))
            cap = ia.grab.max_force
            imgui.text(f"Grab force {force:.1f} N of {cap:.0f} N")
            imgui.progress_bar(min(force / cap, 1.0) if cap > 0 else 0.0, imgui.ImVec2(-1, 0))
        else:
            imgui.text_colored(DIM, "Drag a body with the left button to grab it.")

    def _debug(self) -> None:
        opts = self.ctx.options
        for name, label in DEBUG_TOGGLES:
            changed, value = imgui.checkbox(label, bool(getattr(opts, name)))
            if changed:
                setattr(opts, name, value)
        changed, scale = _choice("Normal length", opts.normal_scale, NORMAL_SCALES)
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
        ke, pe = world.kinetic_energy(), world.potential_energy()
        rows = (("Bodies", f"{int(live.sum())}  ({awake} awake, {int(dynamic.sum()) - awake} asleep, "
                           f"{int(static.sum())} static)"),
                ("Broad-phase pairs", f"{len(world.pairs)}  ({world.broadphase})"),
                ("Manifolds", f"{m}  ({points} points, {world.cached_manifolds} reused)"),
                ("Step", f"{sum(t.values()):.2f} ms"),
                ("Render", f"{ctx.stats.render_ms:.2f} ms   (UI {ctx.stats.ui_ms:.2f} ms)"),
                ("Frame rate", f"{ctx.stats.fps:.0f} FPS  ({sim.steps_last_frame} steps this frame)"),
                ("Energy", f"{ke + pe:.1f} J  (kinetic {ke:.1f}, potential {pe:.1f})"))
        if imgui.begin_table("stats", 2, imgui.TableFlags_.sizing_fixed_fit):
            # the label column as wide as its longest label, so that no label runs into its value
            imgui.table_setup_column("label", imgui.TableColumnFlags_.width_fixed,
                                     max(imgui.calc_text_size(label).x for label, _ in rows) + 12.0)
            imgui.table_setup_column("value", imgui.TableColumnFlags_.width_stretch)
            for label, value in rows:
                _row(label, value)
            imgui.end_table()
        self._stage_tree(t)
        avail = imgui.get_content_region_avail().x
        imgui.plot_lines("##energy", self.energy, overlay_text="total energy (J)",
                         graph_size=imgui.ImVec2(avail, 48))
        imgui.plot_lines("##step", self.step_ms, overlay_text="step time (ms)", scale_min=0.0,
                         graph_size=imgui.ImVec2(avail, 48))

    def _stage_tree(self, t: dict[str, float]) -> None:
        """The step's stages as a tree (World.STAGE_GROUPS: detection, response, sleep and events), each
        group with its total and its stages in the order they run, then the groups' history."""
        flags = imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg
        if imgui.begin_table("stages", 2, flags):
            for group, stages in STAGE_GROUPS:
                imgui.table_next_row()
                imgui.table_next_column()
                is_open = imgui.tree_node_ex(group.capitalize(), imgui.TreeNodeFlags_.span_full_width)
                imgui.table_next_column()
                imgui.text(f"{sum(t.get(s, 0.0) for s in stages):.2f} ms")
                if is_open:
                    for stage in stages:
                        _row(f"   {stage.replace('_', ' ')}", f"{t.get(stage, 0.0):.3f} ms")
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
                implot.plot_line(group, np.ascontiguousarray(rows))
                start += len(stages)
            implot.end_plot()

    def _help(self) -> None:
        if imgui.begin_table("help", 2, imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg):
            for control, meaning in HELP:
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text_colored(ACCENT, control)
                imgui.table_next_column()
                imgui.push_text_wrap_pos(0.0)
                imgui.text(meaning)
                imgui.pop_text_wrap_pos()
            imgui.end_table()
