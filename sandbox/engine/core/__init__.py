"""The kernel layer: ``@njit`` functions over the body arrays. Only this package imports numba."""
