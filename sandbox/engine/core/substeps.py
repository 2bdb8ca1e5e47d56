"""The response stage of a step: sub-steps of integration and the selected response method, in one
kernel (one call per step instead of dozens, which matters for small scenes).

The order within a sub-step is Box2D v3's "soft step" (see ``contact_solver.py``): integrate velocities;
warm start; solve (with the soft position bias); integrate positions; relax (solve without bias); then
bound the speed at which deep overlaps come apart (``depenetration.py``). Restitution comes after the
last sub-step. Joints and mouse grabs are solved in the same passes, before the contacts. The projection
and penalty methods take the same loop, with their own contact treatment in place of the impulse
solver. Each stage's time is added to its
row of ``times`` (``records.SUBSTEP_STAGES``), which ``World.timings`` reports.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba import config, objmode, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import contact_solver_reference as reference
from .atomics import new_counters
from .block_solver import build_islands, solve_islands
from .contact_rows import LAM_N, LAM_T1, LAM_T2, NV, STRIDE, at
from .contact_solver import (
    load_solver_bodies,
    load_solver_rotations,
    mark_wide_bodies,
    normal_coefficients,
    reset_impulses,
    solve_contacts,
    store_solver_velocities,
    warm_start,
)
from .depenetration import deep_points, limit_separation, record_speeds
from .grab import solve_grabs
from .integrate import integrate_positions, integrate_velocities
from .jit import helper, kernel
from .joints import solve_distance_joints
from .penalty import penalty_contacts
from .projection import project_contacts
from .records import (
    IMPULSE,
    PENALTY,
    PROJECTION,
    REFERENCE,
    T_INTEGRATE_POSITIONS,
    T_INTEGRATE_VELOCITIES,
    T_RELAX,
    T_RESTITUTION,
    T_SOLVE,
    T_WARM_START,
    Blocks,
)
from .restitution import apply_restitution

# whether Python's perf_counter is the C library's clock_gettime(CLOCK_MONOTONIC) here (Linux, macOS), so
# that compiled code can read the same clock without going back to Python
# (and that the kernels are compiled: in plain Python, NUMBA_DISABLE_JIT, an intrinsic cannot run)
DIRECT_CLOCK = (hasattr(time, "CLOCK_MONOTONIC") and not config.DISABLE_JIT
                and time.get_clock_info("perf_counter").implementation == "clock_gettime(CLOCK_MONOTONIC)")
MONOTONIC = getattr(time, "CLOCK_MONOTONIC", 1)


@intrinsic
def _clock_gettime(typingctx, clock_id, timespec):
    """C's ``clock_gettime(clock_id, timespec)``, ``timespec`` an int64 array of two (seconds,
    nanoseconds: C's ``struct timespec`` on 64-bit Linux and macOS). Called by name, so that a cached
    kernel finds it again in the next process (a ctypes function's address would not be cached)."""
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ir.IntType(8).as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        data = context.make_array(signature.args[1])(context, builder, args[1]).data
        clk = builder.trunc(args[0], ir.IntType(32))
        return builder.call(fn, [clk, builder.bitcast(data, ir.IntType(8).as_pointer())])

    return types.int32(clock_id, timespec), codegen


@kernel
def _clock_direct():
    """Seconds of ``clock_gettime(CLOCK_MONOTONIC)``, read by compiled code itself (see ``clock``)."""
    timespec = np.empty(2, np.int64)
    _clock_gettime(MONOTONIC, timespec)
    return timespec[0] + 1e-9 * timespec[1]


@kernel
def _clock_from_python():
    """Seconds of Python's ``perf_counter``, reached from compiled code through numba's ``objmode``."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


clock = _clock_direct if DIRECT_CLOCK else _clock_from_python
"""Seconds of a monotonic clock, Python's ``perf_counter``, for kernels to time their stages. Where that
clock is ``clock_gettime(CLOCK_MONOTONIC)`` (``DIRECT_CLOCK``) the kernel calls it directly: 0.06 µs a
reading, against 1.5 µs to go back to Python for it (numba's ``objmode``); a step of four sub-steps reads
it 26 times, some 40 µs of the 2.5 ms a step of the S2 pyramid takes. Elsewhere it goes back to Python (a
kernel naming a C function that the platform lacks would not even link)."""


@helper
def solve_joints_and_grabs(joints, grabs, bodies, h, use_bias, settings):
    """One pass over the distance joints and the mouse grabs."""
    # not inlined by numba (inline="always"), for the reason contact_pass gives
    if joints.count:
        solve_distance_joints(joints, bodies, h, use_bias, settings.joint_hertz, settings.joint_damping_ratio,
                              bool(False))  # never the warm start; bool(): see run_substeps
    solve_grabs(grabs, bodies, h, use_bias)


@helper
def contact_pass(contacts, bodies, coefficients, warm, all_reference, islands, sync):
    """One pass of the impulse method over every contact point: the coloured blocks by the wide solver
    (unless ``all_reference``), then the overflow (or everything) by the reference solver, then the
    islands of the block solver (``block_solver.py``; their warm start is the reference solver's). With
    ``warm`` the pass is the warm start. ``islands``: the block solver's islands of the step
    (``block_solver.build_islands``). With ``sync`` the wide solver's copy of the bodies is loaded before
    its part and the velocities stored back after it (``contact_solver.load_solver_bodies``); without, the
    caller has loaded it and stores it back after its run of passes."""
    # a function of its own, not inlined by numba (inline="always"): numba would copy this body into each
    # of run_substeps' three calls, each copy counting references to every array of the four records
    # it takes as it starts and ends; those 600 counts made run_substeps' code 2.4 times as long, and
    # LLVM's reference-count pruning on it alone took 1.8 s (measured on the response half of ``sandbox
    # warmup``: run_substeps' optimisation 5.5 s, against 2.8 s now and 1.2 s for this function's own)
    first = 0
    if not all_reference:
        if sync:
            load_solver_bodies(bodies, int(0), bodies.n)
        if warm:
            warm_start(contacts, bodies)
        else:
            solve_contacts(contacts, bodies, coefficients)
        if sync:
            store_solver_velocities(bodies, int(0), bodies.n)
        first = contacts.wide_blocks
    last = contacts.blocks if warm else contacts.direct_blocks
    if first < last:
        reference.solve_blocks(contacts, bodies, coefficients, warm, first, last)
    if not warm and contacts.direct_blocks < contacts.blocks:
        solve_islands(contacts, bodies, coefficients, islands)


@helper
def record_pass(trace_lam, trace_vel, k, contacts, bodies):
    """Row ``k`` of the solver trace (``World.step_traced``): every solver point's accumulated normal and
    two friction impulses, and every body's velocity and angular velocity, after a pass. Nothing when the
    trace arrays have no row ``k`` (tracing off: they have none)."""
    if k >= trace_lam.shape[0]:
        return
    cidx, cw = contacts.pts.row, contacts.pts.cw
    for p in range(contacts.points):
        c = cidx[p]
        trace_lam[k, p, 0] = cw[at(c, LAM_N, 0)]
        trace_lam[k, p, 1] = cw[at(c, LAM_T1, 0)]
        trace_lam[k, p, 2] = cw[at(c, LAM_T2, 0)]
    for i in range(bodies.n):
        for j in range(3):
            trace_vel[k, i, j] = bodies.vel[i, j]
            trace_vel[k, i, 3 + j] = bodies.angvel[i, j]


@helper
def velocity_run(lo, hi, bodies, gravity, h, linear_damping, angular_damping, load):
    """``velocity_stage``'s work on bodies ``lo`` to ``hi`` − 1."""
    integrate_velocities(lo, hi, bodies.moving, bodies.vel, bodies.angvel, bodies.quat, bodies.force,
                         bodies.torque, bodies.inv_mass, bodies.inv_inertia_local, bodies.gravity_scale,
                         gravity, h, linear_damping, angular_damping)
    if load:
        load_solver_bodies(bodies, lo, hi)


@helper(parallel=True)
def velocity_stage(shares, bodies, gravity, h, linear_damping, angular_damping, load):
    """The start of a sub-step: integrate every body's velocities (``integrate_velocities``) and, with
    ``load``, copy them into the wide solver's rows (``contact_solver.load_solver_bodies``); the bodies
    cut into ``shares`` runs, side by side on the threads (``prange``) when ``shares`` > 1.

    What it buys, beside the threads' arithmetic: the thread that solves next finds the loop it waits in
    still spinning (``threads.py``), and each thread finds many of the rows of its run of bodies in its
    own cache. Serial, the calling thread drew every row from the other core's cache, and the other went
    to sleep. On S3's 4000 spheres on two threads (medians of five alternated runs, twenty-second
    session) the warm start stage went from 0.58 to 0.38 ms a step, the integration of the positions
    from 0.27 to 0.18, the relax from 0.74 to 0.53. (The runs here are runs of rows, while the solver's
    threads keep regions of space, ``graph_color.body_regions``; in a pile built layer by layer the two
    are close, and on the S1 pile of 4096 these stages took as long after the solver took regions as
    before, twenty-fifth session.) Each body's work is its own, so the result is the serial one
    whatever the runs."""
    n = bodies.n
    if shares == 1:
        velocity_run(int(0), n, bodies, gravity, h, linear_damping, angular_damping, load)
        return
    for t in prange(shares):
        s = np.int64(t)  # a prange index is unsigned: velocity_run keeps one signature
        velocity_run(s * n // shares, (s + 1) * n // shares, bodies, gravity, h, linear_damping,
                     angular_damping, load)


@helper
def position_run(lo, hi, bodies, h, store, load):
    """``position_stage``'s work on bodies ``lo`` to ``hi`` − 1."""
    if store:
        store_solver_velocities(bodies, lo, hi)
    integrate_positions(lo, hi, bodies.moving, bodies.pos, bodies.quat, bodies.vel, bodies.angvel,
                        bodies.inv_inertia_local, bodies.inv_inertia, h, bodies.dpos, bodies.drot)
    if load:
        load_solver_rotations(bodies, lo, hi)


@helper(parallel=True)
def position_stage(shares, bodies, h, store, load):
    """The middle of a sub-step: with ``store``, copy the wide solver's velocities back
    (``contact_solver.store_solver_velocities``); integrate every body's position
    (``integrate_positions``); with ``load``, copy the new rotation vectors into the solver's rows
    (``contact_solver.load_solver_rotations``). The bodies cut into ``shares`` runs, side by side on the
    threads when ``shares`` > 1, for the reasons ``velocity_stage`` gives."""
    n = bodies.n
    if shares == 1:
        position_run(int(0), n, bodies, h, store, load)
        return
    for t in prange(shares):
        s = np.int64(t)
        position_run(s * n // shares, (s + 1) * n // shares, bodies, h, store, load)


@helper(parallel=True)
def store_stage(shares, bodies):
    """The wide solver's velocities copied back after the relax pass (``store_solver_velocities``), the
    bodies cut into ``shares`` runs as in ``velocity_stage``."""
    n = bodies.n
    if shares == 1:
        store_solver_velocities(bodies, int(0), n)
        return
    for t in prange(shares):
        s = np.int64(t)
        store_solver_velocities(bodies, s * n // shares, (s + 1) * n // shares)


@helper
def begin_part(part, bodies, wide, B, wide_blocks, body_a, body_b, LB, points, row, cw, deep, found):
    """Part ``part`` (0 or 1) of ``begin_substeps``'s work."""
    if part == 0:
        for i in range(bodies.n):
            for k in range(3):
                bodies.dpos[i, k] = 0.0
                bodies.drot[i, k] = 0.0
        if wide:
            mark_wide_bodies(bodies, B, wide_blocks, body_a, body_b, LB)
    else:
        record_speeds(bodies)
        found[0] = deep_points(points, row, cw, deep)


@helper(parallel=True)
def begin_substeps(shares, bodies, contacts, wide, deep):
    """What the sub-steps take from the start of the step, in two parts: (0) every body's displacement and
    rotation since the step began set to zero and, with ``wide``, the bodies and lane bodies of the
    coloured blocks marked (``contact_solver.mark_wide_bodies``); (1) every body's speed
    (``record_speeds``) and the numbers of the contact points that began the step deeply overlapped
    (``deep_points``), written into ``deep``. Returns how many of those there are. With ``shares`` > 1 the
    two parts run side by side on the threads (``prange``, one share each; any further share has
    nothing to do); each writes arrays of its own, so the result is the serial one.

    What it buys, beside the two parts at once: numba's worker threads sleep once they have spun some
    20 µs after a parallel loop (``threads.py``), and after this work, serial, the sub-steps' first
    parallel loop (``velocity_stage``) found them asleep and waited for the other core to wake: on the
    S1 pile of 4096 on two threads the first sub-step's integration took 98 µs against 39 for each later
    one (one thread: 54 and 44). The work before that loop took some 110 µs a step, serial; now the
    worker threads wake while the calling thread does its part, and the loop after finds them
    spinning."""
    T = contacts.table
    # records made here, not read out of another: numba's parallel loops take only those
    B = Blocks(T.order, T.start, T.lanes, T.slots, T.offset, T.color)
    body_a, body_b, LB = contacts.body_a, contacts.body_b, contacts.lane_body
    row, cw = contacts.pts.row, contacts.pts.cw
    wide_blocks, points = contacts.wide_blocks, contacts.points
    found = new_counters(1)  # not np.zeros: see atomics.new_counters
    if shares == 1:
        for part in range(2):
            begin_part(part, bodies, wide, B, wide_blocks, body_a, body_b, LB, points, row, cw, deep, found)
        return found[0]
    for t in prange(shares):
        part = np.int64(t)  # a prange index is unsigned: begin_part keeps one signature
        if part < 2:
            begin_part(part, bodies, wide, B, wide_blocks, body_a, body_b, LB, points, row, cw, deep, found)
    return found[0]


@kernel(same_types=True)
def run_substeps(settings, bodies, contacts, joints, grabs, times, trace_lam, trace_vel):
    """Advance the velocities and positions of the moving bodies by ``settings.dt`` in
    ``settings.substeps`` sub-steps with the response method ``settings.response``, ``settings.iterations``
    velocity iterations per step shared over the sub-steps (the earlier sub-steps get the remainder).

    ``settings`` is a ``StepSettings``, ``bodies`` a ``BodyState``, ``contacts`` a ``SolverContacts`` as
    prepared by ``graph_color.color_contacts`` and ``contact_prepare.prepare_contacts``, ``joints`` a
    ``Joints``, ``grabs`` a ``Grabs`` (records.py). Adds each stage's seconds to its row of ``times``.
    With tracing on, ``trace_lam`` and ``trace_vel`` get a row after every pass (``record_pass``, in the
    order ``trace.solver_pass_labels`` names them); with it off they have no rows."""
    n = bodies.n
    mode = settings.response
    substeps = settings.substeps
    h = settings.dt / substeps
    # plain booleans and integers, not literals: numba compiles a kernel once per literal constant it is
    # called with (see contact_rows.py), so that the passes below share one compiled copy of each kernel
    yes, no = bool(True), bool(False)
    # the patch step (patch.py) in the first solve pass of each sub-step and in its relax pass: the passes
    # that take the sub-step's gravity and its impacts, where solving the points one after another made
    # a flat landing spin; the other passes only take out what is left, point by point
    first = normal_coefficients(h, yes, yes, settings)
    biased = normal_coefficients(h, yes, no, settings)
    relax = normal_coefficients(h, no, yes, settings)
    all_reference = settings.solver == REFERENCE
    base = settings.iterations // substeps
    extra = settings.iterations % substeps
    if mode == IMPULSE and (all_reference or contacts.wide_blocks < contacts.blocks):
        # the reference solver linearises the contacts with the inertias of the start of the step, as
        # the wide solver's cached Jacobian rows do
        # a loop rather than a slice assignment: numba compiles for an array assigned to a slice a shape
        # check whose error message alone (string formatting) cost some 3 s of compile (bench.compile)
        for i in range(n):
            for r in range(3):
                for c in range(3):
                    bodies.inv_inertia_start[i, r, c] = bodies.inv_inertia[i, r, c]
    # the wide solver's passes work on its own copy of the bodies (contact_solver.load_solver_bodies): where
    # nothing else reads or writes the velocities between them (no joints, grabs, overflow, islands or
    # trace) the copy is loaded before each run of passes and stored back after it; else around every pass
    wide = mode == IMPULSE and not all_reference
    sync = wide and (joints.count > 0 or grabs.count > 0 or contacts.wide_blocks < contacts.blocks
                     or trace_lam.shape[0] > 0)
    runs = wide and not sync
    shares = len(contacts.V) // (NV * STRIDE)  # one per thread in use (see contact_solver.solve_colours)
    islands = build_islands(contacts, bodies)  # after the inertias of the start of the step: they make A
    deep = np.empty(contacts.points, np.int64)  # the points whose separation speed is bounded
    deep = deep[:begin_substeps(shares, bodies, contacts, wide, deep)]
    k = int(0)  # the solver trace's next row
    for sub in range(substeps):
        t0 = clock()
        velocity_stage(shares, bodies, settings.gravity, h, settings.linear_damping, settings.angular_damping,
                       runs)
        t1 = clock()
        times[T_INTEGRATE_VELOCITIES] += t1 - t0
        if mode == IMPULSE:
            if settings.warm_starting:
                contact_pass(contacts, bodies, biased, yes, all_reference, islands, sync)
                if joints.count:
                    solve_distance_joints(joints, bodies, h, yes, settings.joint_hertz,
                                          settings.joint_damping_ratio, yes)
            else:
                reset_impulses(contacts, bodies)
            record_pass(trace_lam, trace_vel, k, contacts, bodies)
            k += 1
            t2 = clock()
            times[T_WARM_START] += t2 - t1
            for it in range(max(base + (sub < extra), 1)):
                solve_joints_and_grabs(joints, grabs, bodies, h, yes, settings)
                contact_pass(contacts, bodies, first if it == 0 else biased, no, all_reference,
                             islands, sync)
                record_pass(trace_lam, trace_vel, k, contacts, bodies)
                k += 1
        else:
            t2 = clock()
            solve_joints_and_grabs(joints, grabs, bodies, h, yes, settings)
            if mode == PENALTY:
                penalty_contacts(contacts.points, contacts.pts, bodies, h, settings.penalty_hertz,
                                 settings.penalty_damping_ratio, max(base + (sub < extra), 1), sub == 0)
            record_pass(trace_lam, trace_vel, k, contacts, bodies)
            k += 1
        t3 = clock()
        times[T_SOLVE] += t3 - t2
        # the velocities in the solver's rows stay the ones stored back here: see load_solver_rotations
        position_stage(shares, bodies, h, runs, runs)
        t4 = clock()
        times[T_INTEGRATE_POSITIONS] += t4 - t3
        if mode == IMPULSE:
            solve_joints_and_grabs(joints, grabs, bodies, h, no, settings)
            contact_pass(contacts, bodies, relax, no, all_reference, islands, sync)
            if runs:
                store_stage(shares, bodies)
        elif mode == PROJECTION:
            project_contacts(contacts.points, contacts.pts, bodies)
        limit_separation(bodies, deep, contacts.pts, settings.max_push_velocity)
        if mode == IMPULSE:
            record_pass(trace_lam, trace_vel, k, contacts, bodies)
            k += 1
        times[T_RELAX] += clock() - t4
    if mode == IMPULSE:
        t5 = clock()
        apply_restitution(contacts.points, contacts.pts, bodies, settings.restitution_threshold)
        record_pass(trace_lam, trace_vel, k, contacts, bodies)
        times[T_RESTITUTION] += clock() - t5
