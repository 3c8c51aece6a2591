"""Plasticity: a body strained beyond a yield keeps part of the deformation.

After every step (a frame; a substep when the body tears), each element whose elastic strain
exceeds ``yield_strain`` moves its rest shape towards the current shape, at ``rate``: the share
1 − exp(−rate·Δt) of the excess beyond the yield is taken into the rest shape, and the permanent
(plastic) strain never exceeds ``max_strain``. The rest data live in the frame's ``State``
(``rest_lengths``, ``rest_angles``, ``inverse_rest_shapes``), so a dent is part of the frame state:
the same after playback, a jump, a bake and a reload. Volume energies keep their rest volume (plastic
flow of solids preserves volume), so a dent pushes material aside instead of vanishing.

Elements: springs (cage edges in the Springs and PBD modes, a surface body's springs): the rest
length l creeps towards L/(1 ± yield); hinges (surface bodies): the rest angle towards θ ∓ yield
(the same numbers in radians); continuum tets: the rest shape D_m takes the excess of the principal
stretches of F = D_s·D_m⁻¹ beyond [1 − yield, 1 + yield], volume-preserving (det = 1), with the
total plastic stretches kept within [1 − max, 1 + max] (multiplicative plasticity, F = F_e·F_p; the
yield-and-creep form of Müller & Gross 2004, "Interactive Virtual Materials", §4.3; O'Brien et al.
2002 for plastic rest shapes in simulation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry import inverse3
from ..errors import TetRigInputError
from .bending import angle_change, angle_gradients
from .model import Model, State


@dataclass(frozen=True)
class PlasticSettings:
    """When and how fast a body keeps its deformation.

    Attributes:
        yield_strain: elastic strain (relative length change; radians for hinges) beyond which the
            rest shape creeps, ≥ 0.
        rate: [1/s], how fast the excess beyond the yield goes into the rest shape, > 0.
        max_strain: the largest permanent strain, > 0 (0.5: rest lengths between 50 % and 150 %).
    """

    yield_strain: float = 0.05
    rate: float = 10.0
    max_strain: float = 0.5

    def validated(self) -> "PlasticSettings":
        """Return self after checking ranges; raises TetRigInputError with a user message."""
        if not (self.yield_strain >= 0.0 and self.rate > 0.0 and 0.0 < self.max_strain < 1.0):
            raise TetRigInputError("Plasticity needs a yield of zero or more, a positive rate and a "
                                   "maximum between 0 and 1.")
        return self


def creep_share(settings: PlasticSettings, dt: float) -> float:
    """The share of the excess beyond the yield taken into the rest shape over ``dt`` [s]."""
    return float(-np.expm1(-settings.rate * dt))


def creep_lengths(rest: np.ndarray, lengths: np.ndarray, original: np.ndarray,
                  settings: PlasticSettings, dt: float) -> np.ndarray:
    """New rest lengths [m] of springs of current rest ``rest``, length ``lengths`` and original
    rest ``original`` (float64 [k] each) after ``dt`` [s]."""
    y = settings.yield_strain
    target = np.clip(rest, lengths / (1.0 + y), lengths / max(1.0 - y, 1e-12))
    moved = rest + creep_share(settings, dt) * (target - rest)
    return np.clip(moved, (1.0 - settings.max_strain) * original, (1.0 + settings.max_strain) * original)


def creep_angles(rest: np.ndarray, angles: np.ndarray, original: np.ndarray,
                 settings: PlasticSettings, dt: float) -> np.ndarray:
    """New rest angles [rad] of hinges of current rest ``rest``, angle ``angles`` and original rest
    ``original`` (float64 [k] each) after ``dt`` [s] (yield and maximum in radians)."""
    y = settings.yield_strain
    elastic = angle_change(angles, rest)
    excess = elastic - np.clip(elastic, -y, y)
    moved = rest + creep_share(settings, dt) * excess
    plastic = np.clip(angle_change(moved, original), -settings.max_strain, settings.max_strain)
    return original + plastic


def creep_shapes(positions: np.ndarray, tets: np.ndarray, inverse_rest: np.ndarray,
                 original_inverse: np.ndarray, settings: PlasticSettings, dt: float) -> np.ndarray:
    """New D_m⁻¹ [1/m] of tets (float64 [tet_count, 3, 3] each: current and original) at
    ``positions`` [m] after ``dt`` [s]; inverted tets (det F ≤ 0) keep theirs.

    Only the tets that may be beyond the yield are decomposed: the eigenvalues σ² of C = FᵀF lie
    within ‖C − I‖_F of 1 (Weyl's inequality), so a tet with (1 − y)² ≤ 1 ± ‖C − I‖_F ≤ (1 + y)²
    has every principal stretch σ within the yield and keeps its rest shape."""
    p = positions[tets]
    ds = np.transpose(p[:, 1:] - p[:, :1], (0, 2, 1))
    f = ds @ inverse_rest
    y = settings.yield_strain
    c = np.transpose(f, (0, 2, 1)) @ f
    spread = np.sqrt(np.einsum("tij,tij->t", c - np.eye(3), c - np.eye(3)))
    may_yield = (1.0 + spread > (1.0 + y) ** 2) | (1.0 - spread < (1.0 - y) ** 2)
    chosen = np.flatnonzero(may_yield & (np.linalg.det(f) > 0.0))
    out = inverse_rest.copy()
    if chosen.shape[0] == 0:
        return out
    _, sigma, vt = np.linalg.svd(f[chosen])
    flow = sigma / np.clip(sigma, 1.0 - y, 1.0 + y)  # the stretch beyond the yield
    flow = np.maximum(flow, 1e-12) ** creep_share(settings, dt)
    flow /= np.cbrt(np.prod(flow, axis=1, keepdims=True))  # volume-preserving
    v = np.transpose(vt, (0, 2, 1))
    new_shape = (v * flow[:, None, :]) @ vt @ inverse3(inverse_rest[chosen])
    # the total plastic deformation F_p = D_m·D_m0⁻¹ within [1 − max, 1 + max]
    up, sp, vpt = np.linalg.svd(new_shape @ original_inverse[chosen])
    sp = np.clip(sp, 1.0 - settings.max_strain, 1.0 + settings.max_strain)
    new_shape = (up * sp[:, None, :]) @ vpt @ inverse3(original_inverse[chosen])
    out[chosen] = inverse3(new_shape)
    return out


def creep(model: Model, state: State, settings: PlasticSettings, dt: float, continuum: bool) -> State:
    """The state with its rest data crept over ``dt`` [s] (see the module): the continuum tets'
    rest shapes when ``continuum``, else the springs' rest lengths; and the hinges' rest angles.
    ``model`` holds the original rest data; ``state`` is not modified."""
    out = state.moved(state.positions, state.velocities, state.rotations, state.shown_positions, state.history)
    x = state.positions
    if continuum and model.tet_count:
        current = model.inverse_rest_shapes if state.inverse_rest_shapes is None else state.inverse_rest_shapes
        out.inverse_rest_shapes = creep_shapes(x, model.tets, current, model.inverse_rest_shapes, settings, dt)
    elif model.edge_count:
        current = model.rest_lengths if state.rest_lengths is None else state.rest_lengths
        lengths = np.linalg.norm(x[model.edges[:, 0]] - x[model.edges[:, 1]], axis=1)
        out.rest_lengths = creep_lengths(current, lengths, model.rest_lengths, settings, dt)
    if model.hinges.shape[0]:
        current = model.rest_angles if state.rest_angles is None else state.rest_angles
        p = x[model.hinges]
        angles = angle_gradients(*(p[:, j, k] for j in range(4) for k in range(3)))[0]
        out.rest_angles = creep_angles(current, angles, model.rest_angles, settings, dt)
    return out
