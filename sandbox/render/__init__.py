"""The renderer: an orbit camera and a moderngl renderer that draws a ``World`` and its debug data.

>>> from sandbox.render import Renderer, RenderOptions, Camera, Highlight   # doctest: +SKIP
>>> r = Renderer(ctx, width, height)                                         # doctest: +SKIP
>>> r.render(world, Camera(), RenderOptions(contacts=True), Highlight(selected=3))  # doctest: +SKIP

- ``Camera`` (``camera.py``): orbit camera; ``orbit``, ``pan``, ``zoom``, ``focus``, ``reset``,
  ``view_matrix``, ``projection_matrix``, ``eye``, ``ray`` and ``project`` (window pixels, top-left origin).
- ``RenderOptions``, ``Highlight``, ``Renderer`` (``renderer.py``): what to draw, which bodies the user is
  pointing at, and the renderer itself (``render``, ``resize``, ``last_ms``, ``release``).
- ``debug_draw.py``: the batched debug lines and points; ``meshes.py``: the shape meshes.
"""

from .camera import Camera
from .renderer import Highlight, Renderer, RenderOptions, body_colors

__all__ = ["Camera", "Highlight", "RenderOptions", "Renderer", "body_colors"]
