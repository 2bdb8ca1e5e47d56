"""The session, headless: the fixed-timestep clock and its interpolation, the measured simulation rate,
the frame pacer's idle decision, scenes and their settings, and the commands the UI gives.

No display and no pyglet: everything here runs on a bare machine."""

from __future__ import annotations

import numpy as np
import pytest

from sandbox.engine import Box, Sphere, World
from sandbox.session import (
    MAX_FRAME_SECONDS,
    SCENE_FOLDER,
    FramePacer,
    Session,
    Simulation,
    resolve_scene,
)


def falling_world() -> World:
    w = World()
    w.add_body(Sphere(0.5), position=(0.0, 5.0, 0.0), angular_velocity=(0.0, 3.0, 0.0))
    return w


def box_on_ground(world: World) -> None:
    world.add_body(Box((10.0, 0.5, 10.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    world.add_body(Box((0.5, 0.5, 0.5)), position=(0.0, 0.5, 0.0), mass=1.0)


def settings_of(world: World) -> dict[str, object]:
    """Every setting of ``world``: its public properties and its public scalar attributes (a fresh
    world's counters are zero, so those compare equal too)."""
    names = [n for n, v in vars(World).items()
             if isinstance(v, property) and v.fset is not None and not n.startswith("_")]
    names += [n for n, v in vars(world).items()
              if not n.startswith("_") and isinstance(v, (bool, int, float, str))]
    out = {}
    for name in names:
        value = getattr(world, name)
        out[name] = np.asarray(value).tolist() if isinstance(value, np.ndarray) else value
    return out


# --- the fixed-timestep loop ----------------------------------------------------------------------------


def test_accumulator_takes_whole_steps_and_keeps_the_remainder():
    sim = Simulation(falling_world(), dt=1 / 60)
    assert sim.advance(0.045) == 2
    assert sim.accumulator == pytest.approx(0.045 - 2 / 60)
    assert sim.advance(0.01) == 1  # the leftover and 0.01 s make one more step
    assert sim.steps == 3 and sim.time == pytest.approx(3 / 60)


def test_step_cap_drops_the_backlog_so_a_slow_frame_never_snowballs():
    sim = Simulation(falling_world(), dt=1 / 60, max_steps=4)
    assert sim.advance(10.0) == 4
    assert sim.accumulator < sim.dt


def test_pause_time_scale_and_single_step():
    sim = Simulation(falling_world(), dt=1 / 60)
    sim.paused = True
    assert sim.advance(1.0) == 0
    sim.step()
    assert sim.steps == 1
    sim.paused = False
    sim.time_scale = 0.05
    taken = sum(sim.advance(1 / 60) for _ in range(40))
    assert taken == 2  # 40 frames of 1/60 s at 0.05× make 2/60 s of simulated time


def test_interpolation_blends_between_the_last_two_states():
    sim = Simulation(falling_world(), dt=1 / 60)
    sim.advance(1 / 60)
    before = sim._prev_pos.copy(), sim._prev_quat.copy()
    now = sim.world.data.pos[:1].copy(), sim.world.data.quat[:1].copy()
    sim.accumulator = 0.5 * sim.dt
    pos, quat = sim.interpolated()
    np.testing.assert_allclose(pos, 0.5 * (before[0] + now[0]))
    mid = before[1] + now[1]
    np.testing.assert_allclose(quat, mid / np.linalg.norm(mid, axis=1, keepdims=True))
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0)


def test_interpolation_takes_the_short_arc_and_skips_new_rows():
    sim = Simulation(falling_world(), dt=1 / 60)
    sim.advance(1 / 60)
    sim._prev_quat[0] = -sim.world.data.quat[0]  # the same rotation, opposite sign
    sim.world.add_body(Box((0.5, 0.5, 0.5)), position=(3.0, 1.0, 0.0))
    sim.accumulator = 0.25 * sim.dt
    pos, quat = sim.interpolated()
    assert abs(abs(float(np.dot(quat[0], sim.world.data.quat[0]))) - 1.0) < 1e-9
    np.testing.assert_allclose(pos[1], sim.world.data.pos[1])


# --- the measured rate ----------------------------------------------------------------------------------


def test_a_clock_that_keeps_up_measures_its_time_scale():
    sim = Simulation(falling_world(), dt=1 / 60)
    for scale in (0.5, 2.0):  # a faster time scale: the smoothed rate lags behind it for a while
        sim.time_scale = scale
        for _ in range(300):  # 4 s: the smoothing (0.5 s time constant) has forgotten the last scale
            sim.advance(1 / 75)  # a 75 Hz display: 0.8 steps a frame on average
            assert not sim.behind  # not even while the smoothed rate moves to a new time scale
        assert sim.real_rate == pytest.approx(scale, rel=0.01)
        assert not sim.behind


def test_the_step_cap_shows_as_a_slower_real_rate():
    sim = Simulation(falling_world(), dt=1 / 60, max_steps=4)
    for _ in range(40):
        sim.advance(0.1)  # each frame needs 6 steps, the cap allows 4: 4/60 s per 0.1 s
    assert sim.real_rate == pytest.approx((4 / 60) / 0.1, rel=0.01)
    assert sim.behind and sim.slowed_by == "step cap"
    for _ in range(240):
        sim.advance(1 / 60)  # the machine catches up: the rate returns to 1×
    assert sim.real_rate == pytest.approx(1.0, rel=0.01) and not sim.behind


def test_frames_longer_than_the_frame_cap_show_as_long_frames():
    sim = Simulation(falling_world(), dt=1 / 60, max_steps=1000)
    for _ in range(10):
        sim.advance(1.0)
    assert sim.real_rate == pytest.approx(MAX_FRAME_SECONDS, rel=0.01)
    assert sim.behind and sim.slowed_by == "long frames"


def test_a_paused_clock_is_never_behind():
    sim = Simulation(falling_world(), dt=1 / 60, max_steps=1)
    for _ in range(10):
        sim.advance(0.2)
    assert sim.behind
    sim.paused = True
    assert not sim.behind


# --- the frame pacer ------------------------------------------------------------------------------------


def test_pacer_draws_at_once_while_anything_moves_or_just_after_input():
    pacer = FramePacer(idle_fps=10.0, grace=0.5)
    assert pacer.wait(now=100.0, last_frame=99.99, resting=False) == 0.0
    pacer.input(99.8)
    assert pacer.wait(now=100.0, last_frame=99.99, resting=True) == 0.0
    assert not pacer.idle(now=100.0, resting=True) and pacer.idle(now=100.3, resting=True)


def test_pacer_slows_to_the_idle_rate_when_everything_rests_and_the_user_is_idle():
    pacer = FramePacer(idle_fps=10.0, grace=0.5)
    pacer.input(90.0)
    assert pacer.idle(now=100.0, resting=True) and not pacer.idle(now=100.0, resting=False)
    assert pacer.wait(now=100.0, last_frame=99.98, resting=True) == pytest.approx(0.08)
    assert pacer.wait(now=100.2, last_frame=99.98, resting=True) == 0.0  # the idle frame is due


def test_session_rests_when_paused_or_all_asleep_and_not_when_grabbed():
    session = Session()
    assert session.load_scene(box_on_ground)
    box = session.world.bodies[1]
    box.linear_velocity = (0.0, 2.0, 0.0)
    assert not session.resting
    session.sim.paused = True
    assert session.resting
    session.sim.paused = False
    for _ in range(600):
        session.sim.step()
        if not box.awake:
            break
    assert not box.awake and session.resting
    session.start_grab(box, box.center_of_mass, 100.0, 5.0, 1.0)
    assert not session.resting


# --- scenes and settings --------------------------------------------------------------------------------


def odd_settings(world: World) -> None:
    """A scene that changes many settings away from the defaults."""
    world.gravity = (0.0, 0.0, 0.0)
    world.linear_damping = 0.0
    world.angular_damping = 0.5
    world.contact_cache = False
    world.restitution_rule = "max"
    world.broadphase = "grid"
    world.substeps = 7
    world.ccd = False
    world.add_body(Sphere(0.5), position=(0.0, 1.0, 0.0))


def test_loading_a_scene_resets_what_it_does_not_set_to_the_world_defaults():
    session = Session()
    assert session.load_scene(odd_settings)
    session.set_setting("iterations", 3)
    assert session.load_scene(box_on_ground)
    assert settings_of(session.world) == settings_of(World())
    assert session.load_scene("empty") and settings_of(session.world) == settings_of(World())


def test_reset_keeps_the_scene_settings_and_the_users_changes():
    session = Session()
    assert session.load_scene(odd_settings)
    session.set_setting("iterations", 3)
    session.set_setting("contact_cache", True)
    session.set_setting("gravity", (0.0, -2.0, 0.0))
    old = session.world
    assert session.reset()
    w = session.world
    assert w is not old and len(w.bodies) == 1
    assert (w.iterations, w.contact_cache, w.substeps, w.broadphase) == (3, True, 7, "grid")
    np.testing.assert_allclose(w.gravity, (0.0, -2.0, 0.0))
    assert session.scene_name == "odd_settings"


def test_a_named_scene_keeps_its_name_across_reset():
    session = Session()
    assert session.load_scene("empty") and session.reset()
    assert session.scene_name == "empty"
    name, builder = resolve_scene("pyramid")
    assert name == "pyramid" and callable(builder)


def test_settings_are_checked_by_the_world_and_unknown_ones_refused():
    session = Session()
    assert session.load_scene(box_on_ground)
    with pytest.raises(ValueError, match="unknown world setting"):
        session.set_setting("wind", 3.0)
    with pytest.raises(ValueError, match="unknown world setting"):
        session.set_setting("step", 3.0)  # a method, not a setting
    with pytest.raises(ValueError):
        session.set_setting("broadphase", "magic")
    assert session.world.broadphase == "sap"
    assert session.reset() and session.world.broadphase == "sap"


def test_a_failing_scene_keeps_the_world_and_reports():
    session = Session()
    assert session.load_scene(box_on_ground)
    world = session.world

    def broken(w: World) -> None:
        w.add_body(Sphere(1.0))
        raise RuntimeError("the builder broke")

    assert not session.load_scene(broken)
    assert "the builder broke" in session.errors[-1]
    assert not session.load_scene("no such scene")
    assert "unknown scene" in session.errors[-1]
    assert session.world is world and len(world.bodies) == 2


def test_clock_settings_carry_over_a_scene_change():
    session = Session()
    session.set_step_rate(120)
    session.sim.time_scale = 0.5
    session.toggle_pause()
    assert session.load_scene(box_on_ground)
    sim = session.sim
    assert (sim.dt, sim.time_scale, sim.paused) == (pytest.approx(1 / 120), 0.5, True)
    session.single_step()
    assert sim.steps == 1 and sim.paused


# --- selection, grab, delete ----------------------------------------------------------------------------


def test_delete_selected_lets_go_and_forgets_the_body():
    session = Session()
    assert session.load_scene(box_on_ground)
    box = session.world.bodies[1]
    session.select(box)
    grab = session.start_grab(box, box.center_of_mass, 100.0, 5.0, 1.0)
    assert session.grab_body == box and session.world.grabs == [grab]
    assert session.delete_selected()
    assert session.selected is None and session.grab is None and not session.world.grabs
    assert len(session.world.bodies) == 1 and not box.alive
    assert not session.delete_selected()  # nothing selected: nothing happens


def test_loading_a_scene_drops_the_selection_and_the_grab():
    session = Session()
    assert session.load_scene(box_on_ground)
    box = session.world.bodies[1]
    session.select(box)
    session.start_grab(box, box.center_of_mass, 100.0, 5.0, 1.0)
    assert session.load_scene(box_on_ground)
    assert session.selected is None and session.grab is None


def test_save_writes_a_scene_file_that_loads_back(tmp_path):
    session = Session()
    assert session.load_scene(box_on_ground)
    message = session.save(tmp_path / "s.json")
    assert "2 bodies" in message
    assert session.load_scene(str(tmp_path / "s.json")) and len(session.world.bodies) == 2
    assert session.scene_name == "s.json"


def test_a_lesson_preset_is_kept_by_reset_and_forgotten_by_another_scene():
    from sandbox.lessons import LESSONS_BY_NAME

    session = Session()
    assert session.load_scene("bounce row")
    presets = LESSONS_BY_NAME["bounce row"].presets
    preset = next(p for p in presets if p["settings"] == {"restitution_rule": "min"})
    session.apply_preset(preset)
    assert session.world.restitution_rule == "min"
    assert session.reset() and session.world.restitution_rule == "min"
    assert len(session.bodies) == 5 and all(b.alive for b in session.bodies)  # the new world's bodies
    assert session.load_scene("bounce") and session.world.restitution_rule == World().restitution_rule


def test_the_lesson_check_runs_on_a_fresh_copy_with_the_users_settings():
    session = Session()
    assert session.load_scene("bounce row")
    session.set_setting("restitution_rule", "max")  # ground e = 1: every ball is perfectly elastic
    world, steps = session.world, session.sim.steps
    verdict = session.run_check()
    assert verdict.startswith("PASS: ") and verdict.count("/3.000") == 5  # e²·h = 3 m for every ball
    assert session.world is world and session.sim.steps == steps and world.time == 0.0
    session.start_check()
    assert session.check.wait(120.0).startswith("PASS: ") and not session.check.running
    assert session.load_scene(str(SCENE_FOLDER / "example.json")) and session.lesson is None
    with pytest.raises(ValueError, match="no lesson"):
        session.run_check()
