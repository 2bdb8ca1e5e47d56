"""The kernel layer: ``@njit`` functions over the body arrays. Only this package imports numba.

Importing it first points numba's cache for these kernels at one folder per version of their sources
(``kernel_cache.py``): that must happen before any kernel is defined."""

from .kernel_cache import install

install()
