"""Collision objects for every body kind: signed distance to any triangle mesh (planes, boxes,
spheres, scans).

``collider`` builds a ``Collider`` from one object's world-space triangles for one frame
(``mesh_collider``); ``distance`` measures points against it (``signed_distance``, ``near``,
``penetration``): exact, signed by the angle-weighted pseudonormal, with Blender's contact rule.
"""

from .collider import (DEFAULT_KINETIC_FRICTION, DEFAULT_STATIC_FRICTION, DEFAULT_THICKNESS_INNER,
                       DEFAULT_THICKNESS_OUTER, Collider, SizeClass, mesh_collider)
from .distance import near, penetration, penetration_from_distance, signed_distance

__all__ = ["Collider", "DEFAULT_KINETIC_FRICTION", "DEFAULT_STATIC_FRICTION", "DEFAULT_THICKNESS_INNER",
           "DEFAULT_THICKNESS_OUTER", "SizeClass", "mesh_collider", "near", "penetration", "penetration_from_distance",
           "signed_distance"]
