"""XPBD solver on the cage's control points: every unique tet edge is a distance constraint.

The loop follows Müller's "Ten Minute Physics" soft bodies (tutorials 10 and 12) and Macklin et al.
2019, "Small Steps in Physics Simulation": the frame is split into ``substeps``, each with one
constraint iteration and the Lagrange multiplier starting at zero, so the XPBD update reduces to
Δλ = −C / (w₁ + w₂ + α̃), α̃ = α / Δt² (Macklin, Müller, Chentanez 2016, "XPBD: Position-Based
Simulation of Compliant Constrained Dynamics"). The seed's Chaos spring (article 000,
``FPBDRigidSpringConstraints::GetDelta``: Δ = k·(|p0−p1| − d)/(w0+w1)) is offered as the ``"PBD"``
mode for fidelity; its stiffness k ∈ [0, 1] has no physical unit and depends on the substep count.

Constraints are projected Gauss-Seidel style but vectorized: edges are graph-coloured at model-build
time so that no two edges of one colour share a control point, and each colour is one NumPy update.
The per-frame path loops over substeps and colours only, never over points or constraints.

Names follow Newton (NVIDIA Warp): ``Model`` is static, ``State`` changes every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from . import colliders as collision
from . import continuum
from .cage import tet_volumes, unique_edges
from .errors import TetRigInputError

SCHEME_GAUSS_SEIDEL = "GAUSS_SEIDEL"
SCHEME_JACOBI = "JACOBI"
SCHEMES = (SCHEME_GAUSS_SEIDEL, SCHEME_JACOBI)
# Jacobi over-relaxation ω: each point moves ω × the average of its constraints' corrections
# (Macklin et al. 2014, "Unified Particle Physics for Real-Time Applications", §4.2: ω ∈ [1, 2]).
JACOBI_RELAXATION = 1.5

MODE_XPBD = "XPBD"
MODE_PBD = "PBD"
MODE_CONTINUUM = "CONTINUUM"
MODES = (MODE_XPBD, MODE_PBD, MODE_CONTINUUM)

# A goal weight at least this is 1: the point follows its goal exactly (kinematic).
GOAL_EXACT = 1.0 - 1e-6

# Edges shorter than this [m] have no defined direction; their correction is skipped this substep.
MIN_EDGE_LENGTH = 1e-12


@dataclass(frozen=True)
class Model:
    """Static description of a cage for simulation (built once per bind).

    Attributes:
        rest_positions: float64 [particle_count, 3] [m], control points at rest (world space).
        inverse_masses: float64 [particle_count] [1/kg]; 0 for pinned control points.
        edges: int32 [edge_count, 2], unique tet edges, ordered by colour.
        rest_lengths: float64 [edge_count] [m].
        color_offsets: int64 [color_count + 1]; edges[color_offsets[c]:color_offsets[c+1]] share no
            control point.
        edge_compliance_scale: float64 [edge_count] [1/m], l₀² / V_e with V_e the rest volume the
            edge represents (a sixth of each incident tet's); edge compliance α = scale / E.
        tets: int32 [tet_count, 4], ordered by colour.
        rest_volumes: float64 [tet_count] [m³]; volume compliance α = 36·V₀ / K for C = 6(V − V₀).
        tet_color_offsets: int64 [tet_color_count + 1]; tets[tet_color_offsets[c]:...[c+1]] share
            no control point.
        masses: float64 [particle_count] [kg], lumped (ρ·V/4 per tet corner), pins included.
        edge_counts, tet_counts: float64 [particle_count], how many edges / tets touch each point
            (≥ 1), the averaging denominators of the Jacobi scheme.
        contact_indices: int32 [contact_count, 4], control points of the mesh vertices that
            collide (normally every vertex): collisions act on the mesh, not on the cage, so the
            mesh touches the ground exactly and the cage may dip below it (seed problem 4).
        contact_weights: float64 [contact_count, 4], their barycentric weights.
        inverse_rest_shapes: float64 [tet_count, 3, 3] [1/m], D_m⁻¹ of each tet (in ``tets``
            order) for the continuum model.
        goal_weights: float64 [particle_count] in [0, 1) (or empty: none): how strongly each free
            control point is pulled to its goal (its rest position carried by the animation);
            points with goal weight 1 follow their goal exactly and are kinematic (inverse mass 0).
    """

    rest_positions: np.ndarray
    inverse_masses: np.ndarray
    edges: np.ndarray
    rest_lengths: np.ndarray
    color_offsets: np.ndarray
    edge_compliance_scale: np.ndarray
    tets: np.ndarray
    rest_volumes: np.ndarray
    tet_color_offsets: np.ndarray
    masses: np.ndarray
    edge_counts: np.ndarray
    tet_counts: np.ndarray
    contact_indices: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int32))
    contact_weights: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    inverse_rest_shapes: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))
    goal_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def particle_count(self) -> int:
        return int(self.rest_positions.shape[0])

    @property
    def edge_count(self) -> int:
        return int(self.edges.shape[0])

    @property
    def color_count(self) -> int:
        return int(self.color_offsets.shape[0] - 1)


@dataclass
class State:
    """What changes every step.

    Attributes:
        positions: float64 [particle_count, 3] [m].
        velocities: float64 [particle_count, 3] [m/s].
    """

    positions: np.ndarray
    velocities: np.ndarray

    def copy(self) -> "State":
        return State(self.positions.copy(), self.velocities.copy())


@dataclass(frozen=True)
class SimSettings:
    """Per-frame simulation settings (read once per step, never from globals).

    Attributes:
        mode: ``"XPBD"`` (tet-edge springs + volume, physical stiffness, default), ``"CONTINUUM"``
            (corotated finite-element tets, ``continuum``: accurate for the given E and K) or
            ``"PBD"`` (the seed's stiffness k).
        youngs_modulus: E [Pa] of the edge springs (XPBD). Each edge gets the compliance
            α = l₀² / (E·V_e), so that a uniform strain ε stores about ½·E·ε² per unit volume
            whatever the cage resolution or object scale.
        use_volume: whether tet volume constraints are solved (they stop tets inverting).
        volume_stiffness: K [Pa], bulk-modulus-like: a tet stores ½·K·(V − V₀)²/V₀.
        stiffness: PBD stiffness k ∈ [0, 1] (PBD mode).
        damping: velocity damping rate [1/s]; velocities decay as exp(−damping·t).
        substeps: sim_substeps per frame (≥ 1), one constraint iteration each.
        scheme: ``"GAUSS_SEIDEL"`` (graph-coloured, exact XPBD per constraint) or ``"JACOBI"``
            (all constraints at once, averaged and over-relaxed: fewer NumPy calls per substep).
        gravity: float64 [3] [m/s²], world space.
        ground_height: world z of the ground plane [m], or ``None`` for no ground.
        ground_friction: fraction of tangential motion removed while touching the ground, [0, 1].
        max_speed: speed limit of every control point [m/s] (seed 001): a huge impulse or an
            extreme setting cannot fling points arbitrarily far in one substep.
        goal_stiffness: k [N/(m·kg)] = [1/s²], goal spring stiffness per kilogram: a point of goal
            weight g oscillates about its goal at √(g·k)/2π Hz whatever its mass (the cage
            resolution does not change it). Seed 001's spring to the animated target.
        goal_damping: [1/s], decay rate of a goal point's velocity relative to its goal's,
            times its goal weight.
    """

    mode: str = MODE_XPBD
    youngs_modulus: float = 1e5
    use_volume: bool = True
    volume_stiffness: float = 1e6
    stiffness: float = 1.0
    damping: float = 1.0
    substeps: int = 10
    scheme: str = SCHEME_GAUSS_SEIDEL
    gravity: tuple = (0.0, 0.0, -9.81)
    ground_height: float | None = None
    ground_friction: float = 0.5
    max_speed: float = 100.0
    goal_stiffness: float = 400.0
    goal_damping: float = 5.0

    def validated(self) -> "SimSettings":
        """Return self after checking ranges; raises TetRigInputError with a user-facing message."""
        if self.mode not in MODES:
            raise TetRigInputError(f"Unknown solver mode {self.mode!r}; use one of {MODES}.")
        if self.scheme not in SCHEMES:
            raise TetRigInputError(f"Unknown scheme {self.scheme!r}; use one of {SCHEMES}.")
        if self.substeps < 1:
            raise TetRigInputError("Substeps must be at least 1.")
        if not (self.youngs_modulus > 0.0 and self.volume_stiffness > 0.0):
            raise TetRigInputError("Stiffness must be positive.")
        if not 0.0 <= self.stiffness <= 1.0:
            raise TetRigInputError("PBD stiffness must be between 0 and 1.")
        if not self.damping >= 0.0:
            raise TetRigInputError("Damping must be zero or positive.")
        if not self.max_speed > 0.0:
            raise TetRigInputError("Maximum speed must be positive.")
        if not 0.0 <= self.ground_friction <= 1.0:
            raise TetRigInputError("Ground friction must be between 0 and 1.")
        if not (self.goal_stiffness >= 0.0 and self.goal_damping >= 0.0):
            raise TetRigInputError("Goal stiffness and goal damping must be zero or positive.")
        if self.mode == MODE_CONTINUUM:
            continuum.lame_parameters(self.youngs_modulus, self.volume_stiffness)
        return self


def color_elements(elements: np.ndarray, particle_count: int) -> np.ndarray:
    """Greedy colouring: a colour per element (edge or tet) so that elements of one colour share
    no point, which lets one colour be projected in a single vectorized Gauss-Seidel update.

    Runs once at model-build time (a Python loop over elements is fine there, not per frame).

    Args:
        elements: int [element_count, k], point indices of each element.
        particle_count: number of points the elements index.

    Returns:
        int64 [element_count], colours 0..color_count-1.
    """
    used: list[set[int]] = [set() for _ in range(particle_count)]
    colors = np.empty(elements.shape[0], dtype=np.int64)
    for e, pts in enumerate(elements.tolist()):
        taken = set().union(*(used[p] for p in pts))
        c = 0
        while c in taken:
            c += 1
        colors[e] = c
        for p in pts:
            used[p].add(c)
    return colors


def _order_by_color(elements: np.ndarray, particle_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Elements sorted by colour and the colour offsets (int64 [color_count + 1])."""
    colors = color_elements(elements, particle_count)
    order = np.argsort(colors, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(colors))]).astype(np.int64)
    return elements[order], offsets


def lumped_masses(positions: np.ndarray, tets: np.ndarray, density: float) -> np.ndarray:
    """Lumped masses: each tet gives ρ·V/4 to each of its four control points.

    Args:
        positions: float [particle_count, 3] [m].
        tets: int [tet_count, 4].
        density: ρ [kg/m³].

    Returns:
        float64 [particle_count] [kg].
    """
    vol = np.abs(tet_volumes(positions, tets))
    return np.bincount(np.asarray(tets).ravel(), weights=np.repeat(vol * density / 4.0, 4),
                       minlength=positions.shape[0])


def build_model(rest_positions: np.ndarray, tets: np.ndarray, density: float = 1000.0,
                pinned: np.ndarray | None = None,
                contacts: tuple[np.ndarray, np.ndarray] | None = None,
                goal_weights: np.ndarray | None = None) -> Model:
    """Build the static simulation model of a cage.

    Args:
        rest_positions: float [particle_count, 3] [m], control points at rest, world space.
        tets: int [tet_count, 4], positively oriented.
        density: ρ [kg/m³], > 0.
        pinned: bool [particle_count] or ``None``; pinned control points follow their goal (their
            rest position, carried by the animation) exactly.
        goal_weights: float [particle_count] in [0, 1] or ``None``; weight 1 pins the point,
            0 < weight < 1 pulls it to its goal with a spring (``SimSettings.goal_stiffness``).
        contacts: (int [contact_count, 4] indices, float [contact_count, 4] weights) of the mesh
            vertices that collide, or ``None`` to collide with the control points themselves.

    Returns:
        A ``Model``.

    Raises:
        TetRigInputError: non-positive density, or a cage without tets.
    """
    if not density > 0.0:
        raise TetRigInputError("Density must be positive.")
    x0 = np.asarray(rest_positions, dtype=np.float64)
    tets = np.asarray(tets, dtype=np.int32)
    if tets.shape[0] == 0:
        raise TetRigInputError("The cage has no tets.")
    # A mirroring world matrix (negative scale) turns every tet inside out: orient them again.
    inverted = tet_volumes(x0, tets) < 0.0
    tets = tets.copy()
    tets[inverted] = tets[inverted][:, [0, 1, 3, 2]]
    masses = lumped_masses(x0, tets, density)
    with np.errstate(divide="ignore"):
        inv = np.where(masses > 0.0, 1.0 / masses, 0.0)
    goals = np.zeros(x0.shape[0])
    if goal_weights is not None:
        goals = np.clip(np.asarray(goal_weights, dtype=np.float64), 0.0, 1.0)
        pinned = goals >= GOAL_EXACT if pinned is None else (np.asarray(pinned, dtype=bool) | (goals >= GOAL_EXACT))
        goals = np.where(goals >= GOAL_EXACT, 0.0, goals)
    if pinned is not None:
        inv = np.where(np.asarray(pinned, dtype=bool), 0.0, inv)
    edges, offsets = _order_by_color(unique_edges(tets), x0.shape[0])
    tets, tet_offsets = _order_by_color(tets, x0.shape[0])
    rest_lengths = np.linalg.norm(x0[edges[:, 0]] - x0[edges[:, 1]], axis=1)
    edge_volumes = _edge_volumes(edges, tets, np.abs(tet_volumes(x0, tets)), x0.shape[0])
    if contacts is None:  # the control points themselves
        contacts = (np.repeat(np.arange(x0.shape[0])[:, None], 4, axis=1),
                    np.tile([1.0, 0.0, 0.0, 0.0], (x0.shape[0], 1)))
    return Model(rest_positions=x0, inverse_masses=inv, edges=edges, rest_lengths=rest_lengths,
                 color_offsets=offsets, edge_compliance_scale=rest_lengths**2 / edge_volumes, tets=tets, rest_volumes=tet_volumes(x0, tets),
                 tet_color_offsets=tet_offsets, masses=masses,
                 edge_counts=np.maximum(np.bincount(edges.ravel(), minlength=x0.shape[0]), 1).astype(np.float64),
                 tet_counts=np.maximum(np.bincount(tets.ravel(), minlength=x0.shape[0]), 1).astype(np.float64),
                 contact_indices=np.asarray(contacts[0], dtype=np.int32),
                 contact_weights=np.asarray(contacts[1], dtype=np.float64),
                 inverse_rest_shapes=continuum.inverse_rest_shapes(x0, tets),
                 goal_weights=np.where(inv > 0.0, goals, 0.0))


def _edge_volumes(edges: np.ndarray, tets: np.ndarray, volumes: np.ndarray,
                  particle_count: int) -> np.ndarray:
    """Rest volume each edge represents: a sixth of the volume of every tet containing it."""
    pairs = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    tet_edges = np.sort(tets[:, pairs].reshape(-1, 2).astype(np.int64), axis=1)
    keys = tet_edges[:, 0] * particle_count + tet_edges[:, 1]
    edge_keys = edges[:, 0].astype(np.int64) * particle_count + edges[:, 1]
    order = np.argsort(edge_keys)
    slot = order[np.searchsorted(edge_keys[order], keys)]
    return np.bincount(slot, weights=np.repeat(volumes / 6.0, 6), minlength=edges.shape[0])


def rest_state(model: Model) -> State:
    """The state at the start frame: rest positions, zero velocity."""
    return State(model.rest_positions.copy(), np.zeros_like(model.rest_positions))


# A spring network (springs along every tet edge, each of stiffness k = E_s·V_e/l², edge directions
# spread evenly) has the Lamé parameters λ = μ = E_s/15 (a Cauchy solid: W = ½·E_s·⟨(nᵀεn)²⟩ with
# ⟨nᵢnⱼnₖnₗ⟩ = (δᵢⱼδₖₗ + δᵢₖδⱼₗ + δᵢₗδⱼₖ)/15), so its Young's modulus is E_s/6 (ν = 1/4).
# ``spring_moduli`` picks E_s and the volume constraints' modulus to give the material's μ and λ.
SPRING_NETWORK_LAME_SHARE = 15.0
# Without volume constraints the network's ν is 1/4: E_s = 6·E gives Young's modulus E.
SPRING_NETWORK_YOUNG_SHARE = 6.0
# Floor of the volume constraints' modulus, as a share of K, when the springs alone already hold
# more than the asked bulk modulus (ν < 1/4): the constraints still undo inverted tets.
MIN_VOLUME_SHARE = 1e-3


def spring_moduli(settings: SimSettings) -> tuple[float, float]:
    """(E_s, K_v) [Pa]: the spring modulus of the tet edges (compliance α = l₀²/(E_s·V_e)) and
    the volume constraints' modulus, such that the spring network plus volume constraints has
    the material's Young's modulus E and bulk modulus K: μ = 3KE/(9K − E), λ = K − 2μ/3,
    E_s = 15·μ, K_v = λ − μ (floored at ``MIN_VOLUME_SHARE``·K). Without volume constraints
    E_s = 6·E. Exact for evenly spread edge directions; a BCC cage is close (tested on a column).
    """
    e, k = settings.youngs_modulus, settings.volume_stiffness
    if not settings.use_volume or 9.0 * k <= e:
        return SPRING_NETWORK_YOUNG_SHARE * e, k
    mu = 3.0 * k * e / (9.0 * k - e)
    lam = k - 2.0 * mu / 3.0
    return SPRING_NETWORK_LAME_SHARE * mu, max(lam - mu, MIN_VOLUME_SHARE * k)


def _edge_gains(model: Model, sim_dt: float, settings: SimSettings) -> np.ndarray:
    """float64 [edge_count]: Δλ = −gain·C for each edge, constant over a step (it depends on Δt and
    the stiffness). XPBD: 1 / (w_i + w_j + α/Δt²); PBD: k / (w_i + w_j); 0 for two pinned ends."""
    w = model.inverse_masses
    if settings.mode == MODE_XPBD:
        alpha_tilde = model.edge_compliance_scale / (spring_moduli(settings)[0] * sim_dt * sim_dt)
        scale = 1.0
    else:
        alpha_tilde, scale = np.zeros(model.edge_count), settings.stiffness
    denom = w[model.edges[:, 0]] + w[model.edges[:, 1]] + alpha_tilde
    return np.where(denom > 0.0, scale / np.where(denom > 0.0, denom, 1.0), 0.0)


def _edge_plan(model: Model, gain: np.ndarray) -> list[tuple]:
    """Per-colour arrays for ``solve_edges``, built once per step:
    (i, j, w_i [k,1], w_j [k,1], l₀, gain) with gain from ``_edge_gains``."""
    w = model.inverse_masses
    i, j = model.edges[:, 0], model.edges[:, 1]
    wi, wj = w[i][:, None], w[j][:, None]
    o = model.color_offsets
    return [(i[o[c]:o[c + 1]], j[o[c]:o[c + 1]], wi[o[c]:o[c + 1]], wj[o[c]:o[c + 1]],
             model.rest_lengths[o[c]:o[c + 1]], gain[o[c]:o[c + 1]]) for c in range(model.color_count)]


def solve_edges(x: np.ndarray, plan: list[tuple]) -> None:
    """One Gauss-Seidel pass over the tet-edge distance constraints, colour by colour (in place).

    C = |x_i − x_j| − l₀; XPBD: Δλ = −C / (w_i + w_j + α/Δt²) with α = l₀²/(E·V_e);
    PBD: Δλ = −k·C / (w_i + w_j).
    x_i += w_i·Δλ·n, x_j −= w_j·Δλ·n with n = (x_i − x_j)/|x_i − x_j|.
    ``plan`` comes from ``_edge_plan``; each colour is six NumPy calls on disjoint points.
    """
    for i, j, wi, wj, rest, gain in plan:
        d = x[i] - x[j]
        length = np.sqrt(np.einsum("ij,ij->i", d, d))
        d *= (gain * (rest - length) / np.maximum(length, MIN_EDGE_LENGTH))[:, None]
        x[i] += wi * d
        x[j] -= wj * d


# Smallest positive float: a denominator floor that never changes a non-zero one.
_TINY = float(np.finfo(np.float64).tiny)


def _volume_gradients(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For tets p [k, 4, 3]: (∇C [k, 4, 3], 6V [k]) with C = 6V = e₁·(e₂×e₃), eᵢ = pᵢ − p₀.

    ∇₁ = e₂×e₃, ∇₂ = e₃×e₁, ∇₃ = e₁×e₂, ∇₀ = −(∇₁+∇₂+∇₃) (Müller, Ten Minute Physics 10).
    The three cross products are computed together (a × b = a₁₂₀·b₂₀₁ − a₂₀₁·b₁₂₀).
    """
    e = p[:, 1:] - p[:, :1]  # [k, 3, 3]: e₁, e₂, e₃
    a, b = e[:, [1, 2, 0]], e[:, [2, 0, 1]]
    g = a[:, :, [1, 2, 0]] * b[:, :, [2, 0, 1]] - a[:, :, [2, 0, 1]] * b[:, :, [1, 2, 0]]
    six_v = np.einsum("ni,ni->n", e[:, 0], g[:, 0])
    return np.concatenate([-g.sum(1, keepdims=True), g], axis=1), six_v


def _volume_plan(model: Model, sim_dt: float, settings: SimSettings) -> list[tuple]:
    """Per-colour arrays for ``solve_volumes``: (tets, w [k,4], 6V₀, α̃)."""
    w = model.inverse_masses[model.tets]
    alpha_tilde = 36.0 * model.rest_volumes / (spring_moduli(settings)[1] * sim_dt * sim_dt)
    o = model.tet_color_offsets
    return [(model.tets[o[c]:o[c + 1]], w[o[c]:o[c + 1]], 6.0 * model.rest_volumes[o[c]:o[c + 1]],
             alpha_tilde[o[c]:o[c + 1]]) for c in range(o.shape[0] - 1)]


def solve_volumes(x: np.ndarray, plan: list[tuple]) -> None:
    """One Gauss-Seidel pass over the tet volume constraints, colour by colour (in place).

    C = 6(V − V₀), ∇ⱼC = cross product of the face opposite corner j; Δλ = −C / (Σ wⱼ|∇ⱼC|² + α̃).
    Unlike edge springs, this pushes an inverted tet back to positive volume (seed problem 3).
    """
    for t, wt, six_v0, alpha_tilde in plan:
        grads, six_v = _volume_gradients(x[t])
        denom = np.einsum("kj,kj->k", wt, np.einsum("kji,kji->kj", grads, grads)) + alpha_tilde
        grads *= (wt * ((six_v0 - six_v) / np.maximum(denom, _TINY))[:, None])[:, :, None]
        x[t] += grads


def _scatter(x: np.ndarray, index: np.ndarray, delta: np.ndarray, scale: np.ndarray) -> None:
    """x[p] += scale[p] · Σ delta[k] over the k with index[k] = p (one bincount per axis)."""
    n = x.shape[0]
    for axis in range(3):
        x[:, axis] += scale * np.bincount(index, weights=delta[:, axis], minlength=n)


def solve_edges_jacobi(model: Model, x: np.ndarray, gain: np.ndarray) -> None:
    """All tet-edge constraints at once (Jacobi), corrections averaged per point and over-relaxed
    by ``JACOBI_RELAXATION``. Same Δλ = −gain·C as ``solve_edges``; in place."""
    w = model.inverse_masses
    i, j = model.edges[:, 0], model.edges[:, 1]
    d = x[i] - x[j]
    length = np.maximum(np.sqrt(np.einsum("ij,ij->i", d, d)), MIN_EDGE_LENGTH)
    corr = (gain * (model.rest_lengths - length) / length)[:, None] * d
    _scatter(x, np.concatenate([i, j]),
             np.concatenate([w[i][:, None] * corr, -w[j][:, None] * corr]),
             JACOBI_RELAXATION / model.edge_counts)


def solve_volumes_jacobi(model: Model, x: np.ndarray, sim_dt: float, settings: SimSettings) -> None:
    """All tet volume constraints at once (Jacobi), averaged and over-relaxed; in place."""
    if not settings.use_volume:
        return
    w = model.inverse_masses
    t = model.tets
    grads, six_v = _volume_gradients(x[t])
    wt = w[t]
    alpha_tilde = 36.0 * model.rest_volumes / (spring_moduli(settings)[1] * sim_dt * sim_dt)
    denom = np.einsum("kj,kj->k", wt, np.einsum("kji,kji->kj", grads, grads)) + alpha_tilde
    dlam = -(six_v - 6.0 * model.rest_volumes) / np.where(denom > 0.0, denom, np.inf)
    delta = (wt * dlam[:, None])[:, :, None] * grads
    _scatter(x, t.ravel(), delta.reshape(-1, 3), JACOBI_RELAXATION / model.tet_counts)


# Contacts farther above the ground than this many times the distance their control points could
# travel in one frame (speed and gravity) are skipped for that frame's substeps.
CONTACT_MARGIN_FACTOR = 3.0
# ... plus this fraction of the cage's size, for motion the constraints add on top.
CONTACT_MARGIN_EXTENT = 0.01
# A contact's speed is taken as at least this share of the fastest control point's.
CONTACT_SPEED_SHARE = 0.25
# Collider passes per substep: contacts sharing a control point are averaged (Jacobi), so one pass
# under-corrects; the tangent planes make a pass a few array operations.
COLLIDER_ITERATIONS = 8


def ground_candidates(model: Model, state: State, settings: SimSettings, margins: np.ndarray) -> tuple:
    """The contacts that could reach the ground during the next frame: (indices [c, 4],
    weights [c, 4]). One gather per frame instead of one over every contact per substep.

    Args:
        margins: float64 [contact_count] [m], from ``contact_margins``."""
    idx, w = model.contact_indices, model.contact_weights
    if settings.ground_height is None or idx.shape[0] == 0:
        return idx[:0], w[:0]
    z = np.einsum("vk,vk->v", w, state.positions[idx, 2])
    near = z - settings.ground_height < margins
    return idx[near], w[near]


def solve_ground(model: Model, x: np.ndarray, x_prev: np.ndarray, settings: SimSettings,
                 contacts: tuple) -> None:
    """Ground plane z = ground_height, acting on the contact vertices (in place).

    ``contacts`` is the subset from ``ground_candidates``. A contact vertex below the plane is lifted through its control points with the PBD update of
    C = Σₖ wₖ zₖ − h, ∇ₖC = wₖ: Δλ = −C / Σₖ wₖ² w⁻¹ₖ, taken over the positive weights only (a
    control point with a negative weight would be pushed down, against the others). The lifted
    control points then lose ``ground_friction`` of their sliding this substep. Contacts sharing a
    control point are combined by taking the largest lift (Jacobi-style).
    """
    idx, w = contacts
    if settings.ground_height is None or idx.shape[0] == 0:
        return
    c = np.einsum("vk,vk->v", w, x[idx, 2]) - settings.ground_height
    sinking = c < 0.0
    if not sinking.any():
        return
    idx, w, c = idx[sinking], w[sinking], c[sinking]
    inv = np.where(w > 0.0, model.inverse_masses[idx], 0.0)
    denom = np.einsum("vk,vk,vk->v", w, w, inv)
    dlam = np.where(denom > 0.0, -c / np.where(denom > 0.0, denom, 1.0), 0.0)
    # Several contacts on one control point each ask for the lift they need: take the largest
    # rather than their sum, which would overshoot. Lifts are ≥ 0 (C < 0, w > 0).
    lift = np.zeros(x.shape[0])
    np.maximum.at(lift, idx.ravel(), (inv * w * dlam[:, None]).ravel())
    touched = lift > 0.0
    x[touched, 2] += lift[touched]
    keep = 1.0 - settings.ground_friction
    x[touched, :2] = x_prev[touched, :2] + keep * (x[touched, :2] - x_prev[touched, :2])


def contact_margins(model: Model, state: State, settings: SimSettings, frame_dt: float) -> np.ndarray:
    """float64 [contact_count] [m]: how far each contact vertex could move during the next frame:
    its control points' own speeds (Σₖ|wₖ|·|vₖ|, an extrapolating vertex moves up to Σ|w| times
    its control points), at least ``CONTACT_SPEED_SHARE`` of the fastest point's (the constraints
    pass motion on within a frame), plus a free fall from rest (½·g·Δt²), times
    ``CONTACT_MARGIN_FACTOR``, plus ``CONTACT_MARGIN_EXTENT`` of the cage's size. Computed once
    per frame for both the ground and the colliders."""
    indices, weights = model.contact_indices, model.contact_weights
    speeds = np.sqrt(np.einsum("ij,ij->i", state.velocities, state.velocities))
    reach = np.abs(weights).sum(1)
    own = np.einsum("vk,vk->v", np.abs(weights), speeds[indices])
    speed = np.maximum(own, reach * CONTACT_SPEED_SHARE * float(speeds.max(initial=0.0)))
    fall = 0.5 * float(np.linalg.norm(settings.gravity)) * frame_dt * frame_dt
    extent = float(np.ptp(model.rest_positions, axis=0).max())
    return CONTACT_MARGIN_FACTOR * (frame_dt * speed + reach * fall) + reach * CONTACT_MARGIN_EXTENT * extent


def collider_candidates(model: Model, state: State, colliders: Sequence[collision.Collider],
                        margins: np.ndarray) -> list[tuple]:
    """The frame's collision constraints: per collider, the contacts that could touch it during
    the next frame with the surface's tangent plane at their closest point,
    [(collider, indices [c, 4], weights [c, 4], surface points [c, 3] [m], normals [c, 3],
    outside [c] bool: on the outer side at the frame's start)].

    As in Müller et al. 2007, "Position Based Dynamics" (§3.5), the constraints are generated once
    per time step (here a frame) and kept through its substeps: each substep then measures the
    distance to the plane, n·(p − s), not to the mesh. Exact queries are made only for vertices a
    cheap lower bound (distance to the collider's box, or to the nearest triangle's enclosing ball)
    cannot rule out; colliders no contact can reach are left out. ``margins`` [contact_count] [m]
    come from ``contact_margins``."""
    idx, w = model.contact_indices, model.contact_weights
    if not colliders or idx.shape[0] == 0:
        return []
    p = np.einsum("vk,vkc->vc", w, state.positions[idx])
    out = []
    for collider in colliders:
        near = np.flatnonzero(collision.near(collider, p, float(margins.max())))
        if near.shape[0] == 0:
            continue
        reach = margins[near] + collider.contact_reach
        q = p[near]
        gap = np.maximum(np.maximum(collider.bounds_min - q, q - collider.bounds_max), 0.0)
        lower = np.sqrt(np.einsum("ij,ij->i", gap, gap))
        inside_box = lower == 0.0
        if inside_box.any():
            centre_distance, _ = collider.center_tree.query(q[inside_box], k=1)
            lower[inside_box] = np.maximum(centre_distance - collider.max_reach, 0.0)
        # a closed collider's inside is a contact at any depth: a zero lower bound keeps it
        maybe = np.flatnonzero(lower < reach)
        if maybe.shape[0] == 0:
            continue
        distance, normal = collision.signed_distance(collider, q[maybe])
        band = (distance if collider.closed else np.abs(distance)) < reach[maybe]
        if band.any():
            keep = near[maybe[band]]
            surface = q[maybe[band]] - distance[band, None] * normal[band]
            outside = distance[band] >= 0.0
            out.append((collider, idx[keep], w[keep], surface, normal[band], outside))
    return out


def solve_colliders(model: Model, x: np.ndarray, x_prev: np.ndarray, contacts: list[tuple],
                    iterations: int = 1) -> None:
    """Push contact vertices out of collision objects, through their control points (in place).

    ``contacts`` come from ``collider_candidates``. A contact vertex p = Σₖ wₖ xₖ at distance
    d = n·(p − s) from its tangent plane that is in contact (``colliders.penetration_from_distance``:
    closer than the outer thickness) gets the depth t − d; the PBD update of C = n·p − n·s − t over
    the positive weights (as ``solve_ground``) gives control point k the correction w⁻¹ₖ·wₖ·Δλ·n,
    Δλ = (t − d) / Σₖ wₖ²w⁻¹ₖ. Corrections several contacts ask of one control point are averaged
    (Jacobi), ``iterations`` times; then the control points that were pushed lose the collider's
    ``friction`` share of their tangential motion this substep (once). Seed problem 4: the mesh
    vertices, not only the control points, stay outside the collider. A vertex that crosses an
    open surface (a plane) during the frame is pushed back however deep it got (continuous in
    time: the frame-start side decides).
    """
    # The passes only move control points outward: contacts clear of the surface now stay clear
    # (up to the Jacobi averaging of shared points), so the passes look at the others only.
    contacts = [c for c in (_touching(x, contact) for contact in contacts) if c is not None]
    normal_sums = [np.zeros_like(x) for _ in contacts]
    for _ in range(iterations):
        for contact, normal_sum in zip(contacts, normal_sums):
            _push_out(model, x, contact, normal_sum)
    for (collider, *_), normal_sum in zip(contacts, normal_sums):
        length = np.linalg.norm(normal_sum, axis=1)
        pushed = length > 0.0
        if not pushed.any() or collider.friction == 0.0:
            continue
        nrm = normal_sum[pushed] / length[pushed, None]
        motion = x[pushed] - x_prev[pushed]
        tangential = motion - np.einsum("ij,ij->i", motion, nrm)[:, None] * nrm
        x[pushed] -= collider.friction * tangential


# A contact farther outside than this many outer thicknesses skips this substep's passes.
TOUCH_MARGIN = 2.0


def _touching(x: np.ndarray, contact: tuple) -> tuple | None:
    """``contact`` restricted to the contact vertices within ``TOUCH_MARGIN`` outer thicknesses
    of their tangent plane (or behind it), or ``None`` when there are none."""
    collider, idx, w, surface, normal, outside = contact
    p = np.einsum("vk,vkc->vc", w, x[idx])
    near = np.einsum("ij,ij->i", normal, p - surface) < TOUCH_MARGIN * collider.thickness_outer
    if not near.any():
        return None
    return collider, idx[near], w[near], surface[near], normal[near], outside[near]


def _push_out(model: Model, x: np.ndarray, contact: tuple, normal_sum: np.ndarray) -> None:
    """One Jacobi pass of ``solve_colliders`` for one collider; adds the normals of the contacts
    that pushed each control point to ``normal_sum`` [particle_count, 3] (for the friction)."""
    collider, idx_all, w_all, surface, normal_all, outside = contact
    n = x.shape[0]
    p = np.einsum("vk,vkc->vc", w_all, x[idx_all])
    distance = np.einsum("ij,ij->i", normal_all, p - surface)
    depth = collision.penetration_from_distance(collider, distance)
    if not collider.closed:
        # a vertex that started the frame outside an open surface (a plane) and crossed it
        # deeper than its inner thickness went through it: push it back all the same
        depth = np.where(outside & (distance < 0.0), collider.thickness_outer - distance, depth)
    hit = depth > 0.0
    if not hit.any():
        return
    idx, w, depth, normal = idx_all[hit], w_all[hit], depth[hit], normal_all[hit]
    inv = np.where(w > 0.0, model.inverse_masses[idx], 0.0)
    denom = np.einsum("vk,vk,vk->v", w, w, inv)
    dlam = np.where(denom > 0.0, depth / np.where(denom > 0.0, denom, 1.0), 0.0)
    share = inv * w * dlam[:, None]  # [c, 4]: how far each control point moves along n
    pushed = (share > 0.0).ravel()
    flat = idx.ravel()
    count = np.bincount(flat, weights=pushed.astype(np.float64), minlength=n)
    moved = count > 0.0
    delta = np.zeros_like(x)
    for axis in range(3):
        delta[:, axis] = np.bincount(flat, weights=(share * normal[:, None, axis]).ravel(), minlength=n)
        normal_sum[:, axis] += np.bincount(flat, weights=np.repeat(normal[:, axis], 4) * pushed, minlength=n)
    x[moved] += delta[moved] / count[moved, None]


def _limit_speed(v: np.ndarray, max_speed: float) -> np.ndarray:
    """Scale down velocities faster than ``max_speed`` to exactly that speed (direction kept)."""
    speed = np.sqrt(np.einsum("ij,ij->i", v, v))
    too_fast = speed > max_speed
    if too_fast.any():
        v[too_fast] *= (max_speed / speed[too_fast])[:, None]
    return v


def step(model: Model, state: State, settings: SimSettings, frame_dt: float,
         goals: tuple[np.ndarray, np.ndarray] | None = None,
         colliders: Sequence[collision.Collider] = ()) -> State:
    """Advance one frame: ``settings.substeps`` XPBD substeps of one iteration each.

    Per substep (Müller, Ten Minute Physics 10): pre-solve (v += g·Δt, damping, goal damping,
    speed limit, predict x; pinned points move to their goal), solve (edges and volumes or
    continuum tets, goal springs, ground, colliders), post-solve (v = (x − x_prev)/Δt).

    Args:
        model: the static cage model.
        state: current positions/velocities; not modified.
        settings: validated ``SimSettings``.
        frame_dt: frame duration [s], > 0.
        goals: (start, end), float64 [particle_count, 3] [m] each: where every control point's
            goal is at the start and at the end of the frame (its rest position carried by the
            object's animated world transform), interpolated linearly over the substeps; ``None``:
            the goals stay at the rest positions.
        colliders: the frame's collision objects (``colliders.mesh_collider``), world space.

    Returns:
        The new ``State``.
    """
    sim_dt = frame_dt / settings.substeps
    x = state.positions.copy()
    v = state.velocities.copy()
    free = (model.inverse_masses > 0.0)[:, None]
    g = np.asarray(settings.gravity, dtype=np.float64)
    decay = np.exp(-settings.damping * sim_dt)
    goal_start, goal_end = goals if goals is not None else (model.rest_positions, model.rest_positions)
    goal_velocity = (goal_end - goal_start) / frame_dt
    goal_plan = _goal_plan(model, settings, sim_dt)
    solve = _constraint_solver(model, sim_dt, settings)
    margins = (contact_margins(model, state, settings, frame_dt)
               if settings.ground_height is not None or colliders else np.zeros(0))
    contacts = ground_candidates(model, state, settings, margins)
    collider_contacts = collider_candidates(model, state, colliders, margins)
    for substep in range(settings.substeps):
        goal = goal_start + (goal_end - goal_start) * ((substep + 1) / settings.substeps)
        # Damping acts on the velocity before gravity is added, so a body resting on its springs
        # feels the full g·Δt each substep and its sag does not depend on the substep count.
        v = np.where(free, v * decay + g * sim_dt, goal_velocity)
        if goal_plan is not None:
            points, _, damp = goal_plan
            v[points] -= damp * (v[points] - goal_velocity[points])
        v = _limit_speed(v, settings.max_speed)
        x_prev = x.copy()
        x = np.where(free, x + v * sim_dt, goal)  # pinned points follow their goal exactly
        solve(x)
        if goal_plan is not None:  # after the material, so a stiff goal wins over it
            solve_goals(x, goal, goal_plan)
        solve_ground(model, x, x_prev, settings, contacts)
        solve_colliders(model, x, x_prev, collider_contacts, COLLIDER_ITERATIONS)
        v = (x - x_prev) / sim_dt
    return State(x, v)


def _goal_plan(model: Model, settings: SimSettings, sim_dt: float) -> tuple | None:
    """(points [k], gain [k, 1], damping fraction [k, 1]) of the goal springs for one step, or
    ``None`` when no free point has a goal weight."""
    if model.goal_weights.shape[0] == 0:
        return None
    points = np.flatnonzero(model.goal_weights > 0.0)
    if points.shape[0] == 0:
        return None
    stiffness = model.goal_weights[points] * settings.goal_stiffness * sim_dt * sim_dt
    damp = 1.0 - np.exp(-settings.goal_damping * model.goal_weights[points] * sim_dt)
    return points, (stiffness / (1.0 + stiffness))[:, None], damp[:, None]


def solve_goals(x: np.ndarray, goal: np.ndarray, plan: tuple) -> None:
    """Goal springs (in place): C = x − goal (∇C = I), α = 1/(g·k·m), so the XPBD update
    Δx = −C·w/(w + α/Δt²) = −C·g·k·Δt²/(1 + g·k·Δt²) does not depend on the point's mass."""
    points, gain, _ = plan
    x[points] += gain * (goal[points] - x[points])


def _constraint_solver(model: Model, sim_dt: float, settings: SimSettings) -> Callable[[np.ndarray], None]:
    """The solve phase of one substep for the settings' mode and scheme, as a function of x
    (in place); its per-colour arrays are built here, once per step."""
    if settings.mode == MODE_CONTINUUM:
        mu, lam = continuum.lame_parameters(settings.youngs_modulus, settings.volume_stiffness)
        fem_plan = continuum.plan(model.tets, model.tet_color_offsets, model.inverse_masses,
                                  model.rest_volumes, model.inverse_rest_shapes, mu, lam, sim_dt)
        return lambda x: continuum.solve(x, fem_plan)
    gain = _edge_gains(model, sim_dt, settings)
    if settings.scheme == SCHEME_JACOBI:
        def solve_jacobi(x: np.ndarray) -> None:
            solve_edges_jacobi(model, x, gain)
            solve_volumes_jacobi(model, x, sim_dt, settings)
        return solve_jacobi
    edge_plan = _edge_plan(model, gain)
    volume_plan = _volume_plan(model, sim_dt, settings) if settings.use_volume else None

    def solve_gauss_seidel(x: np.ndarray) -> None:
        solve_edges(x, edge_plan)
        if volume_plan is not None:
            solve_volumes(x, volume_plan)
    return solve_gauss_seidel
