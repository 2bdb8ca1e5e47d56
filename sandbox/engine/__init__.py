"""The sandbox physics engine: rigid bodies, the collision pipeline and collision response.

>>> from sandbox.engine import World, Sphere, Box, Capsule, ConvexHull, collide
"""

from .bodies import Body
from .broadphase import BroadPhase
from .collide import Manifold, collide
from .contacts import CollisionEvent
from .core.layout import BOX, CAPSULE, HULL, KIND_NAMES, SPHERE
from .core.threads import PARALLEL_BODIES
from .settings import SETTINGS, Setting
from .shapes import Box, Capsule, ConvexHull, Shape, Sphere
from .world import (
    FRICTION_RULES,
    RESPONSES,
    RESTITUTION_RULES,
    STAGE_GROUPS,
    STAGES,
    DistanceJoint,
    Grab,
    RayHit,
    World,
)

BROADPHASES = BroadPhase.METHODS
"""The broad-phase methods ``World.broadphase`` accepts."""

__all__ = ["BOX", "BROADPHASES", "CAPSULE", "FRICTION_RULES", "HULL", "KIND_NAMES", "PARALLEL_BODIES",
           "RESPONSES", "RESTITUTION_RULES", "SETTINGS", "SPHERE", "STAGES", "STAGE_GROUPS", "Body", "Box",
           "Capsule", "CollisionEvent", "ConvexHull", "DistanceJoint", "Grab", "Manifold", "RayHit",
           "Setting", "Shape", "Sphere", "World", "collide"]
