"""What one frame of simulation is asked to do: ``SimSettings`` (read once per step, never from
globals) and the material conversions that turn its moduli into element stiffnesses."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import TetRigInputError
from ..fingerprint import OMIT_AT

# Material models. "XPBD" is the identifier saved in .blend files since TetRig 0.1, when the
# tet-edge springs were solved with XPBD; it stays so that saved files keep their setting.
MODE_SPRINGS = "XPBD"
MODE_CONTINUUM = "CONTINUUM"
MODE_PBD = "PBD"
MODES = (MODE_SPRINGS, MODE_CONTINUUM, MODE_PBD)

# Time integrators of a substep (``loop.py``): implicit (backward) Euler, and the second-order
# backward differentiation formula, which damps a swing far less at the same step (its numerical
# damping falls with (ωΔt)⁴ where implicit Euler's falls with (ωΔt)²).
INTEGRATOR_EULER = "IMPLICIT_EULER"
INTEGRATOR_BDF2 = "BDF2"
INTEGRATORS = (INTEGRATOR_EULER, INTEGRATOR_BDF2)

# Simulation steps per second that ``substeps_for`` aims at by default: 10 per frame at 24 fps,
# and a whole number at 12, 24, 30, 48, 60 and 120 fps, so those frame rates take identical steps.
DEFAULT_STEPS_PER_SECOND = 240.0

# A spring network (springs along every tet edge, each of stiffness k = E_s·V_e/l², edge directions
# spread evenly) has the Lamé parameters λ = μ = E_s/15 (a Cauchy solid: W = ½·E_s·⟨(nᵀεn)²⟩ with
# ⟨nᵢnⱼnₖnₗ⟩ = (δᵢⱼδₖₗ + δᵢₖδⱼₗ + δᵢₗδⱼₖ)/15), so its Young's modulus is E_s/6 (ν = 1/4).
SPRING_NETWORK_LAME_SHARE = 15.0
# Without volume constraints the network's ν is 1/4: E_s = 6·E gives Young's modulus E.
SPRING_NETWORK_YOUNG_SHARE = 6.0
# Floor of the volume energy's modulus, as a share of K, when the springs alone already hold more
# than the asked bulk modulus (ν < 1/4): the volume term still undoes inverted tets.
MIN_VOLUME_SHARE = 1e-3


@dataclass(frozen=True)
class SimSettings:
    """Per-frame simulation settings.

    Attributes:
        mode: ``MODE_SPRINGS`` (tet-edge springs + tet volumes calibrated to E and K, the default),
            ``MODE_CONTINUUM`` (corotated finite-element tets: the material's own E and K on any
            cage) or ``MODE_PBD`` (the seed's Chaos spring, stiffness k ∈ [0, 1] per substep).
        youngs_modulus: E [Pa].
        use_volume: whether the springs get the tet volume energy (it also undoes inverted tets).
        volume_stiffness: K [Pa], the bulk modulus.
        stiffness: PBD stiffness k ∈ [0, 1] (PBD mode): the share of an edge's error one substep
            would correct alone; it depends on the substep count, as in the seed.
        damping: velocity damping rate [1/s]; velocities decay as exp(−damping·t).
        substeps: simulation steps per frame (≥ 1); the Blender layer derives it from a rate in
            steps per second (``substeps_for``), so frame rates share the same step.
        iterations: block-descent sweeps per substep (≥ 1).
        global_iterations: conjugate-gradient iterations of the global step before the sweeps of
            each substep (``global_solve``; cages in the Springs and Continuum modes), ≥ 0; 0 turns
            it off. A frame with contact candidates takes at most ``global_solve.CONTACT_ITERATIONS``.
            3 by default, with BDF2: stiff bodies bend and swing at their true speed (issue 24; the
            figures in ``benchmarks/bending.md``).
        integrator: ``INTEGRATOR_EULER`` or ``INTEGRATOR_BDF2`` (``integrator``); the PBD mode
            always steps with implicit Euler (its projections are not a minimization), and so do
            Surface bodies (``loop.step``: on a stiff sheet, ≥ 3e5 N/m, one sweep per step under
            BDF2 gains energy, docs/solver-notes.md) and frames with contact candidates.
        gravity: float [3] [m/s²], world space.
        ground_height: world z of the ground plane [m], or ``None`` for no ground.
        ground_friction: kinetic Coulomb friction coefficient μ_k of the ground (≥ 0).
        ground_static_friction: static coefficient μ_s of the ground (≥ μ_k).
        max_speed: speed limit of every control point [m/s] (seed 001).
        goal_stiffness: k [N/(m·kg)] = [1/s²] per kilogram: a point of goal weight g swings about
            its goal at √(g·k)/2π Hz whatever its mass (seed 001's spring to the animated target).
        goal_damping: [1/s], decay rate of a goal point's velocity relative to its goal's, times
            its goal weight.

    Raises (``validated``):
        TetRigInputError: a value out of range, with a message for the user.
    """

    mode: str = MODE_SPRINGS
    youngs_modulus: float = 1e5
    use_volume: bool = True
    volume_stiffness: float = 1e6
    stiffness: float = 1.0
    damping: float = 1.0
    substeps: int = 10
    iterations: int = 1
    # (each left out of bake fingerprints at the value that steps as before it existed, whatever the
    # default: bakes made before it existed stay current)
    global_iterations: int = field(default=3, metadata={OMIT_AT: 0})
    integrator: str = field(default=INTEGRATOR_BDF2, metadata={OMIT_AT: INTEGRATOR_EULER})
    gravity: tuple = (0.0, 0.0, -9.81)
    ground_height: float | None = None
    ground_friction: float = 0.5
    ground_static_friction: float = 0.6
    max_speed: float = 100.0
    goal_stiffness: float = 400.0
    goal_damping: float = 5.0

    @property
    def second_order(self) -> bool:
        """Whether the substeps are BDF2's (the integrator asked, in a mode that minimizes)."""
        return self.integrator == INTEGRATOR_BDF2 and self.mode != MODE_PBD

    def validated(self) -> "SimSettings":
        """Return self after checking ranges; raises TetRigInputError with a user-facing message."""
        if self.mode not in MODES:
            raise TetRigInputError(f"Unknown solver mode {self.mode!r}; use one of {MODES}.")
        if self.integrator not in INTEGRATORS:
            raise TetRigInputError(f"Unknown integrator {self.integrator!r}; use one of {INTEGRATORS}.")
        if self.substeps < 1 or self.iterations < 1:
            raise TetRigInputError("Substeps and iterations must be at least 1.")
        if self.global_iterations < 0:
            raise TetRigInputError("Global iterations must be zero or more.")
        if not (self.youngs_modulus > 0.0 and self.volume_stiffness > 0.0):
            raise TetRigInputError("Stiffness must be positive.")
        if not 0.0 <= self.stiffness <= 1.0:
            raise TetRigInputError("PBD stiffness must be between 0 and 1.")
        if not self.damping >= 0.0:
            raise TetRigInputError("Damping must be zero or positive.")
        if not self.max_speed > 0.0:
            raise TetRigInputError("Maximum speed must be positive.")
        if not 0.0 <= self.ground_friction <= self.ground_static_friction:
            raise TetRigInputError("Ground friction must be zero or positive, and the static "
                                   "friction at least the sliding friction.")
        if not (self.goal_stiffness >= 0.0 and self.goal_damping >= 0.0):
            raise TetRigInputError("Goal stiffness and goal damping must be zero or positive.")
        if self.mode == MODE_CONTINUUM:
            lame_parameters(self.youngs_modulus, self.volume_stiffness)
        return self


def substeps_for(steps_per_second: float, frame_dt: float) -> int:
    """Substeps per frame for a rate [steps/s] and a frame duration [s]: the nearest whole number,
    at least 1. At 240 steps/s: 20 at 12 fps, 10 at 24 fps, 4 at 60 fps (the same step each).

    Raises:
        TetRigInputError: a rate or frame duration that is not positive.
    """
    if not (steps_per_second > 0.0 and frame_dt > 0.0):
        raise TetRigInputError("Steps per second and the frame rate must be positive.")
    return max(1, int(round(steps_per_second * frame_dt)))


def lame_parameters(youngs_modulus: float, bulk_modulus: float) -> tuple[float, float]:
    """Lamé parameters (μ, λ) [Pa] of the material with Young's modulus E and bulk modulus K:
    μ = 3KE/(9K − E), λ = K − 2μ/3 (Poisson's ratio ν = (3K − E)/(6K)).

    Raises:
        TetRigInputError: E or K not positive, or K ≤ E/3 (ν ≤ 0: λ would not be positive).
    """
    if not (youngs_modulus > 0.0 and bulk_modulus > 0.0):
        raise TetRigInputError("Stiffness and volume stiffness must be positive.")
    if not bulk_modulus > youngs_modulus / 3.0:
        raise TetRigInputError(
            f"The continuum model needs a volume stiffness above a third of the stiffness "
            f"({youngs_modulus / 3.0:.4g} Pa); got {bulk_modulus:.4g} Pa.")
    mu = 3.0 * bulk_modulus * youngs_modulus / (9.0 * bulk_modulus - youngs_modulus)
    return mu, bulk_modulus - 2.0 * mu / 3.0


def spring_moduli(settings: SimSettings) -> tuple[float, float]:
    """(E_s, K_v) [Pa]: the spring modulus of the tet edges (stiffness k = E_s·V_e/l₀²) and the
    volume energy's modulus, such that springs plus volume have the material's Young's modulus E
    and bulk modulus K: μ = 3KE/(9K − E), λ = K − 2μ/3, E_s = 15·μ, K_v = λ − μ (floored at
    ``MIN_VOLUME_SHARE``·K). Without volume E_s = 6·E. Exact for evenly spread edge directions.
    """
    e, k = settings.youngs_modulus, settings.volume_stiffness
    if not settings.use_volume or 9.0 * k <= e:
        return SPRING_NETWORK_YOUNG_SHARE * e, k
    mu = 3.0 * k * e / (9.0 * k - e)
    lam = k - 2.0 * mu / 3.0
    return SPRING_NETWORK_LAME_SHARE * mu, max(lam - mu, MIN_VOLUME_SHARE * k)


@dataclass(frozen=True)
class SurfaceMaterial:
    """The material of a Surface body (the mesh's own vertices are the particles), in physical
    units, independent of the mesh resolution (Provot 1995's structural + shear + bending network).
    A spring's stiffness is k = modulus·A/l₀² [N/m] with A the area it stands for
    (``surface.mesh``); its compliance, in XPBD's terms, is α = 1/k [m/N].

    Attributes:
        stretch: [N/m], the structural springs on the edges: a square grid of them alone, pulled
            along its edges, carries ``stretch`` × strain newtons per metre of width (a 2D Young's
            modulus, E·thickness of a sheet). Each edge: k = stretch·A_e/l₀², A_e = Σ 2·A_face/sides.
        shear: [N/m], the shear springs across the faces' diagonals: a square grid's shear modulus
            (a shear strain γ stores ½·shear·γ² per m²). They stiffen stretching too: a square
            grid pulled along its edges has the modulus E = S(S + 2G)/(S + G) (S ``stretch``,
            G ``shear``). Each diagonal: k = shear·A_d/l₀², A_d = 4·A_face/diagonals.
        bending: [N·m], the dihedral bending stiffness (a plate's flexural rigidity
            D = E·t³/12(1−ν²)): a sheet bent to a curvature κ stores ½·bending·κ² per m²
            (``bending``).
        pressure: [Pa], the ideal gas inside a closed surface at its rest volume, p·V = const
            (``pressure``); 0 turns it off. The same pressure is outside, so the rest shape is at
            rest; squeezed by ΔV the gas pushes back as a bulk modulus of ``pressure`` would (air at
            1 atm, 101325 Pa, held a dropped 0.5 m jelly sphere within 1 % of its volume; lower
            values give a softer body).

    Raises (``validated``):
        TetRigInputError: a value out of range, with a message for the user.
    """

    stretch: float = 1e4
    shear: float = 1e3
    bending: float = 1e-3
    pressure: float = 0.0

    def validated(self) -> "SurfaceMaterial":
        """Return self after checking ranges; raises TetRigInputError with a user-facing message."""
        if not (self.stretch > 0.0 and self.shear >= 0.0 and self.bending >= 0.0 and self.pressure >= 0.0):
            raise TetRigInputError("Stretch must be positive; shear, bending and pressure zero or positive.")
        return self
