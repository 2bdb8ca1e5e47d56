"""The application's user interface: the ImGui panel (``panel``), mouse interaction through raycasts
(``interaction``) and spawning bodies through the public World API (``spawn``)."""
