"""The sandbox physics engine: rigid bodies, the collision pipeline and collision response.

>>> from sandbox.engine import World, Sphere, Box, Capsule, ConvexHull, collide
"""

from .bodies import Body
from .broadphase import BroadPhase
from .collide import Manifold, collide
from .contacts import CollisionEvent
from .core.layout import BOX, CAPSULE, HULL, KIND_NAMES, SPHERE
from .shapes import Box, Capsule, ConvexHull, Shape, Sphere
from .world import RESPONSES, RESTITUTION_RULES, DistanceJoint, Grab, RayHit, World

BROADPHASES = BroadPhase.METHODS
"""The broad-phase methods ``World.broadphase`` accepts."""

__all__ = ["BOX", "BROADPHASES", "CAPSULE", "HULL", "KIND_NAMES", "RESPONSES", "RESTITUTION_RULES", "SPHERE",
           "Body", "Box", "Capsule", "CollisionEvent", "ConvexHull", "DistanceJoint", "Grab", "Manifold",
           "RayHit", "Shape", "Sphere", "World", "collide"]
