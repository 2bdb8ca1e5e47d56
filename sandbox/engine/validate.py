"""Input checks for the Python layer: every public entry point turns bad numbers into a ValueError that
names the offending argument, so that no NaN, infinity or wrong shape ever reaches a kernel."""

from __future__ import annotations

import math

import numpy as np


def finite_float(name: str, value: object) -> float:
    """``value`` as a float; ValueError if it is not a finite real number."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
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


def vec(name: str, value: object, size: int = 3) -> np.ndarray:
    """``value`` as a float64 array of shape ``(size,)`` with finite entries; ValueError otherwise."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {size} numbers, got {value!r}") from None
    if a.shape != (size,):
        raise ValueError(f"{name} must have {size} components, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a.tolist()}")
    return a


def unit_quaternion(name: str, value: object) -> np.ndarray:
    """``value`` as a normalised quaternion (x, y, z, w); ValueError if not finite or of zero length."""
    q = vec(name, value, 4)
    n = float(np.linalg.norm(q))
    if n < 1e-9:
        raise ValueError(f"{name} must be a non-zero quaternion (x, y, z, w), got {q.tolist()}")
    return q / n
