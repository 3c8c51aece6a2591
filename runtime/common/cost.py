"""What a frame will cost, before it is simulated: the panel warns when a frame will take longer
than about a second (a Steps per Second typo, a fine cage at a high rate), since Blender does not
respond while a frame is simulated.

A frame is ``substeps`` steps of ``iterations`` Gauss–Seidel sweeps; a sweep costs about
``SWEEP_FIXED_S`` plus ``SWEEP_S_PER_ELEMENT`` per element (a cage's tets; a Surface body's edges
and faces). Measured with the compiled solver on the 2 shared cores this project runs on (a ball
of 229 tets, Suzanne 1,760, the bunny 4,283, spot 20,599; 1 and 3 iterations, 10 and 40 substeps):
150-260 µs per sweep for the ball, 250-510 ns per tet for the others, so the estimate is within
about 40 % there, and a faster machine only makes the warning early. A global iteration
(``SimSettings.global_iterations``) costs about a sweep (measured on the bunny's cage: 0.75-0.9 of
one), so it counts as one.
"""

from __future__ import annotations

from dataclasses import dataclass

SWEEP_FIXED_S = 100e-6
SWEEP_S_PER_ELEMENT = 300e-9
# The panel warns above this [s] a frame.
SLOW_FRAME_S = 1.0


@dataclass(frozen=True)
class FrameCost:
    """The estimated cost of one frame.

    Attributes:
        substeps: steps per frame (Steps per Second × the frame's duration, rounded).
        iterations: sweeps per step.
        elements: what each sweep goes through (tets, or a Surface body's edges and faces).
        seconds: the estimate [s].
        global_iterations: global-step iterations per step (each counted as a sweep).
    """

    substeps: int
    iterations: int
    elements: int
    seconds: float
    global_iterations: int = 0

    @property
    def slow(self) -> bool:
        return self.seconds > SLOW_FRAME_S

    def message(self, steps_per_second: float, what: str) -> str:
        return (f"About {self.seconds:.1f} s a frame: {steps_per_second:.0f} steps per second make "
                f"{self.substeps} steps a frame, {self.iterations} sweep{'s' if self.iterations != 1 else ''} "
                + (f"and {self.global_iterations} global iteration{'s' if self.global_iterations != 1 else ''} "
                   if self.global_iterations else "")
                + f"each over {self.elements:,} {what}; Blender waits meanwhile. Lower Steps per Second "
                "unless the material needs it")


def frame_cost(substeps: int, iterations: int, elements: int, global_iterations: int = 0) -> FrameCost:
    """The cost of a frame of ``substeps`` steps of ``iterations`` sweeps and ``global_iterations``
    global iterations over ``elements``."""
    seconds = substeps * (iterations + global_iterations) * (SWEEP_FIXED_S + SWEEP_S_PER_ELEMENT * elements)
    return FrameCost(substeps, iterations, elements, seconds, global_iterations)
