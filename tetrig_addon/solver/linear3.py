"""Solving the 3×3 symmetric systems of block descent, written once for both backends (NumPy calls
it on arrays, the compiled kernel inlines it on scalars)."""

from __future__ import annotations

import numpy as np
from numpy import abs as absolute  # elementwise: the kernel swaps them for math's scalar ones (``kernel._scalar``)

# A block whose determinant is at most this [N³/m³] is singular: the point does not move this step.
SINGULAR_DETERMINANT = 1e-300


def solve_symmetric(h00, h01, h02, h11, h12, h22, f0, f1, f2):
    """x with H·x = f for the symmetric H = [[h00, h01, h02], [h01, h11, h12], [h02, h12, h22]],
    by the adjugate (Cramer's rule); (0, 0, 0) when H is singular. Returns (x₀, x₁, x₂)."""
    c00 = h11 * h22 - h12 * h12
    c01 = h02 * h12 - h01 * h22
    c02 = h01 * h12 - h02 * h11
    det = h00 * c00 + h01 * c01 + h02 * c02
    ok = (absolute(det) > SINGULAR_DETERMINANT) * 1.0
    inv = ok / (det + (1.0 - ok))
    c11 = h00 * h22 - h02 * h02
    c12 = h01 * h02 - h00 * h12
    c22 = h00 * h11 - h01 * h01
    return ((c00 * f0 + c01 * f1 + c02 * f2) * inv, (c01 * f0 + c11 * f1 + c12 * f2) * inv,
            (c02 * f0 + c12 * f1 + c22 * f2) * inv)
