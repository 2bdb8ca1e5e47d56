"""The contact inspector: click a contact point (in the stepper, or in normal running with the contact
points drawn) to read everything about it in a small window: its depth and normal, its anchors on both
bodies, the relative velocity there, its normal and friction impulses, whether it sticks or slides
(inside or on the friction cone), its age and the impulse it was warm-started with.

The data comes as ``ContactPoints``: every contact point of one step, flattened, with the bodies' state
the relative velocity is read from and the impulses as far as they are known. The stepper makes them
from its trace (the impulses of the solver pass it shows, the friction as world vectors); in normal
running they come from ``world.contacts`` (the last step's normal impulses; friction is recorded only by
a traced step, so there the sticking is judged from the slip velocity instead).

A contact point keeps its identity from step to step by the engine's persistence rule (the same body
pair, the point on A within ``PERSISTENCE_DISTANCE`` of last step's: ``core/contact_prepare.py``, there
measured in A's frame, here in the world, which differs by A's motion in one step): that is how the
inspected point is followed while the world runs, and how ``ContactAges`` counts each point's age.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from ..engine import KIND_NAMES, World
from ..i18n import N_, _
from ..lessons import pair_friction
from .context import UiContext

PERSISTENCE_DISTANCE = 0.05
"""Metres: a point within this of last step's point of the same pair is the same point (the engine's
``contact_prepare.PERSISTENCE_DISTANCE``; ``tests/test_stepper.py`` checks that they agree)."""
PICK_PIXELS = 10.0
"""A click closer than this (window pixels) to a drawn contact point picks it."""
CONE_TOLERANCE = 0.01
"""A friction impulse within 1 % of the cone's rim μ·λn counts as on the cone (sliding): the solver clamps
it to the rim exactly, but against the normal impulse of the pass before."""
RESTING_SPEED = 0.001
"""m/s: a normal speed below this reads as neither approaching nor separating."""
STICK_SLIP = 0.01
"""m/s: without the friction impulse, a point slipping slower than this counts as sticking."""
INSPECTOR_WIDTH = 330.0
MAX_PER_MANIFOLD = 4

DIM = imgui.ImVec4(0.62, 0.66, 0.72, 1.0)
ACCENT = imgui.ImVec4(0.45, 0.72, 1.0, 1.0)
GREEN = imgui.ImVec4(0.45, 0.90, 0.45, 1.0)
YELLOW = imgui.ImVec4(1.0, 0.8, 0.3, 1.0)

MARK_OUTER = (1.0, 1.0, 1.0, 1.0)
MARK_B = (0.95, 0.15, 0.10, 1.0)
MARK_A = (0.20, 0.85, 0.30, 1.0)
MARK_NORMAL = (1.0, 0.85, 0.15, 1.0)
MARK_FRICTION = (1.0, 0.30, 0.85, 1.0)


def pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One int64 key per ordered body pair (rows below 2³¹)."""
    return (np.asarray(a, np.int64) << 32) | np.asarray(b, np.int64)


def match_points(prev_keys: np.ndarray, prev_points: np.ndarray, keys: np.ndarray, points: np.ndarray,
                 tolerance: float = PERSISTENCE_DISTANCE) -> np.ndarray:
    """For each point (``keys`` (k,), world ``points`` on A (k, 3)), the index of the nearest previous point
    of the same pair within ``tolerance`` metres, or −1: the persistence rule (module docstring)."""
    k = len(keys)
    if k == 0 or len(prev_keys) == 0:
        return np.full(k, -1, np.int64)
    order = np.argsort(prev_keys, kind="stable")
    sorted_keys = prev_keys[order]
    lo = np.searchsorted(sorted_keys, keys, "left")
    hi = np.searchsorted(sorted_keys, keys, "right")
    cand = lo[:, None] + np.arange(MAX_PER_MANIFOLD)[None, :]
    valid = cand < hi[:, None]
    rows = order[np.minimum(cand, len(order) - 1)]
    d2 = ((prev_points[rows] - points[:, None, :]) ** 2).sum(axis=2)
    d2[~valid] = np.inf
    best = np.argmin(d2, axis=1)
    near = d2[np.arange(k), best] < tolerance * tolerance
    return np.where(near, rows[np.arange(k), best], -1)


@dataclass(frozen=True)
class ContactPoints:
    """Every contact point of one step, flattened (k points): its manifold ``row`` and ``slot`` in
    ``world.contacts``, ``body_a`` and ``body_b`` (rows; the normal points from A to B), ``normal``,
    ``point_a`` and ``point_b`` (world, (k, 3)), ``depth`` (> 0 overlapping, < 0 speculative);
    ``normal_impulse`` (k,) and ``friction`` (world vectors, (k, 3)) as far as they are known at the
    moment shown (None: not computed yet, or not recorded), ``warm`` the normal impulse each point was
    warm-started with (None: not known); the bodies' ``pos``, ``vel`` and ``angvel`` (n, 3) that the
    relative velocity is read from; ``note``: what the impulses are (which pass); ``h``: the length of a
    sub-step (s). The solver's impulses are per sub-step: each sub-step applies its accumulated impulse
    again (the warm start), so a resting body's Σλn is m·g·h, and the force is λn/h."""

    row: np.ndarray
    slot: np.ndarray
    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    depth: np.ndarray
    normal_impulse: np.ndarray | None
    friction: np.ndarray | None
    warm: np.ndarray | None
    pos: np.ndarray
    vel: np.ndarray
    angvel: np.ndarray
    note: str = ""
    h: float = 0.0

    def __len__(self) -> int:
        return len(self.row)

    @property
    def keys(self) -> np.ndarray:
        return pair_keys(self.body_a, self.body_b)


def flatten_contacts(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The points of a ``ContactArrays.state()`` flattened, manifold after manifold: ``row``, ``slot``,
    ``body_a``, ``body_b``, ``normal``, ``point_a``, ``point_b``, ``depth``, ``impulse``."""
    per = state["points_b"].shape[1] if len(state["points_b"]) else MAX_PER_MANIFOLD
    mask = np.arange(per)[None, :] < np.asarray(state["npoints"])[:, None]
    row, slot = np.nonzero(mask)
    return {"row": row, "slot": slot, "body_a": state["body_a"][row], "body_b": state["body_b"][row],
            "normal": state["normal"][row], "point_a": state["points_a"][row, slot],
            "point_b": state["points_b"][row, slot], "depth": state["depth"][row, slot],
            "impulse": state["impulse"][row, slot]}


def world_points(world: World, dt: float) -> ContactPoints:
    """The last step's contact points of ``world`` (stepped by ``dt``) with their stored normal impulses
    and the bodies' state now (normal running: no trace, so no friction impulses)."""
    flat = flatten_contacts(world.contacts.state())
    d = world.data
    return ContactPoints(flat["row"], flat["slot"], flat["body_a"], flat["body_b"], flat["normal"],
                         flat["point_a"], flat["point_b"], flat["depth"], flat["impulse"], None, None,
                         d.pos[: d.n], d.vel[: d.n], d.angvel[: d.n], _("after the last step"),
                         dt / world.substeps)


class ContactAges:
    """How many steps each contact point of a world has existed, counted by watching the world's contacts
    after its steps (``observe``) and following each point by the persistence rule. Points present when
    the watching began are at least as old as counted (``from_start``). Between two observations more than
    one step apart, a point found at both is taken to have lasted through the steps between them.

    ``observe`` also keeps, for a point seen in two consecutive steps, the normal impulse it had in the
    first: the value the engine warm-starts it with (when ``warm_starting`` is on)."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Start counting afresh."""
        self._world: World | None = None
        self._steps = -1
        self._keys = np.zeros(0, np.int64)
        self._points = np.zeros((0, 3))
        self._age = np.zeros(0, np.int64)
        self._from_start = np.zeros(0, bool)
        self._impulse = np.zeros(0)
        self._previous = np.zeros(0)

    def observe(self, world: World) -> None:
        """Note the contacts after the world's latest step (nothing new when it has not stepped since)."""
        if world is self._world and world.steps == self._steps:
            return
        flat = flatten_contacts(world.contacts.state())
        keys = pair_keys(flat["body_a"], flat["body_b"])
        gap = world.steps - self._steps
        if world is not self._world or self._steps < 0 or gap <= 0:
            k = len(keys)
            age, from_start, previous = np.ones(k, np.int64), np.ones(k, bool), np.full(k, np.nan)
        else:
            idx = match_points(self._keys, self._points, keys, flat["point_a"])
            found = idx >= 0  # (always False against an empty list, so the indexing below never runs)
            safe = np.maximum(idx, 0)
            age = np.ones(len(keys), np.int64)
            from_start = np.zeros(len(keys), bool)
            previous = np.full(len(keys), np.nan)
            age[found] = self._age[safe[found]] + gap
            from_start[found] = self._from_start[safe[found]]
            if gap == 1:
                previous[found] = self._impulse[safe[found]]
        self._world, self._steps = world, world.steps
        self._keys, self._points = keys, flat["point_a"].copy()
        self._age, self._from_start, self._impulse = age, from_start, flat["impulse"].copy()
        self._previous = previous

    def lookup(self, a: int, b: int, point_a: np.ndarray) -> tuple[int, bool, float] | None:
        """The age (steps), whether it counts from when the watching began (then it is a lower bound), and
        last step's normal impulse (NaN when not seen in the step before) of the point of pair (a, b)
        nearest ``point_a``, or None when no such point was observed."""
        idx = match_points(self._keys, self._points, pair_keys([a], [b]), np.asarray(point_a).reshape(1, 3))
        j = int(idx[0])
        if j < 0:
            return None
        return int(self._age[j]), bool(self._from_start[j]), float(self._previous[j])


def friction_state(normal_impulse: float | None, friction: np.ndarray | None, mu: float,
                   slip: float) -> str:
    """Whether a contact point "sticks" (inside the friction cone, |λt| < μ·λn), "slides" (on the cone:
    Coulomb's law at its bound, |λt| = μ·λn within ``CONE_TOLERANCE``) or is "free" (no normal impulse, so
    no friction either). Without the friction impulse it is judged by the tangential slip speed
    (m/s): below ``STICK_SLIP`` it sticks."""
    if normal_impulse is not None and normal_impulse <= 0.0:
        return "free"
    if friction is None or normal_impulse is None:
        return "sticks" if slip < STICK_SLIP else "slides"
    cone = mu * normal_impulse
    return "slides" if float(np.linalg.norm(friction)) >= (1.0 - CONE_TOLERANCE) * cone else "sticks"


@dataclass(frozen=True)
class ContactReading:
    """What the inspector shows about one contact point (see ``read_contact``)."""

    body_a: int
    body_b: int
    kind_a: str
    kind_b: str
    depth: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    anchor_a: np.ndarray
    anchor_b: np.ndarray
    relative_velocity: np.ndarray
    normal_speed: float
    slip: float
    normal_impulse: float | None
    friction: np.ndarray | None
    mu: float
    state: str
    age: tuple[int, bool] | None
    warm: float | None
    note: str
    h: float


def read_contact(world: World, points: ContactPoints, j: int,
                 ages: ContactAges | None = None) -> ContactReading:
    """Everything about point ``j`` of ``points``: anchors r = p − x from each centre of mass, the relative
    velocity of the material points there, v_rel = (v_B + ω_B × r_B) − (v_A + ω_A × r_A) (its normal part
    < 0 approaching, its tangential part the slip), the pair's friction coefficient under the world's
    combine rule, the friction state (``friction_state``), the age and warm-start impulse."""
    a, b = int(points.body_a[j]), int(points.body_b[j])
    n = points.normal[j]
    pa, pb = points.point_a[j], points.point_b[j]
    ra, rb = pa - points.pos[a], pb - points.pos[b]
    v_b = points.vel[b] + np.cross(points.angvel[b], rb)
    v_rel = v_b - (points.vel[a] + np.cross(points.angvel[a], ra))
    vn = float(v_rel @ n)
    slip = float(np.linalg.norm(v_rel - vn * n))
    d = world.data
    mu = pair_friction(world, float(d.friction[a]), float(d.friction[b]))
    lam = None if points.normal_impulse is None else float(points.normal_impulse[j])
    fr = None if points.friction is None else points.friction[j]
    age = warm = None
    if ages is not None:
        found = ages.lookup(a, b, pa)
        if found is not None:
            age = found[:2]
            warm = None if np.isnan(found[2]) else found[2]
    if points.warm is not None:
        warm = float(points.warm[j])
    if not world.warm_starting:
        warm = 0.0
    return ContactReading(a, b, KIND_NAMES[int(d.kind[a])], KIND_NAMES[int(d.kind[b])],
                          float(points.depth[j]), n, pa, pb, ra, rb, v_rel, vn, slip, lam, fr, mu,
                          friction_state(lam, fr, mu, slip), age, warm, points.note, points.h)


def project_points(ctx: UiContext, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Window coordinates (top-left origin, (k, 2)) of world ``points`` (k, 3) and whether each lies in
    front of the camera."""
    cam = ctx.camera
    w, h = ctx.window_size
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    clip = np.hstack([pts, np.ones((len(pts), 1))]) @ (cam.projection_matrix(w / h) @ cam.view_matrix()).T
    front = clip[:, 3] > cam.near
    wc = np.where(front, clip[:, 3], 1.0)
    xy = np.stack([0.5 * (clip[:, 0] / wc + 1.0) * w, 0.5 * (1.0 - clip[:, 1] / wc) * h], axis=1)
    return xy, front


def _vec(v: np.ndarray, digits: int = 3) -> str:
    return "(" + ", ".join(f"{float(x):.{digits}f}" for x in v) + ")"


def _row(label: str, value: str, color: imgui.ImVec4 | None = None) -> None:
    imgui.table_next_row()
    imgui.table_next_column()
    imgui.text_colored(DIM, label)
    imgui.table_next_column()
    imgui.push_text_wrap_pos(0.0)
    if color is None:
        imgui.text(value)
    else:
        imgui.text_colored(color, value)
    imgui.pop_text_wrap_pos()


class ContactInspector:
    """The inspected contact point and its window, over one ``UiContext``.

    The inspected point is remembered as its pair and its point on A, and found again in each frame's
    ``ContactPoints`` by the persistence rule; ``reading`` is what the window shows (None when the contact
    has ended). ``rect`` is the window's screen rectangle last frame (None when not drawn)."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.ages = ContactAges()
        self.selected: tuple[int, int, np.ndarray] | None = None
        self.index: int | None = None
        self.reading: ContactReading | None = None
        self.rect: tuple[float, float, float, float] | None = None
        self.waiting: str | None = None
        self._world: World | None = None

    @property
    def active(self) -> bool:
        """Whether a contact point is being inspected."""
        return self.selected is not None

    def select(self, points: ContactPoints, j: int) -> None:
        """Inspect point ``j`` of ``points``."""
        self.selected = (int(points.body_a[j]), int(points.body_b[j]), points.point_a[j].copy())
        self._world = self.ctx.session.world
        self.index = j

    def clear(self) -> None:
        """Inspect nothing."""
        self.selected = self.index = self.reading = None

    def pick(self, points: ContactPoints, x: float, y: float) -> int | None:
        """The point of ``points`` drawn nearest pyglet window point ``(x, y)`` within ``PICK_PIXELS``, or
        None."""
        if len(points) == 0:
            return None
        xy, front = project_points(self.ctx, points.point_b)
        top = self.ctx.window_size[1] - y
        d2 = (xy[:, 0] - x) ** 2 + (xy[:, 1] - top) ** 2
        d2[~front] = np.inf
        j = int(np.argmin(d2))
        return j if d2[j] <= PICK_PIXELS * PICK_PIXELS else None

    def update(self, world: World, points: ContactPoints | None, waiting: str | None = None) -> None:
        """Find the inspected point in ``points`` (the contacts shown this frame) and read it; a world that
        was replaced (a scene loaded or reset) ends the inspection. ``waiting``: why there are no points
        to read (shown instead), when ``points`` is None for a reason other than the contact's end."""
        self.waiting = waiting
        if self.selected is None:
            return
        if world is not self._world:
            self.clear()
            return
        self.index = None
        self.reading = None
        if points is None or len(points) == 0:
            return
        a, b, pa = self.selected
        idx = match_points(points.keys, points.point_a, pair_keys([a], [b]), pa.reshape(1, 3))
        if idx[0] < 0:
            return
        self.index = int(idx[0])
        self.selected = (a, b, points.point_a[self.index].copy())
        self.reading = read_contact(world, points, self.index, self.ages)

    # --- drawing ----------------------------------------------------------------------------------------
    def draw_scene(self, batch, arrow_length: float = 0.5) -> None:
        """Mark the inspected point in the view: a ringed dot on B, a dot on A, the normal and (when known)
        the friction impulse's direction."""
        r = self.reading
        if r is None:
            return
        batch.points(r.point_b, MARK_OUTER, 18.0)
        batch.points(r.point_b, MARK_B, 10.0)
        batch.points(r.point_a, MARK_A, 8.0)
        batch.arrows(r.point_b, r.normal * arrow_length, MARK_NORMAL, 3.0)
        if r.friction is not None:
            size = float(np.linalg.norm(r.friction))
            if size > 1e-12:
                batch.arrows(r.point_b, r.friction / size * arrow_length, MARK_FRICTION, 3.0)

    def draw_section(self) -> None:
        """The inspector as a section of the window being drawn (the stepper's, so that it covers none of
        the view): a header with a close button, open at first."""
        self.rect = None
        if self.selected is None:
            return
        is_open, visible = imgui.collapsing_header(_("Contact point") + "###contact section", True,
                                                   imgui.TreeNodeFlags_.default_open)
        a, b = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.rect = (a.x, a.y, b.x, b.y)
        if not visible:
            self.clear()
            return
        if is_open:
            try:
                self._body()
            except Exception as exc:  # noqa: BLE001 - a failing readout is shown, the app goes on
                self.ctx.session.report(N_("the contact inspector"), exc)

    def draw(self, left: float) -> None:
        """The inspector window at the bottom of the view, its left edge at ``left`` (window points)."""
        self.rect = None
        if self.selected is None:
            return
        w, h = self.ctx.window_size
        imgui.set_next_window_pos(imgui.ImVec2(left, h - 10.0), imgui.Cond_.always, imgui.ImVec2(0.0, 1.0))
        imgui.set_next_window_size(imgui.ImVec2(INSPECTOR_WIDTH, 0.0), imgui.Cond_.always)
        imgui.set_next_window_bg_alpha(0.9)
        flags = (imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_resize | imgui.WindowFlags_.no_collapse
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_focus_on_appearing
                 | imgui.WindowFlags_.always_auto_resize)
        _visible, still_open = imgui.begin(_("Contact point") + "###contact inspector", True, flags)
        pos, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (pos.x, pos.y, pos.x + size.x, pos.y + size.y)
        self.ctx.ui_rects.append(self.rect)
        try:
            self._body()
        except Exception as exc:  # noqa: BLE001 - a failing readout is shown, the app goes on
            self.ctx.session.report(N_("the contact inspector"), exc)
        imgui.end()
        if not still_open:
            self.clear()

    def _body(self) -> None:
        r = self.reading
        if r is None:
            imgui.push_text_wrap_pos(0.0)
            if self.waiting is not None:
                imgui.text_colored(DIM, self.waiting)
            else:
                imgui.text_colored(YELLOW, _("This contact has ended: the bodies no longer touch there."))
            imgui.pop_text_wrap_pos()
            return
        imgui.text_colored(ACCENT, _("body {a} ({kind_a}) → body {b} ({kind_b})").format(
            a=r.body_a, kind_a=_(r.kind_a), b=r.body_b, kind_b=_(r.kind_b)))
        if r.note:
            imgui.text_colored(DIM, _("impulses: {note}").format(note=r.note))
        flags = imgui.TableFlags_.sizing_fixed_fit | imgui.TableFlags_.row_bg
        if not imgui.begin_table("##contact", 2, flags):
            return
        imgui.table_setup_column("label", imgui.TableColumnFlags_.width_fixed, 118.0)
        imgui.table_setup_column("value", imgui.TableColumnFlags_.width_stretch)
        if r.depth >= 0.0:
            _row(_("depth"), _("{d:.4f} m (overlapping)").format(d=r.depth))
        else:
            _row(_("depth"), _("{d:.4f} m (speculative: {gap:.4f} m apart)").format(d=r.depth, gap=-r.depth))
        _row(_("normal A → B"), _vec(r.normal))
        _row(_("anchor on A"), _("r_A = {r} m").format(r=_vec(r.anchor_a)))
        _row(_("anchor on B"), _("r_B = {r} m").format(r=_vec(r.anchor_b)))
        _row(_("relative velocity"), _("{v} m/s").format(v=_vec(r.relative_velocity)))
        approach = (_("at rest along the normal") if abs(r.normal_speed) < RESTING_SPEED
                    else _("approaching") if r.normal_speed < 0.0 else _("separating"))
        _row(_("normal speed"), _("{v:.4f} m/s ({what})").format(v=r.normal_speed, what=approach))
        _row(_("slip speed"), _("{v:.4f} m/s").format(v=r.slip))
        if r.normal_impulse is None:
            _row(_("normal impulse"), _("not computed yet (the solver does that)"), DIM)
        else:
            text = _("λn = {lam:.5f} N·s per sub-step").format(lam=r.normal_impulse)
            if r.h > 0.0:
                force = _("force λn/h = {f:.4g} N (h = {h:.4g} s)")
                text += "\n" + force.format(f=r.normal_impulse / r.h, h=r.h)
            _row(_("normal impulse"), text)
        if r.friction is None:
            text = (_("not computed yet (the solver does that)") if r.normal_impulse is None
                    else _("recorded only by a traced step: take one apart with Step through (S)"))
            _row(_("friction impulse"), text, DIM)
        else:
            _row(_("friction impulse"), _("|λt| = {f:.5f} N·s  {v}").format(
                f=float(np.linalg.norm(r.friction)), v=_vec(r.friction, 4)))
        cone = None if r.normal_impulse is None else r.mu * max(r.normal_impulse, 0.0)
        _row(_("friction cone"), _("μ = {mu:.3g}").format(mu=r.mu) if cone is None
             else _("μ·λn = {cone:.5f} N·s (μ = {mu:.3g})").format(cone=cone, mu=r.mu))
        states = {"sticks": (GREEN, _("sticks: inside the friction cone")),
                  "slides": (YELLOW, _("slides: on the friction cone")),
                  "free": (DIM, _("no load: λn = 0, so no friction either"))}
        color, text = states[r.state]
        if r.friction is None and r.state != "free":
            text = (_("sticks (slip below {v:.0f} mm/s)") if r.state == "sticks"
                    else _("slides (slip above {v:.0f} mm/s)")).format(v=1000.0 * STICK_SLIP)
        _row(_("friction"), text, color)
        if r.age is None:
            _row(_("age"), _("not known"), DIM)
        elif r.age[1]:
            _row(_("age"), _("at least {n} steps (counted since the watching began)").format(n=r.age[0]))
        else:
            _row(_("age"), _("{n} steps").format(n=r.age[0]))
        if r.warm is None:
            _row(_("warm start"), _("not known (more than one step since the last frame)"), DIM)
        else:
            _row(_("warm start"),
                 _("λn = {lam:.5f} N·s (last step's impulse of this point)").format(lam=r.warm))
        imgui.end_table()
