"""The context the panel and the mouse tools work in, and all they work with (as a Box2D sample gets
its settings, camera and debug draw): the session (world, clock, scene, commands), the camera, the
render options, the spawn settings and the window's size. The app fills it and keeps its size and frame
statistics current; nothing under ``sandbox/ui`` holds the app.

Window points are pyglet's: origin at the bottom-left, integer pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..engine import Body, World
from ..render import Camera, RenderOptions
from ..session import SceneSource, Session
from .spawn import SpawnSettings, drop, shoot

PANEL_WIDTH = 370.0
"""Width of the panel docked at the window's right edge (window coordinates)."""


@dataclass
class FrameStats:
    """What the app measured over the last frame, for the overlay and the Stats section: frames per
    second (smoothed), the renderer's and the UI's time in milliseconds, and whether the app idles
    (draws at the low idle rate because nothing moves and the user does nothing)."""

    fps: float = 0.0
    render_ms: float = 0.0
    ui_ms: float = 0.0
    idle: bool = False


@dataclass
class UiContext:
    """The session, the view of it (``camera``, ``options``, ``window_size``, ``show_panel``), the
    spawn settings, the last frame's ``stats`` and the screen rectangles the UI covered last frame
    (``ui_rects``, top-left origin: ``(x0, y0, x1, y1)``)."""

    session: Session
    camera: Camera = field(default_factory=Camera)
    options: RenderOptions = field(default_factory=RenderOptions)
    spawn: SpawnSettings = field(default_factory=SpawnSettings)
    window_size: tuple[int, int] = (1280, 720)
    show_panel: bool = True
    stats: FrameStats = field(default_factory=FrameStats)
    ui_rects: list[tuple[float, float, float, float]] = field(default_factory=list)

    # --- geometry -----------------------------------------------------------------------------------
    def cursor_ray(self, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
        """The world ray through the centre of the pixel at window point ``(x, y)``: in the camera's
        top-left convention that centre is ``(x + 0.5, height - y - 0.5)``."""
        w, h = self.window_size
        return self.camera.ray(x + 0.5, h - y - 0.5, w, h)

    def point_under(self, x: float, y: float) -> np.ndarray:
        """The surface point under window point ``(x, y)``: a body, else the plane y = 0, else the
        camera's target."""
        origin, direction = self.cursor_ray(x, y)
        hit = self.session.world.raycast(origin, direction)
        if hit is not None:
            return np.asarray(hit.point, dtype=float)
        if direction[1] < -1e-6:
            return origin + direction * (-origin[1] / direction[1])
        return self.camera.target.copy()

    def view_centre(self) -> tuple[float, float]:
        """The window point in the middle of the view."""
        w, h = self.window_size
        return 0.5 * w, 0.5 * h

    def view_centre_point(self) -> np.ndarray:
        """The surface point in the middle of the view: where the panel's spawn buttons build."""
        return self.point_under(*self.view_centre())

    # --- commands that need the view ---------------------------------------------------------------
    def load_scene(self, scene: SceneSource) -> bool:
        """Load ``scene`` into the session and frame it with the camera; returns success."""
        if not self.session.load_scene(scene):
            return False
        self.camera = self.framing_camera(self.session.world)
        return True

    def reset(self) -> bool:
        """Rebuild the session's scene and frame it again; returns success."""
        if not self.session.reset():
            return False
        self.camera = self.framing_camera(self.session.world)
        return True

    def framing_camera(self, world: World) -> Camera:
        """A camera that sees the world's dynamic bodies (or the origin in an empty scene), centred
        in the part of the window that the panel leaves free."""
        d = world.data
        live = d.alive[: d.n] & ~d.static[: d.n]
        if not live.any():
            return Camera()
        pos, rad = d.pos[: d.n][live], d.radius[: d.n][live]
        lo, hi = (pos - rad[:, None]).min(axis=0), (pos + rad[:, None]).max(axis=0)
        centre = 0.5 * (lo + hi)
        radius = 0.5 * float(np.linalg.norm(hi - lo))
        centre[1] = max(0.85 * centre[1], 0.5)
        camera = Camera(target=centre, distance=min(max(2.6 * radius + 3.0, 8.0), 150.0))
        if self.show_panel:
            camera.pan(-0.5 * PANEL_WIDTH, 0.0, self.window_size[1])
            camera = Camera(target=camera.target, distance=camera.distance)  # Home returns here
        return camera

    def focus(self, body: Body | None) -> None:
        """Point the camera at ``body`` (nothing happens for None)."""
        if body is not None and body.alive:
            radius = float(self.session.world.data.radius[body.index])
            self.camera.focus(body.center_of_mass, max(radius, 0.25))

    def shoot_through(self, x: float, y: float) -> Body:
        """Launch the spawn shape from the eye through window point ``(x, y)``."""
        origin, direction = self.cursor_ray(x, y)
        start = origin + direction * (1.0 + 2.0 * self.spawn.size)
        return shoot(self.session.world, self.spawn, start, direction)

    def drop_above(self, x: float, y: float) -> list[Body]:
        """Drop the spawn shapes above the surface point under window point ``(x, y)``."""
        return drop(self.session.world, self.spawn, self.point_under(x, y))
