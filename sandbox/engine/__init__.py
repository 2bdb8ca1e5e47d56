"""The sandbox physics engine: rigid bodies, the collision pipeline and collision response.

>>> from sandbox.engine import World, Sphere, Box, Capsule, ConvexHull, collide
"""

from .bodies import Body
from .collide import Manifold, collide
from .contacts import CollisionEvent
from .shapes import Box, Capsule, ConvexHull, Shape, Sphere
from .world import DistanceJoint, Grab, RayHit, World

__all__ = ["Body", "Box", "Capsule", "CollisionEvent", "ConvexHull", "DistanceJoint", "Grab", "Manifold",
           "RayHit", "Shape", "Sphere", "World", "collide"]
