"""Vector, quaternion and 3×3 matrix helpers for the kernels: the one math module of the engine.

Every kernel in ``sandbox.engine.core`` does its small-vector arithmetic through these functions, so
that the collision and solver code reads like the textbook. Vectors are plain tuples ``(x, y, z)``
and quaternions tuples ``(x, y, z, w)``: numba keeps tuples in registers, where a small numpy array
would cost a heap allocation in every inner loop. ``load3``/``store3`` move them in and out of the
structure-of-arrays storage (rows of ``(n, 3)`` arrays). Matrices are row-major tuples of 9 floats.

The functions are plain ``@helper`` or ``@kernel`` (``jit.py``): LLVM inlines them into their callers,
and leaving out numba's own ``inline="always"`` keeps compile times short.
"""

from __future__ import annotations

import math

from .jit import helper, kernel

EPS = 1e-12


ZERO_MAT = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # a 3×3 zero matrix, row-major

# load3 and store3 are called with constant rows too: one explicit signature each, for the reason given in
# contact_rows.py (numba compiles a copy per literal constant otherwise)
@helper("UniTuple(float64, 3)(float64[:, ::1], int64)")
def load3(a, i):
    """Row ``i`` of an ``(n, 3)`` array as a vector tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@helper("void(float64[:, ::1], int64, UniTuple(float64, 3))")
def store3(a, i, v):
    """Write vector tuple ``v`` into row ``i`` of an ``(n, 3)`` array."""
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@helper
def load4(a, i):
    """Row ``i`` of an ``(n, 4)`` array (a quaternion) as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@helper
def store4(a, i, q):
    """Write the 4-tuple ``q`` into row ``i`` of an ``(n, 4)`` array."""
    a[i, 0] = q[0]
    a[i, 1] = q[1]
    a[i, 2] = q[2]
    a[i, 3] = q[3]


@kernel
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@helper
def mad(a, b, s):
    """``a + s·b`` (multiply-add), the most common update in integrators and solvers."""
    return (a[0] + b[0] * s, a[1] + b[1] * s, a[2] + b[2] * s)


@helper
def neg(a):
    return (-a[0], -a[1], -a[2])


@kernel
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def length(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@helper
def length_sq(a):
    return a[0] * a[0] + a[1] * a[1] + a[2] * a[2]


@helper
def normalize(a):
    """Unit vector along ``a``; the zero vector stays zero (callers test the length first)."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n < EPS:
        return (0.0, 0.0, 0.0)
    return (a[0] / n, a[1] / n, a[2] / n)


@helper
def lerp(a, b, t):
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t)


@helper
def any_perpendicular(n):
    """A unit vector perpendicular to unit ``n``, branching on the largest component for accuracy."""
    if abs(n[0]) >= 0.57735:
        return normalize((n[1], -n[0], 0.0))
    return normalize((0.0, n[2], -n[1]))


@kernel
def tangent_basis(n):
    """Two unit tangents ``t1, t2`` with ``(t1, t2, n)`` right-handed and orthonormal."""
    t1 = any_perpendicular(n)
    t2 = cross(n, t1)
    return t1, t2


# ---------------------------------------------------------------------------------------------------
# Quaternions (x, y, z, w), unit length for rotations.


@kernel
def quat_mul(a, b):
    """Hamilton product ``a ⊗ b`` (apply ``b`` first, then ``a``)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


@helper
def quat_conj(q):
    return (-q[0], -q[1], -q[2], q[3])


@helper
def quat_normalize(q):
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n < EPS:
        return (0.0, 0.0, 0.0, 1.0)
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


@kernel
def quat_rotate(q, v):
    """Rotate ``v`` by unit quaternion ``q``: v' = v + 2w(u×v) + 2u×(u×v), with u the vector part."""
    u = (q[0], q[1], q[2])
    w = q[3]
    t = scale(cross(u, v), 2.0)
    return add(add(v, scale(t, w)), cross(u, t))


@kernel
def quat_inv_rotate(q, v):
    """Rotate ``v`` by the inverse of unit quaternion ``q`` (world to local frame)."""
    return quat_rotate((-q[0], -q[1], -q[2], q[3]), v)


@helper
def quat_integrate(q, w, h):
    """Advance orientation ``q`` by angular velocity ``w`` over time ``h``: q += ½·h·(w,0)⊗q, renormalised.

    First-order update, the one used by Box2D, Bullet and most game engines; the renormalisation keeps
    ``q`` a rotation."""
    dq = quat_mul((w[0], w[1], w[2], 0.0), q)
    s = 0.5 * h
    return quat_normalize((q[0] + dq[0] * s, q[1] + dq[1] * s, q[2] + dq[2] * s, q[3] + dq[3] * s))


@kernel
def quat_to_mat(q):
    """Rotation matrix (row-major 9-tuple) of unit quaternion ``q``."""
    x, y, z, w = q
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return (
        1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
        2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
        2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy),
    )


# ---------------------------------------------------------------------------------------------------
# 3×3 matrices as row-major 9-tuples.


@helper
def mat_col(m, j):
    """Column ``j`` of matrix ``m`` (for a rotation: the world direction of local axis ``j``)."""
    return (m[j], m[3 + j], m[6 + j])


@helper
def mat_vec(m, v):
    return (
        m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
        m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
        m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
    )


@helper
def mat_t_vec(m, v):
    """``mᵀ·v``."""
    return (
        m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
        m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
        m[2] * v[0] + m[5] * v[1] + m[8] * v[2],
    )


@helper
def load_mat(a, i):
    """Matrix ``i`` of an ``(n, 3, 3)`` array as a 9-tuple."""
    return (
        a[i, 0, 0], a[i, 0, 1], a[i, 0, 2],
        a[i, 1, 0], a[i, 1, 1], a[i, 1, 2],
        a[i, 2, 0], a[i, 2, 1], a[i, 2, 2],
    )


@helper
def store_mat(a, i, m):
    for r in range(3):
        for c in range(3):
            a[i, r, c] = m[3 * r + c]


@helper
def mat_mul(a, b):
    return (
        a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
        a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
        a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
        a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
        a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
        a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
        a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
        a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
        a[6] * b[2] + a[7] * b[5] + a[8] * b[8],
    )


@helper
def mat_transpose(m):
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


@helper
def rotate_inertia(r, local):
    """World-frame tensor ``R·I·Rᵀ`` of a body-frame tensor ``local`` under rotation matrix ``r``."""
    return mat_mul(mat_mul(r, local), mat_transpose(r))


@helper
def mat_inverse(m):
    """Inverse of a 3×3 matrix by the adjugate; the zero matrix when ``m`` is singular."""
    a, b, c, d, e, f, g, h, k = m
    c00 = e * k - f * h
    c01 = f * g - d * k
    c02 = d * h - e * g
    det = a * c00 + b * c01 + c * c02
    if abs(det) < 1e-300:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    inv = 1.0 / det
    return (
        c00 * inv, (c * h - b * k) * inv, (b * f - c * e) * inv,
        c01 * inv, (a * k - c * g) * inv, (c * d - a * f) * inv,
        c02 * inv, (b * g - a * h) * inv, (a * e - b * d) * inv,
    )


@helper
def put3(a, v):
    """Write vector tuple ``v`` into the ``(3,)`` array ``a`` (a contact normal, say)."""
    a[0] = v[0]
    a[1] = v[1]
    a[2] = v[2]
