"""A traced step: what the step computed, stage by stage, for a teacher to take apart (``World.step_traced``).

The traced step runs exactly the code of ``World.step``; the kernels additionally copy what they computed
into preallocated trace arrays when tracing is on (``core/substeps.record_pass``), so the state after a
traced step is bit for bit the state after an ordinary one. Recorded today: the stages in the order they
ran with their times, the broad phase's candidate pairs, the manifolds, and the solver's every pass (warm
start, each velocity iteration of each sub-step, relax, restitution): the accumulated normal and friction
impulses of every contact point and the velocities of every body after that pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .collide import Manifold


@dataclass(frozen=True)
class SolverPass:
    """The state after one pass of the solver: its ``label`` ("substep 2 / solve 3", "restitution", …),
    every contact point's accumulated ``normal`` impulse (k,) and ``friction`` impulse along the point's
    two tangents (k, 2) (N·s), and every body row's ``velocity`` and ``angular_velocity`` (n, 3)."""

    label: str
    normal: np.ndarray
    friction: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray


@dataclass(frozen=True)
class StepTrace:
    """What one step computed (see the module's docstring).

    ``stages``: the names of the stages that ran, in order (``world.STAGES`` less those the response method
    skips); ``timings``: their milliseconds; ``pairs``: (p, 2) body rows of the broad phase's candidate
    pairs; ``manifolds``: the touching manifolds, as ``world.manifolds`` gives them; ``point_manifold``,
    ``point_slot``, ``point_bodies``: for each solver contact point, the row of ``world.contacts`` it
    belongs to, its index in that manifold and its two bodies; ``solver``: the passes in order."""

    stages: tuple[str, ...]
    timings: dict[str, float]
    pairs: np.ndarray
    manifolds: list[Manifold]
    point_manifold: np.ndarray
    point_slot: np.ndarray
    point_bodies: np.ndarray
    solver: list[SolverPass]

    def largest_change(self) -> np.ndarray:
        """For each solver pass after the first, the largest change of any point's accumulated normal
        impulse from the pass before: how far the iterations still move (it should fall within a
        sub-step)."""
        normals = np.array([p.normal for p in self.solver])
        if len(normals) < 2 or normals.shape[1] == 0:
            return np.zeros(max(len(normals) - 1, 0))
        return np.abs(np.diff(normals, axis=0)).max(axis=1)


def solver_pass_labels(response: str, substeps: int, iterations: int, warm_starting: bool) -> list[str]:
    """The labels of the passes ``core/substeps.run_substeps`` records, in its order: per sub-step the
    warm start (or cold start), the sub-step's share of the iterations and the relax pass, then
    restitution (the impulse method); the penalty springs once per sub-step (the penalty method); none
    for projection, which has no impulses."""
    labels = []
    if response == "projection":
        return labels
    base, extra = divmod(iterations, substeps)
    for sub in range(substeps):
        name = f"substep {sub + 1}"
        if response == "penalty":
            labels.append(f"{name} / penalty springs")
            continue
        labels.append(f"{name} / {'warm start' if warm_starting else 'cold start'}")
        labels += [f"{name} / solve {i + 1}" for i in range(max(base + (sub < extra), 1))]
        labels.append(f"{name} / relax")
    if response == "impulse":
        labels.append("restitution")
    return labels
