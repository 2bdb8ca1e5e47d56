"""The orbit camera: a target point, a distance, and two angles; y is up.

Conventions (every matrix here is a numpy ``(4, 4)`` float64 array in the mathematical convention,
``clip = P @ V @ (x, y, z, 1)``: a column vector on the right). OpenGL reads uniform matrices column by
column, so upload ``m.T`` (``np.ascontiguousarray(m.T, dtype="f4").tobytes()``), which is what the
renderer does.

Window pixels have their origin at the top-left corner of the window, x to the right and y downwards,
and are continuous: the pixel in column ``i`` and row ``j`` covers ``[i, i+1) × [j, j+1)``, so ``(0, 0)``
is the window's top-left corner, ``(width, height)`` its bottom-right corner and ``(i + 0.5, j + 0.5)``
the centre of a pixel. ``project`` and ``ray`` are exact inverses of each other under that convention.

>>> cam = Camera(target=(0, 1, 0), distance=10.0, yaw=0.0, pitch=0.0)
>>> [round(float(x), 6) for x in cam.eye]
[0.0, 1.0, 10.0]
>>> [round(float(x), 6) for x in cam.project((0, 1, 0), 800, 600)]
[400.0, 300.0]
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.validate import finite_float, positive_float, vec

MIN_EYE_HEIGHT = 0.05
"""The eye never goes lower than this above the ground plane y = 0 (metres)."""
MIN_DISTANCE = 0.3
MAX_DISTANCE = 500.0
MAX_PITCH = math.radians(89.0)
ORBIT_RADIANS_PER_PIXEL = 0.006
ZOOM_FACTOR_PER_STEP = 0.88


class Camera:
    """An orbit camera looking at ``target`` from ``distance`` metres away.

    ``yaw`` turns about the world y axis (0 looks along -z, from +z), ``pitch`` raises the eye above the
    target (positive: looking down), ``fov_y`` is the vertical field of view in radians. ``near`` and
    ``far`` bound the depth range. The camera keeps itself valid after every change: the pitch stays
    within ±89°, the distance within [``MIN_DISTANCE``, ``MAX_DISTANCE``], the target on or above the
    ground, and the eye at least ``MIN_EYE_HEIGHT`` above the ground (the pitch is raised if needed)."""

    def __init__(self, target=(0.0, 1.0, 0.0), distance: float = 15.0, yaw: float = 0.6,
                 pitch: float = 0.35, fov_y: float = math.radians(45.0), near: float = 0.05,
                 far: float = 1000.0) -> None:
        self.target = vec("target", target).copy()
        self.distance = positive_float("distance", distance)
        self.yaw = finite_float("yaw", yaw)
        self.pitch = finite_float("pitch", pitch)
        self.fov_y = positive_float("fov_y", fov_y)
        if not self.fov_y < math.pi:
            raise ValueError(f"fov_y must be below pi radians, got {fov_y!r}")
        self.near = positive_float("near", near)
        self.far = positive_float("far", far)
        if not self.far > self.near:
            raise ValueError(f"far ({far!r}) must be greater than near ({near!r})")
        self._initial = (self.target.copy(), self.distance, self.yaw, self.pitch)
        self._constrain()

    def _constrain(self) -> None:
        """Clamp distance, target height and pitch so that the eye stays above the ground."""
        self.distance = min(max(self.distance, MIN_DISTANCE), MAX_DISTANCE)
        self.target[1] = max(self.target[1], 0.0)
        # eye.y = target.y + distance·sin(pitch) >= MIN_EYE_HEIGHT
        lowest = math.asin(max(-1.0, min(1.0, (MIN_EYE_HEIGHT - self.target[1]) / self.distance)))
        self.pitch = min(max(self.pitch, -MAX_PITCH, lowest), MAX_PITCH)
        self.yaw = math.remainder(self.yaw, 2.0 * math.pi)

    # --- the basis -----------------------------------------------------------------------------
    # The basis in plain floats: these run several times a frame (the view matrix, each label's
    # projection), where numpy's per-call overhead on 3-vectors (np.cross above all) would dominate.
    def _basis(self) -> tuple[tuple[float, float, float], tuple[float, float, float],
                              tuple[float, float, float]]:
        """``(right, up, forward)`` as float triples: right = (cos y, 0, −sin y), forward =
        −(cos p·sin y, sin p, cos p·cos y) for yaw y and pitch p, up = right × forward."""
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        cp, sp = math.cos(self.pitch), math.sin(self.pitch)
        fx, fy, fz = -cp * sy, -sp, -cp * cy
        # (cy, 0, −sy) × (fx, fy, fz)
        return (cy, 0.0, -sy), (sy * fy, -sy * fx - cy * fz, cy * fy), (fx, fy, fz)

    @property
    def forward(self) -> np.ndarray:
        """Unit vector from the eye towards the target."""
        return np.array(self._basis()[2])

    @property
    def right(self) -> np.ndarray:
        """Unit vector to the right of the view, horizontal."""
        return np.array(self._basis()[0])

    @property
    def up(self) -> np.ndarray:
        """Unit vector up on the screen: right × forward."""
        return np.array(self._basis()[1])

    @property
    def eye(self) -> np.ndarray:
        """The eye position in world coordinates, (3,)."""
        return self.target - self.distance * self.forward

    # --- interaction ---------------------------------------------------------------------------
    def orbit(self, dx_pixels: float, dy_pixels: float) -> None:
        """Turn about the target as if dragging the scene: right drags turn it to the right, down drags
        raise the eye (look more from above)."""
        self.yaw -= finite_float("dx_pixels", dx_pixels) * ORBIT_RADIANS_PER_PIXEL
        self.pitch += finite_float("dy_pixels", dy_pixels) * ORBIT_RADIANS_PER_PIXEL
        self._constrain()

    def pan(self, dx_pixels: float, dy_pixels: float, viewport_h: float) -> None:
        """Slide the target in the view plane so that points at the target's depth follow the mouse
        (pixels with y downwards, ``viewport_h`` the window height in pixels)."""
        h = positive_float("viewport_h", viewport_h)
        metres_per_pixel = 2.0 * self.distance * math.tan(0.5 * self.fov_y) / h
        self.target += (-finite_float("dx_pixels", dx_pixels) * self.right
                        + finite_float("dy_pixels", dy_pixels) * self.up) * metres_per_pixel
        self._constrain()

    def zoom(self, wheel_steps: float) -> None:
        """Move towards the target (positive steps) or away from it, geometrically."""
        self.distance *= ZOOM_FACTOR_PER_STEP ** finite_float("wheel_steps", wheel_steps)
        self._constrain()

    def focus(self, point, radius: float) -> None:
        """Look at ``point`` from the distance at which a sphere of ``radius`` fills about half the
        view's height."""
        self.target = vec("point", point).copy()
        r = positive_float("radius", radius)
        self.distance = 2.0 * r / math.sin(0.5 * self.fov_y)
        self._constrain()

    def reset(self) -> None:
        """Back to the target, distance and angles the camera was made with."""
        target, self.distance, self.yaw, self.pitch = self._initial
        self.target = target.copy()
        self._constrain()

    # --- matrices ------------------------------------------------------------------------------
    def view_matrix(self) -> np.ndarray:
        """World to eye coordinates (right-handed, the eye looks down -z), (4, 4) float64."""
        r, u, f = self._basis()
        tx, ty, tz = (float(x) for x in self.target)
        d = self.distance
        e = (tx - d * f[0], ty - d * f[1], tz - d * f[2])

        def row(a: tuple[float, float, float], sign: float) -> list[float]:
            return [sign * a[0], sign * a[1], sign * a[2], -sign * (a[0] * e[0] + a[1] * e[1] + a[2] * e[2])]

        return np.array([row(r, 1.0), row(u, 1.0), row(f, -1.0), [0.0, 0.0, 0.0, 1.0]])

    def projection_matrix(self, aspect: float) -> np.ndarray:
        """Perspective projection (OpenGL clip space, depth in [-1, 1]) for width/height ``aspect``."""
        a = positive_float("aspect", aspect)
        t = 1.0 / math.tan(0.5 * self.fov_y)
        n, f = self.near, self.far
        m = np.zeros((4, 4))
        m[0, 0] = t / a
        m[1, 1] = t
        m[2, 2] = (f + n) / (n - f)
        m[2, 3] = 2.0 * f * n / (n - f)
        m[3, 2] = -1.0
        return m

    # --- picking -------------------------------------------------------------------------------
    def ray(self, px: float, py: float, width: float, height: float) -> tuple[np.ndarray, np.ndarray]:
        """The ray through window pixel coordinates ``(px, py)`` (top-left origin, see the module
        docstring): ``(origin, unit direction)``, the origin at the eye."""
        w = positive_float("width", width)
        h = positive_float("height", height)
        x_ndc = 2.0 * finite_float("px", px) / w - 1.0
        y_ndc = 1.0 - 2.0 * finite_float("py", py) / h
        t = math.tan(0.5 * self.fov_y)
        d = (x_ndc * t * (w / h)) * self.right + (y_ndc * t) * self.up + self.forward
        return self.eye, d / np.linalg.norm(d)

    def project(self, point, width: float, height: float) -> tuple[float, float]:
        """Window pixel coordinates ``(px, py)`` (top-left origin) of world ``point``; points behind the
        eye give meaningless coordinates (check ``np.dot(point - eye, forward) > 0`` first)."""
        w = positive_float("width", width)
        h = positive_float("height", height)
        # projection_matrix @ view_matrix applied in floats: eye-space x and y over the depth along forward
        (dx, dy, dz), (r, u, f) = self._from_eye(vec("point", point))
        depth = f[0] * dx + f[1] * dy + f[2] * dz
        t = 1.0 / math.tan(0.5 * self.fov_y)
        x_ndc = t / (w / h) * (r[0] * dx + r[1] * dy + r[2] * dz) / depth
        y_ndc = t * (u[0] * dx + u[1] * dy + u[2] * dz) / depth
        return float(0.5 * (x_ndc + 1.0) * w), float(0.5 * (1.0 - y_ndc) * h)

    def depth(self, point) -> float:
        """How far world ``point`` lies in front of the eye along the view direction, in metres
        (negative behind the eye, not finite for a point that is not): a point that ``project`` can
        place on the screen is one deeper than ``near``."""
        (dx, dy, dz), (_r, _u, f) = self._from_eye(point)
        return f[0] * dx + f[1] * dy + f[2] * dz

    def _from_eye(self, point) -> tuple[tuple[float, float, float], tuple]:
        """``point − eye`` as floats, and the basis ``(right, up, forward)`` (see ``_basis``)."""
        px, py, pz = point.tolist() if isinstance(point, np.ndarray) else map(float, point)
        r, u, f = self._basis()
        tx, ty, tz = self.target.tolist()
        d = self.distance
        return (px - (tx - d * f[0]), py - (ty - d * f[1]), pz - (tz - d * f[2])), (r, u, f)
