"""The restitution and energy ledger (``sandbox/ledger.py``): measured e against Newton's law e = −v′ₙ/vₙ
for balls dropped on the ground under every combination rule, and the momentum and energy of head-on
collisions against the closed-form results."""

import math

import numpy as np
import pytest

from sandbox.engine import Box, Sphere, World
from sandbox.ledger import IMPACT_COLUMNS, RestitutionLedger, combine_restitution

DT = 1 / 60
GROUND_E = 0.6  # between the balls' values, so that the four rules give four different pair values
BALL_E = (0.25, 0.5, 0.75, 1.0)
# the rules written out independently of the code under test
EXPECTED = {"product": lambda a, b: a * b, "min": min, "max": max, "average": lambda a, b: (a + b) / 2}


def drop_world(rule: str, height: float = 1.0) -> tuple[World, list]:
    """Four balls of ``BALL_E`` side by side, their bottoms ``height`` above a static ground of
    restitution ``GROUND_E``, under restitution rule ``rule``."""
    w = World()
    w.restitution_rule = rule
    w.add_body(Box((20, 0.5, 20)), position=(0, -0.5, 0), mass=0, restitution=GROUND_E)
    balls = [w.add_body(Sphere(0.3), position=(-3 + 2 * k, height + 0.3, 0), restitution=e)
             for k, e in enumerate(BALL_E)]
    return w, balls


def first_impacts(ledger: RestitutionLedger, balls: list) -> dict[int, object]:
    """The first impact row of each ball (by row index)."""
    out = {}
    for row in ledger.impacts:
        for b in balls:
            if b.index in (row.body_a, row.body_b):
                out.setdefault(b.index, row)
    return out


def test_rules_differ_for_these_values():
    pairs = {rule: [EXPECTED[rule](e, GROUND_E) for e in BALL_E] for rule in EXPECTED}
    for r1 in EXPECTED:
        for r2 in EXPECTED:
            if r1 < r2:
                assert pairs[r1] != pairs[r2]
    for rule, f in EXPECTED.items():
        assert [combine_restitution(e, GROUND_E, rule) for e in BALL_E] == pytest.approx(
            [f(e, GROUND_E) for e in BALL_E])


@pytest.mark.parametrize("rule", list(EXPECTED))
def test_dropped_ball_measures_the_combined_e(rule):
    w, balls = drop_world(rule)
    ledger = RestitutionLedger(w)
    for _ in range(40):  # the balls land at t = √(2·1/9.81) = 0.45 s, step 27
        ledger.step(DT)
    rows = first_impacts(ledger, balls)
    assert len(rows) == len(balls)
    v_land = math.sqrt(2 * 9.81 * 1.0)
    for b, e in zip(balls, BALL_E, strict=True):
        row = rows[b.index]
        want = EXPECTED[rule](e, GROUND_E)
        assert row.rule == rule
        assert {row.restitution_a, row.restitution_b} == {e, GROUND_E}
        assert row.combined == pytest.approx(want)
        assert row.measured == pytest.approx(want, rel=0.03), (rule, e, row)
        # the approach speed is that of the fall from 1 m, at the moment of contact
        assert row.approach_speed == pytest.approx(v_land, rel=0.02)
        assert row.time == pytest.approx(math.sqrt(2 * 1.0 / 9.81), abs=DT)
        # the ground is static: all the kinetic energy is the ball's, and it keeps e² of it
        assert row.kinetic_after / row.kinetic_before == pytest.approx(want**2, rel=0.06)
        # the ground took the momentum: Δp = m·(1 + e)·v upwards
        assert row.momentum_change[1] == pytest.approx((1 + want) * row.approach_speed, rel=0.03)


def test_reading_before_the_step_would_be_wrong():
    """Gravity adds speed inside the impact step: the speed at the start of the step is lower than the
    approach the ledger carries forward to the contact, by at most g·dt."""
    w, balls = drop_world("product")
    ledger = RestitutionLedger(w)
    seen = 0
    for _ in range(40):
        before = {b.index: -float(b.linear_velocity[1]) for b in balls}
        for row in ledger.step(DT):
            ball = row.body_b if row.body_a == 0 else row.body_a  # the ground is row 0
            assert before[ball] < row.approach_speed <= before[ball] + 9.81 * DT + 1e-9
            seen += 1
    assert seen == len(balls)


@pytest.mark.parametrize("masses", [(1.0, 1.0), (1.0, 3.0)])
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_head_on_collision_conserves_momentum_and_loses_the_newton_energy(masses, e):
    ma, mb = masses
    w = World(gravity=(0, 0, 0))
    a = w.add_body(Sphere(0.3), position=(-1, 1, 0), mass=ma, restitution=e, velocity=(3, 0, 0))
    b = w.add_body(Sphere(0.3), position=(1, 1, 0), mass=mb, restitution=1.0, velocity=(-1, 0, 0))
    ledger = RestitutionLedger(w)
    for _ in range(30):
        ledger.step(DT)
    assert len(ledger.impacts) == 1
    row = ledger.impacts[0]
    assert {row.body_a, row.body_b} == {a.index, b.index}
    assert row.combined == pytest.approx(e)
    assert row.approach_speed == pytest.approx(4.0, rel=0.005)
    assert row.measured == pytest.approx(e, abs=0.01)
    p_scale = ma * 3 + mb * 1
    assert np.abs(row.momentum_change).max() < 1e-3 * p_scale
    mu = ma * mb / (ma + mb)
    ke0 = 0.5 * ma * 3**2 + 0.5 * mb * 1**2
    assert row.kinetic_before == pytest.approx(ke0, rel=0.005)
    lost = 0.5 * (1 - e * e) * mu * row.approach_speed**2
    assert row.kinetic_before - row.kinetic_after == pytest.approx(lost, abs=2e-3 * ke0)
    # and the bodies' final velocities are Newton's: v′_rel = e·v_rel, total momentum kept
    rel = b.linear_velocity[0] - a.linear_velocity[0]
    assert rel == pytest.approx(e * row.approach_speed, abs=0.02)


def test_slow_contacts_and_resting_contacts_are_not_impacts():
    w = World()
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0, restitution=1.0)
    w.add_body(Sphere(0.3), position=(0, 0.32, 0), restitution=1.0)  # lands at 0.63 m/s < 1 m/s
    w.add_body(Sphere(0.3), position=(2, 1.3, 0), restitution=0.0)  # lands once, then rests
    ledger = RestitutionLedger(w)
    for _ in range(90):
        ledger.step(DT)
    assert len(ledger.impacts) == 1
    row = ledger.impacts[0]
    assert 2 in (row.body_a, row.body_b)
    assert row.measured == pytest.approx(0.0, abs=0.01)
    w2 = World()
    w2.restitution_threshold = 0.5
    w2.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0, restitution=1.0)
    w2.add_body(Sphere(0.3), position=(0, 0.32, 0), restitution=1.0)
    ledger2 = RestitutionLedger(w2)
    for _ in range(20):
        ledger2.step(DT)
    assert len(ledger2.impacts) >= 1  # under the lower threshold the slow landing counts


def test_before_and_after_step_around_the_worlds_own_step_and_rows():
    w, balls = drop_world("max")
    ledger = RestitutionLedger(w)
    assert ledger.after_step() == []  # nothing kept yet: nothing to compare
    for _ in range(40):
        ledger.before_step()
        w.step(DT)
        ledger.after_step()
    assert len(ledger.impacts) == 4
    row = ledger.impacts[0].row()
    assert len(row) == len(IMPACT_COLUMNS)
    assert dict(zip(IMPACT_COLUMNS, row, strict=True))["rule"] == "max"


def test_summary_compares_measured_with_configured():
    w, balls = drop_world("average")
    ledger = RestitutionLedger(w)
    for _ in range(40):
        ledger.step(DT)
    summary = ledger.summary()
    assert [s.configured for s in summary] == pytest.approx(sorted((e + GROUND_E) / 2 for e in BALL_E))
    for s in summary:
        assert s.count == 1
        assert s.lowest <= s.mean <= s.highest
        assert s.mean_error < 0.03
        assert s.mean == pytest.approx(s.configured, rel=0.03)
    text = ledger.format_summary()
    assert "4 impacts" in text and "average" in text and "0.425" in text


def test_contact_time_solves_the_uniformly_accelerated_gap():
    gap = np.array([0.1, 0.1, 0.0, 0.5, 0.01])
    vn0 = np.array([-1.0, -1.0, -2.0, -1.0, 0.0])
    an = np.array([0.0, -9.81, 0.0, 0.0, -9.81])
    t, closes = RestitutionLedger._contact_time(gap, vn0, an, 0.2)
    assert t[0] == pytest.approx(0.1)
    assert gap[1] + vn0[1] * t[1] + 0.5 * an[1] * t[1] ** 2 == pytest.approx(0.0, abs=1e-12)
    assert 0 < t[1] < 0.1
    assert t[2] == 0.0  # touching already
    assert not closes[3] and t[3] == 0.2  # 0.5 m at 1 m/s does not close within 0.2 s
    assert t[4] == pytest.approx(math.sqrt(2 * 0.01 / 9.81))
    assert closes[[0, 1, 2, 4]].all()
