"""The cage: a tetrahedral cage around a mesh, its vertices bound to it, and a posed mesh's cage.

``build`` shapes the cage (``hull``: the convex hull filled with a lattice, seed 000; ``fit``: tets
inside the mesh only, told by ``inside``), ``tets`` holds the ``Cage`` both give, ``locate`` finds
the tet holding each point (compiled in ``locate_kernel``), ``binding`` binds the vertices to
their tets and blends them, ``posing`` moves the control points with a posed mesh, and
``body.CageBody`` is a cage soft body in the one body lifecycle (``tetrig_addon.body``).

The Blender layer's calls::

    cage = build_cage(vertices, resolution, max_control_points, triangles, method)
    b = bind(vertices, cage.control_points, cage.tets)
    shown = blend(control_points, b.control_point_indices, b.weights)   # or blend_matrix(...) @ q
"""

from .binding import (Binding, bind, blend, blend_matrix, control_point_goal_weights,
                      pinned_control_points)
from .body import CageBody
from .build import DEFAULT_MAX_CONTROL_POINTS, DEFAULT_RESOLUTION, build_cage, validate_points
from .inside import voxelize
from .locate import INSIDE_TOLERANCE, TetSearch, containing_tets
from .posing import Follow, follow
from .tets import METHOD_FIT, METHOD_HULL, METHODS, SLIVER_QUALITY, Cage

__all__ = ["Binding", "Cage", "CageBody", "DEFAULT_MAX_CONTROL_POINTS", "DEFAULT_RESOLUTION", "Follow",
           "INSIDE_TOLERANCE", "METHODS", "METHOD_FIT", "METHOD_HULL", "SLIVER_QUALITY", "TetSearch", "bind", "blend",
           "blend_matrix", "build_cage", "containing_tets", "control_point_goal_weights", "follow",
           "pinned_control_points", "validate_points", "voxelize"]
