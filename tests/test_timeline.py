"""The history timeline (``sandbox/timeline.py``) and its windows: scrubbing back and running on reproduces
the recorded run bit for bit, a branch agrees with the original run up to its change and differs after it,
the abandoned run is kept for ghosts, the memory stays bounded by the history's length, and the event
log's begins and ends pair up. Then the timeline strip and the event log in a real 1280×720 window (under
``xvfb-run``): drawn, pressed and clicked the way a user does.

Runs are compared by ``World.state_hash`` (every live body's pose and velocities, bit for bit)."""

from __future__ import annotations

import os
from collections import defaultdict

import numpy as np
import pytest
from app_driver import open_app, send

from sandbox.engine import Body, Box, Sphere
from sandbox.session import Session
from sandbox.timeline import KEYFRAME_EVERY, Timeline, fingerprint

needs_display = pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (xvfb-run)")

W, H = 1280, 720


def run(session: Session, steps: int) -> dict[int, str]:
    """Step the session ``steps`` times (as the Step button does); the state hash after each step."""
    out = {}
    for _ in range(steps):
        session.sim.step()
        out[session.world.steps] = session.world.state_hash()
    return out


def session_with(scene: str) -> Session:
    s = Session()
    assert s.load_scene(scene)
    return s


# --- scrubbing -----------------------------------------------------------------------------------------


def test_scrubbing_back_and_resuming_reproduces_the_original_run():
    s = session_with("showcase")  # every shape kind, stacks and a rope
    tl = s.timeline
    original = run(s, 240)
    log = list(tl.log)
    assert log, "the showcase has collisions"
    for target in (150, 60, 37, 0, 239, 120, 121):  # on keyframes, just after them, between
        tl.seek(target)
        assert s.world.steps == s.sim.steps == tl.cursor == target
        if target:
            assert s.world.state_hash() == original[target]
        assert s.sim.paused
    tl.seek(100)
    assert run(s, 140) == {k: original[k] for k in range(101, 241)}  # the Step button replays
    tl.seek(30)
    s.sim.paused = False
    while s.world.steps < 240:  # running replays too, several steps a frame
        s.sim.advance(1 / 30)
    assert s.world.state_hash() == original[s.world.steps]
    assert tl.divergence is None and tl.abandoned is None
    assert tl.last_step == s.world.steps and list(tl.log) == log  # nothing recorded twice


def test_playing_backwards_and_stepping_back_visit_every_step():
    s = session_with("dominoes")
    tl = s.timeline
    original = run(s, 130)
    tl.play_back()
    assert tl.playing_back and s.resting is False  # frames keep coming while it plays
    for expected in range(129, 99, -1):
        tl.tick(s.sim.dt)  # one step's worth of wall-clock time: one step back
        assert tl.cursor == expected and s.world.state_hash() == original[expected]
    tl.pause()
    tl.tick(1.0)
    assert tl.cursor == 100 and not tl.playing_back
    tl.step_back()
    assert tl.cursor == 99 and s.world.state_hash() == original[99]
    tl.seek(3)
    tl.play_back()
    for _ in range(10):
        tl.tick(s.sim.dt)
    assert tl.cursor == 0 and not tl.playing_back  # stops at the first kept step


def test_changes_at_the_end_of_the_run_are_replayed_by_a_seek():
    """A push and a mouse drag made while the run is recorded are part of it: going back before them and
    running on makes them again, at their steps."""
    s = session_with("bounce")
    tl = s.timeline
    ball = s.bodies[-1]
    hashes = run(s, 20)
    ball.linear_velocity = (2.0, 0.0, 1.0)  # a push between steps 20 and 21
    hashes.update(run(s, 10))
    grab = s.start_grab(ball, ball.center_of_mass, 500.0, 5.0, 1.0)
    for k in range(8):  # the target moves every frame, as the mouse drags it
        grab.target = ball.center_of_mass + (0.1 * k, 0.3, 0.0)
        hashes.update(run(s, 1))
    s.release_grab()
    hashes.update(run(s, 30))
    assert tl.divergence is None
    tl.seek(10)
    replayed = run(s, 58)
    assert replayed == {k: hashes[k] for k in range(11, 69)}
    assert tl.divergence is None and not s.world.grabs


# --- branches ----------------------------------------------------------------------------------------


def first_difference(a: dict[int, str], b: dict[int, str]) -> int | None:
    return min((k for k in a.keys() & b.keys() if a[k] != b[k]), default=None)


def test_a_branch_with_a_changed_restitution_differs_only_after_its_first_impact():
    """Restitution acts at an impact only: a branch that changes it at step 10, while the ball still
    falls, agrees with the original run until the ball reaches the ground, bit for bit, and differs from
    that step on."""
    s = session_with("bounce")
    tl = s.timeline
    ball = s.bodies[-1]
    original = run(s, 200)
    first_impact = min(step for step, *_ in tl.impacts)
    tl.seek(10)
    ball.restitution = 0.3
    branch = run(s, 190)
    assert tl.divergence == 10
    for step in (0, 4, 9, 10):  # before the change: the kept steps are the original ones
        tl.seek(step)
        assert step == 0 or s.world.state_hash() == original[step]
    assert first_difference(original, branch) == first_impact
    assert branch[200] != original[200]
    assert min(step for step, *_ in tl.impacts) == first_impact  # kept: it is in both runs
    # the two runs side by side: each rebounds to e²·h (e the product of the ball's and the ground's 0.8),
    # so the branch's first rebound is (0.3 / 0.8)² of the abandoned run's, which the ghosts show
    after = range(first_impact + 1, first_impact + 45)
    h_branch = max(tl.poses(k).pos[ball.index, 1] for k in after) - 0.5
    h_ghost = max(tl.ghost_poses(k).pos[ball.index, 1] for k in after) - 0.5
    assert h_ghost == pytest.approx(0.64**2 * 2.0, rel=0.03)
    assert h_branch / h_ghost == pytest.approx((0.3 / 0.8) ** 2, rel=0.05)


def test_a_branch_with_changed_gravity_differs_from_the_next_step():
    s = session_with("bounce")
    tl = s.timeline
    original = run(s, 90)
    tl.seek(50)
    s.set_setting("gravity", (0.0, -3.0, 0.0))
    assert tl.poll() and tl.divergence == 50 and tl.last_step == 50  # the future is cut at once
    branch = run(s, 40)
    assert first_difference(original, branch) == 51
    tl.seek(40)
    assert s.world.state_hash() == original[40]


def test_changing_the_step_length_in_the_past_is_a_branch():
    s = session_with("bounce")
    tl = s.timeline
    run(s, 60)
    tl.seek(20)
    s.set_step_rate(120)
    run(s, 1)
    assert tl.divergence == 20 and tl.last_step == 21


def test_the_abandoned_run_is_kept_and_gives_the_ghosts():
    s = session_with("bounce")
    tl = s.timeline
    ball = s.bodies[-1]
    where = {}
    for _ in range(150):
        s.sim.step()
        where[s.world.steps] = ball.center_of_mass.copy()
    tl.seek(30)
    s.set_setting("gravity", (0.0, -2.0, 0.0))
    run(s, 100)
    assert tl.divergence == 30 and (tl.abandoned.first, tl.abandoned.last) == (31, 150)
    poses = tl.ghost_poses(90)
    np.testing.assert_allclose(poses.pos[ball.index], where[90], atol=1e-6)  # float32 of the old run
    rows, pos, quat = tl.ghosts()  # at the cursor, step 130: the old run's ball, not the ground
    assert rows.tolist() == [ball.index]
    np.testing.assert_allclose(pos[0], where[130], atol=1e-6)
    assert abs(pos[0][1] - ball.center_of_mass[1]) > 0.05  # the two runs are seen apart
    # halfway between two steps (the drawn frame's interpolation): halfway between the old poses
    np.testing.assert_allclose(tl.ghosts(0.5)[1][0], 0.5 * (where[129] + where[130]), atol=1e-6)
    tl.seek(20)
    assert tl.ghosts() is None  # before the divergence the runs are one
    tl.seek(100)
    tl.show_ghosts = False
    assert tl.ghosts() is None
    tl.show_ghosts = True
    tl.forget_abandoned()
    assert tl.ghosts() is None and tl.divergence is None


def test_a_change_at_the_end_of_the_run_is_not_a_branch():
    s = session_with("bounce")
    tl = s.timeline
    run(s, 40)
    s.set_setting("gravity", (0.0, -5.0, 0.0))
    run(s, 5)
    assert tl.divergence is None and tl.last_step == 45 and tl.abandoned is None


# --- memory --------------------------------------------------------------------------------------------


def test_memory_is_bounded_by_the_configured_seconds():
    s = session_with("dominoes")
    tl = s.timeline
    tl.seconds = 2.0
    keep = round(2.0 / s.sim.dt)
    run(s, 300)
    early = tl.nbytes()
    run(s, 300)
    assert tl.last_step == 600
    assert 600 - keep - KEYFRAME_EVERY < tl.first_step <= 600 - keep  # reaches back 2 s, from a keyframe
    assert tl.kept_seconds == pytest.approx((600 - tl.first_step) * s.sim.dt)
    assert len(tl.history.keyframe_steps) <= keep // KEYFRAME_EVERY + 2
    assert tl.poses(tl.first_step - 1) is None and tl.poses(tl.first_step) is not None
    assert tl.nbytes() < 1.5 * early  # it does not grow with the run
    with pytest.raises(ValueError, match="step must be an integer from"):
        tl.seek(tl.first_step - 1)
    tl.seconds = 60.0
    run(s, 120)
    assert tl.first_step <= 600 - keep  # a longer history keeps what is there and grows from now on


def test_the_memory_budget_drops_the_oldest_keyframes():
    s = session_with("dominoes")
    tl = Timeline(s, budget=200_000)  # about three keyframes of the moving dominoes
    s.timeline = tl
    run(s, 400)
    assert tl.memory_limited
    assert tl.nbytes() <= 200_000 + tl.history.nbytes() / len(tl.history.keyframe_steps) * 2
    assert tl.first_step > 0


@pytest.mark.parametrize("seconds", [0.5, 601, float("nan"), "60", True])
def test_a_bad_history_length_is_refused(seconds):
    tl = Session().timeline
    with pytest.raises(ValueError, match="seconds must be a number from 1 to 600"):
        tl.seconds = seconds


def test_loading_a_scene_starts_a_fresh_timeline():
    s = session_with("bounce")
    run(s, 50)
    s.timeline.seek(20)
    s.set_setting("gravity", (0.0, -2.0, 0.0))
    run(s, 5)
    assert s.load_scene("dominoes")
    tl = s.timeline
    assert (tl.first_step, tl.last_step, tl.divergence, len(tl.log)) == (0, 0, None, 0)
    assert s.sim.watchers[0] is tl and tl.world is s.world
    assert s.reset() and s.sim.watchers[0] is tl and tl.last_step == 0


def test_the_fingerprint_sees_what_the_user_changes_and_nothing_else():
    s = session_with("bounce")
    run(s, 5)
    w = s.world
    ball = s.bodies[-1]
    before = fingerprint(w)
    _ = ball.position, w.events, w.kinetic_energy(), w.raycast((0, 5, 0), (0, -1, 0))
    assert fingerprint(w) == before  # reading changes nothing
    for change in (lambda: setattr(ball, "restitution", 0.2), lambda: setattr(w, "substeps", 2),
                   lambda: w.add_body(Sphere(0.1), position=(3, 3, 0)), lambda: w.remove_body(ball)):
        change()
        assert fingerprint(w) != before
        before = fingerprint(w)


# --- the event log -------------------------------------------------------------------------------------


def pairs_alternate(log) -> dict[tuple, list[str]]:
    """The kinds of each pair's events in order, a pair being both bodies with their generations."""
    kinds = defaultdict(list)
    for e in log:
        kinds[tuple(sorted(((e.row_a, e.gen_a), (e.row_b, e.gen_b))))].append(e.kind)
    return kinds


def assert_balanced(log, touching: int = 0) -> None:
    kinds = pairs_alternate(log)
    for pair, seq in kinds.items():
        assert seq[::2] == ["begin"] * len(seq[::2]) and seq[1::2] == ["end"] * len(seq[1::2]), (pair, seq)
    open_pairs = sum(1 for seq in kinds.values() if seq[-1] == "begin")
    assert open_pairs == touching


def bodies_at_rest(world) -> None:
    """A ground, a box dropped onto it from 0.7 m and a ball rolling into a wall."""
    world.add_body(Box((5.0, 0.5, 5.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    world.add_body(Box((0.3, 0.3, 0.3)), position=(0.0, 1.0, 0.0))
    world.add_body(Sphere(0.3), position=(-2.0, 0.3, 1.5), velocity=(3.0, 0.0, 0.0), restitution=0.5)
    world.add_body(Box((0.2, 1.0, 2.0)), position=(2.0, 1.0, 0.0), mass=0.0)


def test_event_log_begins_and_ends_balance_when_bodies_come_to_rest_and_separate():
    s = Session()
    assert s.load_scene(bodies_at_rest)
    tl = s.timeline
    run(s, 400)
    world = s.world
    ground, box, ball, wall = world.bodies
    assert not box.awake and not ball.awake  # at rest: asleep, their contacts kept
    touching = len(world._touching)
    assert touching >= 2
    assert_balanced(tl.log, touching)  # the pairs still touching have begun and not ended
    begins = [e for e in tl.log if e.kind == "begin"]
    assert all(e.impulse is not None and e.impulse >= 0.0 for e in begins)
    # the box struck the ground at √(2 g h) after falling h = 0.7 m (its impact ticked on the timeline)
    drop = next(e for e in begins if {e.row_a, e.row_b} == {ground.index, box.index})
    assert drop.impact_speed == pytest.approx(np.sqrt(2 * 9.81 * 0.7), rel=0.02)
    assert (drop.step, drop.impact_speed) in [(i[0], i[3]) for i in tl.impacts]
    assert any({e.row_a, e.row_b} == {ball.index, wall.index} and e.impact for e in begins)
    box.linear_velocity = (0.0, 6.0, 0.0)  # separate everything
    # the ball came to rest against the wall (its impact had no restitution: 0.5 × the wall's 0), so it
    # is thrown up and away from it; thrown along the wall it would slide up it, still touching
    ball.linear_velocity = (-2.0, 6.0, -4.0)
    run(s, 20)
    assert_balanced(tl.log, 0)
    # back to a step where the box lay on the ground, and separated there: the log is cut at the
    # divergence, and the new run ends the contact that was open then
    tl.seek(300)
    box.linear_velocity = (0.0, 4.0, 0.0)
    run(s, 30)
    assert tl.divergence == 300 and max(e.step for e in tl.log) <= 330
    ended = [e for e in tl.log if e.kind == "end" and {e.row_a, e.row_b} == {ground.index, box.index}]
    assert ended and 300 < ended[-1].step < 310
    still = sum(1 for seq in pairs_alternate(tl.log).values() if seq[-1] == "begin")
    assert still == len(world._touching)
    assert_balanced(tl.log, still)


def test_the_log_is_bounded():
    s = Session()
    s.timeline = Timeline(s, max_log=10)
    assert s.load_scene("bounce row")
    run(s, 400)
    assert len(s.timeline.log) == 10
    steps = [e.step for e in s.timeline.log]
    assert steps == sorted(steps)  # the newest kept


# --- the windows ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app():
    yield from open_app("bounce")


def keys():
    """pyglet's key and mouse constants (importing ``pyglet.window`` needs a display)."""
    from pyglet.window import key, mouse

    return key, mouse


def click(app, x: float, y: float) -> None:
    """Click at window point (x, y) (top-left origin): move, press, release, a frame after each."""
    px, py = int(x), H - int(y)
    send(app, "on_mouse_motion", px, py, 0, 0)
    app.run(frames=1)
    mouse = keys()[1]
    send(app, "on_mouse_press", px, py, mouse.LEFT, 0)
    app.run(frames=1)
    send(app, "on_mouse_release", px, py, mouse.LEFT, 0)
    app.run(frames=1)
    send(app, "on_mouse_motion", 600, 40, 0, 0)
    app.run(frames=1)  # ImGui lets go of the keyboard the frame after the release


def centre(rect) -> tuple[float, float]:
    x0, y0, x1, y1 = rect
    return 0.5 * (x0 + x1), 0.5 * (y0 + y1)


def fresh(app, frames: int = 90) -> None:
    """The bounce scene run for ``frames`` frames (the ball has fallen and bounced), then paused."""
    assert app.ui.load_scene("bounce")
    app.panel.timeline.shown = True
    app.panel.event_log.shown = False
    app.session.sim.paused = False
    app.run(frames=frames)
    app.session.sim.paused = True
    app.run(frames=1)


def tap(app, symbol: int) -> None:
    """Press and release a key, then draw a frame (ImGui takes queued input events a frame at a time)."""
    send(app, "on_key_press", symbol, 0)
    app.run(frames=1)
    send(app, "on_key_release", symbol, 0)
    app.run(frames=1)


@needs_display
def test_the_timeline_strip_draws_and_t_toggles_it(app):
    key = keys()[0]
    fresh(app)
    strip = app.panel.timeline
    shown = app.read_pixels().astype(int)
    x0, y0, x1, y1 = (int(v) for v in strip.rect)
    assert y1 <= H and y1 - y0 > 50 and x1 <= W - 370  # along the bottom, clear of the panel
    assert strip.ticks  # the ball's impact is ticked on the slider
    tap(app, key.T)
    app.run(frames=1)
    assert strip.rect is None and not strip.shown
    hidden = app.read_pixels().astype(int)
    assert np.abs(shown[y0:y1, x0:x1] - hidden[y0:y1, x0:x1]).mean() > 10.0
    tap(app, key.T)
    app.run(frames=1)
    assert strip.rect is not None


@needs_display
def test_seeking_with_the_slider_moves_the_bodies_back(app):
    fresh(app)
    session = app.session
    ball = session.bodies[-1]
    w, h = app.ui.window_size
    now = app.ui.camera.project(ball.center_of_mass, w, h)
    before = app.read_pixels().astype(int)
    x0, y0, x1, y1 = app.panel.timeline.slider_rect
    click(app, x0 + 3, 0.5 * (y0 + y1))  # the slider's left end: the first kept step
    assert session.timeline.cursor <= 3 and session.world.steps == session.timeline.cursor
    start = app.ui.camera.project(ball.center_of_mass, w, h)
    assert start[1] < now[1] - 40  # the ball is back up where it started
    after = app.read_pixels().astype(int)

    def patch(img, p):
        return img[int(p[1]) - 4:int(p[1]) + 5, int(p[0]) - 4:int(p[0]) + 5]

    assert np.abs(patch(before, now) - patch(after, now)).mean() > 20.0  # gone from where it was
    assert np.abs(patch(before, start) - patch(after, start)).mean() > 20.0  # drawn where it started


@needs_display
def test_the_transport_buttons_and_the_arrow_keys(app):
    key = keys()[0]
    fresh(app)
    tl = app.session.timeline
    end = tl.cursor
    click(app, *centre(app.panel.timeline.buttons["step_back"]))
    assert tl.cursor == end - 1
    tap(app, key.LEFT)
    assert tl.cursor == end - 2
    tap(app, key.RIGHT)
    assert tl.cursor == end - 1 and app.session.sim.paused
    click(app, *centre(app.panel.timeline.buttons["back"]))
    app.run(frames=5)
    assert tl.cursor < end - 5 and tl.playing_back
    click(app, *centre(app.panel.timeline.buttons["pause"]))
    assert not tl.playing_back
    stopped = tl.cursor
    click(app, *centre(app.panel.timeline.buttons["play"]))
    app.session.sim.paused = True
    assert tl.cursor > stopped


@needs_display
def test_a_branch_shows_its_marker_and_its_ghosts(app):
    fresh(app, 60)
    session, tl = app.session, app.session.timeline
    tl.seek(20)
    ball = session.bodies[-1]
    ball.linear_velocity = ball.linear_velocity + (6.0, 0.0, 0.0)  # a push sideways, at a past step
    session.sim.paused = False
    app.run(frames=20)
    session.sim.paused = True
    app.run(frames=1)
    strip = app.panel.timeline
    assert tl.divergence == 20 and strip.divergence_x is not None
    x0, _, x1, _ = strip.slider_rect
    assert x0 < strip.divergence_x < x1
    rows, pos, _quat = tl.ghosts()
    assert rows.tolist() == [ball.index] and np.linalg.norm(pos[0] - ball.center_of_mass) > 1.5
    w, h = app.ui.window_size
    p = app.ui.camera.project(pos[0], w, h)
    with_ghost = app.read_pixels().astype(int)
    tl.show_ghosts = False
    app.run(frames=1)
    without = app.read_pixels().astype(int)
    tl.show_ghosts = True
    y, x = int(p[1]), int(p[0])
    assert np.abs(with_ghost[y - 3:y + 4, x - 3:x + 4] - without[y - 3:y + 4, x - 3:x + 4]).mean() > 15.0


@needs_display
def test_clicking_an_event_selects_its_body_and_goes_to_its_step(app):
    fresh(app)
    log = app.panel.event_log
    log.shown = True
    app.run(frames=2)
    assert log.rect is not None and log.rows
    entry, rect = next((e, r) for e, r in log.rows if e.kind == "begin")
    click(app, *centre(rect))
    session = app.session
    assert session.timeline.cursor == entry.step
    ball = session.bodies[-1]
    assert session.selected == ball
    log.only_selected = True
    app.run(frames=1)
    assert all(e.involves(ball.index, ball.generation) for e, _ in log.rows)
    session.select(None)
    app.run(frames=1)
    assert log.rows == []
    log.only_selected = False
    log.shown = False


def test_the_pose_bytes_are_counted_as_the_arrays_are_shared():
    """``_Run.nbytes`` (kept up step by step) equals a count of its distinct arrays, through steps that
    share arrays (bodies asleep), cuts and forgetting."""
    from sandbox.timeline import _Run

    def distinct(run: _Run) -> int:
        return sum(a.nbytes for a in {id(a): a for p in run.poses for a in p}.values())

    s = session_with("dominoes")
    tl = s.timeline
    run(s, 250)
    r = tl._run
    assert r.nbytes == distinct(r)
    tail = r.cut_after(200)
    assert r.nbytes == distinct(r) and tail.nbytes == distinct(tail)
    for step in (10, 11, 150, 199, 201):
        r.forget_before(step)
        assert r.nbytes == distinct(r)


def test_every_string_of_the_windows_has_its_portuguese_translation():
    """The strings the timeline strip and the event log show (``_("…")``), and their Help lines, are in
    the Portuguese catalogue (``timeline.po``, or another part's file where that part says it too) with
    the same placeholders."""
    import re
    from pathlib import Path

    from sandbox.i18n import LOCALE_DIR, read_po

    root = Path(__file__).resolve().parents[1] / "sandbox" / "ui"
    source = "".join((root / name).read_text(encoding="utf-8")
                     for name in ("timeline_window.py", "event_log.py"))
    shown = set(re.findall(r'_\("([^"]*)"\)', source))
    shown |= {"hide / show the timeline", "Left / Right arrow",
              "step back / forward through the timeline (pauses)"}
    catalogue = {}
    for path in sorted((LOCALE_DIR / "pt_BR" / "LC_MESSAGES").glob("*.po")):
        catalogue.update(read_po(path))
    assert shown <= set(catalogue), shown - set(catalogue)
    for english, portuguese in catalogue.items():
        assert sorted(re.findall(r"\{[^}]*\}|%d", english)) == sorted(re.findall(r"\{[^}]*\}|%d", portuguese))


def test_the_log_holds_the_worlds_events_step_by_step():
    """The log (read in bulk from the engine's event arrays) holds ``World.events`` of every recorded
    step, in order, also the ends of a body removed while touching."""
    s = session_with("showcase")
    expected = []
    for k in range(200):
        if k == 120:  # a body in contact goes: its contacts end with the next step
            touching = [pair for pair, seq in pairs_alternate(s.timeline.log).items() if seq[-1] == "begin"]
            body = next(Body(s.world, row, gen) for pair in touching for row, gen in pair
                        if not Body(s.world, row, gen).static)
            s.world.remove_body(body)
        s.sim.step()
        expected += [(s.world.steps, e.kind, e.body_a.index, e.body_a.generation, e.body_b.index,
                      e.body_b.generation) for e in s.world.events]
    got = [(e.step, e.kind, e.row_a, e.gen_a, e.row_b, e.gen_b) for e in s.timeline.log]
    assert got == expected and any(step == 121 and kind == "end" for step, kind, *_ in got)


def test_stepping_back_while_holding_a_body_keeps_the_grab_only_where_it_existed():
    s = session_with("bounce")
    tl = s.timeline
    ball = s.bodies[-1]
    run(s, 10)
    grab = s.start_grab(ball, ball.center_of_mass, 500.0, 5.0, 1.0)
    run(s, 10)
    tl.step_back()  # step 19: the grab was made at step 10, so it is there
    assert s.grab is grab and any(g is grab for g in s.world.grabs)
    s.release_grab()  # letting go in the past is a change: a branch without the grab
    assert tl.poll() and tl.divergence == 19 and not s.world.grabs
    first = grab
    run(s, 5)
    grab = s.start_grab(ball, ball.center_of_mass, 500.0, 5.0, 1.0)
    run(s, 5)
    tl.seek(22)  # before the second grab: no grab, and the mouse holds nothing
    assert s.grab is None and not s.world.grabs
    tl.seek(12)  # the recorded run's first grab, which the mouse no longer holds
    assert s.grab is None and [g is first for g in s.world.grabs] == [True]
    run(s, 8)  # running on replays its letting go at step 19
    assert s.world.steps == 20 and not s.world.grabs and tl.divergence == 19


@needs_display
@pytest.mark.parametrize(("ghosts", "message"), [
    ((np.array([1]), np.zeros((1, 2)), np.zeros((1, 4))), "ghost pos must have shape"),
    ((np.array([1.0]), np.zeros((1, 3)), np.zeros((1, 4))), "ghost rows must be a 1-D integer array"),
    ((np.array([1]), np.full((1, 3), np.nan), np.zeros((1, 4))), "ghost poses must be finite"),
    ((np.array([1]), np.zeros((1, 3))), "ghosts must be a tuple"),
])
def test_bad_ghosts_are_refused_before_anything_is_drawn(app, ghosts, message):
    from sandbox.render import Highlight

    app.window.switch_to()
    with pytest.raises(ValueError, match=message):
        app.renderer.render(app.session.world, app.ui.camera, app.ui.options, Highlight(), ghosts=ghosts)
    app.run(frames=1)
    assert not app.session.errors
