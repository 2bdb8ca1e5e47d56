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
LESSON_WIDTH = 340.0
"""Width of the Lesson window at the window's left edge (window coordinates)."""


@dataclass
class FrameStats:
    """What the app measured over the last frame, for the overlay and the Stats section: frames per
    second (smoothed), the renderer's and the UI's time in milliseconds, and whether the app idles
    (draws at the low idle rate because nothing moves and the user does nothing). ``ui_ms`` is the whole
    ImGui pass: ``panel_ms``, building the frame's windows (up to ``imgui.render``), then drawing them
    (the backend's ``timings``). ``interp_ms`` is the work that gives the scene pass its poses: the
    interpolated bodies, the timeline's ghosts and the lesson visuals' tint and overlay."""

    fps: float = 0.0
    render_ms: float = 0.0
    ui_ms: float = 0.0
    panel_ms: float = 0.0
    interp_ms: float = 0.0
    idle: bool = False


def _fits(camera: Camera, points: np.ndarray, rect: tuple[float, float, float, float], w: int,
          h: int) -> bool:
    """Whether every world point of ``points`` ((k, 3)) lies in front of ``camera`` and projects into
    the window rectangle ``rect`` ``(x0, y0, x1, y1)`` (top-left origin) of a ``w`` × ``h`` window."""
    if len(points) == 0:
        return True
    homogeneous = np.hstack([points, np.ones((len(points), 1))])
    clip = homogeneous @ (camera.projection_matrix(w / h) @ camera.view_matrix()).T
    if np.any(clip[:, 3] <= camera.near):
        return False
    x = 0.5 * (clip[:, 0] / clip[:, 3] + 1.0) * w
    y = 0.5 * (1.0 - clip[:, 1] / clip[:, 3]) * h
    x0, y0, x1, y1 = rect
    return bool(np.all((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)))


@dataclass
class UiContext:
    """The session, the view of it (``camera``, ``options``, ``window_size``, ``show_panel``), the
    spawn settings, the last frame's ``stats`` and the screen rectangles the UI covered last frame
    (``ui_rects``, top-left origin: ``(x0, y0, x1, y1)``). ``show_lesson`` shows the scene's Lesson
    window (the user's choice, kept from scene to scene), ``show_labels`` its labels in the view."""

    session: Session
    camera: Camera = field(default_factory=Camera)
    options: RenderOptions = field(default_factory=RenderOptions)
    spawn: SpawnSettings = field(default_factory=SpawnSettings)
    window_size: tuple[int, int] = (1280, 720)
    show_panel: bool = True
    stats: FrameStats = field(default_factory=FrameStats)
    ui_rects: list[tuple[float, float, float, float]] = field(default_factory=list)
    show_lesson: bool = True
    show_labels: bool = True

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
        """The scene's lesson or file camera when it has one, else a camera that sees the world's dynamic
        bodies (or the origin in an empty scene); either centred in the part of the window that the
        panel and the Lesson window leave free."""
        start = self.session.scene_camera
        if start is not None:
            return self._lesson_camera(world, start)
        d = world.data
        live = d.alive[: d.n] & ~d.static[: d.n]
        if not live.any():
            return Camera()
        pos, rad = d.pos[: d.n][live], d.radius[: d.n][live]
        lo, hi = (pos - rad[:, None]).min(axis=0), (pos + rad[:, None]).max(axis=0)
        centre = 0.5 * (lo + hi)
        radius = 0.5 * float(np.linalg.norm(hi - lo))
        centre[1] = max(0.85 * centre[1], 0.5)
        return self._centred(Camera(target=centre, distance=min(max(2.6 * radius + 3.0, 8.0), 150.0)))

    def _lesson_camera(self, world: World, start) -> Camera:
        """The scene's camera ``start`` (``lessons.Camera``), centred in the free part of the window and,
        where that part is narrower than the whole window the lesson's view was chosen for, moved back
        along its line of sight just far enough that the dynamic bodies fit in it (in steps of 10 %, at
        most 2× the lesson's distance: farther, the labels crowd together). The labels are not fitted:
        they are wide and often placed for the whole window."""
        view = start.orbit()
        d = world.data
        live = d.alive[: d.n] & ~d.static[: d.n]
        pos, rad = d.pos[: d.n][live], d.radius[: d.n][live]
        points = np.concatenate([pos + s * rad[:, None] * axis for s in (-1.0, 1.0) for axis in np.eye(3)])
        w, h = self.window_size
        left = LESSON_WIDTH if self.show_lesson else 0.0
        right = w - (PANEL_WIDTH if self.show_panel else 0.0)
        distance = view["distance"]
        for _ in range(12):
            camera = self._centred(Camera(target=view["target"], distance=distance, yaw=view["yaw"],
                                          pitch=view["pitch"], fov_y=view["fov_y"]))
            if _fits(camera, points, (left + 20.0, 20.0, right - 20.0, h - 20.0), w, h):
                break
            distance = min(1.1 * distance, 2.0 * view["distance"])
        return camera

    def _centred(self, camera: Camera) -> Camera:
        """``camera`` panned so that its target shows in the middle of the part of the window that the
        panel (right) and the Lesson window (left) leave free; Home returns to this view."""
        left = LESSON_WIDTH if self.show_lesson and self.session.lesson is not None else 0.0
        right = PANEL_WIDTH if self.show_panel else 0.0
        shift = 0.5 * (left - right)
        if shift:
            camera.pan(shift, 0.0, self.window_size[1])
            camera = Camera(target=camera.target, distance=camera.distance, yaw=camera.yaw,
                            pitch=camera.pitch, fov_y=camera.fov_y)
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
