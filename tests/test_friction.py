"""Friction: the combine rules, and a box on a ramp sliding or holding exactly as Coulomb's law says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sandbox.engine import Box, World
from sandbox.engine.core.friction import combine_friction
from sandbox.engine.world import FRICTION_RULES

DT = 1.0 / 60.0
G = 9.81


@pytest.mark.parametrize(("rule", "expected"), [
    ("geometric", math.sqrt(0.3 * 0.8)), ("min", 0.3), ("max", 0.8), ("average", 0.55), ("product", 0.24),
])
def test_combine_rules(rule, expected):
    assert combine_friction(0.3, 0.8, FRICTION_RULES.index(rule)) == pytest.approx(expected)


def ramp_acceleration(rule: str, mu_box: float, mu_ramp: float, angle_deg: float = 20.0) -> float:
    """The acceleration along a ramp of a box released on it, measured between 0.5 s and 1.5 s."""
    w = World()
    w.sleeping = False
    w.friction_rule = rule
    theta = math.radians(angle_deg)
    q = (0.0, 0.0, math.sin(theta / 2), math.cos(theta / 2))  # the ramp's top face tilts down towards −x
    w.add_body(Box((20.0, 0.5, 3.0)), orientation=q, mass=0.0, friction=mu_ramp)
    normal = np.array([-math.sin(theta), math.cos(theta), 0.0])
    down = np.array([-math.cos(theta), -math.sin(theta), 0.0])
    box = w.add_body(Box((0.25, 0.25, 0.25)), position=0.75 * normal, orientation=q, friction=mu_box)
    speeds = []
    for k in range(90):
        w.step(DT)
        if k in (29, 89):
            speeds.append(float(box.linear_velocity @ down))
    return (speeds[1] - speeds[0]) / 1.0


@pytest.mark.parametrize("rule", FRICTION_RULES)
def test_friction_rule_sets_the_ramps_threshold(rule):
    """Ramp μ = 1, box μ = 0.3, 20°: the pair's μ is the rule's; it slides with a = g(sin θ − μ cos θ) when
    μ < tan θ = 0.364, and holds otherwise."""
    mu = combine_friction(0.3, 1.0, FRICTION_RULES.index(rule))
    theta = math.radians(20.0)
    a = ramp_acceleration(rule, 0.3, 1.0)
    if mu < math.tan(theta):
        assert a == pytest.approx(G * (math.sin(theta) - mu * math.cos(theta)), rel=0.03)
    else:
        assert abs(a) < 0.02
