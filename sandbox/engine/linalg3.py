"""Small linear algebra for the Python layer (dot products, lengths, 3×3 products and inverses) written
out term by term in plain IEEE arithmetic: the same bits on every processor.

Why not numpy's ``@``, ``np.dot``, ``np.linalg.norm`` of a single vector or ``np.linalg.inv``: they call
the BLAS and LAPACK library, and OpenBLAS picks its kernels for the processor it runs on (AVX-512 on
one, AVX2 on another), with a different order of operations and fused multiply-adds. The same scene then
got hull vertices, centres of mass and inverse inertias that differed in their last bits from one machine
to another, and 300 steps of a pile of hulls ended in different states: the determinism test's hash
changed with ``OPENBLAS_CORETYPE=SkylakeX`` against ``Haswell`` on one machine (twentieth session). Each
function here multiplies and adds element-wise (numpy's ufuncs, which round every operation on its own,
or Python floats) in a fixed order, so a body's data depends on its inputs only. The compiled kernels
never called the BLAS; this is only for what the Python layer computes once per body or per call.
"""

from __future__ import annotations

import math

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σₖ aₖ·bₖ over the last axis (broadcasting the others: (F, 3) rows against one (3,) vector give
    (F,)), the terms added from the first to the last."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    total = a[..., 0] * b[..., 0]
    for k in range(1, a.shape[-1]):
        total = total + a[..., k] * b[..., k]
    return total


def norm(v: np.ndarray) -> float:
    """The Euclidean length √(v·v) of one vector."""
    return math.sqrt(float(dot(v, v)))


def matvec(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The product m·v of a 3×3 matrix and a 3-vector."""
    m = np.asarray(m, dtype=np.float64)
    return dot(m, np.asarray(v, dtype=np.float64)[None, :])


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product a·b of two 3×3 matrices: entry (i, j) is Σₖ a_ik·b_kj, k from 0 to 2."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return dot(a[:, None, :], b.T[None, :, :])


def inverse(m: np.ndarray) -> np.ndarray:
    """The inverse of a 3×3 matrix by Gauss–Jordan elimination with partial pivoting (the largest
    remaining entry of each column as pivot); a matrix with no pivot left (singular) gives all ∞, for
    the caller to reject. A diagonal matrix gets the exact reciprocals of its diagonal."""
    a = [[float(x) for x in row] + [float(i == j) for j in range(3)] for i, row in enumerate(np.asarray(m))]
    for col in range(3):
        pivot = max(range(col, 3), key=lambda r: abs(a[r][col]))
        if a[pivot][col] == 0.0 or not math.isfinite(a[pivot][col]):
            return np.full((3, 3), np.inf)
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [x / p for x in a[col]]
        for r in range(3):
            f = a[r][col]
            if r != col and f != 0.0:  # a zero factor changes nothing, and -0·∞ would make NaN
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return np.array([row[3:] for row in a])
