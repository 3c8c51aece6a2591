"""Jiggle bones: spring-damper bone chains (seed 001, a KawaiiPhysics-like node) for armatures.

Each bone's tail is a particle pulled to where the animation puts it (F = −k(x − x_t) − c·v + m·g
per unit mass, the seed's force, with v measured relative to the rig object's own motion), integrated with semi-implicit Euler at a fixed number of steps per second
(the same step at any frame rate), chains root to tip from the parent's *simulated* frame, then
projected: length kept (unless stretch), a cone around the animated direction, sphere, capsule and
mesh colliders. Each bone is then turned (the shortest turn) to aim at its tail.

Why semi-implicit Euler and not XPBD: the seed's spring is a force with a frequency √k/2π that a
user sets; semi-implicit Euler is symplectic (no energy drift, so chains settle and never gain
energy) and at 240 steps/s its frequency error is (ωh)²/24, 1e-4 at 2 Hz, so a bone swings at the
frequency asked for at any frame rate. The hard rules (length, cone, colliders) are projections
after each step with the velocity taken from the corrected positions, as in position-based
dynamics, so they hold exactly every step whatever the stiffness.

Why the damping is relative to the rig object: the seed simulates in the character's component
space. A rig that walks or runs at a steady speed then does not drag its chains behind it (with
world-space damping a 5 m/s run at critical damping of a 3 Hz bone trails it by 2v/√k = 0.5 m),
while a rig that starts, stops or turns makes them swing (the spring pulls them along, in world
space); a step of a parent *bone* settles without overshoot at c = 2√k, as the seed says.

Sources: the seed (001): spring toward the animated target, damping, gravity, semi-implicit Euler,
max speed, dt clamp 1/30 s, critical damping c = 2√k, root-to-tip chains, cone limit, sphere and
capsule colliders, alpha blend. Müller et al. 2007, "Position based dynamics" (projections and the
velocity update).
"""

from .body import RigBody, RigState
from .model import (ChainModel, ChainState, FramePose, JiggleSettings, build_model,
                    matrix_to_quaternion, pose_from_matrices, quaternion_to_matrix, rig_motion,
                    substeps_for)
from .motion import critical_damping, frequency, reach, rest_state, shown, step, teleported

__all__ = ["ChainModel", "ChainState", "FramePose", "JiggleSettings", "RigBody", "RigState", "build_model",
           "matrix_to_quaternion", "pose_from_matrices", "quaternion_to_matrix", "rig_motion", "substeps_for",
           "rest_state", "step", "shown", "teleported", "critical_damping", "frequency", "reach"]
