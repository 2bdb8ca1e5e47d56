"""The world's settings in one table: each setting's name, default, kind, allowed range and meaning.

``World`` checks every assignment to a setting through ``SETTINGS`` (``world.linear_damping = -240`` raises
``ValueError`` naming the setting and the value), and so do the scene-file loader and anything else that
takes settings from outside (the panel, a headless command line), so they all agree by construction, as
Box2D's ``b2WorldDef`` and Jolt's ``PhysicsSettings`` make the step, the UI and the files agree.

Ranges are closed intervals. They are wide enough for any scene a lesson needs, and narrow enough that no
value in them makes a kernel divide by zero, overflow or stop meaning anything (a damping of 10⁹ 1/s, a
sleep threshold of a kilometre per second).

>>> SETTINGS["linear_damping"].check(0.5)
0.5
>>> SETTINGS["ccd"].check("false")
Traceback (most recent call last):
...
ValueError: ccd must be True or False, got 'false'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validate import finite_float, show

MAX_DT = 0.1
"""The longest time step ``World.step`` accepts (s). Beyond it a step is no longer a small piece of
motion: a box resting on the ground falls through it within one step of 10 s (it ended 274 m below), and
the soft contacts, whose stiffness is capped at a quarter of the sub-step rate, turn to mush."""

KINDS = ("float", "int", "bool", "choice")


@dataclass(frozen=True)
class Setting:
    """One world setting: its ``name`` (the ``World`` attribute), ``default``, ``kind`` (one of
    ``KINDS``), the closed range ``min``..``max`` for numbers, the allowed ``choices`` for a choice, its
    ``unit`` and a one-line ``help``."""

    name: str
    default: float | int | bool | str
    kind: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    help: str = ""

    def check(self, value: object) -> float | int | bool | str:
        """``value`` converted to this setting's type (float, int, bool or str) when it is allowed;
        ``ValueError`` naming the setting, the value and what is allowed otherwise."""
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{self.name} must be True or False, got {show(value)}")
            return bool(value)
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}; got {show(value)}")
            return value
        unit = f" {self.unit}" if self.unit else ""
        if self.kind == "int":
            if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) \
                    or not self.min <= value <= self.max:
                raise ValueError(f"{self.name} must be an integer from {self.min:g} to {self.max:g}{unit}, "
                                 f"got {show(value)}")
            return int(value)
        x = finite_float(self.name, value)  # a number (not a bool or a string), finite, not a huge int
        if not self.min <= x <= self.max:
            raise ValueError(f"{self.name} must be a number from {self.min:g} to {self.max:g}{unit}, "
                             f"got {show(value)}")
        return x


def _table(*entries: Setting) -> dict[str, Setting]:
    return {s.name: s for s in entries}


SETTINGS: dict[str, Setting] = _table(
    # methods
    Setting("substeps", 4, "int", 1, 64, help="sub-steps per step: the solver and integrator run this often"),
    Setting("iterations", 10, "int", 1, 1000,
            help="velocity iterations per step, shared out over the sub-steps (at least one each)"),
    Setting("response", "impulse", "choice", choices=("impulse", "projection", "penalty"),
            help="collision response method"),
    Setting("restitution_rule", "product", "choice", choices=("product", "min", "max", "average"),
            help="how two bodies' restitutions combine"),
    Setting("friction_rule", "geometric", "choice", choices=("geometric", "min", "max", "average", "product"),
            help="how two bodies' friction coefficients combine (geometric: √(μa·μb))"),
    Setting("contact_solver", "wide", "choice", choices=("wide", "reference"),
            help="wide: 32 contacts side by side (SIMD); reference: one by one, as the seed writes it"),
    Setting("warm_starting", True, "bool",
            help="start each step's contact impulses from the last step's (fewer iterations, same result)"),
    Setting("block_solver", True, "bool",
            help="solve each small island whose masses differ tenfold or more as one block (no sag)"),
    Setting("broadphase", "sap", "choice", choices=("brute", "sap", "grid", "octree"),
            help="how candidate pairs are found"),
    Setting("ccd", True, "bool", help="continuous collision: a fast body's margin covers its whole travel"),
    Setting("sleeping", True, "bool", help="islands at rest for time_to_sleep stop being simulated"),
    Setting("contact_cache", True, "bool",
            help="reuse a pair's manifold while it moves < 1 mm / 2° relative to itself"),
    # damping: v ← v / (1 + h·c) per sub-step, stable for any c ≥ 0; beyond 100 1/s bodies stop at once
    Setting("linear_damping", 0.001, "float", 0.0, 100.0, unit="1/s",
            help="velocity damping; small, so bounces keep their height (e²·h)"),
    Setting("angular_damping", 0.02, "float", 0.0, 100.0, unit="1/s",
            help="spin damping; lets rolling bodies come to rest eventually"),
    # contacts
    Setting("restitution_threshold", 1.0, "float", 0.0, 100.0, unit="m/s",
            help="impacts slower than this do not bounce"),
    Setting("contact_hertz", 60.0, "float", 0.0, 1000.0, unit="Hz",
            help="stiffness of the soft contact (capped at a quarter of the sub-step rate); 0: rigid"),
    Setting("contact_damping_ratio", 10.0, "float", 0.0, 1000.0, help="damping ratio of the soft contact"),
    Setting("max_push_velocity", 3.0, "float", 0.0, 100.0, unit="m/s",
            help="the fastest that overlaps are pushed apart"),
    Setting("linear_slop", 0.0, "float", 0.0, 0.1, unit="m", help="overlap left alone by the push-out"),
    Setting("speculative_distance", 0.02, "float", 0.0, 1.0, unit="m",
            help="contacts are made this far before touching"),
    Setting("max_speculative", 0.25, "float", 0.0, 10.0, unit="m",
            help="the most a body's travel extends its contact margin when CCD is off"),
    # joints and the penalty method
    Setting("joint_hertz", 60.0, "float", 0.0, 1000.0, unit="Hz",
            help="stiffness of the soft joints; 0: rigid"),
    Setting("joint_damping_ratio", 5.0, "float", 0.0, 1000.0, help="damping ratio of the soft joints"),
    Setting("penalty_hertz", 24.0, "float", 0.0, 1000.0, unit="Hz",
            help="spring frequency of the penalty response"),
    Setting("penalty_damping_ratio", 0.7, "float", 0.0, 1000.0, help="damping ratio of the penalty springs"),
    # sleeping
    Setting("sleep_linear_threshold", 0.05, "float", 0.0, 10.0, unit="m/s",
            help="a body slower than this may fall asleep"),
    Setting("sleep_angular_threshold", 0.05, "float", 0.0, 10.0, unit="m/s",
            help="a body whose rim turns slower than this may fall asleep"),
    Setting("time_to_sleep", 0.5, "float", 0.0, 60.0, unit="s",
            help="how long an island must stay slow before it sleeps"),
)
"""Every world setting but ``gravity`` (a vector, checked by ``validate.vec``), by name."""


def check_setting(name: str, value: object) -> float | int | bool | str:
    """``value`` checked against the setting ``name`` (see ``Setting.check``); ``ValueError`` for an
    unknown name too."""
    setting = SETTINGS.get(name)
    if setting is None:
        raise ValueError(f"unknown setting {name!r}; known: {', '.join(SETTINGS)}")
    return setting.check(value)


class SettingAttribute:
    """A validated attribute of ``World`` for the setting of the same name: reading returns the stored
    value, assigning checks it through ``SETTINGS`` first, so no bad value ever reaches a kernel. The
    value lives in the instance's ``__dict__`` under ``_<name>``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.setting = s = SETTINGS[name]
        self.slot = "_" + name
        rng = f"{s.min:g} to {s.max:g} {s.unit}".rstrip() if s.kind in ("float", "int") else ""
        self.__doc__ = f"{s.help[:1].upper()}{s.help[1:]} (default {s.default!r}{'; ' + rng if rng else ''})."

    def __get__(self, obj: object, owner: type | None = None):
        if obj is None:
            return self
        return obj.__dict__[self.slot]

    def __set__(self, obj: object, value: object) -> None:
        obj.__dict__[self.slot] = self.setting.check(value)
