"""The moderngl renderer: bodies instanced per shape kind, a shadowed ground with a grid, debug drawing.

``Renderer(ctx, width, height).render(world, camera, options, highlight)`` draws one frame into the
framebuffer that is current in ``ctx`` when it is called (``ctx.fbo``: the window, or an ``fbo`` the
caller has ``use()``-d), which must be ``width × height``. A frame is:

1. the instance table, built with numpy from ``world.data`` (no Python loop over bodies): per live body
   its position and quaternion, its ``scale`` (see ``meshes.py``), an sRGB colour (a golden-angle
   palette by body index, grey for static bodies, ``body_colors``) and state flags
   (1 hovered, 2 selected, 4 grabbed, 8 asleep, 16 static), sorted by kind;
2. the shadow map: one depth-only pass from the sun, an orthographic box fitted around the bodies
   (``options.shadows``); shading samples it with 4×4 hardware PCF;
3. the main pass: one instanced draw per shape kind (spheres as ray-traced impostor quads, boxes,
   capsules) and one per distinct hull, outlines of the selected and grabbed bodies, the ground plane,
   the sky gradient, then debug lines and points (hidden parts drawn faint, "x-ray");
4. MSAA. By default (``options.msaa`` 0) the frame is drawn straight into the caller's framebuffer
   and anti-aliasing is the window's own: the app should create its window with a multisample
   config (e.g. pyglet ``Config(sample_buffers=1, samples=4, depth_size=24, double_buffer=True)``).
   With ``options.msaa`` = N > 1 the renderer draws into its own N-sample framebuffer instead and
   resolves it into the caller's with a full-screen draw (for targets without samples); so it does,
   with one sample, for a target that has no depth buffer. Only colour reaches the caller's
   framebuffer (never a blit, which would need matching depth formats), so any window config works.
   On a software rasteriser the own buffer makes ``render`` wait for the frame (a sampled texture
   must be complete), so drawing straight into the target is the default.

Afterwards ``ctx.fbo`` is the caller's framebuffer again, with depth test, culling and blending off,
ready for an ImGui pass. ``last_ms`` is the wall time of the last ``render`` call (it does not wait for
the GPU to finish), and ``timings`` splits it in ms: ``prepare`` (the numpy work: instance table and
debug geometry), ``upload`` (one buffer write per mesh's instances, one for the lines, one for the
points) and ``draw`` (issuing the passes' draw calls; a software rasteriser such as Mesa llvmpipe
shades vertices inside those calls and waits there for the shadow map, so there ``draw`` holds
most of its work).

The ground: a plane just below y = 0 with the grid, shaded exactly like the top faces of static
bodies (which carry the same world-space grid), so that the usual ground box (top at y = 0) and the
plane around it read as one floor that fades into the horizon.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import moderngl
import numpy as np

from ..engine import BOX, CAPSULE, HULL, SPHERE
from .camera import Camera
from .debug_draw import (
    ARROW_CODES,
    ARROWS,
    BOX_CORNERS,
    LINE_ATTRIBUTES,
    POINT_ATTRIBUTES,
    WIRE_BOXES,
    Batch,
    build_debug,
    set_columns,
)
from .debug_draw import INSTANCE_ATTRIBUTES as DEBUG_INSTANCE_ATTRIBUTES
from .debug_draw import INSTANCE_FORMAT as DEBUG_INSTANCE_FORMAT
from .debug_draw import VERTEX_FORMAT as LINE_FORMAT
from .meshes import VERTEX_ATTRIBUTES, VERTEX_FORMAT, MeshData, box_mesh, capsule_mesh, hull_mesh, sphere_mesh

INSTANCE_FORMAT = "3f 4f 4f 3f 1f/i"
INSTANCE_ATTRIBUTES = ("i_pos", "i_quat", "i_scale", "i_color", "i_flags")
INSTANCE_FLOATS = 15

HOVERED, SELECTED, GRABBED, ASLEEP, STATIC = 1, 2, 4, 8, 16
GL_SAMPLE_ALPHA_TO_COVERAGE = 0x809E

STATIC_COLOR = (0.62, 0.63, 0.65)
GROUND_COLOR = (0.62, 0.63, 0.65)
SKY_ZENITH = (0.28, 0.45, 0.72)          # linear RGB
SKY_HORIZON = (0.70, 0.76, 0.84)
LIGHT_DIR = np.array([-0.45, 1.0, 0.35]) / np.linalg.norm([-0.45, 1.0, 0.35])
SELECTED_OUTLINE = (1.0, 0.55, 0.05, 1.0)
GRABBED_OUTLINE = (0.05, 0.75, 1.0, 1.0)
GHOST_COLOR = (0.10, 0.13, 0.28, 0.42)  # the abandoned run's bodies (``render``'s ghosts): faint, flat
GROUND_PLANE_Y = -0.02          # below a ground box's top at y = 0, so the two never fight for depth
GROUND_PLANE_HALF = 1500.0
SHADOW_MAX_HALF = 60.0          # metres: the shadow map never covers more than this around the bodies
BIG_STATIC_RADIUS = 40.0        # static bodies larger than this (the ground) do not widen the shadow box


@dataclass
class RenderOptions:
    """What to draw. Debug toggles: ``contacts`` (contact points on body B, red; speculative ones
    orange), ``normals`` (contact normals A→B as arrows from those points, length by penetration depth,
    ``0.15 m + depth·depth_arrow_scale``, or by normal impulse, ``impulse·impulse_arrow_scale``, as
    ``normal_scale`` says), ``aabbs`` (the broad phase's boxes), ``broadphase`` (its structure: SAP
    intervals, grid cells or octree nodes), ``velocities`` (``v·velocity_arrow_scale`` arrows from the
    centres of mass), ``grab_spring`` (the grab's spring line and force arrow,
    ``force·force_arrow_scale`` metres), ``joints`` (distance joints as lines), ``outlines`` (around the
    selected and grabbed bodies), ``xray`` (debug lines behind bodies drawn faint). ``cursor_ray``,
    ``sweeps`` and ``flashes`` are teaching visuals that the app draws through ``render``'s ``overlay``
    and ``tint`` (``sandbox/ui/lesson_visuals.py``: the ray under the cursor, the swept volumes of the
    last step, flashes on collision events); the renderer itself ignores them. ``msaa``: 0 uses the
    target framebuffer's own samples, N > 1 an offscreen N-sample buffer resolved into the target;
    ``shadow_map_size``: texels per side; line widths and point sizes in pixels."""

    shadows: bool = True
    grid: bool = True
    contacts: bool = False
    normals: bool = False
    aabbs: bool = False
    broadphase: bool = False
    velocities: bool = False
    grab_spring: bool = True
    joints: bool = True
    outlines: bool = True
    xray: bool = True
    cursor_ray: bool = False
    sweeps: bool = False
    flashes: bool = False
    normal_scale: str = "depth"
    msaa: int = 0
    shadow_map_size: int = 2048
    depth_arrow_scale: float = 10.0
    impulse_arrow_scale: float = 5.0
    velocity_arrow_scale: float = 0.2
    force_arrow_scale: float = 0.02
    line_width: float = 2.0
    point_size: float = 8.0

    def validate(self) -> None:
        """Raise ValueError naming the first option with a bad value."""
        if self.normal_scale not in ("depth", "impulse"):
            raise ValueError(f"normal_scale must be 'depth' or 'impulse', got {self.normal_scale!r}")
        if not 0 <= int(self.msaa) <= 32:
            raise ValueError(f"msaa must be a sample count in [0, 32], got {self.msaa!r}")
        if not 64 <= int(self.shadow_map_size) <= 8192:
            raise ValueError(f"shadow_map_size must be in [64, 8192], got {self.shadow_map_size!r}")
        for name in ("depth_arrow_scale", "impulse_arrow_scale", "velocity_arrow_scale",
                     "force_arrow_scale", "line_width", "point_size"):
            x = getattr(self, name)
            if not (math.isfinite(x) and x >= 0.0):
                raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")


@dataclass
class Highlight:
    """Bodies the user interacts with, by body index (-1: none; an index that is not a live body is
    ignored): ``hovered`` is brightened with a rim, ``selected`` tinted orange and outlined, ``grabbed``
    tinted cyan and outlined. ``grab_line`` = (anchor, target) world points of the grab spring and
    ``grab_force`` the spring's force (N), both drawn when ``RenderOptions.grab_spring``."""

    hovered: int = -1
    selected: int = -1
    grabbed: int = -1
    grab_line: tuple | None = None
    grab_force: tuple | np.ndarray | None = None


def body_colors(count: int) -> np.ndarray:
    """A deterministic palette, (count, 3) sRGB in [0, 1]: hues stepped by the golden angle so that
    neighbouring indices differ clearly, with saturation and value alternating a little."""
    i = np.arange(count)
    h = (0.08 + i * 0.6180339887) % 1.0
    s = 0.55 + 0.15 * ((i // 3) % 2)
    v = 0.92 - 0.12 * ((i // 2) % 2)
    k = (np.array([5.0, 3.0, 1.0])[None, :] + h[:, None] * 6.0) % 6.0
    return (v[:, None] - v[:, None] * s[:, None] * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)).astype(
        np.float32)


def _shader(name: str) -> str:
    return resources.files("sandbox.render").joinpath("shaders", name).read_text(encoding="utf-8")


def _with_common(source: str) -> str:
    """``source`` with shaders/common.glsl inserted after its ``#version`` line."""
    first, rest = source.split("\n", 1)
    return f"{first}\n{_shader('common.glsl')}\n{rest}"


def _mat(m: np.ndarray) -> bytes:
    """A numpy (4, 4) matrix as the column-major float32 bytes OpenGL expects."""
    return np.ascontiguousarray(m.T, dtype=np.float32).tobytes()


def _set(prog: moderngl.Program, name: str, value) -> None:
    """Set a uniform if the compiler kept it (unused uniforms are optimised away)."""
    # prog.get, not `name in prog`: a Program has no __contains__, so `in` walks all its members
    uniform = prog.get(name, None)
    if uniform is not None:
        if isinstance(value, bytes):
            uniform.write(value)
        else:
            uniform.value = value


def _look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray) -> np.ndarray:
    f = target - eye
    f = f / np.linalg.norm(f)
    r = np.cross(f, up)
    r = r / np.linalg.norm(r)
    u = np.cross(r, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = r, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def _ortho(half: float, near: float, far: float) -> np.ndarray:
    m = np.eye(4)
    m[0, 0] = m[1, 1] = 1.0 / half
    m[2, 2] = -2.0 / (far - near)
    m[2, 3] = -(far + near) / (far - near)
    return m


LIGHT_DISTANCE = 500.0  # metres from the origin to the sun's eye
_LIGHT_VIEW = _look_at(LIGHT_DIR * LIGHT_DISTANCE, np.zeros(3), np.array([0.0, 1.0, 0.0]))
"""The sun's view along ``LIGHT_DIR`` towards the origin (``_light_matrix`` shifts a copy of it)."""


class _InstancedMesh:
    """A mesh on the GPU with its own growable instance buffer and three vertex arrays over them:
    lit (mesh program), depth only (shadow program) and outline (outline program, fed from the
    renderer's one-instance outline buffer). ``impostor``: the lit and shadow passes draw one quad
    per instance with the sphere-impostor programs instead (the mesh is then only the outline's)."""

    def __init__(self, r: Renderer, mesh: MeshData, hull: bool = False, impostor: bool = False) -> None:
        ctx = r.ctx
        self.hull = hull
        self.impostor = impostor
        self.vbo = ctx.buffer(mesh.vertices.tobytes())
        self.ibo = ctx.buffer(mesh.indices.tobytes())
        self.capacity = 0
        self.count = 0
        self._r = r
        self.outline = ctx.vertex_array(
            r.outline_prog, [(self.vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES),
                             (r.outline_instance, INSTANCE_FORMAT, *INSTANCE_ATTRIBUTES)],
            index_buffer=self.ibo, index_element_size=4, skip_errors=True)
        self._reserve(64)

    def _reserve(self, count: int) -> None:
        if count <= self.capacity:
            return
        if self.capacity:
            self.instances.release()
            self.lit.release()
            self.shadow.release()
            self.ghost.release()
        self.capacity = max(count, 2 * self.capacity)
        ctx, r = self._r.ctx, self._r
        self.instances = ctx.buffer(reserve=self.capacity * INSTANCE_FLOATS * 4, dynamic=True)
        per_instance = (self.instances, INSTANCE_FORMAT, *INSTANCE_ATTRIBUTES)
        if self.impostor:
            content = [(r.quad, "2f", "in_corner"), per_instance]
            self.lit = ctx.vertex_array(r.sphere_prog, content, skip_errors=True)
            self.shadow = ctx.vertex_array(r.sphere_shadow_prog, content, skip_errors=True)
        else:
            content = [(self.vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES), per_instance]
            self.lit = ctx.vertex_array(r.mesh_prog, content, index_buffer=self.ibo, index_element_size=4,
                                        skip_errors=True)
            self.shadow = ctx.vertex_array(r.shadow_prog, content, index_buffer=self.ibo,
                                           index_element_size=4, skip_errors=True)
        # ghosts: the mesh (spheres' too, not the impostor) in the outline program's flat colour
        self.ghost = ctx.vertex_array(r.outline_prog, [(self.vbo, VERTEX_FORMAT, *VERTEX_ATTRIBUTES),
                                                       per_instance],
                                      index_buffer=self.ibo, index_element_size=4, skip_errors=True)

    def draw(self, vao: moderngl.VertexArray) -> None:
        """Draw this frame's instances with ``vao`` (``lit`` or ``shadow``); impostor quads are drawn
        without culling, since they face the eye (or the sun) by construction."""
        if not self.count:
            return
        if self.impostor:
            self._r.ctx.disable(moderngl.CULL_FACE)
            vao.render(moderngl.TRIANGLE_STRIP, vertices=4, instances=self.count)
            self._r.ctx.enable(moderngl.CULL_FACE)
        else:
            vao.render(instances=self.count)

    def upload(self, table: np.ndarray) -> None:
        """This frame's instances, (k, 15) float32."""
        self._reserve(len(table))
        self.count = len(table)
        if self.count:
            self.instances.write(table)

    def release(self) -> None:
        for obj in (self.lit, self.shadow, self.ghost, self.outline, self.instances, self.vbo, self.ibo):
            obj.release()


class _DynamicVertices:
    """A growable vertex buffer and its vertex array for one debug batch (lines or points)."""

    def __init__(self, ctx: moderngl.Context, prog: moderngl.Program, attributes: tuple[str, ...]) -> None:
        self.ctx, self.prog, self.attributes = ctx, prog, attributes
        self.capacity = 0
        self.count = 0
        self._reserve(4096)

    def _reserve(self, count: int) -> None:
        if count <= self.capacity:
            return
        if self.capacity:
            self.vao.release()
            self.vbo.release()
        self.capacity = max(count, 2 * self.capacity)
        self.vbo = self.ctx.buffer(reserve=self.capacity * 32, dynamic=True)
        fmt = LINE_FORMAT if len(self.attributes) == 3 else LINE_FORMAT.replace("1f", "4x")
        self.vao = self.ctx.vertex_array(self.prog, [(self.vbo, fmt, *self.attributes)])

    def upload(self, vertices: np.ndarray) -> None:
        self._reserve(len(vertices))
        self.count = len(vertices)
        if self.count:
            self.vbo.write(vertices)

    def release(self) -> None:
        self.vao.release()
        self.vbo.release()


class _DebugInstances:
    """The growable buffer of the debug batch's box and arrow instances (``INSTANCE_FORMAT`` of
    debug_draw.py), with one vertex array per primitive over it and its vertex template."""

    STRIDE = 40  # bytes: 3 + 3 + 4 floats

    def __init__(self, r: Renderer) -> None:
        ctx = r.ctx
        self.ctx = ctx
        self.box_template = ctx.buffer(BOX_CORNERS.tobytes())
        self.arrow_template = ctx.buffer(ARROW_CODES.tobytes())
        self._progs = {WIRE_BOXES: (r.box_line_prog, self.box_template, "3f", "in_corner", len(BOX_CORNERS)),
                       ARROWS: (r.arrow_prog, self.arrow_template, "1f", "in_code", len(ARROW_CODES))}
        self.capacity = 0
        self._reserve(1024)

    def _reserve(self, count: int) -> None:
        if count <= self.capacity:
            return
        if self.capacity:
            for vao in self.vaos.values():
                vao.release()
            self.buffer.release()
        self.capacity = max(count, 2 * self.capacity)
        self.buffer = self.ctx.buffer(reserve=self.capacity * self.STRIDE, dynamic=True)
        self.vaos = {kind: self.ctx.vertex_array(prog, [(template, fmt, attr),
                                                        (self.buffer, DEBUG_INSTANCE_FORMAT,
                                                         *DEBUG_INSTANCE_ATTRIBUTES)])
                     for kind, (prog, template, fmt, attr, _n) in self._progs.items()}

    def upload(self, instances: np.ndarray) -> None:
        self._reserve(len(instances))
        if len(instances):
            self.buffer.write(instances)

    def draw(self, kind: str, first: int, count: int) -> None:
        """Draw instances ``[first, first + count)`` of one primitive: GL 3.3 has no base instance, so
        the instance attributes are pointed at ``first`` instead."""
        vao = self.vaos[kind]
        prog = self._progs[kind][0]
        base = first * self.STRIDE
        for name, fmt, offset in (("i_a", "3f", 0), ("i_b", "3f", 12), ("i_color", "4f", 24)):
            vao.bind(prog[name].location, "f", self.buffer, fmt, offset=base + offset, stride=self.STRIDE,
                     divisor=1)
        vao.render(moderngl.LINES, vertices=self._progs[kind][4], instances=count)

    def release(self) -> None:
        for vao in self.vaos.values():
            vao.release()
        for obj in (self.buffer, self.box_template, self.arrow_template):
            obj.release()


class Renderer:
    """Draws a ``World`` with moderngl; see the module docstring for what a frame contains.

    ``ctx`` is a current ``moderngl.Context`` (a window's, or a standalone one) of OpenGL 3.3 or later;
    ``width`` and ``height`` are the size in pixels of the framebuffer that ``render`` draws into."""

    def __init__(self, ctx: moderngl.Context, width: int, height: int) -> None:
        if ctx.version_code < 330:
            raise ValueError(f"ctx must be an OpenGL 3.3+ context, got version {ctx.version_code}")
        self.ctx = ctx
        self.last_ms = 0.0
        self.timings = {"prepare": 0.0, "upload": 0.0, "draw": 0.0}
        self.mesh_prog = ctx.program(vertex_shader=_shader("mesh.vert.glsl"),
                                     fragment_shader=_with_common(_shader("mesh.frag.glsl")))
        self.outline_prog = ctx.program(vertex_shader=_shader("mesh.vert.glsl"),
                                        fragment_shader=_shader("outline.frag.glsl"))
        self.shadow_prog = ctx.program(vertex_shader=_shader("shadow.vert.glsl"),
                                       fragment_shader=_shader("shadow.frag.glsl"))
        self.ground_prog = ctx.program(vertex_shader=_shader("ground.vert.glsl"),
                                       fragment_shader=_with_common(_shader("ground.frag.glsl")))
        self.sky_prog = ctx.program(vertex_shader=_shader("sky.vert.glsl"),
                                    fragment_shader=_shader("sky.frag.glsl"))
        self.line_prog = ctx.program(vertex_shader=_shader("line.vert.glsl"),
                                     fragment_shader=_shader("line.frag.glsl"))
        self.box_line_prog = ctx.program(vertex_shader=_shader("box_line.vert.glsl"),
                                         fragment_shader=_shader("line.frag.glsl"))
        self.arrow_prog = ctx.program(vertex_shader=_shader("arrow.vert.glsl"),
                                      fragment_shader=_shader("line.frag.glsl"))
        self.point_prog = ctx.program(vertex_shader=_shader("point.vert.glsl"),
                                      fragment_shader=_shader("point.frag.glsl"))
        self.resolve_prog = ctx.program(vertex_shader=_shader("resolve.vert.glsl"),
                                        fragment_shader=_shader("resolve.frag.glsl"))
        self._resolve = ctx.vertex_array(self.resolve_prog, [])
        self.outline_instance = ctx.buffer(reserve=INSTANCE_FLOATS * 4, dynamic=True)
        self.sphere_prog = ctx.program(vertex_shader=_shader("sphere.vert.glsl"),
                                       fragment_shader=_with_common(_shader("sphere.frag.glsl")))
        self.sphere_shadow_prog = ctx.program(vertex_shader=_shader("sphere.vert.glsl"),
                                              fragment_shader=_shader("sphere_shadow.frag.glsl"))
        self.sphere_shadow_prog["u_shadow_pass"].value = 1.0
        self.quad = ctx.buffer(np.array([-1, -1, 1, -1, -1, 1, 1, 1], dtype=np.float32).tobytes())
        self._kinds = {SPHERE: _InstancedMesh(self, sphere_mesh(), impostor=True),
                       BOX: _InstancedMesh(self, box_mesh()),
                       CAPSULE: _InstancedMesh(self, capsule_mesh())}
        self._hulls: dict[int, tuple[object, _InstancedMesh]] = {}
        quad = np.array([-1, -1, 1, -1, -1, 1, 1, 1], dtype=np.float32) * GROUND_PLANE_HALF
        self._ground_vbo = ctx.buffer(quad.tobytes())
        self._ground = ctx.vertex_array(self.ground_prog, [(self._ground_vbo, "2f", "in_xz")])
        self._sky = ctx.vertex_array(self.sky_prog, [])
        self._lines = _DynamicVertices(ctx, self.line_prog, LINE_ATTRIBUTES)
        self._debug_instances = _DebugInstances(self)
        self._points = _DynamicVertices(ctx, self.point_prog, POINT_ATTRIBUTES)
        self._batch = Batch()
        self._palette = body_colors(0)
        self._table = np.zeros((0, INSTANCE_FLOATS), np.float32)
        self._order = np.zeros(0, np.int64)  # body index of each instance-table row
        self._fixed_key: tuple[bytes, ...] = ()  # what the live bodies' order and fixed columns came from
        self._fixed: tuple = ()
        self._table_fixed: np.ndarray | None = None  # the fixed columns (``_fixed_columns``) the table holds
        self._shadow_size = 0
        self._screen_depth: bool | None = None
        self._main_key: tuple[int, int, int] | None = None   # (samples, width, height) of the own buffer
        self.width = self.height = 0
        self.resize(width, height)

    # --- framebuffers --------------------------------------------------------------------------
    def resize(self, width: int, height: int) -> None:
        """Set the size in pixels of the framebuffer ``render`` draws into."""
        w, h = int(width), int(height)
        if w <= 0 or h <= 0:
            raise ValueError(f"width and height must be positive, got {width!r} x {height!r}")
        self.width, self.height = w, h

    def _main_target(self, samples: int) -> moderngl.Framebuffer:
        """The renderer's own framebuffer of ``samples`` samples (1 for a depth-less target drawn without
        MSAA), made again when the count or the size changes."""
        key = (min(samples, self.ctx.max_samples), self.width, self.height)
        if key != self._main_key:
            self._release_main()
            size = (self.width, self.height)
            self._color = self.ctx.texture(size, 4, samples=key[0])
            self._depth = self.ctx.depth_renderbuffer(size, samples=key[0])
            self._fbo = self.ctx.framebuffer([self._color], self._depth)
            self._main_key = key
        return self._fbo

    def _has_depth(self, fbo: moderngl.Framebuffer) -> bool:
        """Whether ``fbo`` has a depth buffer: a depth attachment for a framebuffer object, the depth
        bits for the window's default framebuffer (asked once: it never changes)."""
        if fbo.depth_attachment is not None:
            return True
        if fbo.glo != 0:
            return False
        if self._screen_depth is None:
            bits = fbo.bits
            # moderngl's query of the bits also asks for a stencil buffer's size, an
            # INVALID_OPERATION where the window has none: clear it so that it is not reported later
            _ = self.ctx.error
            self._screen_depth = bits["depth"] > 0
        return self._screen_depth

    def _release_main(self) -> None:
        if self._main_key is not None:
            for obj in (self._fbo, self._color, self._depth):
                obj.release()
            self._main_key = None

    def _shadow_target(self, size: int) -> moderngl.Framebuffer:
        if size != self._shadow_size:
            if self._shadow_size:
                self._shadow_fbo.release()
                self._shadow_tex.release()
            self._shadow_tex = self.ctx.depth_texture((size, size))
            self._shadow_tex.compare_func = "<="
            self._shadow_tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self._shadow_tex.repeat_x = self._shadow_tex.repeat_y = False
            self._shadow_fbo = self.ctx.framebuffer(depth_attachment=self._shadow_tex)
            self._shadow_size = size
        return self._shadow_fbo

    # --- per-frame data ------------------------------------------------------------------------
    def _colors(self, n: int) -> np.ndarray:
        if len(self._palette) < n:
            self._palette = body_colors(max(n, 2 * len(self._palette), 256))
        return self._palette[:n]

    def _hull_mesh(self, world, hull_id: int) -> _InstancedMesh:
        shape = world.hulls.shapes[hull_id]
        cached = self._hulls.get(hull_id)
        if cached is None or cached[0] is not shape:
            if cached is not None:
                cached[1].release()
            mesh = _InstancedMesh(self, hull_mesh(shape.vertices, shape.faces, shape.face_normals), hull=True)
            cached = self._hulls[hull_id] = (shape, mesh)
        return cached[1]

    def _instances(self, world, highlight: Highlight, pos: np.ndarray, quat: np.ndarray,
                   colors: np.ndarray, rows: np.ndarray | None = None,
                   tint: np.ndarray | None = None) -> list[tuple[_InstancedMesh, int, int]]:
        """Fill the instance table, sorted by kind and hull id; returns (mesh, first row, row count)
        for each mesh to draw, and keeps the sorted row order. ``rows``: only these live rows (sorted).
        ``colors``: the renderer's palette (``_colors``), a colour per body row. ``tint`` (n, 4): see
        ``render``."""
        d = world.data
        if rows is None:
            # the order and the columns that do not move with the bodies change only when bodies come, go,
            # change shape or turn static or dynamic: kept while these bytes are equal (the palette's
            # colour of a row never changes)
            n = d.n
            key = tuple(a[:n].tobytes() for a in (d.alive, d.kind, d.params, d.static))
            if key != self._fixed_key:
                order, _kind, hull_id, bounds = _sorted_rows(d, np.flatnonzero(d.alive[:n]))
                self._fixed = (order, hull_id, bounds, *_fixed_columns(d, order, bounds, colors))
                self._fixed_key = key
            order, hull_id, bounds, fixed, static, static_flags, rank = self._fixed
        else:
            order, _kind, hull_id, bounds = _sorted_rows(d, rows)
            fixed, static, static_flags, rank = _fixed_columns(d, order, bounds, colors)
        k = len(order)
        if len(self._table) < k:
            self._table = np.zeros((max(k, 2 * len(self._table)), INSTANCE_FLOATS), np.float32)
            self._table_fixed = None
        t = self._table[:k]
        if self._table_fixed is not fixed:  # else the table holds them from the last frame
            t[...] = fixed  # one copy of the whole rows; the poses and flags are written over it
        # a tint or another set of rows (the ghosts) leaves other fixed columns in the table
        self._table_fixed = fixed if rows is None and tint is None else None
        # one call each: in a frame whose caches the GL's work has emptied, numpy's per-call cost counts
        np.take(pos, order, axis=0, out=t[:, 0:3])
        np.take(quat, order, axis=0, out=t[:, 3:7])
        if tint is not None:
            weight = np.clip(tint[order, 3:4], 0.0, 1.0)
            t[:, 11:14] += (tint[order, 0:3] - t[:, 11:14]) * weight
        flags = np.where(static | d.awake.take(order), static_flags, ASLEEP)
        for index, bit in ((highlight.hovered, HOVERED), (highlight.selected, SELECTED),
                           (highlight.grabbed, GRABBED)):
            if 0 <= index < len(rank) and rank[index] >= 0:
                flags[rank[index]] |= bit
        t[:, 14] = flags
        self._order = order
        draws = []
        for kd in (SPHERE, BOX, CAPSULE):
            lo, hi = bounds[kd], bounds[kd + 1]
            draws.append((self._kinds[kd], lo, hi - lo))
        hull_rows = hull_id[bounds[HULL]:]
        if len(hull_rows):
            ids, first, counts = np.unique(hull_rows, return_index=True, return_counts=True)
            for hid, lo, c in zip(ids.tolist(), first.tolist(), counts.tolist(), strict=True):
                draws.append((self._hull_mesh(world, hid), bounds[HULL] + lo, c))
        return draws

    def _light_matrix(self, world, pos: np.ndarray, size: int) -> tuple[np.ndarray, float, float]:
        """The sun's orthographic view-projection around the bodies (large static ones excluded),
        snapped to whole texels so that shadow edges do not crawl as the box follows the bodies;
        returns it with the world size of one texel and the depth range in metres."""
        d = world.data
        n = d.n
        rows = d.alive[:n] & ~(d.static[:n] & (d.radius[:n] > BIG_STATIC_RADIUS))
        if rows.any():
            r = d.radius[:n][rows][:, None]
            lo = (pos[rows] - r).min(axis=0)
            hi = (pos[rows] + r).max(axis=0)
        else:
            lo, hi = np.full(3, -5.0), np.full(3, 5.0)
        centre = 0.5 * (lo + hi)
        # the box's size moves in steps of 25 % so that it rarely changes while bodies move
        half = float(np.clip(0.5 * np.linalg.norm(hi - lo), 2.0, SHADOW_MAX_HALF))
        half = 1.25 ** math.ceil(math.log(half, 1.25))
        texel = 2.0 * half / size
        view = _LIGHT_VIEW.copy()
        c = view[:3, :3] @ centre
        view[:2, 3] -= np.round(c[:2] / texel) * texel
        depth = LIGHT_DISTANCE - float(LIGHT_DIR @ centre)
        reach = 3.0 * half + 50.0
        near, far = depth - reach, depth + reach
        return _ortho(half, near, far) @ view, texel, far - near

    # --- the frame -----------------------------------------------------------------------------
    def render(self, world, camera: Camera, options: RenderOptions, highlight: Highlight,
               pos: np.ndarray | None = None, quat: np.ndarray | None = None,
               region: tuple[int, int, int, int] | None = None,
               overlay: Callable[[Batch], None] | None = None,
               ghosts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               tint: np.ndarray | None = None) -> None:
        """Draw ``world`` seen by ``camera`` into the current framebuffer (``width × height``).

        ``pos`` (n, 3) and ``quat`` (n, 4), for rows ``[:world.data.n]``, replace the bodies' stored
        centres of mass and orientations (interpolated poses between physics steps). ``region``
        ``(x, y, w, h)``, in framebuffer pixels from the bottom-left corner, limits the frame to that
        rectangle (a scissor: the projection is still the whole framebuffer's) and leaves the rest as it
        was, so that an A/B comparison draws one world per lane; None draws everywhere. ``overlay`` adds
        debug geometry to the frame's batch (the stepper's drawing). ``ghosts`` =
        ``(rows (k,), pos (k, 3), quat (k, 4))`` draws those bodies' shapes a second time at the given
        centres of mass and orientations, faint and flat (``GHOST_COLOR``), over the scene and hidden
        where a body is in front: another run's poses (the timeline's abandoned run). Rows that hold no
        live body are left out. ``tint`` (n, 4), for rows
        ``[:world.data.n]``, blends each body's colour towards the sRGB colour ``tint[:, :3]`` by the
        weight ``tint[:, 3]`` in [0, 1] (0: its own colour; a flash on a collision event)."""
        start = time.perf_counter()
        options.validate()
        if region is not None:
            region = tuple(int(v) for v in region)
            if len(region) != 4 or region[2] <= 0 or region[3] <= 0:
                raise ValueError(f"region must be (x, y, width, height) with a positive size, got {region!r}")
        ctx = self.ctx
        d = world.data
        n = d.n
        pos = d.pos[:n] if pos is None else _rows("pos", pos, n, 3)
        quat = d.quat[:n] if quat is None else _rows("quat", quat, n, 4)
        tint = None if tint is None else _rows("tint", tint, n, 4)
        ghosts = None if ghosts is None else _ghost_rows(world, ghosts)
        target = ctx.fbo
        # 1. the frame's data, with numpy: instance table and debug geometry
        colors = self._colors(n)
        draws = self._instances(world, highlight, pos, quat, colors, tint=tint)
        batch = self._batch
        batch.clear()
        build_debug(batch, world, options, highlight, pos, colors)
        if overlay is not None:
            overlay(batch)
        lines, runs = batch.line_array()
        instances, instance_runs = batch.instance_array()
        prepared = time.perf_counter()
        # 2. one write per buffer
        for mesh, first, count in draws:
            mesh.upload(self._table[first:first + count])
        self._lines.upload(lines)
        self._points.upload(batch.point_array())
        self._debug_instances.upload(instances)
        uploaded = time.perf_counter()

        # 3. the draw calls
        aspect = self.width / self.height
        view_proj = camera.projection_matrix(aspect) @ camera.view_matrix()
        eye = camera.eye
        px_per_rad = self.height / (2.0 * math.tan(0.5 * camera.fov_y))

        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.depth_func = "<"
        size = int(options.shadow_map_size)
        light_vp, texel, depth_range = self._light_matrix(world, pos, size)
        if options.shadows:
            shadow_fbo = self._shadow_target(size)
            shadow_fbo.use()
            shadow_fbo.clear(depth=1.0)
            # back faces into the map: lit front faces are then never compared against themselves
            ctx.cull_face = "front"
            self.shadow_prog["u_light_vp"].write(_mat(light_vp))
            self.sphere_shadow_prog["u_light_vp"].write(_mat(light_vp))
            self.sphere_shadow_prog["u_light_dir"].value = tuple(LIGHT_DIR)
            for mesh, _first, _count in draws:
                mesh.draw(mesh.shadow)
            ctx.cull_face = "back"

        # a target without a depth buffer (a window made without one) cannot be drawn into directly
        own = int(options.msaa) > 1 or not self._has_depth(target)
        fbo = self._main_target(max(int(options.msaa), 1)) if own else target
        fbo.use()
        ctx.viewport = (0, 0, self.width, self.height)
        fbo.scissor = region
        fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0, viewport=region)
        vp = _mat(view_proj)
        shared = {"u_view_proj": vp, "u_eye": tuple(eye), "u_light_dir": tuple(LIGHT_DIR),
                  "u_light_vp": _mat(light_vp), "u_shadow_map": 0, "u_shadows": float(options.shadows),
                  "u_shadow_texel": texel, "u_shadow_bias": 0.5 * texel / depth_range,
                  "u_grid": float(options.grid), "u_sky_zenith": SKY_ZENITH, "u_sky_horizon": SKY_HORIZON,
                  "u_fog_density": 1.0 / (150.0 + 4.0 * camera.distance), "u_px_per_rad": px_per_rad,
                  "u_grow_px": 0.0, "u_hull": 0.0, "u_ground_color": GROUND_COLOR,
                  "u_height": GROUND_PLANE_Y, "u_viewport": (float(self.width), float(self.height)),
                  "u_alpha": 1.0, "u_inv_view_proj": _mat(np.linalg.inv(view_proj)),
                  # the plane follows the camera target in whole metres so it always reaches the horizon
                  "u_offset": tuple(np.round(camera.target[[0, 2]]))}
        for prog in (self.mesh_prog, self.outline_prog, self.ground_prog, self.sky_prog, self.line_prog,
                     self.point_prog, self.sphere_prog, self.box_line_prog, self.arrow_prog):
            for name, value in shared.items():
                _set(prog, name, value)
        if options.shadows:
            self._shadow_tex.use(location=0)

        # front to back as far as possible, so that hidden ground and sky pixels are never shaded
        # a no-op on single-sample targets (GL 3.3 §4.1.3), so it needs no test of the target (whose
        # sample count moderngl does not report for a window)
        ctx.enable_direct(GL_SAMPLE_ALPHA_TO_COVERAGE)
        for mesh, _first, _count in draws:
            mesh.draw(mesh.lit)
        ctx.disable_direct(GL_SAMPLE_ALPHA_TO_COVERAGE)
        if options.outlines:
            self._outlines(highlight, draws)
        ctx.disable(moderngl.CULL_FACE)
        self._ground.render(moderngl.TRIANGLE_STRIP)
        ctx.depth_func = "<="
        self._sky.render(moderngl.TRIANGLES, vertices=3)
        ctx.depth_func = "<"
        if ghosts is not None and len(ghosts[0]):
            self._ghosts(world, ghosts, pos, quat, colors)
        self._debug(options, runs, instance_runs)
        if own:
            fbo.scissor = None
            target.use()
            ctx.viewport = (0, 0, self.width, self.height)
            target.scissor = region
            ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)
            self._color.use(location=1)
            self.resolve_prog["u_color"].value = 1
            self.resolve_prog["u_samples"].value = self._main_key[0]
            self._resolve.render(moderngl.TRIANGLES, vertices=3)
        target.scissor = None
        ctx.enable_only(moderngl.NOTHING)
        end = time.perf_counter()
        self.timings = {"prepare": 1e3 * (prepared - start), "upload": 1e3 * (uploaded - prepared),
                        "draw": 1e3 * (end - uploaded)}
        self.last_ms = 1e3 * (end - start)

    def _outlines(self, highlight: Highlight, draws) -> None:
        """The selected and grabbed bodies' silhouettes: their shapes grown by a few pixels, back
        faces only, in a flat colour, so that only a rim around each body shows."""
        self.ctx.cull_face = "front"
        for index, color, px in ((highlight.selected, SELECTED_OUTLINE, 3.0),
                                 (highlight.grabbed, GRABBED_OUTLINE, 3.0)):
            rows = np.flatnonzero(self._order == index)
            if index < 0 or len(rows) == 0:
                continue
            row = int(rows[0])
            mesh = next(m for m, first, count in draws if first <= row < first + count)
            self.outline_instance.write(self._table[row].tobytes())
            _set(self.outline_prog, "u_outline_color", color)
            _set(self.outline_prog, "u_grow_px", px)
            _set(self.outline_prog, "u_hull", float(mesh.hull))
            mesh.outline.render(instances=1)
        self.ctx.cull_face = "back"

    def _ghosts(self, world, ghosts: tuple, pos: np.ndarray, quat: np.ndarray, colors: np.ndarray) -> None:
        """Draw the ``ghosts`` (``render``'s, as ``_ghost_rows`` keeps them) after every opaque thing: the
        back faces of each shape, blended in ``GHOST_COLOR`` without writing depth, so that each pixel of
        a ghost is covered once and a ghost where its body is (the runs agree) stays hidden behind the
        body's front faces."""
        rows, ghost_pos, ghost_quat = ghosts
        all_pos, all_quat = np.array(pos, dtype=float), np.array(quat, dtype=float)
        all_pos[rows], all_quat[rows] = ghost_pos, ghost_quat
        draws = self._instances(world, Highlight(), all_pos, all_quat, colors, rows=rows)
        ctx = self.ctx
        ctx.enable(moderngl.BLEND | moderngl.CULL_FACE)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        ctx.fbo.depth_mask = False
        ctx.cull_face = "front"
        _set(self.outline_prog, "u_outline_color", GHOST_COLOR)
        _set(self.outline_prog, "u_grow_px", 0.0)
        for mesh, first, count in draws:
            if count:
                mesh.upload(self._table[first:first + count])  # the lit pass has been issued already
                _set(self.outline_prog, "u_hull", float(mesh.hull))
                mesh.ghost.render(instances=count)
        ctx.cull_face = "back"
        ctx.fbo.depth_mask = True
        ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)

    def _debug(self, options: RenderOptions, runs: list[tuple[float, int, int]],
               instance_runs: list[tuple[str, float, int, int]]) -> None:
        """The uploaded debug lines (in ``runs`` of one width), box and arrow instances (in
        ``instance_runs``) and points, blended over the scene without writing depth; with ``xray``
        the parts hidden behind bodies are drawn first, faint."""
        if not (runs or instance_runs or self._points.count):
            return
        ctx = self.ctx
        ctx.enable(moderngl.BLEND | moderngl.PROGRAM_POINT_SIZE)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        ctx.fbo.depth_mask = False
        passes = ((">", 0.22), ("<=", 1.0)) if options.xray else (("<=", 1.0),)
        for func, alpha in passes:
            ctx.depth_func = func
            for prog in (self.line_prog, self.box_line_prog, self.arrow_prog):
                prog["u_alpha"].value = alpha
            # points first: the arrows (contact normals) start at the contact dots and must show over them
            if self._points.count:
                self.point_prog["u_alpha"].value = alpha
                self._points.vao.render(moderngl.POINTS, vertices=self._points.count)
            for width, first, count in runs:
                ctx.line_width = width
                self._lines.vao.render(moderngl.LINES, vertices=count, first=first)
            for kind, width, first, count in instance_runs:
                ctx.line_width = width
                self._debug_instances.draw(kind, first, count)
        ctx.line_width = 1.0
        ctx.depth_func = "<"
        ctx.fbo.depth_mask = True

    def release(self) -> None:
        """Free every GPU object the renderer made."""
        for mesh in self._kinds.values():
            mesh.release()
        for _shape, mesh in self._hulls.values():
            mesh.release()
        self._lines.release()
        self._points.release()
        for obj in (self._ground, self._ground_vbo, self._sky, self._resolve, self.resolve_prog,
                    self.outline_instance, self.quad, self.mesh_prog, self.outline_prog, self.shadow_prog,
                    self.sphere_prog, self.sphere_shadow_prog, self.ground_prog, self.sky_prog,
                    self.line_prog, self.point_prog, self.box_line_prog, self.arrow_prog):
            obj.release()
        self._debug_instances.release()
        self._release_main()
        if self._shadow_size:
            self._shadow_fbo.release()
            self._shadow_tex.release()


def _sorted_rows(d, live: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """The rows ``live`` of the body arrays ``d`` sorted by kind, hulls then by hull id: (rows, their
    kinds, the hulls' ids from the first hull row on (empty without hulls), and the first row of each
    kind SPHERE..HULL plus the end)."""
    kind = d.kind.take(live)
    # a stable sort of the kinds as bytes (numpy's radix sort); hulls, sorted last, then by hull id too
    sort = np.argsort(kind.astype(np.uint8), kind="stable")
    hull_id = np.zeros(0, np.int64)
    if len(sort) and kind[sort[-1]] == HULL:
        hull_id = np.where(kind == HULL, d.params[:, 0].take(live), -1.0).astype(np.int64)
        sort = np.lexsort((hull_id, kind))
        hull_id = hull_id[sort]
    kind = kind[sort]
    bounds = np.searchsorted(kind, [SPHERE, BOX, CAPSULE, HULL, HULL + 1]).tolist()
    return live[sort], kind, hull_id, bounds


def _fixed_columns(d, order: np.ndarray, bounds: list[int], colors: np.ndarray,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the instance table's rows for the body rows ``order`` (sorted by kind, ``bounds`` as
    ``_sorted_rows`` gives them) hold whatever the poses: (the (k, 15) rows with the scale and the colour
    set, zeros elsewhere; whether each row is static; its flags' ``STATIC`` bit; the table row of each
    body row of ``d``, -1 for rows not in ``order``)."""
    k = len(order)
    fixed = np.zeros((k, INSTANCE_FLOATS), np.float32)
    params = d.params.take(order, axis=0)
    # scale = (sx, sy, sz, half height) as meshes.py describes, set per kind on its run of rows
    for kd, columns, half_height in ((SPHERE, (0, 0, 0), None), (BOX, (0, 1, 2), None),
                                     (CAPSULE, (0, 0, 0), 1), (HULL, None, None)):
        lo, hi = bounds[kd], bounds[kd + 1]
        if hi > lo:
            for j in range(3):
                fixed[lo:hi, 7 + j] = 1.0 if columns is None else params[lo:hi, columns[j]]
            fixed[lo:hi, 10] = 0.0 if half_height is None else params[lo:hi, half_height]
    static = d.static[order]
    set_columns(fixed[:, 11:14], colors.take(order, axis=0))
    fixed[static, 11:14] = STATIC_COLOR
    rank = np.full(d.n, -1, np.int64)
    rank[order] = np.arange(k)
    return fixed, static, np.where(static, STATIC, 0), rank


def _ghost_rows(world, ghosts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``render``'s ``ghosts`` checked (ValueError naming what is wrong) and kept to the rows that hold a
    live body, each once, sorted."""
    if not isinstance(ghosts, (tuple, list)) or len(ghosts) != 3:
        raise ValueError("ghosts must be a tuple (rows, pos, quat)")
    rows = np.asarray(ghosts[0])
    if rows.ndim != 1 or (len(rows) and not np.issubdtype(rows.dtype, np.integer)):
        raise ValueError(f"ghost rows must be a 1-D integer array, got {rows.dtype} {rows.shape}")
    pos = _rows("ghost pos", ghosts[1], len(rows), 3)
    quat = _rows("ghost quat", ghosts[2], len(rows), 4)
    if not (np.all(np.isfinite(pos)) and np.all(np.isfinite(quat))):
        raise ValueError("ghost poses must be finite")
    d = world.data
    ok = (rows >= 0) & (rows < d.n)
    ok[ok] &= d.alive[rows[ok]]
    kept, first = np.unique(rows[ok].astype(np.int64), return_index=True)
    return kept, pos[ok][first], quat[ok][first]


def _rows(name: str, a, n: int, width: int) -> np.ndarray:
    """``a`` as an (n, width) float array; ValueError naming ``name`` otherwise."""
    arr = np.asarray(a)
    if arr.ndim != 2 or arr.shape[0] < n or arr.shape[1] != width:
        raise ValueError(f"{name} must have shape ({n}, {width}), got {arr.shape}")
    return arr[:n]
