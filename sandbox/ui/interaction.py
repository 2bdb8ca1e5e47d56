"""Mouse interaction with the scene through raycasts: hover, select, grab and drag, push, and the
orbit camera.

Events arrive in pyglet's window coordinates (origin at the bottom-left, integer pixels);
``UiContext.cursor_ray`` turns them into a world ray through the pixel's centre. A grab keeps its
target on the plane through the grabbed point that faces the camera (the plane
``dot(x - eye, forward) = depth``), so the body follows the cursor at a constant depth, which the wheel
changes. The selection and the grab itself belong to the session (so that loading a scene drops them);
this module keeps what only the mouse knows: the hovered body, the press, the grab's depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyglet.window import key, mouse

from ..engine import Body, Grab, World
from ..render import Highlight
from .context import UiContext

CLICK_SLOP_PIXELS = 4.0
"""A press and release closer than this (pixels) is a click, which selects; farther apart, a drag."""
WHEEL_DEPTH_FACTOR = 1.1
"""Each wheel step while dragging moves the grab target this factor farther (or nearer)."""
STANDARD_GRAVITY = 9.81


@dataclass
class MouseSettings:
    """The mouse tools' settings, edited in the panel.

    ``grab_force_g``: the grab spring's force cap as a multiple of the body's weight m·g;
    ``grab_frequency`` (Hz) and ``grab_damping`` (1 = critically damped) shape the spring, whose stiffness
    the engine scales by the body's mass; ``push_speed``: the speed change (m/s) a ctrl-click gives the
    body's centre of mass, so that pushes feel alike whatever the mass."""

    grab_force_g: float = 50.0
    grab_frequency: float = 5.0
    grab_damping: float = 1.0
    push_speed: float = 5.0


class Interaction:
    """The state machine of the mouse over the scene, in one ``UiContext``.

    ``hovered`` is the body under the cursor; ``grab`` (the session's) the engine's grab constraint
    while the left button drags a body (else None); ``cursor`` the last window point over the scene."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.settings = MouseSettings()
        self.hovered: Body | None = None
        self.grab_depth = 0.0
        self.cursor: tuple[float, float] | None = None
        self._press: tuple[float, float] | None = None
        self._press_body: Body | None = None
        self._press_button = 0
        self._dragged = False
        self._world: World = ctx.session.world  # the world that ``hovered`` and the press refer to

    # --- helpers --------------------------------------------------------------------------------
    @property
    def world(self) -> World:
        """The session's world."""
        return self.ctx.session.world

    @property
    def grab(self) -> Grab | None:
        """The session's grab (None when nothing is held)."""
        return self.ctx.session.grab

    @property
    def grab_body(self) -> Body | None:
        """The body the session's grab holds, or None."""
        return self.ctx.session.grab_body

    @property
    def busy(self) -> bool:
        """Whether a button is held over the scene (a drag in progress)."""
        return self._press is not None

    def _pick(self, x: float, y: float):
        origin, direction = self.ctx.cursor_ray(x, y)
        return self.world.raycast(origin, direction), origin, direction

    def _grab_target(self, x: float, y: float) -> np.ndarray:
        """The point under the cursor on the camera-facing plane at the grab's depth."""
        origin, direction = self.ctx.cursor_ray(x, y)
        along = float(np.dot(direction, self.ctx.camera.forward))
        return origin + direction * (self.grab_depth / max(along, 1e-6))

    def validate(self) -> None:
        """Forget bodies that were removed since the last frame (deleted, cleared), and everything
        about a world the session has replaced (a scene was loaded or reset)."""
        self.ctx.session.forget_removed()
        if self.world is not self._world:
            self._world = self.world
            self.hovered = self._press_body = None
            self._press = None
        if self.hovered is not None and not self.hovered.alive:
            self.hovered = None

    def grab_max_force(self, body: Body) -> float:
        """The force cap of a grab on ``body``: ``grab_force_g``·m·|g| (standard gravity when the
        world's gravity is off, so that a grab still works in space)."""
        g = float(np.linalg.norm(self.world.gravity)) or STANDARD_GRAVITY
        return self.settings.grab_force_g * body.mass * g

    def apply_grab_settings(self) -> None:
        """Push the panel's spring settings into the live grab."""
        if self.grab is not None:
            self.grab.max_force = self.grab_max_force(self.grab_body)
            self.grab.frequency = self.settings.grab_frequency
            self.grab.damping_ratio = self.settings.grab_damping

    # --- events (pyglet coordinates) -----------------------------------------------------------
    def on_mouse_motion(self, x: float, y: float) -> None:
        self.cursor = (x, y)
        self._hover(x, y)

    def _hover(self, x: float, y: float) -> None:
        """Hover the dynamic body under the cursor. Static bodies are not hovered: the ground fills most
        of the view, and highlighting it whenever the cursor is over empty floor only distracts."""
        hit, _, _ = self._pick(x, y)
        self.hovered = hit.body if hit is not None and not hit.body.static else None

    def leave(self) -> None:
        """The cursor went over the panel or out of the window: nothing is hovered."""
        self.cursor = None
        self.hovered = None

    def on_mouse_press(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.validate()
        self.cursor = (x, y)
        self._press = (x, y)
        self._press_button = button
        self._dragged = False
        self._press_body = None
        if button != mouse.LEFT:
            return
        hit, _, direction = self._pick(x, y)
        self._press_body = hit.body if hit is not None else None
        if hit is None or hit.body.static:
            return
        if modifiers & key.MOD_CTRL:
            self.push(hit.body, hit.point, direction)
            self._press_body = None
            return
        self.start_grab(hit.body, hit.point)

    def push(self, body: Body, point, direction) -> None:
        """Ctrl-click: an impulse m·Δv along the ray at the hit point."""
        body.apply_impulse(np.asarray(direction) * (body.mass * self.settings.push_speed), point)

    def start_grab(self, body: Body, point) -> None:
        """Grab ``body`` at world ``point`` with a spring whose target follows the cursor."""
        cam = self.ctx.camera
        self.grab_depth = float(np.dot(np.asarray(point) - cam.eye, cam.forward))
        self.ctx.session.start_grab(body, point, self.grab_max_force(body), self.settings.grab_frequency,
                                    self.settings.grab_damping)

    def on_mouse_drag(self, x: float, y: float, dx: float, dy: float, buttons: int, modifiers: int) -> None:
        self.cursor = (x, y)
        if self._press is None:
            return
        if np.hypot(x - self._press[0], y - self._press[1]) > CLICK_SLOP_PIXELS:
            self._dragged = True
        cam = self.ctx.camera
        height = self.ctx.window_size[1]
        if buttons & mouse.LEFT and self.grab is not None:
            self.grab.target = self._grab_target(x, y)
        elif buttons & mouse.MIDDLE or (buttons & mouse.RIGHT and modifiers & key.MOD_SHIFT):
            cam.pan(dx, -dy, height)
        elif buttons & mouse.RIGHT:
            cam.orbit(dx, -dy)

    def on_mouse_release(self, x: float, y: float, button: int, modifiers: int) -> None:
        self.validate()  # a press on a world that was replaced since (R during a click) selects nothing
        if self._press is None or button != self._press_button:
            return
        if button == mouse.LEFT:
            self.ctx.session.release_grab()
            if not self._dragged:
                self.ctx.session.select(self._press_body)
        self._press = None
        self._press_body = None

    def on_mouse_scroll(self, x: float, y: float, scroll_y: float) -> None:
        if self.grab is not None:
            self.grab_depth = max(0.2, self.grab_depth * WHEEL_DEPTH_FACTOR ** scroll_y)
            self.grab.target = self._grab_target(x, y)
        else:
            self.ctx.camera.zoom(scroll_y)

    def release_all(self) -> None:
        """Let go of a grab and forget the press (Escape, or the window lost the mouse)."""
        self.ctx.session.release_grab()
        self._press = None

    # --- per frame -----------------------------------------------------------------------------
    def update(self) -> None:
        """Once per frame: forget removed bodies, re-aim the grab (the camera may have moved) and
        re-pick the hovered body (bodies move under a still cursor)."""
        self.validate()
        if self.cursor is None:
            return
        x, y = self.cursor
        if self.grab is not None:
            self.grab.target = self._grab_target(x, y)
        elif self._press is None:
            self._hover(x, y)

    def highlight(self) -> Highlight:
        """What the renderer should emphasise this frame."""
        grab, selected = self.grab, self.ctx.session.selected
        return Highlight(
            hovered=self.hovered.index if self.hovered is not None else -1,
            selected=selected.index if selected is not None else -1,
            grabbed=self.grab_body.index if grab is not None else -1,
            grab_line=(np.asarray(grab.anchor_world), np.asarray(grab.target)) if grab is not None else None,
            grab_force=np.asarray(grab.force) if grab is not None else None,
        )
