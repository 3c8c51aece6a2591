"""The global step: one inexact Newton step of the whole cage per substep, before the sweeps.

Why: a Gauss-Seidel sweep moves each control point against its neighbours' current positions, so a
mode that spans the whole body and is soft against each point's own stiffness (bending: a tail, an
antenna, a diving board) travels a small way per sweep, and at one sweep per substep a stiff bar
bent in slow motion (issue 24: 0.5 mm of a 29 mm sag after 1 s). This step solves the substep's
implicit Euler system for the whole cage at once, approximately, and the sweeps that follow keep
doing what they do well (contacts, the nonlinear rest).

Method: a few iterations of preconditioned conjugate gradients (PCG) on the Newton system
H·Δx = f of the substep's incremental potential G (``loop.py``), from Δx = 0, then x ← x + Δx.

* f = −∇G at every free point: inertia, the material, goals and the near contacts, the same
  formulas the sweeps use. The continuum tets' rotations are first carried to convergence
  (``ROTATION_CALLS``): a force from a lagging rotation is stiffer against turning than H says,
  and the step overshoots (measured: a pinned bar's Newton iterations diverge with 2 rotation
  steps and converge quadratically with 10).
* H = M/Δt² + the material's stiffness at its current orientation + goals + contacts.
  Continuum: each tet's linear-elastic stiffness K₀ turned by its rotation R, R·K₀·Rᵀ ("stiffness
  warping", Müller & Gross 2004, "Interactive Virtual Materials"; the corotated energy's Hessian
  at F = R), applied element by element, never assembled. It has a bending mode as soft as the
  material's, which the sweeps' blocks (and Projective Dynamics' Laplacian) do not. Springs: each
  spring's block of ``edges.force`` (k·u uᵀ and the clamped transverse term) and each tet's volume
  energy's Gauss-Newton term k·∇C ∇Cᵀ. A contact on a vertex p = Σₖ wₖxₖ couples its control
  points with wₖwₗ·(k_c n nᵀ + c(I − n nᵀ)), ``contacts.force``'s block.
* The preconditioner (two-level, additive, turned): R·[D⁻¹ + Φ·C·Φᵀ]·Rᵀ, with D the 3×3 diagonal
  blocks of H at rest (plus the contacts'), Φ the cage's ``COARSE_MODES`` softest vibration modes
  (Galerkin modes of a trilinear lattice of ``COARSE_CELLS`` cells along the cage's longest side),
  where a bending mode lives, C = (Φᵀ·H_rest·Φ)⁻¹, and R each point's rotation (the normalized sum
  of its tets' rotation quaternions; the springs' tets get one cheap rotation step per substep for
  it, ``rotation_step``).
  Turning the rest-shape preconditioner with the body is modal warping's idea (Choi & Ko 2005,
  "Modal Warping"); measured on a bar bent 30°, it brought the sag at 1 s from +315 % to +21 %
  of the reference with one iteration. One iteration gives a pinned bar's first swing to 11 %.
* The step keeps no rigid motion of a body that floats free (no kinematic point or goal in it):
  its mass-weighted translation and rotation are taken out, since the translation step and the
  sweeps carry those. (Measured: without this, an inexact solve's spurious torque turned a cube
  dropped flat on frictionless ground by 14° in 4 s; with it, 1.2°, against 0.5° without the
  global step. Held out of the step instead, the points near a contact made it 2.9°.)
* Guards: while any tet is inverted the step is skipped (H says nothing true about an inverted
  tet: measured, a scrambled Suzanne went to NaN), and a step is scaled down so no point moves
  more than ``STEP_LIMIT_SHARE`` of the mean rest edge length.

CG keeps the step a descent step of the quadratic model whatever the iteration count, so a cage
with no soft modes loses nothing. Formulas shared by both backends are written once here (arrays
in the NumPy reference, scalars in the kernel), as in the other formula modules.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy import abs as absolute, sqrt  # elementwise: the kernel swaps them for math's scalar ones (``kernel._scalar``)

from .continuum import ROTATION_EPSILON, ContinuumPlan
from .edges import EdgePlan
from .model import Model
from .settings import MODE_CONTINUUM, MODE_SPRINGS, SimSettings
from . import volumes
from .volumes import VolumePlan

# Calls of ``continuum.extract_rotation`` (``continuum.ROTATION_STEPS`` each) on every tet before
# its force enters f: the rotation must have converged (see the module's docstring).
ROTATION_CALLS = 3
# The coarse space: the softest modes of a trilinear lattice with this many cells along the
# cage's longest side (its other sides in proportion, at least one cell).
COARSE_CELLS = 6
COARSE_MODES = 30
# The farthest a point moves in one global step, as a share of the cage's mean rest edge length
# (a swinging bar's tip moves about a hundredth of that per step at 240 steps/s).
STEP_LIMIT_SHARE = 0.25
# The iterations at most in a frame with contact candidates (``in_contact``). The inexact Newton
# steps with the stiff penalty contacts shake a body, and friction then takes its slide: a cube on
# a 15° slope with μ = 0.1 decelerates at Coulomb's 1.59 m/s² with 0 or 1 iteration and at 0.02 /
# 0.22 / 0.13 / 0.53 / 1.24 m/s² with 2 / 3 / 5 / 10 / 30 (docs/solver-notes.md, stop 31).
CONTACT_ITERATIONS = 1


@dataclass(frozen=True)
class GlobalPlan:
    """The global step of one (model, settings, substep).

    Attributes:
        active: whether the step runs (cages in the Springs and Continuum modes, iterations > 0).
        iterations: PCG iterations per substep.
        blocks: float64 [particle_count, 6] [N/m], the 3×3 diagonal blocks of H at rest
            (M/Δt² + material + goals) as (H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂); the identity at
            kinematic points (which do not move).
        modes: float64 [particle_count, 3, m], the coarse space's vectors (zero at kinematic points).
        coarse: float64 [m, m] [m/N], the inverse of Φᵀ·H_rest·Φ.
        step_limit: [m], the farthest a point moves in one step (``STEP_LIMIT_SHARE``).
        floating: bool [component_count], the bodies (``Topology.components``) with no kinematic
            point and no goal: the step takes their rigid motion out.
        shape_vectors: float64 [tet_count, 4, 3] [1/m], the tets' bⱼ for their rotation estimates
            in the Springs mode (empty in the Continuum mode, whose plan has them).
    """

    active: bool
    iterations: int
    blocks: np.ndarray
    modes: np.ndarray
    coarse: np.ndarray
    step_limit: float
    floating: np.ndarray
    shape_vectors: np.ndarray


def inactive() -> GlobalPlan:
    """The plan that does nothing (arrays shaped for the kernel's types)."""
    return GlobalPlan(False, 0, np.zeros((0, 6)), np.zeros((0, 3, 0)), np.zeros((0, 0)), 0.0, np.zeros(0, dtype=np.bool_),
                      np.zeros((0, 4, 3)))


# Plans of the last few (cage, settings, step): building one costs 0.3-2 s (the coarse modes' dense
# eigensolve), so it must not be rebuilt each frame. Keyed on the cage's rest positions, tets,
# masses, pins and goal weights (the arrays themselves, held), which a model keeps when
# plasticity replaces its rest data each frame (a new Model
# object each time; measured: 0.5-5 s a frame with a cache keyed on the Model), and large enough
# for a scene of many bodies (with the material plans' 4 entries, a fifth body rebuilt every frame).
_CACHE_SIZE = 32
_cache: dict[tuple, tuple] = {}


# The material modes that have the global step (the PBD mode's projections have no Hessian).
MODES = (MODE_SPRINGS, MODE_CONTINUUM)


def used(model: Model, settings: SimSettings, surface: object | None) -> bool:
    """Whether frames of ``model`` (a cage: ``surface`` is ``None``) take the global step with
    ``settings``: iterations > 0, a mode in ``MODES``, and tets."""
    return surface is None and settings.global_iterations > 0 and model.tet_count > 0 and settings.mode in MODES


def in_contact(plan: GlobalPlan) -> GlobalPlan:
    """``plan`` for a frame with contact candidates: at most ``CONTACT_ITERATIONS`` iterations."""
    if plan.iterations <= CONTACT_ITERATIONS:
        return plan
    return dataclasses.replace(plan, iterations=CONTACT_ITERATIONS)


def plan(model: Model, settings: SimSettings, sim_dt: float, surface: object | None, edge_plan: EdgePlan,
         volume_plan: VolumePlan, continuum_plan: ContinuumPlan) -> GlobalPlan:
    """The global step's preconditioner for the cage ``model`` at the substep ``sim_dt`` [s], with
    the material of the step's plans.

    Inactive for Surface bodies (``surface`` not ``None``), the PBD mode, cages without free
    points, and ``settings.global_iterations == 0``.
    """
    free = model.inverse_masses > 0.0
    if not used(model, settings, surface) or not free.any():
        return inactive()
    arrays = (model.rest_positions, model.tets, model.inverse_masses, model.goal_weights, model.masses)
    key = (tuple(id(a) for a in arrays), settings, sim_dt)
    cached = _cache.get(key)
    if cached is not None and all(a is b for a, b in zip(cached[0], arrays)):
        return cached[1]
    built = _build(model, settings, sim_dt, edge_plan, volume_plan, continuum_plan)
    if len(_cache) >= _CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[key] = (arrays, built)
    return built


def _build(model: Model, settings: SimSettings, sim_dt: float, edge_plan: EdgePlan, volume_plan: VolumePlan,
           continuum_plan: ContinuumPlan) -> GlobalPlan:
    """``plan``'s work, uncached."""
    import scipy.sparse as sparse  # only here: the plan is built once per cage and settings

    free = model.inverse_masses > 0.0
    n = model.particle_count
    stiffness = _rest_stiffness(model, edge_plan, volume_plan, continuum_plan)
    goal = model.goal_weights * settings.goal_stiffness * model.masses
    diagonal = np.repeat(model.masses / (sim_dt * sim_dt) + goal, 3)
    h_rest = (stiffness + sparse.diags(diagonal)).tocsr()
    blocks = np.stack([h_rest[a::3, b::3].diagonal() for a, b in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))],
                      axis=1)
    blocks[~free] = (1.0, 0.0, 0.0, 1.0, 0.0, 1.0)
    dofs = np.repeat(free, 3)
    basis = _coarse_basis(model, stiffness, free)  # [3·free, m]
    modes = np.zeros((3 * n, basis.shape[1]))
    modes[dofs] = basis
    h_free = h_rest[dofs][:, dofs]
    coarse = basis.T @ (h_free @ basis)
    return GlobalPlan(True, int(settings.global_iterations), blocks,
                      np.ascontiguousarray(modes.reshape(n, 3, -1)), np.linalg.pinv(coarse, hermitian=True),
                      STEP_LIMIT_SHARE * float(model.rest_lengths.mean()), _floating(model, goal),
                      np.zeros((0, 4, 3)) if continuum_plan.active else np.concatenate(
                          [-model.inverse_rest_shapes.sum(1, keepdims=True), model.inverse_rest_shapes], axis=1))


def _floating(model: Model, goal: np.ndarray) -> np.ndarray:
    """bool [component_count]: the bodies with no kinematic point (no element ties them to one)
    and no goal spring."""
    topo = model.topology
    floating = np.ones(topo.component_count, dtype=np.bool_)
    body = topo.components
    tied = np.concatenate([model.edges[topo.boundary_edges].ravel(), model.tets[topo.boundary_tets].ravel()])
    floating[body[tied][body[tied] >= 0]] = False
    floating[body[(goal > 0.0) & (body >= 0)]] = False
    return floating


def _rest_stiffness(model: Model, edge_plan: EdgePlan, volume_plan: VolumePlan, continuum_plan: ContinuumPlan):
    """The material's stiffness matrix at rest, scipy.sparse [3n, 3n] [N/m] (dof 3i + axis)."""
    n = model.particle_count
    x = model.rest_positions
    if continuum_plan.active:
        b = continuum_plan.shape_vectors  # [t, 4, 3]
        eye = np.eye(3)
        k = continuum_plan.mu_volumes[:, None, None, None, None] * (
            np.einsum("tic,tjc->tij", b, b)[:, :, None, :, None] * eye[None, None, :, None, :]
            + np.einsum("tja,tib->tiajb", b, b))
        k += continuum_plan.lambda_volumes[:, None, None, None, None] * np.einsum("tia,tjb->tiajb", b, b)
        return _assemble(n, model.tets, k.reshape(-1, 12, 12))
    d = x[model.edges[:, 0]] - x[model.edges[:, 1]]
    u = d / np.linalg.norm(d, axis=1)[:, None]
    block = edge_plan.stiffness[:, None, None] * np.einsum("ea,eb->eab", u, u)
    pair = np.zeros((block.shape[0], 2, 3, 2, 3))
    pair[:, 0, :, 0] = pair[:, 1, :, 1] = block
    pair[:, 0, :, 1] = pair[:, 1, :, 0] = -block
    matrix = _assemble(n, model.edges, pair.reshape(-1, 6, 6))
    if volume_plan.active:
        g = np.stack(volumes.corner_gradients(*[x[model.tets][:, j, a] for a in range(3) for j in range(4)]), -1)
        g = g.reshape(-1, 3, 4).transpose(0, 2, 1).reshape(-1, 12)  # corner-major
        matrix = matrix + _assemble(n, model.tets, volume_plan.stiffness[:, None, None] * np.einsum("ti,tj->tij", g, g))
    return matrix


def _assemble(n: int, elements: np.ndarray, blocks: np.ndarray):
    """Σ of element matrices ``blocks`` [e, 3k, 3k] (corner-major) over ``elements`` [e, k]."""
    import scipy.sparse as sparse

    k = elements.shape[1]
    dof = (3 * elements.astype(np.int64)[:, :, None] + np.arange(3)).reshape(elements.shape[0], -1)
    rows = np.repeat(dof, 3 * k, axis=1).ravel()
    cols = np.tile(dof, (1, 3 * k)).ravel()
    return sparse.csr_matrix((blocks.ravel(), (rows, cols)), shape=(3 * n, 3 * n))


def _coarse_basis(model: Model, stiffness, free: np.ndarray) -> np.ndarray:
    """float64 [3·free points, m]: the softest Galerkin modes (K v = λ M v) of the trilinear
    lattice over the free points (mass-normalized)."""
    import scipy.linalg as linalg

    x = model.rest_positions[free]
    low, high = x.min(0), x.max(0)
    extent = np.maximum(high - low, 1e-9 * max(float((high - low).max()), 1e-9))
    cells = np.maximum(1, np.round(COARSE_CELLS * extent / extent.max()).astype(np.int64))
    t = (x - low) / extent * cells
    base = np.minimum(np.floor(t).astype(np.int64), cells - 1)
    frac = t - base
    nodes = cells + 1
    count = x.shape[0]
    rows, cols, values = [], [], []
    for corner in range(8):
        offset = np.array([(corner >> 2) & 1, (corner >> 1) & 1, corner & 1])
        weight = np.prod(np.where(offset, frac, 1.0 - frac), axis=1)
        node = ((base[:, 0] + offset[0]) * nodes[1] + base[:, 1] + offset[1]) * nodes[2] + base[:, 2] + offset[2]
        for a in range(3):
            rows.append(3 * np.arange(count) + a)
            cols.append(3 * node + a)
            values.append(weight)
    import scipy.sparse as sparse

    lattice = sparse.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                                shape=(3 * count, 3 * int(np.prod(nodes))))
    used = np.flatnonzero(np.asarray(lattice.getnnz(axis=0)) > 0)
    lattice = lattice[:, used]
    dofs = np.repeat(free, 3)
    k_free = stiffness[dofs][:, dofs]
    mass = sparse.diags(np.repeat(model.masses[free], 3))
    kc = (lattice.T @ (k_free @ lattice)).toarray()
    mc = (lattice.T @ (mass @ lattice)).toarray()
    # An M-orthonormal basis of the lattice's fields the points can carry (a node that touches
    # points only with tiny weights spans almost no mass: dropped, or its "mode" would be 0/0).
    weights, vectors = np.linalg.eigh(0.5 * (mc + mc.T))
    keep = weights > 1e-9 * weights.max()
    basis = vectors[:, keep] / np.sqrt(weights[keep])
    reduced = basis.T @ kc @ basis
    m = min(COARSE_MODES, reduced.shape[0])
    _, modes = linalg.eigh(0.5 * (reduced + reduced.T), subset_by_index=(0, m - 1))
    vectors = basis @ modes
    return np.asarray(lattice @ vectors)


def rotation_step(f, qw, qx, qy, qz):
    """One step of Müller et al. 2016 (``continuum.extract_rotation``) from q towards the rotation of
    F (9 values, row by row), with the quaternion update taken to first order, (1, ω/2) ⊗ q
    renormalized, instead of the exact exp(ω): no sine or cosine (a springs' tet's rotation only
    turns the preconditioner, which needs no exact one; measured: the exact steps cost the Springs
    global step of the bunny's cage 6 ms a frame). Returns the unit quaternion (w, x, y, z)."""
    (a00, a01, a02, a10, a11, a12, a20, a21, a22) = f
    r00, r01, r02 = 1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qw * qz), 2.0 * (qx * qz + qw * qy)
    r10, r11, r12 = 2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx)
    r20, r21, r22 = 2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy)
    o0 = (r10 * a20 - r20 * a10) + (r11 * a21 - r21 * a11) + (r12 * a22 - r22 * a12)
    o1 = (r20 * a00 - r00 * a20) + (r21 * a01 - r01 * a21) + (r22 * a02 - r02 * a22)
    o2 = (r00 * a10 - r10 * a00) + (r01 * a11 - r11 * a01) + (r02 * a12 - r12 * a02)
    dot = r00 * a00 + r10 * a10 + r20 * a20 + r01 * a01 + r11 * a11 + r21 * a21 + r02 * a02 + r12 * a12 + r22 * a22
    scale = 0.5 / (absolute(dot) + ROTATION_EPSILON)
    dx, dy, dz = o0 * scale, o1 * scale, o2 * scale
    nw = qw - dx * qx - dy * qy - dz * qz
    nx = qx + dx * qw + dy * qz - dz * qy
    ny = qy - dx * qz + dy * qw + dz * qx
    nz = qz + dx * qy - dy * qx + dz * qw
    norm = 1.0 / sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    return nw * norm, nx * norm, ny * norm, nz * norm


def tet_product(r, b, mu_v, lam_v, p):
    """R·K₀·Rᵀ·p for one continuum tet: the warped stiffness times corner displacements ``p``.

    Args:
        r: its rotation R, 9 values row by row; b: the shape vectors b₀..b₃ (12 values, as
        ``continuum.deformation_gradient``'s); mu_v, lam_v: μV₀, λV₀ [N·m];
        p: 12 values, x of corners 0-3, then y, then z [m].

    Returns:
        12 values in the order of ``p`` [N]: corner j gets R·σ·bⱼ with G = Σⱼ (Rᵀpⱼ) bⱼᵀ and
        σ = μV₀(G + Gᵀ) + λV₀·tr(G)·I (linear elasticity in the tet's turned frame).
    """
    (r00, r01, r02, r10, r11, r12, r20, r21, r22) = r
    (b00, b01, b02, b10, b11, b12, b20, b21, b22, b30, b31, b32) = b
    (px0, px1, px2, px3, py0, py1, py2, py3, pz0, pz1, pz2, pz3) = p
    # Rᵀ pⱼ
    u0x, u0y, u0z = r00 * px0 + r10 * py0 + r20 * pz0, r01 * px0 + r11 * py0 + r21 * pz0, r02 * px0 + r12 * py0 + r22 * pz0
    u1x, u1y, u1z = r00 * px1 + r10 * py1 + r20 * pz1, r01 * px1 + r11 * py1 + r21 * pz1, r02 * px1 + r12 * py1 + r22 * pz1
    u2x, u2y, u2z = r00 * px2 + r10 * py2 + r20 * pz2, r01 * px2 + r11 * py2 + r21 * pz2, r02 * px2 + r12 * py2 + r22 * pz2
    u3x, u3y, u3z = r00 * px3 + r10 * py3 + r20 * pz3, r01 * px3 + r11 * py3 + r21 * pz3, r02 * px3 + r12 * py3 + r22 * pz3
    g00 = u0x * b00 + u1x * b10 + u2x * b20 + u3x * b30
    g01 = u0x * b01 + u1x * b11 + u2x * b21 + u3x * b31
    g02 = u0x * b02 + u1x * b12 + u2x * b22 + u3x * b32
    g10 = u0y * b00 + u1y * b10 + u2y * b20 + u3y * b30
    g11 = u0y * b01 + u1y * b11 + u2y * b21 + u3y * b31
    g12 = u0y * b02 + u1y * b12 + u2y * b22 + u3y * b32
    g20 = u0z * b00 + u1z * b10 + u2z * b20 + u3z * b30
    g21 = u0z * b01 + u1z * b11 + u2z * b21 + u3z * b31
    g22 = u0z * b02 + u1z * b12 + u2z * b22 + u3z * b32
    trace = lam_v * (g00 + g11 + g22)
    s00, s11, s22 = 2.0 * mu_v * g00 + trace, 2.0 * mu_v * g11 + trace, 2.0 * mu_v * g22 + trace
    s01, s02, s12 = mu_v * (g01 + g10), mu_v * (g02 + g20), mu_v * (g12 + g21)
    # σ bⱼ (σ symmetric), then turned back by R
    t0x, t0y, t0z = s00 * b00 + s01 * b01 + s02 * b02, s01 * b00 + s11 * b01 + s12 * b02, s02 * b00 + s12 * b01 + s22 * b02
    t1x, t1y, t1z = s00 * b10 + s01 * b11 + s02 * b12, s01 * b10 + s11 * b11 + s12 * b12, s02 * b10 + s12 * b11 + s22 * b12
    t2x, t2y, t2z = s00 * b20 + s01 * b21 + s02 * b22, s01 * b20 + s11 * b21 + s12 * b22, s02 * b20 + s12 * b21 + s22 * b22
    t3x, t3y, t3z = s00 * b30 + s01 * b31 + s02 * b32, s01 * b30 + s11 * b31 + s12 * b32, s02 * b30 + s12 * b31 + s22 * b32
    return (r00 * t0x + r01 * t0y + r02 * t0z, r00 * t1x + r01 * t1y + r02 * t1z,
            r00 * t2x + r01 * t2y + r02 * t2z, r00 * t3x + r01 * t3y + r02 * t3z,
            r10 * t0x + r11 * t0y + r12 * t0z, r10 * t1x + r11 * t1y + r12 * t1z,
            r10 * t2x + r11 * t2y + r12 * t2z, r10 * t3x + r11 * t3y + r12 * t3z,
            r20 * t0x + r21 * t0y + r22 * t0z, r20 * t1x + r21 * t1y + r22 * t1z,
            r20 * t2x + r21 * t2y + r22 * t2z, r20 * t3x + r21 * t3y + r22 * t3z)
