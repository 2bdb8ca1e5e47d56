"""The application's user interface: the ImGui panel (``panel``), mouse interaction through raycasts
(``interaction``) and spawning bodies through the public World API (``spawn``)."""

import pyglet

# No hidden "shadow" window and GL context made when pyglet.window is first imported (pyglet's default,
# there to share GL objects between windows): the app has one window with its own context, and making
# the shadow one cost each launch a few tenths of a second. Set here, before any module of the interface
# imports pyglet.window.
pyglet.options["shadow_window"] = False
