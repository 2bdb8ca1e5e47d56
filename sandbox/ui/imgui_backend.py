"""Dear ImGui's frames drawn with moderngl, in the window's context.

imgui-bundle's pyglet backend still does what it does once or seldom: the clipboard, the mouse cursor's
shape and the textures ImGui asks for (the font atlas, made and updated through PyOpenGL). Its drawing
of each frame is replaced here: it issued every GL call of the frame through PyOpenGL (a dozen state
queries and restores, two buffer uploads per draw list, three calls per draw command), each call with
PyOpenGL's argument conversion and error check, where moderngl makes the same calls from C. The GL state
it leaves is the one the scene's ``Renderer`` leaves and expects: nothing enabled, no scissor.

The frame is drawn as ImGui's reference OpenGL 3 backend draws it: an orthographic projection of the
display, alpha blending, no depth test or culling, and for each draw list one upload of its vertices
and indices, then one indexed draw per command, clipped by a scissor rectangle.
"""

from __future__ import annotations

import ctypes
import time

import moderngl
import pyglet
from imgui_bundle import imgui
from imgui_bundle.python_backends.pyglet_backend import PygletProgrammablePipelineRenderer

VERTEX_SHADER = """
#version 330
uniform mat4 ProjMtx;
in vec2 Position;
in vec2 UV;
in vec4 Color;
out vec2 Frag_UV;
out vec4 Frag_Color;
void main() {
    Frag_UV = UV;
    Frag_Color = Color;
    gl_Position = ProjMtx * vec4(Position.xy, 0, 1);
}
"""

FRAGMENT_SHADER = """
#version 330
uniform sampler2D Texture;
in vec2 Frag_UV;
in vec4 Frag_Color;
out vec4 Out_Color;
void main() {
    Out_Color = Frag_Color * texture(Texture, Frag_UV.st);
}
"""

VERTEX_FORMAT = "2f 2f 4f1"
"""An ``ImDrawVert``: position and texture coordinates as floats, the colour as four normalised bytes."""


class ImGuiBackend(PygletProgrammablePipelineRenderer):
    """imgui-bundle's pyglet backend, fed its events by the app (so that the app decides who gets the
    mouse), timed by the app's clock, and drawing with moderngl in ``ctx`` (see the module docstring).

    ``timings`` splits the last ``render`` in ms: ``upload`` (texture updates, the state and the draw
    lists' buffer writes) and ``draw`` (the draw calls; a software rasteriser such as Mesa llvmpipe
    transforms and bins the triangles inside them, so there they hold its work)."""

    def __init__(self, window: pyglet.window.Window, ctx: moderngl.Context, frame_seconds: float) -> None:
        self._ctx = ctx  # before the base class's __init__, which makes the device objects
        self._frame_seconds = frame_seconds
        self.timings = {"upload": 0.0, "draw": 0.0}
        super().__init__(window, attach_callbacks=False)
        self._window = window

    def process_inputs(self, frame_seconds: float | None = None) -> None:
        """Start a frame that lasted ``frame_seconds`` (default: the one given at construction)."""
        self.io.delta_time = max(self._frame_seconds if frame_seconds is None else frame_seconds, 1e-4)

    # --- device objects (called by the base class) ----------------------------------------------
    def _create_device_objects(self) -> None:
        ctx = self._ctx
        self._prog = ctx.program(vertex_shader=VERTEX_SHADER, fragment_shader=FRAGMENT_SHADER)
        self._prog["Texture"].value = 0
        self._vbo = ctx.buffer(reserve=1 << 18, dynamic=True)
        self._ibo = ctx.buffer(reserve=1 << 16, dynamic=True)
        self._vao = ctx.vertex_array(self._prog, [(self._vbo, VERTEX_FORMAT, "Position", "UV", "Color")],
                                     index_buffer=self._ibo, index_element_size=imgui.INDEX_SIZE)
        self._textures: dict[int, moderngl.Texture] = {}

    def _invalidate_device_objects(self) -> None:
        for obj in (self._vao, self._vbo, self._ibo, self._prog):
            obj.release()
        self._textures = {}

    def _texture(self, gl_id: int) -> moderngl.Texture:
        """moderngl's handle on the GL texture ``gl_id`` that the base class made for ImGui (the size
        given is not used: the handle only binds it)."""
        texture = self._textures.get(gl_id)
        if texture is None:
            texture = self._textures[gl_id] = self._ctx.external_texture(gl_id, (1, 1), 4, 0, "f1")
        return texture

    # --- the frame --------------------------------------------------------------------------------
    def render(self, draw_data: imgui.ImDrawData) -> None:
        """Draw ``draw_data`` (``imgui.get_draw_data()`` after ``imgui.render()``) into the current
        framebuffer."""
        start = time.perf_counter()
        drawing = 0.0
        io = self.io
        display_w, display_h = io.display_size
        scale = io.display_framebuffer_scale
        fb_w, fb_h = int(display_w * scale[0]), int(display_h * scale[1])
        self._update_textures()
        if fb_w > 0 and fb_h > 0:
            draw_data.scale_clip_rects(scale)
            ctx, vao = self._ctx, self._vao
            ctx.enable_only(moderngl.BLEND)
            ctx.blend_equation = moderngl.FUNC_ADD
            ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            ctx.viewport = (0, 0, fb_w, fb_h)
            self._prog["ProjMtx"].write((ctypes.c_float * 16)(
                2.0 / display_w, 0.0, 0.0, 0.0, 0.0, -2.0 / display_h, 0.0, 0.0,
                0.0, 0.0, -1.0, 0.0, -1.0, 1.0, 0.0, 1.0))
            for commands in draw_data.cmd_lists:
                _write(self._vbo, commands.vtx_buffer.data_address(),
                       commands.vtx_buffer.size() * imgui.VERTEX_SIZE)
                _write(self._ibo, commands.idx_buffer.data_address(),
                       commands.idx_buffer.size() * imgui.INDEX_SIZE)
                t0 = time.perf_counter()
                for command in commands.cmd_buffer:
                    self._texture(command.tex_ref.get_tex_id()).use(0)
                    x0, y0, x1, y1 = command.clip_rect
                    ctx.scissor = (int(x0), int(fb_h - y1), int(x1 - x0), int(y1 - y0))
                    vao.render(moderngl.TRIANGLES, vertices=command.elem_count, first=command.idx_offset)
                drawing += time.perf_counter() - t0
            ctx.scissor = None
            ctx.enable_only(moderngl.NOTHING)
        self._handle_mouse_cursor()
        total = time.perf_counter() - start
        self.timings = {"upload": 1e3 * (total - drawing), "draw": 1e3 * drawing}


def _write(buffer: moderngl.Buffer, address: int, size: int) -> None:
    """Replace ``buffer``'s storage with ``size`` bytes at memory ``address`` (an ImGui vector's). The
    storage is orphaned first, so that the driver never waits for the draws of the last list that used
    it, and made only as large as the list needs (the next power of two): most lists are a few kB, and a
    fresh storage of the largest list's size for each of them (hundreds of kB: a new mapping of memory
    for the driver each time) cost Mesa llvmpipe about 0.15 ms a frame more for the app's five lists."""
    buffer.orphan(max(256, 1 << (size - 1).bit_length()))
    if size:
        buffer.write((ctypes.c_char * size).from_address(address))
