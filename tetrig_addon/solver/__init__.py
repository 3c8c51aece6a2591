"""The soft-body solver: Vertex Block Descent on the cage's control points (see ``loop.py``).

One module per constraint kind (``edges``, ``volumes``, ``continuum``, ``goals``, ``contacts``, and
for surface bodies ``bending`` and ``pressure``) and ``plasticity``,
each with its plan as a dataclass and its formulas written once for both backends; the step loop
in NumPy (``reference``) and compiled with Numba (``kernel``); ``backend`` chooses (``step``).
"""

from .backend import BackendUnavailable, step
from .model import GOAL_EXACT, Model, State, build_model, lumped_masses, rest_state, with_rest
from .settings import (DEFAULT_STEPS_PER_SECOND, INTEGRATOR_BDF2, INTEGRATOR_EULER, INTEGRATORS, MODE_CONTINUUM,
                       MODE_PBD, MODE_SPRINGS, MODES,
                       SPRING_NETWORK_YOUNG_SHARE, SimSettings, SurfaceMaterial, lame_parameters,
                       spring_moduli, substeps_for)
from .plasticity import PlasticSettings

__all__ = ["BackendUnavailable", "DEFAULT_STEPS_PER_SECOND", "GOAL_EXACT", "INTEGRATORS", "INTEGRATOR_BDF2",
           "INTEGRATOR_EULER", "MODES", "MODE_CONTINUUM",
           "MODE_PBD", "MODE_SPRINGS", "Model", "PlasticSettings", "SPRING_NETWORK_YOUNG_SHARE", "SimSettings",
           "State", "SurfaceMaterial",
           "build_model", "lame_parameters", "lumped_masses", "rest_state", "spring_moduli", "step",
           "substeps_for", "with_rest"]
