"""The stepper's "narrow phase" and "manifold" stages for one pair of a ``StepTrace`` (``PairView``).

The stepper window (``stepper.py``) walks a traced step stage by stage; for these two stages it asks a
``PairView`` for the sub-steps of the chosen pair, draws the view's panel content inside its window and
lets the view add 3D geometry to the renderer's debug batch (``Renderer.render(..., overlay=...)``).

What it shows comes from ``StepTrace.pair`` (``sandbox/engine/trace.py``): the narrow phase run again on
the state before the step, recording every separating axis with its separation, the chosen axis, the
reference and incident faces, the polygon after each clip plane, the points removed, the closest points
of round shapes and GJK's simplices. The 3D geometry is therefore where the bodies were when the narrow
phase looked at them, at the start of the step (a resting body moves by a fraction of a millimetre).
"""

from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from ..engine.trace import PairTrace, StepTrace
from ..i18n import N_, _

NARROW, MANIFOLD = "narrow phase", "manifold"
MAX_LISTED_PAIRS = 200
"""The pair box lists at most this many touching pairs, deepest first (the 1000-body pile has thousands)."""
MAX_CHART_HEIGHT = 420.0
"""Pixels of the separation chart shown at once; more axes scroll."""
AXIS_HALF_LENGTH = 0.8
"""Metres drawn on either side of the pair's centre along an axis."""

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)
RED = imgui.ImVec4(1.0, 0.38, 0.35, 1.0)

# 3D colours (sRGB, alpha), one meaning each
AXIS_COLOR = (1.0, 0.85, 0.15, 1.0)  # the chosen axis
OVERLAP_COLOR = (0.35, 0.85, 0.40, 0.9)  # an axis along which the shapes overlap
APART_COLOR = (1.0, 0.30, 0.25, 0.9)  # an axis along which they are apart
REFERENCE_COLOR = (1.0, 0.55, 0.10, 1.0)
INCIDENT_COLOR = (0.20, 0.75, 1.0, 1.0)
CLIPPED_COLOR = (1.0, 0.95, 0.30, 1.0)
PLANE_COLOR = (0.95, 0.30, 0.95, 1.0)  # the side plane of the current clip pass (its reference edge)
REMOVED_COLOR = (0.55, 0.55, 0.60, 1.0)
CONTACT_COLOR = (0.95, 0.15, 0.10, 1.0)
SPECULATIVE_COLOR = (1.0, 0.70, 0.20, 0.9)
POLYHEDRON_COLOR = (0.35, 0.85, 0.40, 1.0)  # GJK: support points on the polyhedron
SEGMENT_COLOR = (0.75, 0.45, 1.0, 1.0)  # GJK: support points on the segment (or sphere centre)

GROUP_LABELS = {"face A": N_("faces of A"), "face B": N_("faces of B"), "edge": N_("edge pairs")}
GROUP_HELP = {
    "face A": N_("For each face of A: how far B's deepest point lies outside the face's plane (negative: "
                 "inside, overlapping)."),
    "face B": N_("For each face of B: how far A's deepest point lies outside the face's plane."),
    "edge": N_("For each pair of edges, one of A and one of B, whose cross product can separate the "
               "shapes: the separation along it. Parallel pairs have no axis of their own (a face axis "
               "covers them)."),
}
KIND_NAMES = {"sphere": N_("sphere"), "box": N_("box"), "capsule": N_("capsule"), "hull": N_("hull")}


def _vec(v) -> str:
    return "({:.3f}, {:.3f}, {:.3f})".format(*(float(x) for x in v))


def _mm(x: float) -> str:
    return "—" if np.isnan(x) else f"{1e3 * x:.2f} mm"


def _outline(batch, poly: np.ndarray, color, width: float) -> None:
    """The closed outline of polygon ``poly`` ((k, 3)); a single vertex as a point."""
    if len(poly) == 1:
        batch.points(poly, color, 8.0)
    elif len(poly) > 1:
        batch.lines(poly, np.roll(poly, -1, axis=0), color, width)


def _row(label: str, value: str) -> None:
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.text_colored(DIM, label)
    imgui.table_next_column()
    imgui.text(value)


class PairView:
    """The stepper's "narrow phase" and "manifold" stages for one pair of a StepTrace."""

    def __init__(self) -> None:
        self.body_a: int | None = None  # the pair shown, in the narrow phase's order (A: the lower kind)
        self.body_b: int | None = None
        self.pair: PairTrace | None = None
        self._requested: tuple[int | None, int | None] = (None, None)
        self._trace: StepTrace | None = None
        self._touching: list[tuple[int, int]] = []

    # --- choosing the pair -------------------------------------------------------------------------
    def choose(self, trace: StepTrace, a: int | None, b: int | None) -> None:
        """Show the pair of body rows ``a``, ``b`` of ``trace``; ``None, None``: the deepest touching pair
        (the first candidate pair when none touches). A pair the broad phase did not find shows a note."""
        self._requested = (a, b)
        self._resolve(trace)

    def _resolve(self, trace: StepTrace) -> None:
        self._trace = trace
        self._touching = trace.touching_pairs()
        a, b = self._requested
        if a is None or b is None:
            if self._touching:
                a, b = self._touching[0]
            elif len(trace.pairs):
                a, b = (int(x) for x in trace.pairs[0])
        self.pair = trace.pair(a, b) if a is not None and b is not None else None
        self.body_a, self.body_b = (self.pair.body_a, self.pair.body_b) if self.pair else (a, b)

    def _current(self, trace: StepTrace) -> PairTrace | None:
        if trace is not self._trace:
            self._resolve(trace)
        return self.pair

    # --- sub-steps -----------------------------------------------------------------------------------
    def _steps(self, p: PairTrace | None, stage: str) -> list[tuple[str, int]]:
        """The sub-steps of ``stage`` for pair ``p`` as (kind, index) pairs."""
        if p is None:
            return []
        steps: list[tuple[str, int]] = []
        if stage == NARROW:
            groups = [g for g, _, _ in p.features]
            steps += [("group", k) for k, g in enumerate(GROUP_LABELS) if g in groups]
            if p.chosen is not None:
                steps.append(("chosen", p.chosen))
            elif p.separating is not None:
                steps.append(("separated", p.separating))
            if p.closest is not None:
                steps += [("gjk", k) for k in range(len(p.closest.simplices))]
                steps.append(("closest", 0))
            return steps or [("result", 0)]
        if stage == MANIFOLD:
            if p.result is None and p.manifold is None:
                return [("none", 0)]
            if p.reference_face is not None:
                steps.append(("faces", 0))
                steps += [("clip", k) for k in range(len(p.clip_passes))]
                if p.fallback is not None:
                    steps.append(("fallback", 0))
                else:
                    steps += [("above", 0), ("reduction", 0)]
            elif p.edges is not None:
                steps.append(("edges", 0))
            steps.append(("final", 0))
        return steps

    def _step(self, trace: StepTrace, stage: str, sub: int) -> tuple[PairTrace | None, str, int]:
        p = self._current(trace)
        steps = self._steps(p, stage)
        if not steps:
            return p, "", 0
        kind, index = steps[min(max(int(sub), 0), len(steps) - 1)]
        return p, kind, index

    def substeps(self, trace: StepTrace, stage: str) -> list[str]:
        """Labels of the sub-steps of ``stage`` ("narrow phase": one per group of separating axes and the
        chosen axis, or GJK's iterations and the closest points; "manifold": the reference and incident
        faces, one per clip plane, the points removed above the reference face, the reduction to four,
        the final contacts). Empty when no pair is shown."""
        labels = {
            "chosen": _("chosen axis"), "separated": _("separating axis"), "closest": _("closest points"),
            "result": _("result"), "none": _("no contact"), "faces": _("reference and incident faces"),
            "fallback": _("deepest vertex (clipping came out empty)"),
            "above": _("removed above the reference face"), "reduction": _("reduction to four"),
            "edges": _("the two edges"), "final": _("final contacts"),
        }
        out = []
        for kind, index in self._steps(self._current(trace), stage):
            if kind == "group":
                out.append(_(GROUP_LABELS[list(GROUP_LABELS)[index]]))
            elif kind == "gjk":
                out.append(_("GJK iteration {n}").format(n=index))
            elif kind == "clip":
                out.append(_("clip: side plane {n}").format(n=index + 1))
            else:
                out.append(labels[kind])
        return out

    # --- the panel -----------------------------------------------------------------------------------
    def draw_panel(self, trace: StepTrace, stage: str, sub: int) -> None:
        """The stage's content inside the stepper window: the pair box, then for the narrow phase a bar
        chart of every separating axis's separation (the chosen one highlighted) or the closest points
        and GJK's simplex at each iteration; for the manifold the polygons' sizes, the points removed and
        the final contacts with their depths."""
        p, kind, index = self._step(trace, stage, sub)
        self._pair_box(trace)
        if p is None:
            if self._requested[0] is not None:
                note = _("No pair to show: the broad phase did not pair these bodies, so the narrow phase "
                         "never tested them.")
            else:
                note = _("No candidate pairs in this step.")
            imgui.text_colored(YELLOW, note)
            return
        kinds = [_(KIND_NAMES[k]) for k in p.kinds]
        imgui.text(_("A: body {a} ({ka})    B: body {b} ({kb})").format(a=p.body_a, ka=kinds[0], b=p.body_b,
                                                                        kb=kinds[1]))
        imgui.text_colored(DIM, _("speculative margin {m}").format(m=_mm(p.margin)))
        if p.reused:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(YELLOW, _("This step reused the pair's manifold from the contact cache (the "
                                         "pair hardly moved); shown is what the test computes for the same "
                                         "poses, and the final contacts are the cached ones."))
            imgui.pop_text_wrap_pos()
        imgui.separator()
        if kind in ("group", "chosen", "separated"):
            self._axes_panel(p, kind, index)
        elif kind == "gjk":
            self._gjk_panel(p, index)
        elif kind == "closest":
            self._closest_panel(p)
        elif kind == "result":
            imgui.text(_("The test found no contact."))
        else:
            self._manifold_panel(p, kind, index)

    def _pair_box(self, trace: StepTrace) -> None:
        """A combo of the touching pairs, deepest first, to choose the pair shown."""
        def name(a, b) -> str:
            return _("body {a} – body {b}").format(a=a, b=b)

        current = name(self.body_a, self.body_b) if self.body_a is not None else _("none")
        imgui.set_next_item_width(-1)
        if imgui.begin_combo("##pair", current):
            for a, b in self._touching[:MAX_LISTED_PAIRS]:
                chosen = {a, b} == {self.body_a, self.body_b}
                if imgui.selectable(name(a, b) + f"##{a}-{b}", chosen)[0]:
                    self.choose(trace, a, b)
            imgui.end_combo()
        if imgui.is_item_hovered():
            imgui.set_tooltip(_("The touching pairs of this step, deepest first (at most {n}).").format(
                n=MAX_LISTED_PAIRS))

    def _axes_panel(self, p: PairTrace, kind: str, index: int) -> None:
        n = len(p.axes)
        seps = np.array([1e3 * sep for _, _, sep in p.axes])
        group = p.features[index][0] if kind != "group" else list(GROUP_LABELS)[index]
        labels = [p.axis_label(i, _) for i in range(n)]
        height = 44.0 + 16.0 * n  # a row per axis: a hull pair's dozens scroll in a child window
        scrolled = height > MAX_CHART_HEIGHT
        if scrolled:
            imgui.begin_child("##axes_scroll", imgui.ImVec2(-1, MAX_CHART_HEIGHT))
        values = np.nan_to_num(seps, nan=0.0)
        # a symmetric-log scale: the chosen axis's millimetres and the other axes' metres both show
        low = min(float(values.min()), 0.0)
        high = max(float(values.max()), 1e3 * p.margin)
        if implot.begin_plot("##axes", imgui.ImVec2(-1, height), implot.Flags_.no_mouse_text
                             | implot.Flags_.no_legend):
            implot.setup_axes(_("separation (mm)"), "", 0, implot.AxisFlags_.invert)
            implot.setup_axis_scale(implot.ImAxis_.x1, implot.Scale_.sym_log)
            implot.setup_axis_limits(implot.ImAxis_.x1, 1.3 * low - 1.0, 1.3 * high + 1.0,
                                     implot.Cond_.always)
            implot.setup_axis_limits(implot.ImAxis_.y1, -0.7, n - 0.3, implot.Cond_.always)
            implot.setup_axis_ticks(implot.ImAxis_.y1, [float(i) for i in range(n)], labels)
            ys = np.arange(n, dtype=float)
            mine = np.array([g == group for g, _, _ in p.features])
            for mask, color in ((~mine, DIM), (mine, ACCENT)):
                if mask.any():
                    spec = implot.Spec(fill_color=color, line_color=color, flags=implot.BarsFlags_.horizontal)
                    implot.plot_bars(f"##{color.x}", np.ascontiguousarray(values[mask]),
                                     np.ascontiguousarray(ys[mask]), 0.7, spec)
            marked = p.chosen if p.chosen is not None else p.separating
            if marked is not None:
                color = YELLOW if p.chosen is not None else RED
                spec = implot.Spec(fill_color=color, line_color=color, flags=implot.BarsFlags_.horizontal)
                implot.plot_bars("##marked", np.array([values[marked]]), np.array([float(marked)]), 0.7, spec)
                implot.plot_text(_mm(p.axes[marked][2]), 0.0, float(marked), imgui.ImVec2(36, 0))
            spec = implot.Spec(line_color=RED)
            implot.plot_inf_lines("##margin", np.array([1e3 * p.margin]), spec)
            implot.end_plot()
        if scrolled:
            imgui.end_child()
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(DIM, _("bars: separation along each axis; red line: the margin ({m})").format(
            m=_mm(p.margin)))
        if kind == "group":
            imgui.text_colored(DIM, _(GROUP_HELP[group]))
            imgui.pop_text_wrap_pos()
            rows = [i for i in range(n) if p.features[i][0] == group]
            best = max((i for i in rows if not np.isnan(seps[i])), key=lambda i: seps[i], default=None)
            if best is not None:
                imgui.text(_("largest in this group: {label}, {s}").format(label=labels[best],
                                                                            s=_mm(p.axes[best][2])))
            flags = (imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg
                     | imgui.TableFlags_.scroll_y)
            if imgui.begin_table("##group", 2, flags, imgui.ImVec2(0, min(24.0 + 20.0 * len(rows), 260.0))):
                for i in rows:
                    _row(labels[i], _mm(p.axes[i][2]))
                imgui.end_table()
            return
        _label, axis, sep = p.axes[index]
        if kind == "chosen":
            imgui.text(_("chosen: {label}, separation {s}").format(label=labels[index], s=_mm(sep)))
            imgui.text(_("normal (A to B): {v}").format(v=_vec(axis)))
            imgui.text_colored(DIM, _("The largest separation is the least penetration. A face axis is kept "
                                      "unless an edge axis beats it by 2 % + 1 mm, so that a resting contact "
                                      "keeps its face (and its four points) from step to step."))
        else:
            imgui.text_colored(RED, _("separated along {label}: {s}, beyond the margin {m}").format(
                label=labels[index], s=_mm(sep), m=_mm(p.margin)))
            imgui.text_colored(DIM, _("One axis with a gap wider than the margin proves the shapes apart: "
                                      "the test stopped there, with no contact."))
        imgui.pop_text_wrap_pos()

    def _gjk_panel(self, p: PairTrace, index: int) -> None:
        simplices = p.closest.simplices
        s = simplices[index]
        dist = np.array([x.distance for x in simplices[:index + 1]])
        if implot.begin_plot("##gjk", imgui.ImVec2(-1, 110), implot.Flags_.no_mouse_text
                             | implot.Flags_.no_legend):
            implot.setup_axes(_("iteration"), _("|v| (mm)"), implot.AxisFlags_.auto_fit,
                              implot.AxisFlags_.auto_fit)
            implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.sym_log)
            implot.setup_axis_ticks(implot.ImAxis_.x1, [float(k) for k in range(len(dist))],
                                    [str(k) for k in range(len(dist))])
            implot.plot_line(_("distance"), np.ascontiguousarray(1e3 * dist))
            implot.end_plot()
        imgui.text(_("simplex of {k} vertices, distance |v| = {d}").format(k=len(s.weights),
                                                                            d=_mm(s.distance)))
        flags = imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg
        if imgui.begin_table("##simplex", 3, flags):
            imgui.table_setup_column(_("on the polyhedron"))
            imgui.table_setup_column(_("on the segment"))
            imgui.table_setup_column(_("weight"))
            imgui.table_headers_row()
            for q, r, w in zip(s.on_polyhedron, s.on_segment, s.weights, strict=True):
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text(_vec(q))
                imgui.table_next_column()
                imgui.text(_vec(r))
                imgui.table_next_column()
                imgui.text("—" if np.isnan(w) else f"{w:.3f}")
            imgui.end_table()
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(DIM, _("GJK walks a simplex of the Minkowski difference (polyhedron point minus "
                                  "segment point) towards the origin; |v| is its point nearest the origin, "
                                  "the cores' distance once it stops shrinking."))
        imgui.pop_text_wrap_pos()

    def _closest_panel(self, p: PairTrace) -> None:
        c = p.closest
        flags = imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg
        if imgui.begin_table("##closest", 2, flags):
            _row(_("on A's core"), _vec(c.point_a))
            _row(_("on B's core"), _vec(c.point_b))
            _row(_("distance"), _mm(c.distance))
            if p.result is not None:
                _row(_("normal (A to B)"), _vec(p.result.normal))
                _row(_("depth = radii − distance"), _mm(float(p.result.depths.max())))
            imgui.end_table()
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(DIM, _("A sphere is its centre and a capsule its segment, inflated by the radius: "
                                  "the contact lies on the line through the cores' closest points."))
        imgui.pop_text_wrap_pos()

    def _manifold_panel(self, p: PairTrace, kind: str, index: int) -> None:
        flags = imgui.TableFlags_.sizing_stretch_prop | imgui.TableFlags_.row_bg
        imgui.push_text_wrap_pos(0.0)
        if kind == "none":
            imgui.text(_("No contact: the narrow phase found the shapes apart."))
        elif kind == "faces":
            body = p.reference_body
            imgui.text_colored(DIM, _("The reference face is a face of the body whose face axis won; the "
                                      "incident face is the other body's face most anti-parallel to it."))
            if imgui.begin_table("##faces", 2, flags):
                _row(_("reference face (body {b})").format(b=body),
                     _("{k} vertices").format(k=len(p.reference_face)))
                _row(_("incident face"), _("{k} vertices").format(k=len(p.incident_face)))
                imgui.end_table()
        elif kind == "clip":
            imgui.text_colored(DIM, _("Sutherland–Hodgman: keep the part of the incident polygon inside each "
                                      "side plane of the reference face, one plane at a time."))
            if imgui.begin_table("##clips", 2, flags):
                _row(_("incident face"), _("{k} vertices").format(k=len(p.incident_face)))
                for k in range(index + 1):
                    _row(_("after side plane {n}").format(n=k + 1),
                         _("{k} vertices").format(k=len(p.clip_passes[k][1])))
                imgui.end_table()
        elif kind == "above":
            above = [(q, d) for reason, q, d in p.removed if reason == "above"]
            imgui.text(_("{k} of {m} clipped points removed: farther above the reference face than the "
                         "margin").format(k=len(above), m=len(above) + len(p.kept)))
            for q, d in above:
                imgui.bullet_text(_("{p}: {h} above").format(p=_vec(q), h=_mm(-d)))
        elif kind == "reduction":
            dropped = [q for reason, q, _d in p.removed if reason == "reduction"]
            imgui.text(_("{k} points below the face, {m} kept").format(k=len(p.kept),
                                                                        m=len(p.kept) - len(dropped)))
            imgui.text_colored(DIM, _("At most four: the deepest point, the one farthest from it, then the "
                                      "two that span the largest triangles on either side (the largest "
                                      "area)."))
            for q in dropped:
                imgui.bullet_text(_("{p}: dropped").format(p=_vec(q)))
        elif kind == "fallback":
            imgui.text(_("Clipping left nothing (the bodies overlap near a corner of the reference face): "
                         "the incident body's deepest vertex {p} is the one contact.").format(
                             p=_vec(p.fallback)))
        elif kind == "edges":
            imgui.text(_("Edge against edge: one contact at the closest points of the two edges, {d} "
                         "apart.").format(d=_mm(p.closest.distance)))
        imgui.pop_text_wrap_pos()
        if kind != "final":
            return
        m = p.manifold
        if m is None:
            imgui.text(_("No touching points: the points are speculative (apart by less than the margin)."))
            return
        imgui.text(_("normal (A to B): {v}").format(v=_vec(m.normal)))
        if imgui.begin_table("##final", 4, flags):
            for title in (_("point on A"), _("point on B"), _("depth"), _("impulse")):
                imgui.table_setup_column(title)
            imgui.table_headers_row()
            body_a = m.body_a.index if m.body_a is not None else p.body_a
            for k in range(len(m.depths)):
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text(_vec(m.points_a[k]))
                imgui.table_next_column()
                imgui.text(_vec(m.points_b[k]))
                imgui.table_next_column()
                imgui.text(_mm(float(m.depths[k])))
                imgui.table_next_column()
                imgui.text("—" if m.impulses is None else f"{m.impulses[k]:.4f} N·s")
            imgui.end_table()
        if body_a != p.body_a:
            imgui.text_colored(DIM, _("(stored with the bodies the other way round: A is body {a})").format(
                a=body_a))

    # --- the scene -----------------------------------------------------------------------------------
    def _centre(self, trace: StepTrace, p: PairTrace) -> np.ndarray:
        """Where the pair's axes are drawn through: the contacts' centre, else half way between the closest
        points, else between the bodies' centres."""
        if p.manifold is not None:
            return 0.5 * (p.manifold.points_a.mean(axis=0) + p.manifold.points_b.mean(axis=0))
        if p.closest is not None:
            return 0.5 * (p.closest.point_a + p.closest.point_b)
        pos = trace.narrow.pos
        return 0.5 * (pos[p.body_a] + pos[p.body_b])

    def draw_scene(self, trace: StepTrace, stage: str, sub: int, batch) -> None:
        """The stage's 3D geometry into ``batch`` (``sandbox.render.debug_draw.Batch``): the axes of the
        current group coloured by overlap or gap and the chosen axis through the pair; GJK's simplex and
        the closest points; the reference (orange) and incident (blue) faces, the polygon after the
        current clip pass (yellow) with its plane's reference edge (magenta), the removed points (grey)
        and the final contacts (red) with their normal."""
        p, kind, index = self._step(trace, stage, sub)
        if p is None or not kind:
            return
        centre = self._centre(trace, p)
        if kind in ("group", "chosen", "separated"):
            group = list(GROUP_LABELS)[index] if kind == "group" else p.features[index][0]
            rows = [i for i, f in enumerate(p.features) if f[0] == group and not np.isnan(p.axes[i][2])]
            if kind == "group" and rows:
                axes = np.array([p.axes[i][1] for i in rows])
                colors = np.array([APART_COLOR if p.axes[i][2] > 0 else OVERLAP_COLOR for i in rows])
                batch.lines(centre - AXIS_HALF_LENGTH * axes, centre + AXIS_HALF_LENGTH * axes, colors, 1.5)
            else:
                axis = p.axes[index][1]
                color = AXIS_COLOR if kind == "chosen" else APART_COLOR
                batch.lines(centre - AXIS_HALF_LENGTH * axis, centre, color, 2.0)
                batch.arrows(centre, AXIS_HALF_LENGTH * axis, color, 3.0)
                if p.reference_face is not None:
                    _outline(batch, p.reference_face, REFERENCE_COLOR, 2.0)
        elif kind == "gjk":
            s = p.closest.simplices[index]
            batch.points(s.on_polyhedron, POLYHEDRON_COLOR, 9.0)
            batch.points(s.on_segment, SEGMENT_COLOR, 9.0)
            if len(s.weights) > 1:
                _outline(batch, s.on_polyhedron, POLYHEDRON_COLOR, 1.5)
            batch.lines(s.on_polyhedron, s.on_segment, REMOVED_COLOR, 1.0)
            if not np.isnan(s.weights).any():
                near_p = s.weights @ s.on_polyhedron
                near_s = s.weights @ s.on_segment
                batch.lines(near_p, near_s, AXIS_COLOR, 2.5)
        elif kind == "closest":
            c = p.closest
            batch.points(np.array([c.point_a, c.point_b]), AXIS_COLOR, 10.0)
            batch.lines(c.point_a, c.point_b, AXIS_COLOR, 2.0)
            if p.result is not None:
                batch.arrows(c.point_a, 0.5 * p.result.normal, AXIS_COLOR, 2.5)
        elif kind == "faces":
            _outline(batch, p.reference_face, REFERENCE_COLOR, 3.0)
            _outline(batch, p.incident_face, INCIDENT_COLOR, 3.0)
            batch.points(p.incident_face, INCIDENT_COLOR, 7.0)
        elif kind == "clip":
            _outline(batch, p.reference_face, REFERENCE_COLOR, 1.5)
            _outline(batch, p.incident_face, INCIDENT_COLOR, 1.0)
            normal, offset = p.clip_planes[index]
            ref = p.reference_face
            on = np.abs(ref @ normal - offset) < 1e-6 * max(1.0, abs(offset))
            for k in range(len(ref)):
                if on[k] and on[(k + 1) % len(ref)]:
                    batch.lines(ref[k], ref[(k + 1) % len(ref)], PLANE_COLOR, 4.0)
            poly = p.clip_passes[index][1]
            _outline(batch, poly, CLIPPED_COLOR, 3.0)
            batch.points(poly, CLIPPED_COLOR, 7.0)
        elif kind in ("above", "reduction"):
            _outline(batch, p.reference_face, REFERENCE_COLOR, 1.5)
            batch.points(p.kept, CLIPPED_COLOR, 7.0)
            reason = "above" if kind == "above" else "reduction"
            removed = [q for r, q, _d in p.removed if r == reason]
            if removed:
                batch.points(np.array(removed), REMOVED_COLOR, 11.0)
            if kind == "reduction" and p.manifold is not None:
                batch.points(np.vstack([p.manifold.points_a, p.manifold.points_b]), CONTACT_COLOR, 8.0)
        elif kind == "fallback":
            _outline(batch, p.reference_face, REFERENCE_COLOR, 1.5)
            batch.points(p.fallback, CONTACT_COLOR, 10.0)
        elif kind == "edges":
            batch.lines(p.edges[0][0], p.edges[0][1], REFERENCE_COLOR, 3.0)
            batch.lines(p.edges[1][0], p.edges[1][1], INCIDENT_COLOR, 3.0)
            batch.lines(p.closest.point_a, p.closest.point_b, AXIS_COLOR, 2.0)
        elif kind == "final":
            m = p.manifold
            if p.result is not None and not p.reused:
                apart = p.result.depths < 0.0
                if apart.any():
                    batch.points(p.result.points_b[apart], SPECULATIVE_COLOR, 8.0)
            if m is not None:
                both = np.vstack([m.points_a, m.points_b])
                batch.points(both, CONTACT_COLOR, 9.0)
                batch.lines(m.points_a, m.points_b, CONTACT_COLOR, 2.0)
                batch.arrows(m.points_b, np.tile(0.4 * m.normal, (len(m.points_b), 1)), AXIS_COLOR, 2.0)
