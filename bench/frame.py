"""Frame-time benchmark of the renderer: ``python -m bench.frame``.

Builds the 1000-body pile (scene "pile"), steps it a little so that there are contacts, then renders it
offscreen at 1280×720 with every debug option on and reports, per frame (median of the runs):

- CPU ms: ``time.perf_counter`` around ``Renderer.render`` alone, which issues the frame and returns
  without waiting for the GPU;
- finish ms: the following ``ctx.finish()``, the wait for the GPU to complete the frame;
- frames per second of the two together;
- the part of the CPU figure that is the renderer's own numpy work (instance table and debug geometry),
  timed by calling those steps alone.

On a software rasteriser (Mesa llvmpipe) the "GPU" is the CPU: vertex shading runs inside the draw
calls, and sampling a texture drawn earlier in the frame (the shadow map, an offscreen MSAA buffer)
waits for its rasterisation, so those costs show up in the CPU figure; the run without shadows shows
how much. The target framebuffer is 4× multisampled, as the app's window is (``RenderOptions.msaa`` 0).
The context is a standalone EGL one, or a standalone GLX one (under ``xvfb-run`` without a display).
"""

from __future__ import annotations

import argparse
import statistics
import time

import moderngl
import numpy as np

from sandbox.engine import World
from sandbox.render import Camera, Highlight, Renderer, RenderOptions
from sandbox.scenes import SCENES


def make_context() -> moderngl.Context:
    """A standalone OpenGL 3.3+ context: EGL first (no display needed), then the platform default."""
    try:
        return moderngl.create_context(standalone=True, backend="egl")
    except Exception:  # noqa: BLE001 - any failure here means "try the next backend"
        return moderngl.create_context(standalone=True)


def time_frames(ctx, renderer, world, camera, options, highlight, frames: int) -> tuple[float, float]:
    """Median CPU ms of ``render`` and median ms of the ``finish`` after it, over ``frames`` frames."""
    cpu, wait = [], []
    for _ in range(frames):
        t0 = time.perf_counter()
        renderer.render(world, camera, options, highlight)
        t1 = time.perf_counter()
        ctx.finish()
        t2 = time.perf_counter()
        cpu.append((t1 - t0) * 1e3)
        wait.append((t2 - t1) * 1e3)
    return statistics.median(cpu), statistics.median(wait)


def time_frame_data(renderer, world, camera, options, highlight, frames: int) -> float:
    """Median ms of the renderer's own per-frame CPU work before any GL call: the instance table
    (numpy) and the debug geometry (numpy), without issuing draws."""
    from sandbox.render.debug_draw import Batch, build_debug

    d = world.data
    pos, quat = d.pos[: d.n], d.quat[: d.n]
    colors = renderer._colors(d.n)
    batch = Batch()
    times = []
    for _ in range(frames):
        t0 = time.perf_counter()
        renderer._instances(world, highlight, pos, quat, colors)
        batch.clear()
        build_debug(batch, world, options, highlight, pos, colors, camera.eye)
        batch.line_array()
        batch.point_array()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--steps", type=int, default=60, help="physics steps before timing")
    parser.add_argument("--size", type=int, nargs=2, default=(1280, 720))
    args = parser.parse_args()

    world = World()
    SCENES["pile"](world)
    for _ in range(args.steps):
        world.step(1.0 / 60.0)
    bodies = int(world.data.alive[: world.data.n].sum())

    ctx = make_context()
    width, height = args.size
    fbo = ctx.framebuffer([ctx.renderbuffer((width, height), 4, samples=min(4, ctx.max_samples))],
                          ctx.depth_renderbuffer((width, height), samples=min(4, ctx.max_samples)))
    fbo.use()
    renderer = Renderer(ctx, width, height)
    camera = Camera(target=(0.0, 3.0, 0.0), distance=30.0)
    grab = world.data.pos[1]
    highlight = Highlight(hovered=2, selected=3, grabbed=1,
                          grab_line=(grab, grab + np.array([0.5, 1.0, 0.0])), grab_force=(5.0, 10.0, 0.0))
    everything = dict(contacts=True, normals=True, aabbs=True, broadphase=True, velocities=True)
    print(f"{ctx.info['GL_RENDERER']} (GL {ctx.version_code}), {width}x{height}, {bodies} bodies, "
          f"{int(world.contacts.count)} manifolds, broad phase {world.broadphase}")
    runs = [("all debug drawing, shadows, window MSAA 4x", RenderOptions(**everything)),
            ("all debug drawing, no shadows", RenderOptions(shadows=False, **everything)),
            ("no debug drawing, shadows", RenderOptions()),
            ("all debug drawing, shadows, own MSAA 4x + resolve", RenderOptions(msaa=4, **everything))]
    for label, options in runs:
        time_frames(ctx, renderer, world, camera, options, highlight, 3)  # warm-up: shader variants
        cpu, wait = time_frames(ctx, renderer, world, camera, options, highlight, args.frames)
        print(f"{label:52s} CPU {cpu:7.2f} ms/frame   finish {wait:7.2f} ms   "
              f"{1000.0 / (cpu + wait):6.1f} frames/s")
    data = time_frame_data(renderer, world, camera, runs[0][1], highlight, args.frames)
    print(f"of which frame data (numpy instance table + debug geometry, no GL): {data:.2f} ms/frame")


if __name__ == "__main__":
    main()
