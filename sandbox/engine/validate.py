"""Input checks for the Python layer: every public entry point turns bad input into a ValueError that
names the offending argument and value, so that no NaN, infinity, wrong shape or wrong type ever reaches a
kernel.

A number is a Python or numpy int or float, never a bool or a string: Python would turn ``True`` into 1
and ``"0.5"`` into 0.5, which in a scene file or an API call is a mistake to report, not to guess at.

The bounds below are documented limits of the engine, not of the maths: inside them every kernel stays
finite (an inverse mass of a subnormal mass is infinite, and NaN spreads from it to whatever it touches).

>>> finite_float("mass", True)
Traceback (most recent call last):
...
ValueError: mass must be a number, got True
"""

from __future__ import annotations

import math
import reprlib

import numpy as np

from .linalg3 import norm

MIN_MASS = 1e-6
"""The lightest dynamic body (kg), a milligram; 0 means static. Lighter ones make the inverse mass and
inertia overflow (1/1e-320 is infinite)."""
MAX_MASS = 1e9
"""The heaviest body (kg), a million tonnes: ratios beyond 10¹⁵ to the lightest lose all precision."""
MIN_LENGTH = 1e-3
"""The smallest radius, half extent or half height of a shape (m), a millimetre."""
MAX_LENGTH = 1e4
"""The largest radius, half extent, half height or hull point coordinate of a shape (m), ten kilometres."""
MAX_COORDINATE = 1e6
"""The largest coordinate of a position or world point (m): beyond it float64 keeps too few digits for a
millimetre, and the broad phase's cells overflow."""
MAX_SPEED = 1e4
"""The largest speed component a body may be given (m/s), thirty times the speed of sound."""
MAX_ANGULAR_SPEED = 1e4
"""The largest angular velocity component a body may be given (rad/s)."""
MAX_GRAVITY = 1000.0
"""The largest gravity component (m/s²), a hundred times the Earth's."""
MAX_FRICTION = 10.0
"""The largest friction coefficient (real materials stay below about 1.5)."""
MAX_GRAVITY_SCALE = 100.0
"""The largest magnitude of a body's gravity scale."""


def is_number(value: object) -> bool:
    """True for a real number that is not a bool: a Python int or float or a numpy integer or float
    scalar. Strings and booleans are refused although Python would convert them (``float("0.5")``,
    ``float(True)``): in a scene file or a setter they are a mistake, not a number."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, float, np.integer, np.floating))


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 3, 6, 6, 4
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = 40


def show(value: object) -> str:
    """A short ``repr`` of ``value`` for error messages: a scene file may hold megabytes in one value,
    nested deeper than ``repr`` can recurse, and reprlib stops at a few levels and items."""
    return _SHORT.repr(value)


def finite_float(name: str, value: object) -> float:
    """``value`` as a float; ValueError if it is not a finite real number (bools and strings refused)."""
    if not is_number(value):
        raise ValueError(f"{name} must be a number, got {show(value)}")
    try:
        x = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int beyond float64's range
        raise ValueError(f"{name} must be finite, got {show(value)}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def float_in(name: str, value: object, lo: float, hi: float, unit: str = "") -> float:
    """``value`` as a float in the closed range ``lo``..``hi``; ValueError naming ``name`` otherwise."""
    x = finite_float(name, value)
    if not lo <= x <= hi:
        raise ValueError(f"{name} must be from {lo:g} to {hi:g}{' ' + unit if unit else ''}, got {x!r}")
    return x


def positive_float(name: str, value: object) -> float:
    """``value`` as a float > 0; ValueError naming ``name`` otherwise."""
    x = finite_float(name, value)
    if x <= 0.0:
        raise ValueError(f"{name} must be positive, got {x}")
    return x


def non_negative_float(name: str, value: object) -> float:
    """``value`` as a float >= 0; ValueError naming ``name`` otherwise."""
    x = finite_float(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must be non-negative, got {x}")
    return x


def length(name: str, value: object) -> float:
    """A shape dimension (m): positive, from ``MIN_LENGTH`` to ``MAX_LENGTH``."""
    x = positive_float(name, value)
    if not MIN_LENGTH <= x <= MAX_LENGTH:
        raise ValueError(f"{name} must be from {MIN_LENGTH:g} to {MAX_LENGTH:g} m, got {x!r}")
    return x


def body_mass(name: str, value: object) -> float:
    """A body's mass (kg): 0 (static) or from ``MIN_MASS`` to ``MAX_MASS``, so that its inverse and its
    inertia's inverse are finite."""
    m = non_negative_float(name, value)
    if m != 0.0 and not MIN_MASS <= m <= MAX_MASS:
        raise ValueError(f"{name} must be 0 (static) or from {MIN_MASS:g} to {MAX_MASS:g} kg, got {m!r}")
    return m


def boolean(name: str, value: object) -> bool:
    """``value`` as a bool; ValueError unless it is a Python or numpy bool (``"false"`` is truthy)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {show(value)}")
    return bool(value)


def vec(name: str, value: object, size: int = 3, limit: float = math.inf) -> np.ndarray:
    """``value`` (a numpy array of a numeric dtype, or a sequence of numbers) as a float64 array of shape
    ``(size,)`` with finite entries of magnitude at most ``limit``; ValueError naming ``name`` otherwise.

    Checking the entries before numpy converts them is what refuses ``[True, 0, 0]`` and
    ``["1", "2", "3"]``, which ``np.asarray(..., float)`` would accept. The checks run on a Python list:
    for three numbers that is several times faster than numpy's reductions, and ``add_body`` makes four."""
    what = f"{size} numbers"
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be {what}, got an array of {value.dtype}")
        if value.shape != (size,):
            raise ValueError(f"{name} must have {size} components, got shape {value.shape}")
        xs = value.astype(np.float64).tolist()
    else:
        if isinstance(value, (str, bytes, dict, set)) or not hasattr(value, "__iter__"):
            raise ValueError(f"{name} must be {what}, got {show(value)}")
        items = list(value)  # type: ignore[call-overload]
        for item in items:
            if not is_number(item):
                raise ValueError(f"{name} must be {what}, got {show(value)} (entry {show(item)})")
        if len(items) != size:
            raise ValueError(f"{name} must have {size} components, got {len(items)}")
        try:
            xs = [float(x) for x in items]
        except OverflowError:  # an int beyond float64's range
            raise ValueError(f"{name} must be finite, got {show(value)}") from None
    for x in xs:
        if not math.isfinite(x):
            raise ValueError(f"{name} must be finite, got {xs}")
        if abs(x) > limit:
            raise ValueError(f"{name} components must be at most {limit:g} in magnitude, got {xs}")
    return np.array(xs)


def unit_quaternion(name: str, value: object) -> np.ndarray:
    """``value`` as a normalised quaternion (x, y, z, w); ValueError if not finite or of zero length."""
    q = vec(name, value, 4, limit=1e150)  # beyond 1e150 the squared norm overflows
    n = norm(q)
    if n < 1e-9:
        raise ValueError(f"{name} must be a non-zero quaternion (x, y, z, w), got {q.tolist()}")
    return q / n


def points(name: str, value: object, limit: float = MAX_LENGTH) -> np.ndarray:
    """``value`` as an (n, 3) float64 array of finite coordinates of magnitude at most ``limit``;
    ValueError naming ``name`` and the first bad point otherwise (a ragged list included, which numpy
    would report as an "inhomogeneous shape" naming nothing)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be an (n, 3) array of numbers, got an array of {value.dtype}")
        if value.ndim != 2 or value.shape[1] != 3:
            raise ValueError(f"{name} must be an (n, 3) array, got shape {value.shape}")
        pts = value.astype(np.float64)
    else:
        if isinstance(value, (str, bytes, dict, set)) or not hasattr(value, "__iter__"):
            raise ValueError(f"{name} must be a list of (x, y, z) points, got {show(value)}")
        rows = list(value)  # type: ignore[call-overload]
        pts = np.empty((len(rows), 3))
        for k, row in enumerate(rows):
            pts[k] = vec(f"{name}[{k}]", row, 3)
    if not np.all(np.isfinite(pts)):
        bad = int(np.flatnonzero(~np.isfinite(pts).all(axis=1))[0])
        raise ValueError(f"{name}[{bad}] must be finite, got {pts[bad].tolist()}")
    if np.any(np.abs(pts) > limit):
        bad = int(np.flatnonzero((np.abs(pts) > limit).any(axis=1))[0])
        raise ValueError(f"{name}[{bad}] coordinates must be at most {limit:g} in magnitude, "
                         f"got {pts[bad].tolist()}")
    return pts
