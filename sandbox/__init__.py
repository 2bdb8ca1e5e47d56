"""sandbox: an interactive 3D rigid-body physics sandbox for teaching, with its own engine.

``sandbox.engine`` is the physics (numpy + numba), ``sandbox.render`` draws it with moderngl, and
``sandbox.app`` with ``sandbox.ui`` is the desktop application (``python -m sandbox``).
"""

__version__ = "0.1.0"
