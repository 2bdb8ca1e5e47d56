"""Every setting of the panel's Advanced section changes the simulation measurably, in the direction the
physics says (warm starting and the friction rule have their own tests in test_solver.py and
test_friction.py)."""

from __future__ import annotations

import numpy as np

from sandbox import scenes
from sandbox.engine import Box, Sphere, World

DT = 1.0 / 60.0


def resting_box(**settings) -> tuple[World, object]:
    w = World()
    w.sleeping = False
    for name, value in settings.items():
        setattr(w, name, value)
    scenes.ground(w)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0), mass=10.0)
    for _ in range(90):
        w.step(DT)
    return w, box


def sink(**settings) -> float:
    """How deep a 10 kg box rests in the ground (m)."""
    return 0.5 - resting_box(**settings)[1].position[1]


def test_penalty_stiffness_a_stiffer_spring_sinks_less():
    soft, stiff = sink(response="penalty", penalty_hertz=10.0), sink(response="penalty", penalty_hertz=30.0)
    # x = m·g / k with k = m_eff·(2πf)²: three times the frequency, a ninth of the sinking
    assert stiff < soft / 5 and stiff > 0


def test_penalty_damping_takes_energy_out_of_the_bounce():
    def rebound(zeta: float) -> float:
        w = World()
        w.response = "penalty"
        w.penalty_damping_ratio = zeta
        scenes.ground(w)
        ball = w.add_body(Sphere(0.5), position=(0, 1.5, 0))
        top = 0.0
        for k in range(150):
            w.step(DT)
            if k > 40:
                top = max(top, ball.position[1])
        return top
    assert rebound(0.1) > rebound(1.0) + 0.05


def test_contact_stiffness_a_softer_contact_sinks_more():
    assert sink(contact_hertz=5.0) > 3 * sink(contact_hertz=60.0)


def test_contact_damping_ratio_changes_how_an_overlap_comes_apart():
    def separation_after(zeta: float) -> float:
        w = World(gravity=(0, 0, 0))
        w.contact_damping_ratio = zeta
        a = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0, 0))
        b = w.add_body(Box((0.5, 0.5, 0.5)), position=(0.8, 0, 0))
        for _ in range(6):
            w.step(DT)
        return float(b.position[0] - a.position[0])
    assert abs(separation_after(0.5) - separation_after(20.0)) > 0.01


def test_max_push_velocity_bounds_the_push_out():
    def fastest(limit: float) -> float:
        w = World(gravity=(0, 0, 0))
        w.max_push_velocity = limit
        w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0, 0), mass=0.0)
        b = w.add_body(Box((0.5, 0.5, 0.5)), position=(0.6, 0, 0))  # 40 cm deep
        speed = 0.0
        for _ in range(20):
            w.step(DT)
            speed = max(speed, float(np.linalg.norm(b.linear_velocity)))
        return speed
    slow, fast = fastest(0.5), fastest(3.0)
    assert slow <= 0.5 * 1.05 and fast > 2 * slow  # the bound holds, and a higher one pushes faster


def test_restitution_threshold_slow_impacts_do_not_bounce():
    def bounces(threshold: float) -> bool:
        w = World()
        w.restitution_threshold = threshold
        scenes.ground(w, restitution=1.0)
        ball = w.add_body(Sphere(0.5), position=(0, 0.5 + 0.45, 0), restitution=1.0)  # lands at 3 m/s
        for _ in range(40):
            w.step(DT)
        return bool(ball.linear_velocity[1] > 1.0 or ball.position[1] > 0.6)
    assert bounces(1.0) and not bounces(5.0)


def test_linear_slop_leaves_overlap_alone():
    # overlap within the slop is not pushed out: the box settles into it (never deeper than the slop)
    tight, slack = sink(linear_slop=0.0), sink(linear_slop=0.005)
    assert slack > 10 * tight and slack <= 0.005


def test_speculative_distance_makes_contacts_before_touching():
    def contacts(distance: float) -> int:
        w = World(gravity=(0, 0, 0))
        w.speculative_distance = distance
        scenes.ground(w)
        w.add_body(Sphere(0.5), position=(0, 0.5 + 0.03, 0))  # 3 cm above the ground, at rest
        w.step(DT)
        return int(w.contacts.count)
    assert contacts(0.1) == 1 and contacts(0.01) == 0


def test_angular_damping_slows_a_free_spin():
    def spin(c: float) -> float:
        w = World(gravity=(0, 0, 0))
        w.angular_damping = c
        ball = w.add_body(Sphere(0.5), angular_velocity=(0, 5.0, 0))
        for _ in range(60):
            w.step(DT)
        return float(ball.angular_velocity[1])
    assert spin(0.0) == 5.0 and abs(spin(1.0) - 5.0 * np.exp(-1.0)) < 0.1
