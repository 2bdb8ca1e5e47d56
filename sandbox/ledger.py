"""The restitution and energy ledger: a row for every impact a ``World`` sees, with the coefficient of
restitution it was configured with and the one it actually produced.

Newton's law of restitution relates the relative normal velocity of the two contact points just after an
impact, v′ₙ, to the one just before it, vₙ (negative while approaching):

    v′ₙ = −e · vₙ,   so the measured coefficient is   e = −v′ₙ / vₙ.

For two bodies of masses m₁, m₂ meeting head-on it follows that momentum is conserved and that the
kinetic energy lost is ½·(1 − e²)·μ·vₙ², μ = m₁m₂/(m₁ + m₂) being the reduced mass.

**Where the two velocities are read.** The ledger copies the bodies' state before each step and compares
it with the state after. A contact's points and normal in ``world.contacts`` were computed from the poses
at the start of the step, so the relative velocity of the contact points there, vₙ₀, is exactly "before
the step". But a falling ball is still speeding up inside the step until it touches, by up to g·dt
(0.16 m/s at 60 Hz, 3 % of a 5 m/s impact): reading vₙ₀ as the approach speed would make every bounce
look too elastic. So the ledger carries the motion forward to the moment of contact: the contact's gap
s₀ (its negative depth, at the start of the step), closing at vₙ₀ under the relative normal acceleration
aₙ that gravity gives the two bodies, is zero after the smallest t ≥ 0 with

    s₀ + vₙ₀·t + ½·aₙ·t² = 0,

and the approach velocity is vₙ = vₙ₀ + aₙ·t (t = 0 when the bodies already touched). The kinetic energy
and momentum "before" are those of the same moment, so that an isolated impact shows only what the
impact did.

The separation velocity v′ₙ is read at the end of the impact step, at the same material points (carried
along with each body's rotation): the engine applies restitution after its last sub-step (Box2D v3's
scheme), so that is where the bounce's velocity is set, and where the following flight starts from (a
ball that leaves the ground at e·v from the contact height rises to e²·h). Where the contact is still
closing when the next step begins (an e = 0 impact, which the engine leaves to its soft contact, can take
two steps), the "after" values are read again at the end of that step, until the bodies stop closing.

The point a manifold's velocities are read at is its centre of impulse (the contact points weighted by
the normal impulse each took), where the total normal impulse acts; for a ball that is its one point.

The rows are exact for isolated impacts; when a body takes several impacts in one step (a pile, a cradle
whose balls touch), each row sees the velocity change of all of them. The engine offers no per-contact
relative velocity, so the ledger computes it here from the bodies' public state (``world.data``) and the
manifolds (``world.contacts``).

>>> from sandbox.engine import World, Sphere, Box
>>> w = World()
>>> ground = w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0, restitution=1.0)
>>> ball = w.add_body(Sphere(0.5), position=(0, 1.5, 0), restitution=0.5)
>>> ledger = RestitutionLedger(w)
>>> for _ in range(40):
...     _ = ledger.step(1 / 60)
>>> row = ledger.impacts[0]
>>> row.combined, round(row.measured, 2)
(0.5, 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .engine import World

RULES = ("product", "min", "max", "average")

_STILL_CLOSING = 0.01
"""An impact goes on into the next step while its contact still closes faster than this fraction of the
approach speed when that step begins (the soft contact of an e = 0 impact can take two steps)."""

IMPACT_COLUMNS = ("step", "time", "body_a", "body_b", "restitution_a", "restitution_b", "rule", "combined_e",
                  "approach_speed", "separation_speed", "measured_e", "kinetic_before", "kinetic_after",
                  "momentum_change_x", "momentum_change_y", "momentum_change_z")
"""The columns of ``Impact.row()``, in order (the headless run's ``--impacts`` CSV)."""


def combine_restitution(ea: float, eb: float, rule: str) -> float:
    """The pair's coefficient of restitution from the two bodies' values under ``rule``: "product"
    (ea·eb), "min", "max" or "average" (½(ea + eb)), as the engine's solver combines them."""
    if rule == "product":
        return ea * eb
    if rule == "min":
        return min(ea, eb)
    if rule == "max":
        return max(ea, eb)
    if rule == "average":
        return 0.5 * (ea + eb)
    raise ValueError(f"unknown restitution rule {rule!r}; choose one of {', '.join(RULES)}")


@dataclass(frozen=True)
class Impact:
    """One impact: at world ``time`` (the moment of contact, within step number ``step``) bodies
    ``body_a`` and ``body_b`` (row indices; the normal points from A to B) with restitutions
    ``restitution_a`` and ``restitution_b`` combined under ``rule`` into ``combined``, met at
    ``approach_speed`` = −vₙ and left at ``separation_speed`` = v′ₙ (m/s, along the normal, at the
    centre of impulse): ``measured`` = −v′ₙ/vₙ (Newton). ``kinetic_before``/``kinetic_after`` (J) and
    ``momentum_change`` (kg·m/s, after − before) are those of the two bodies (static bodies count zero)."""

    step: int
    time: float
    body_a: int
    body_b: int
    restitution_a: float
    restitution_b: float
    rule: str
    combined: float
    approach_speed: float
    separation_speed: float
    measured: float
    kinetic_before: float
    kinetic_after: float
    momentum_change: np.ndarray
    point: np.ndarray
    normal: np.ndarray

    def row(self) -> tuple:
        """The values of ``IMPACT_COLUMNS``, in order."""
        dp = self.momentum_change
        return (self.step, self.time, self.body_a, self.body_b, self.restitution_a, self.restitution_b,
                self.rule, self.combined, self.approach_speed, self.separation_speed, self.measured,
                self.kinetic_before, self.kinetic_after, float(dp[0]), float(dp[1]), float(dp[2]))


@dataclass(frozen=True)
class RestitutionSummary:
    """The impacts of one configured coefficient ``configured``: how many (``count``), the mean, lowest
    and highest measured e, and the mean of |measured − configured| / configured (``mean_error``; 0 when
    configured is 0, then it is the mean absolute error)."""

    configured: float
    count: int
    mean: float
    lowest: float
    highest: float
    mean_error: float


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate rows ``v`` (k, 3) by unit quaternions ``q`` (k, 4) (x, y, z, w): v + 2w(u×v) + 2u×(u×v)."""
    u, w = q[:, :3], q[:, 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _unrotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate rows ``v`` by the inverse (conjugate) of the unit quaternions ``q``."""
    return _rotate(q * np.array([-1.0, -1.0, -1.0, 1.0]), v)


def _kinetic(mass: np.ndarray, inv_inertia: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """½·m·v² + ½·ω·I·ω per row, I·ω found by solving I⁻¹·x = ω (rows with I⁻¹ = 0 — static bodies or
    bodies locked against rotation — have no rotational energy)."""
    lin = 0.5 * mass * (v * v).sum(axis=1)
    iw = np.zeros_like(w)
    ok = np.abs(np.linalg.det(inv_inertia)) > 1e-300
    if ok.any():
        iw[ok] = np.linalg.solve(inv_inertia[ok], w[ok][..., None])[..., 0]
    return lin + 0.5 * (w * iw).sum(axis=1)


class RestitutionLedger:
    """Watches ``world`` step by step and records an ``Impact`` for every contact that was struck at
    least as fast as ``world.restitution_threshold`` (slower contacts do not bounce in the engine).

    Either call ``step(dt)`` instead of ``world.step(dt)``, or call ``before_step()`` and
    ``after_step()`` around the world's own step. Rows accumulate in ``impacts``; ``new_impacts`` holds
    those that began in the last step. A row's "after" values may still change in the step after its
    own, while its contact keeps closing (see the module's docstring)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.impacts: list[Impact] = []
        self.new_impacts: list[Impact] = []
        self._before: tuple | None = None
        # impacts that may still go on: pair key -> (row in impacts, approach speed, momentum before)
        self._open: dict[int, tuple[int, float, np.ndarray]] = {}

    def step(self, dt: float) -> list[Impact]:
        """Step the world by ``dt`` and return the impacts of that step."""
        self.before_step()
        self.world.step(dt)
        return self.after_step()

    def before_step(self) -> None:
        """Remember the state that the next step starts from (a copy of the bodies' rows)."""
        w = self.world
        d = w.data
        n = d.n
        self._before = (n, w.time, w.steps, d.pos[:n].copy(), d.quat[:n].copy(), d.vel[:n].copy(),
                        d.angvel[:n].copy(), d.inv_inertia[:n].copy(), d.generation[:n].copy(),
                        w.gravity)

    def after_step(self) -> list[Impact]:
        """Compare the state after the step with the one ``before_step`` kept; record and return the
        impacts that began in the step (empty if ``before_step`` was not called). An impact whose
        contact is still closing at the start of the next step (a soft contact that needed more than one
        step, as with e = 0) has its "after" values updated at the end of that step too."""
        self.new_impacts = []
        if self._before is None:
            return self.new_impacts
        n0, t0, steps0, pos0, quat0, vel0, angvel0, inv_i0, gen0, gravity = self._before
        self._before = None
        w = self.world
        d = w.data
        c = w.contacts
        m = c.count
        dt = w.time - t0
        still_open, self._open = self._open, {}
        if m == 0 or dt <= 0.0:
            return self.new_impacts
        k = np.arange(c.impulse.shape[1])[None, :] < c.npoints[:m, None]
        lam = np.where(k, c.impulse[:m], 0.0)
        total = lam.sum(axis=1)
        a_all, b_all = c.body_a[:m], c.body_b[:m]
        # manifolds between bodies that existed (the same ones) before the step
        rows = np.flatnonzero((a_all < n0) & (b_all < n0))
        if len(rows):
            rows = rows[(gen0[a_all[rows]] == d.generation[a_all[rows]])
                        & (gen0[b_all[rows]] == d.generation[b_all[rows]])
                        & d.alive[a_all[rows]] & d.alive[b_all[rows]]]
        if len(rows) == 0:
            return self.new_impacts
        a, b = a_all[rows], b_all[rows]
        # weights of the points: their share of the normal impulse (the stored impulse is the last
        # sub-step's, which can be zero for a contact that acted earlier in the step: then equal shares)
        kk = k[rows].astype(float)
        wt = np.where(total[rows, None] > 0.0, lam[rows] / np.maximum(total[rows, None], 1e-300),
                      kk / kk.sum(axis=1, keepdims=True))
        mid = 0.5 * (c.points_a[rows] + c.points_b[rows])
        p = (wt[..., None] * mid).sum(axis=1)  # centre of impulse, at the start of the step
        gap = np.maximum(-(wt * c.depth[rows]).sum(axis=1), 0.0)
        nrm = c.normal[rows]
        ra, rb = p - pos0[a], p - pos0[b]
        vn0 = ((vel0[b] + np.cross(angvel0[b], rb) - vel0[a] - np.cross(angvel0[a], ra)) * nrm).sum(axis=1)
        dynamic = ~d.static[:n0]
        acc = np.where(dynamic[:, None], d.gravity_scale[:n0, None] * gravity[None, :], 0.0)
        an = ((acc[b] - acc[a]) * nrm).sum(axis=1)
        tc, closes = self._contact_time(gap, vn0, an, dt)
        approach = np.maximum(-(vn0 + an * tc), 0.0)
        keys = np.minimum(a, b) * max(n0, 1) + np.maximum(a, b)  # the pair, whichever is A
        # an open impact goes on while its contact was still closing when this step began
        going_on = np.zeros(len(rows), dtype=bool)
        if still_open:
            for j in np.flatnonzero(np.isin(keys, list(still_open))).tolist():
                going_on[j] = -vn0[j] > _STILL_CLOSING * still_open[int(keys[j])][1]
        # struck in this step: the gap closed, or the contact pushed (the engine may stop a pair a fraction of
        # a millimetre early, from its speculative contact's sub-step view)
        struck = closes | (total[rows] > 0.0)
        hit = ~going_on & struck & (approach >= float(w.restitution_threshold)) & (approach > 0.0)
        todo = np.flatnonzero(hit | going_on)
        if len(todo) == 0:
            return self.new_impacts
        a, b, p, nrm, ra, rb, tc, approach = (x[todo] for x in (a, b, p, nrm, ra, rb, tc, approach))
        # after: the same material points and the normal carried along with the bodies' rotations
        ra1 = _rotate(d.quat[a], _unrotate(quat0[a], ra))
        rb1 = _rotate(d.quat[b], _unrotate(quat0[b], rb))
        n1 = _rotate(d.quat[a], _unrotate(quat0[a], nrm))
        rel1 = d.vel[b] + np.cross(d.angvel[b], rb1) - d.vel[a] - np.cross(d.angvel[a], ra1)
        vn1 = (rel1 * n1).sum(axis=1)
        mass = np.where(dynamic, d.mass[:n0], 0.0)
        rule = w.restitution_rule
        for j, r in enumerate(todo.tolist()):
            pair = np.array([a[j], b[j]])
            ke1 = float(_kinetic(mass[pair], d.inv_inertia[pair], d.vel[pair], d.angvel[pair]).sum())
            mom1 = (mass[pair, None] * d.vel[pair]).sum(axis=0)
            v_sep = float(vn1[j])
            if going_on[r]:
                index, v_app, mom0 = still_open[int(keys[r])]
                old = self.impacts[index]
                self.impacts[index] = replace(old, separation_speed=v_sep, measured=v_sep / v_app,
                                              kinetic_after=ke1, momentum_change=mom1 - mom0)
                self._open[int(keys[r])] = (index, v_app, mom0)
                continue
            v_before = vel0[pair] + acc[pair] * tc[j]
            ke0 = float(_kinetic(mass[pair], inv_i0[pair], v_before, angvel0[pair]).sum())
            mom0 = (mass[pair, None] * v_before).sum(axis=0)
            ea, eb = float(d.restitution[a[j]]), float(d.restitution[b[j]])
            v_app = float(approach[j])
            impact = Impact(
                step=steps0 + 1, time=t0 + float(tc[j]), body_a=int(a[j]), body_b=int(b[j]),
                restitution_a=ea, restitution_b=eb, rule=rule, combined=combine_restitution(ea, eb, rule),
                approach_speed=v_app, separation_speed=v_sep, measured=v_sep / v_app,
                kinetic_before=ke0, kinetic_after=ke1, momentum_change=mom1 - mom0, point=p[j].copy(),
                normal=nrm[j].copy())
            self._open[int(keys[r])] = (len(self.impacts), v_app, mom0)
            self.impacts.append(impact)
            self.new_impacts.append(impact)
        return self.new_impacts

    @staticmethod
    def _contact_time(gap: np.ndarray, vn0: np.ndarray, an: np.ndarray,
                      dt: float) -> tuple[np.ndarray, np.ndarray]:
        """When each contact's gap closes within the step: the smallest t in [0, dt] with
        gap + vn0·t + ½·an·t² = 0 (uniformly accelerated closing), and whether there is one (else t = dt).
        A contact without a gap closes at t = 0. Written as t = 2·gap / (−vn0 + √(vn0² − 2·an·gap)), the
        form of the root nearest 0 without cancellation."""
        disc = vn0 * vn0 - 2.0 * an * gap
        den = -vn0 + np.sqrt(np.maximum(disc, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where((disc >= 0.0) & (den > 0.0), 2.0 * gap / den, np.inf)
        t = np.where(gap > 0.0, t, 0.0)
        closes = t <= dt
        return np.where(closes, t, dt), closes

    def summary(self) -> list[RestitutionSummary]:
        """Measured against configured e: one entry per configured (combined) coefficient, in increasing
        order, over the impacts recorded so far."""
        groups: dict[float, list[float]] = {}
        for row in self.impacts:
            if not math.isnan(row.measured):
                groups.setdefault(round(row.combined, 9), []).append(row.measured)
        out = []
        for e, values in sorted(groups.items()):
            v = np.array(values)
            err = np.abs(v - e) / e if e > 0 else np.abs(v - e)
            out.append(RestitutionSummary(configured=e, count=len(v), mean=float(v.mean()),
                                          lowest=float(v.min()), highest=float(v.max()),
                                          mean_error=float(err.mean())))
        return out

    def format_summary(self) -> str:
        """``summary()`` as a few lines of text for a terminal."""
        rules = ", ".join(sorted({row.rule for row in self.impacts})) or self.world.restitution_rule
        lines = [f"{len(self.impacts)} impacts (rule {rules}); measured e = −v′ₙ/vₙ against configured:"]
        for s in self.summary():
            # a relative error means nothing against e = 0: there it is the absolute one
            error = f"{100 * s.mean_error:.1f} %" if s.configured > 0 else f"{s.mean_error:.3f} (absolute)"
            lines.append(f"  configured e {s.configured:.3f}: {s.count} impacts, measured mean {s.mean:.3f} "
                         f"(from {s.lowest:.3f} to {s.highest:.3f}), mean error {error}")
        return "\n".join(lines)
