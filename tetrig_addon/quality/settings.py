"""The quality pass's settings (seed 003's parameters and names) and the limits they give."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TetRigInputError

# The seed's parameters (seed 003).
DEFAULT_MAX_STRETCH = 1.35
DEFAULT_MAX_COMPRESSION = 0.70
DEFAULT_CONSTRAINT_ITERATIONS = 4
DEFAULT_SMOOTHING_WEIGHT = 0.45
DEFAULT_SMOOTHING_ITERATIONS = 2
# An edge within this relative distance of its limit counts as inside it: a clamped edge lands on
# its limit only up to rounding, and the next sweep must not count it again.
LIMIT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class QualitySettings:
    """The pass's settings (seed 003's names in brackets); ``validated`` checks them."""

    max_stretch: float = DEFAULT_MAX_STRETCH  # [MaxEdgeStretchRatio] ≥ 1
    max_compression: float = DEFAULT_MAX_COMPRESSION  # [MaxEdgeCompressRatio] in (0, 1]
    constraint_iterations: int = DEFAULT_CONSTRAINT_ITERATIONS  # [EdgeConstraintIterations] ≥ 0
    smoothing_weight: float = DEFAULT_SMOOTHING_WEIGHT  # [LaplacianSmoothingWeight] in [0, 1]
    smoothing_iterations: int = DEFAULT_SMOOTHING_ITERATIONS  # [LaplacianIterations] ≥ 0

    def validated(self) -> "QualitySettings":
        """Raises TetRigInputError for a value out of range, with a message for the user."""
        if not self.max_stretch >= 1.0:
            raise TetRigInputError(f"Max Stretch must be at least 1 (got {self.max_stretch}).")
        if not 0.0 < self.max_compression <= 1.0:
            raise TetRigInputError(f"Max Compression must be above 0 and at most 1 (got {self.max_compression}).")
        if not 0.0 <= self.smoothing_weight <= 1.0:
            raise TetRigInputError(f"Smoothing must be between 0 and 1 (got {self.smoothing_weight}).")
        if self.constraint_iterations < 0 or self.smoothing_iterations < 0:
            raise TetRigInputError("Iterations cannot be negative.")
        return self

    def limits(self) -> tuple[float, float, float, float]:
        """(max_compression, max_stretch, and both widened by ``LIMIT_TOLERANCE``): an edge is
        outside its limits when its length is outside [rest · the third, rest · the fourth]."""
        lo, hi = float(self.max_compression), float(self.max_stretch)
        return lo, hi, lo * (1.0 - LIMIT_TOLERANCE), hi * (1.0 + LIMIT_TOLERANCE)
