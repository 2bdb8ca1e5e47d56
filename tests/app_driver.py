"""Driving the real app window in tests (under Xvfb): one place for what every window test module needs.

Each module keeps a module-scoped ``app`` fixture (one window per module, which the window tests share),
written as ``yield from open_app("scene")``, and sends events with ``send``."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

W, H = 1280, 720
"""The window size the app tests use: the smallest the app is meant to fit."""


def open_app(scene: str, **ui: object) -> Iterator:
    """An App window of ``W × H`` on ``scene`` with shadows off (faster under the software renderer) and
    the given ``ui`` attributes set, closed afterwards; skips the test without an X display."""
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs an X display (xvfb-run)")
    from sandbox.app import App  # here: importing pyglet's windows needs a display

    a = App(scene=scene, width=W, height=H, visible=True)
    a.ui.options.shadows = False
    for name, value in ui.items():
        setattr(a.ui, name, value)
    yield a
    a.close()


def send(app, event: str, *args) -> None:
    """Dispatch one pyglet event to the window's handlers and flush pyglet's queue."""
    app.window.dispatch_event(event, *args)
    app.window.dispatch_events()


def click(app, rect) -> None:
    """A left click in the middle of window rectangle ``rect`` (top-left origin), a frame per event, then
    the mouse moved away (to the bottom of the view) so that nothing stays hovered."""
    from pyglet.window import mouse  # here: importing pyglet's windows needs a display

    x0, y0, x1, y1 = rect
    x, y = int(0.5 * (x0 + x1)), H - int(0.5 * (y0 + y1))
    for event, *args in (("on_mouse_motion", x, y, 0, 0), ("on_mouse_press", x, y, mouse.LEFT, 0),
                         ("on_mouse_release", x, y, mouse.LEFT, 0)):
        send(app, event, *args)
        app.run(frames=1)
    send(app, "on_mouse_motion", 600, 700, 0, 0)
