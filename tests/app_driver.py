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
