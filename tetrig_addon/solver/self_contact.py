"""Self-contact of a Surface body: its particles against its own triangles and its edges against
its own edges, so a sheet that folds onto itself, torn or whole, never passes through itself.

Method: Offset Geometric Contact (Chen, Hu, Macklin, Yuksel et al. 2025, "Offset Geometric Contact",
ACM TOG 44(4)), in this solver's substeps:

* **Contacts.** At the start of each substep, every particle within the search radius of a
  triangle that is not its own (the particle is not one of its corners) and every edge within it of
  an edge that shares no particle with it are found (``search``). Those closer than the contact
  distance at rest are not contacts (a fine sheet's neighbours); the rest become penalty rows on
  planes that ride on the other feature (``pairs``' rows, half the correction each side), two-sided:
  a particle's outside is the side it starts the substep on. An edge–edge pair acts on both ends of
  each edge, along the line between the closest points.
* **The bound that keeps it clean.** Each particle's distance b to the nearest feature it is not
  part of (over every pair touching it: as the particle, as a triangle's corner, as an edge's end;
  the search radius where none is nearer) bounds how far it may move in the substep relative to
  the body's mean motion: |Δxᵢ − Δx̄| ≤ γ·bᵢ with γ = ``BOUND_FRACTION`` < ½ (``limit``). The
  distance between a point and a triangle, or two segments, changes by at most the largest
  difference of their corners' displacements, here < 2γ·b ≤ the distance: no two features that
  share no particle can meet within a substep, so none ever crosses another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import colliders as collision
from ..errors import TetRigInputError

# The contact distance of a Surface body against itself [m] (Blender Cloth's self distance is 0.015 m).
DEFAULT_SELF_DISTANCE = 0.01


@dataclass(frozen=True)
class SelfCollision:
    """A Surface body's self-contact.

    Attributes:
        distance: [m] > 0, the contact distance: folds rest this far apart.
        static_friction, kinetic_friction: Coulomb coefficients, 0 ≤ μ_k ≤ μ_s.
    """

    distance: float = DEFAULT_SELF_DISTANCE
    static_friction: float = collision.DEFAULT_STATIC_FRICTION
    kinetic_friction: float = collision.DEFAULT_KINETIC_FRICTION

    def __post_init__(self) -> None:
        if not (np.isfinite(self.distance) and self.distance > 0.0):
            raise TetRigInputError(f"The self-collision distance must be more than 0, not {self.distance}.")
        if not (np.isfinite(self.static_friction) and np.isfinite(self.kinetic_friction)
                and 0.0 <= self.kinetic_friction <= self.static_friction):
            raise TetRigInputError("Self-collision friction must be 0 or more, static at least sliding.")
