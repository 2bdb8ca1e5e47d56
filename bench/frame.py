"""Frame-time benchmark of the renderer and the app: ``python -m bench.frame``.

Builds the 1000-body pile (scene "pile"), steps it so that there are contacts, then times frames with
every debug drawing option on (contacts, normals, AABBs, broad-phase structure, velocities, the grab
spring, outlines). Physics is never inside the timed region. Reported per frame (medians):

(a) the renderer's own CPU work: ``prepare`` (the numpy instance table and debug geometry) plus
    ``upload`` (one buffer write per instance buffer, one for the lines, one for the points), from
    ``Renderer.timings``;
(b) the wall time of ``Renderer.render`` (``last_ms``): (a) plus ``draw``, the passes' draw calls;
    ``finish`` is the ``ctx.finish()`` after it, the wait for the GL to complete the frame;
(c) the ImGui panel's time in the app (``FrameStats.ui_ms``): building its windows (``panel_ms``: the
    panel, the lesson and the other windows, up to ``imgui.render``), then drawing them
    (``ImGuiBackend.timings``: ``upload``, the texture updates, the GL state and one buffer write per
    draw list, and ``draw``, its draw calls);
(d) frames per second: offscreen ``1000 / (render + finish)``; in the app, whole frames including
    the panel and the buffer swap;
(e) the frame's CPU work outside physics, the issue's figure: (a), the interpolation of the poses
    (``FrameStats.interp_ms``, with the timeline's ghosts and the lesson visuals' extras), building
    the panel and its upload, each part's median summed. Like (a) it leaves out draw calls.

On Mesa llvmpipe (a software rasteriser) the "GPU" is the CPU: vertex shading runs inside the draw
calls on the calling thread, sampling the shadow map waits there for its rasterisation, and the
fragment work runs on llvmpipe's threads until ``finish``. So ``draw`` and ``finish`` are the
driver's work, not the renderer's; on a hardware GL they shrink to the calls' submission. The
submission alone cannot be told apart from llvmpipe's work inside the same calls, so (a) leaves it
out: it is a few dozen calls (two per mesh kind, for the shadow and lit passes, then outlines, ground,
sky, and two per run of one line width for the debug drawing), tens of microseconds through moderngl.

The offscreen target is 4× multisampled, as the app's window is. The offscreen context is a
standalone EGL one, or a standalone GLX one; the app part needs a display (run under ``xvfb-run``)
and is skipped without one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import moderngl
import numpy as np

from sandbox.engine import World
from sandbox.render import Camera, Highlight, Renderer, RenderOptions
from sandbox.scenes import SCENES

EVERYTHING = dict(contacts=True, normals=True, aabbs=True, broadphase=True, velocities=True)


def make_context() -> moderngl.Context:
    """A standalone OpenGL 3.3+ context: EGL first (no display needed), then the platform default."""
    try:
        return moderngl.create_context(standalone=True, backend="egl")
    except Exception:  # noqa: BLE001 - any failure here means "try the next backend"
        return moderngl.create_context(standalone=True)


def pile_world(steps: int) -> World:
    """The 1000-body pile after ``steps`` steps of 1/60 s."""
    world = World()
    SCENES["pile"](world)
    for _ in range(steps):
        world.step(1.0 / 60.0)
    return world


def bench_highlight(world: World) -> Highlight:
    """Hovered, selected and grabbed bodies with a grab spring, so that every highlight is drawn."""
    grab = world.data.pos[1]
    return Highlight(hovered=2, selected=3, grabbed=1, grab_line=(grab, grab + np.array([0.5, 1.0, 0.0])),
                     grab_force=(5.0, 10.0, 0.0))


def time_offscreen(ctx: moderngl.Context, renderer: Renderer, world: World, camera: Camera,
                   options: RenderOptions, highlight: Highlight, frames: int) -> dict[str, float]:
    """Median ms per frame of each ``Renderer.timings`` phase, of ``render`` and of the ``finish``
    after it, over ``frames`` frames (after three untimed ones that compile shader variants)."""
    rows: dict[str, list[float]] = {"prepare": [], "upload": [], "draw": [], "render": [], "finish": []}
    for i in range(frames + 3):
        renderer.render(world, camera, options, highlight)
        t0 = time.perf_counter()
        ctx.finish()
        finish = 1e3 * (time.perf_counter() - t0)
        if i >= 3:
            for name, ms in renderer.timings.items():
                rows[name].append(ms)
            rows["render"].append(renderer.last_ms)
            rows["finish"].append(finish)
    return {name: statistics.median(values) for name, values in rows.items()}


def offscreen(world: World, size: tuple[int, int], frames: int) -> None:
    """Print the offscreen figures for a few option sets."""
    ctx = make_context()
    width, height = size
    samples = min(4, ctx.max_samples)
    fbo = ctx.framebuffer([ctx.renderbuffer((width, height), 4, samples=samples)],
                          ctx.depth_renderbuffer((width, height), samples=samples))
    fbo.use()
    renderer = Renderer(ctx, width, height)
    camera = Camera(target=(0.0, 3.0, 0.0), distance=30.0)
    highlight = bench_highlight(world)
    print(f"offscreen: {ctx.info['GL_RENDERER']} (GL {ctx.version_code}), {width}x{height}, {samples}x MSAA "
          f"target; medians of {frames} frames, ms")
    print(f"  {'':34s} {'prepare':>8s} {'upload':>7s} {'(a) own':>8s} {'draw':>7s} {'(b) render':>10s} "
          f"{'finish':>7s} {'(d) fps':>8s}")
    runs = (("all debug drawing, shadows", RenderOptions(**EVERYTHING)),
            ("all debug drawing, no shadows", RenderOptions(shadows=False, **EVERYTHING)),
            ("no debug drawing, shadows", RenderOptions()),
            ("all debug, own 4x MSAA + resolve", RenderOptions(msaa=4, **EVERYTHING)))
    for label, options in runs:
        t = time_offscreen(ctx, renderer, world, camera, options, highlight, frames)
        own = t["prepare"] + t["upload"]
        fps = 1000.0 / (t["render"] + t["finish"])
        print(f"  {label:34s} {t['prepare']:8.2f} {t['upload']:7.2f} {own:8.2f} {t['draw']:7.2f} "
              f"{t['render']:10.2f} {t['finish']:7.2f} {fps:8.1f}")
    batch = renderer._batch
    lines, line_runs = batch.line_array()
    instances, instance_runs = batch.instance_array()
    print(f"  debug geometry: {len(lines) // 2} segments, {len(instances)} box and arrow instances, "
          f"{len(batch.point_array())} points; {len(line_runs) + len(instance_runs)} line draws per pass")
    renderer.release()
    ctx.release()


def in_app(frames: int, size: tuple[int, int]) -> None:
    """Print the figures of the real app: the pile with every debug option on, physics paused, and the
    total CPU work of its frames outside physics."""
    if not os.environ.get("DISPLAY"):
        print("app: not measured (no display; run under xvfb-run)")
        return
    from sandbox.app import App

    app = App(scene="pile", width=size[0], height=size[1])
    try:
        for name, value in EVERYTHING.items():
            setattr(app.ui.options, name, value)
        app.run(frames=60)  # the pile falls and touches: contacts to draw
        app.session.sim.paused = True
        names = ("own", "interp", "panel", "panel_upload", "panel_draw", "render", "ui", "frame")
        rows: dict[str, list[float]] = {name: [] for name in names}
        app.run(frames=3)
        stats = app.ui.stats
        for _ in range(frames):
            t0 = time.perf_counter()
            app.run(frames=1)
            rows["frame"].append(1e3 * (time.perf_counter() - t0))
            rows["own"].append(app.renderer.timings["prepare"] + app.renderer.timings["upload"])
            rows["interp"].append(stats.interp_ms)
            rows["panel"].append(stats.panel_ms)
            rows["panel_upload"].append(app.imgui.timings["upload"])
            rows["panel_draw"].append(app.imgui.timings["draw"])
            rows["render"].append(app.renderer.last_ms)
            rows["ui"].append(stats.ui_ms)
        m = {name: statistics.median(values) for name, values in rows.items()}
        # the parts' medians summed: on a loaded machine a time slice lost to another process (~4 ms) lands
        # in one part or another of a good share of the frames, and the median of per-frame sums keeps it
        m["total"] = m["own"] + m["interp"] + m["panel"] + m["panel_upload"]
        print(f"app: {size[0]}x{size[1]} window, {app.window_samples}x MSAA window, panel shown, physics "
              f"paused, {int(app.session.world.contacts.count)} manifolds; medians of {frames} frames")
        print(f"  (a) renderer's own CPU {m['own']:.2f} ms   (b) render() {m['render']:.2f} ms   "
              f"(c) panel {m['ui']:.2f} ms   (d) {1000.0 / m['frame']:.1f} frames/s "
              f"({m['frame']:.1f} ms per whole frame)")
        print(f"  (c) = building the panel {m['panel']:.2f} ms + its GL upload and state "
              f"{m['panel_upload']:.2f} ms + its draw calls {m['panel_draw']:.2f} ms; "
              f"interpolation {m['interp']:.2f} ms")
        print(f"  frame CPU outside physics: {m['total']:.2f} ms (target < 3 ms) = (a) + interpolation + "
              f"building the panel + its upload; the draw calls (the scene's "
              f"{m['render'] - m['own']:.1f} ms, the panel's {m['panel_draw']:.2f} ms) are the GL's work, "
              f"left out as in (a)")
    finally:
        app.close()


LAUNCH_CHILD = """
import json, os, sys, time
marks = {"start": float(sys.argv[1])}
import sandbox.app
marks["imported"] = time.time()
from sandbox.warmup import cache_is_warm
warm = cache_is_warm()
app = sandbox.app.App(scene=sys.argv[2], width=1280, height=720)
marks["opened"] = time.time()
flip = app.window.flip
def first_flip():
    flip()
    marks["drawn"] = time.time()
    marks["cpu"] = sum(os.times()[:2])  # this process's CPU seconds so far, all its threads
    app.closed = True  # the loop ends after this frame
app.window.flip = first_flip
app.run()
print(json.dumps({"marks": marks, "warm": warm}))
app.close()
"""
"""The launched process: the app's own start (``App``, then ``App.run``'s interactive loop), stopped once
its first frame is on the screen; it prints the wall-clock marks (``time.time``)."""


def launch(runs: int, scene: str) -> None:
    """Print the time from a process's start to its first frame on the screen (the buffer swap), for
    ``runs`` launches after one untimed launch that leaves numba's and Python's caches warm (bytecode
    written even where ``PYTHONDONTWRITEBYTECODE`` is set), and where it goes: the
    interpreter and the imports, opening the app (window, GL, renderer, panel, the scene), the first
    frame; and the CPU time the process used until then."""
    if not os.environ.get("DISPLAY"):
        print("launch: not measured (no display; run under xvfb-run)")
        return
    paths = [os.getcwd(), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    # a warm launch has Python's bytecode cache too (the untimed launch writes it): without it each
    # launch compiles every module of the app from source again, most of a second
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    rows: dict[str, list[float]] = {"imports": [], "open": [], "frame": [], "total": [], "cpu": []}
    warm = True
    for run in range(runs + 1):
        start = time.time()
        out = subprocess.run([sys.executable, "-c", LAUNCH_CHILD, repr(start), scene], env=env, check=True,
                             capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        m = result["marks"]
        if run == 0:
            continue  # the untimed launch: it fills numba's cache if it was cold
        warm &= result["warm"]
        rows["imports"].append(m["imported"] - m["start"])
        rows["open"].append(m["opened"] - m["imported"])
        rows["frame"].append(m["drawn"] - m["opened"])
        rows["total"].append(m["drawn"] - m["start"])
        rows["cpu"].append(m["cpu"])
    med = {name: statistics.median(values) for name, values in rows.items()}
    print(f"launch: scene {scene!r}, numba cache {'warm' if warm else 'NOT warm'}; medians of {runs} "
          f"launches, s")
    print(f"  first frame on the screen {med['total']:.2f} s after the process started (target < 3 s) = "
          f"interpreter and imports {med['imports']:.2f} + opening the app {med['open']:.2f} + the first "
          f"frame {med['frame']:.2f}; each launch: {', '.join(f'{t:.2f}' for t in rows['total'])}")
    print(f"  CPU time of the process until then {med['cpu']:.2f} s (user + system, all its threads: on a "
          f"loaded machine nearer than the wall time to what an idle one takes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--steps", type=int, default=60, help="physics steps before timing")
    parser.add_argument("--size", type=int, nargs=2, default=(1280, 720))
    parser.add_argument("--no-app", action="store_true", help="skip the in-app measurement")
    parser.add_argument("--launch", type=int, metavar="RUNS", default=0,
                        help="only measure a warm launch's time to its first frame, over RUNS launches")
    parser.add_argument("--scene", default="showcase", help="the scene of --launch (default: showcase)")
    args = parser.parse_args()
    if args.launch:
        launch(args.launch, args.scene)
        return

    world = pile_world(args.steps)
    contacts = world.contacts
    points = int(contacts.npoints[: contacts.count].sum())
    bodies = int(world.data.alive[: world.data.n].sum())
    print(f"scene pile: {bodies} bodies, {int(contacts.count)} manifolds ({points} contact points), "
          f"broad phase {world.broadphase}; all debug drawing on")
    # the app first: PyOpenGL (the panel's GL) cannot find a window's context once a standalone
    # EGL context has been made current in the process
    if not args.no_app:
        in_app(args.frames, tuple(args.size))
    offscreen(world, tuple(args.size), args.frames)


if __name__ == "__main__":
    main()
