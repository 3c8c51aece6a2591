"""One frame of simulation: the step loop of Vertex Block Descent on the cage's control points.

Method (Chen, Macklin et al. 2024, "Vertex Block Descent", ACM TOG 43(4)): each substep of length
Δt minimizes the incremental potential of implicit Euler,

    G(x) = Σᵢ mᵢ/(2Δt²)·|xᵢ − yᵢ|² + E(x),    yᵢ = xᵢ + Δt·vᵢ + Δt²·g,

E the elastic (``edges``, ``volumes``, ``continuum``), goal (``goals``) and contact (``contacts``)
energies, by Gauss-Seidel over the control points, colour by colour: each point takes one Newton
step on G with every other point held, Δxᵢ = Hᵢ⁻¹fᵢ with its 3×3 Hessian block Hᵢ. Substeps follow
Macklin et al. 2019, "Small Steps in Physics Simulation": many short steps, one sweep each.

Two choices make the result hold whatever the step length:

* Every substep starts from xᵢ + Δt·vᵢ (inertia without gravity), not from yᵢ. A body at rest is
  then already at the minimum of G (its elastic forces balance its weight), so the sweep leaves it
  there: the resting shape is the material's own at any substep count or frame rate. (Starting
  from y, as position-based dynamics does, one sweep per substep cannot carry the weight through
  the body and every layer sags by about g·Δt² more; the VBD paper starts from an adaptive mix.)
* Then one Newton step on a uniform translation of all free points (inertia, gravity, goals,
  contacts and the elements that tie free points to pinned ones; the rest of E does not change
  under a translation), so a falling body falls at g however stiff it is.

With ``settings.integrator`` BDF2 (``integrator``) a substep minimizes the same G with ⅔Δt for
Δt, from the base point x̂ = (4xₙ − xₙ₋₁)/3 instead of xₙ (the state's ``history``), so a swing
keeps its height where implicit Euler damps it; everything below is the same with those. A frame
with contact candidates, and every frame of a Surface body, steps with implicit Euler (``integrator``:
resting contact jitters under BDF2 with one sweep per step; stiff cloth gains energy), and a frame in
contact takes at most ``global_solve.CONTACT_ITERATIONS`` global iterations.

Per substep: pre-solve (damping, goal damping, speed limit, y and the start x; kinematic points
move to their goal), the translation step, the global step when ``settings.global_iterations`` > 0
(``global_solve``: a Newton step of the whole cage, so bending travels at its true speed),
``iterations`` sweeps (alternating direction), and the post-solve v = (x − x_prev)/Δt. The
constraint formulas live in one module per kind and are shared by the NumPy reference
(``reference.py``) and the compiled kernel (``kernel.py``), which gives the same positions;
``backend.py`` chooses.
"""

from __future__ import annotations

import copy
import dataclasses
from types import ModuleType
from typing import Sequence

import numpy as np

from .. import colliders as collision
from . import bending, continuum, contacts, edges, global_solve, integrator, plasticity, pressure, reference, volumes
from . import goals as goal_springs
from .model import Model, State, identity_rotations
from .settings import INTEGRATOR_EULER, MODE_CONTINUUM, SimSettings, SurfaceMaterial


def step(model: Model, state: State, settings: SimSettings, frame_dt: float,
         goals: tuple[np.ndarray, np.ndarray] | None = None,
         colliders: Sequence[collision.Collider] = (), compiled: ModuleType | None = None,
         surface: SurfaceMaterial | None = None,
         plastic: plasticity.PlasticSettings | None = None) -> State:
    """Advance one frame: ``settings.substeps`` substeps of ``settings.iterations`` sweeps each.

    Args:
        model: the static model of a cage, or of a surface body (``surface.model``).
        state: current positions/velocities/rotations; not modified. Its rest lengths, angles
            and shapes, where plasticity changed them, replace the model's; they carry over.
        settings: validated ``SimSettings``.
        frame_dt: frame duration [s], > 0.
        goals: (start, end), float64 [particle_count, 3] [m] each: where every control point's
            goal is at the start and at the end of the frame (its rest position carried by the
            object's animation), interpolated over the substeps; ``None``: the rest positions.
        colliders: the frame's collision objects (``colliders.mesh_collider``), world space.
        compiled: the compiled kernel module, or ``None`` for the NumPy reference (the public
            ``solver.step``, ``backend.step``, chooses).
        surface: a surface body's material (its springs, hinges and gas); ``None`` for cages.
        plastic: plasticity (``plasticity.PlasticSettings``) or ``None``: after the frame, the
            rest data of the elements strained beyond the yield creep (``plasticity.creep``).

    Returns:
        The new ``State``; its rest data (plasticity) carry over from ``state`` or are the creep's.

    Raises:
        ValueError: a surface body's model without its ``surface`` material.
    """
    sim_dt = frame_dt / settings.substeps
    state = with_rotations(model, state)
    frame_model = with_state_rest(model, state)
    contact_plan = contacts.plan(frame_model, state, settings, colliders, frame_dt, sim_dt, compiled)
    new = advance(frame_model, state, settings, frame_dt, contact_plan, goals, compiled, surface)
    return finish(model, frame_model, state, new, settings, frame_dt, contact_plan, compiled, plastic)


def with_rotations(model: Model, state: State) -> State:
    """``state``, or a copy with every tet's rotation the identity when it has none."""
    if state.rotations.shape == (model.tet_count, 4):
        return state
    # A State made without rotations (its default has none): the identity, as at rest. The
    # continuum tets and the global step read one per tet (the kernel unchecked: it read past
    # the array, and a one-tet cage with Global Iterations raised ZeroDivisionError).
    state = copy.copy(state)
    state.rotations = identity_rotations(model.tet_count)
    return state


def with_state_rest(model: Model, state: State) -> Model:
    """``model`` with the rest data plasticity changed (carried by ``state``) in place of its own."""
    rest = {name: value for name in ("rest_lengths", "inverse_rest_shapes", "rest_angles")
            if (value := getattr(state, name)) is not None}
    return dataclasses.replace(model, **rest) if rest else model


def advance(model: Model, state: State, settings: SimSettings, frame_dt: float, contact_plan: contacts.ContactPlan,
            goals: tuple[np.ndarray, np.ndarray] | None, compiled: ModuleType | None,
            surface: SurfaceMaterial | None, substep: int | None = None,
            material: tuple | None = None) -> State:
    """The substeps of one frame (``step``'s arguments, its contact plan made), without the shown
    positions and plasticity (``finish``). ``substep``: only that substep of the frame (0 to
    ``settings.substeps`` − 1), for bodies stepped together (``pairs``); its state must be the
    one the frame's earlier substeps left. ``material``: the plans ``material_plans`` gives for
    these arguments, when the caller keeps them (``None``: from the cache of the last few)."""
    sim_dt = frame_dt / settings.substeps
    stepping = settings  # the material plans below stay keyed on ``settings``: they do not depend on
    if settings.second_order and (contact_plan.contact_count or surface is not None):  # the integrator (the
        # global one costs 0.3-2 s). Why in contact: ``integrator``; Surface bodies: stiff cloth under BDF2
        # with one sweep gains far more energy than under implicit Euler (docs/solver-notes.md, stop 30)
        stepping = dataclasses.replace(settings, integrator=INTEGRATOR_EULER)
    # The plans are of the substep Δt also under BDF2, whose potential has ⅔Δt: the global step's
    # preconditioner with M/Δt² (against M/(⅔Δt)² in H) carries the soft modes further in one
    # iteration (measured, the bunny kicked sideways, 1 global iteration: first swing −8 % of the
    # reference with it, −38 % with the preconditioner of ⅔Δt).
    # The goal damping acts on BDF2's v̂, whose step is ⅔Δt (``integrator.substep_decays``; the first
    # substep of a frame without history, implicit Euler's, then gets ⅔ of it).
    goal_dt = sim_dt * integrator.SECOND_ORDER_STEP if stepping.second_order else sim_dt
    *elastic, global_plan = material if material is not None else material_plans(model, settings, sim_dt, surface)
    if contact_plan.contact_count:
        global_plan = global_solve.in_contact(global_plan)
    if substep is not None:  # one substep: a frame of its own, with the goals of its part
        start, end = (model.rest_positions, model.rest_positions) if goals is None else goals
        goals = (start + (end - start) * (substep / settings.substeps),
                 start + (end - start) * ((substep + 1) / settings.substeps))
        stepping, frame_dt = dataclasses.replace(stepping, substeps=1), sim_dt
    plans = (*elastic, global_plan, goal_springs.plan(model, stepping, goal_dt, goals), contact_plan)
    if compiled is not None:
        return compiled.advance(model, state, stepping, frame_dt, *plans)
    return reference.advance(model, state, stepping, frame_dt, *plans)


def finish(original: Model, model: Model, state: State, new: State, settings: SimSettings, frame_dt: float,
           contact_plan: contacts.ContactPlan, compiled: ModuleType | None,
           plastic: plasticity.PlasticSettings | None) -> State:
    """The frame's result: ``new`` (from ``advance``, started at ``state``) with the shown positions
    and the creep of plasticity, the rest data carried over (``State.moved``). ``original``: the
    model as given, ``model``: the frame's (``with_state_rest``)."""
    # What the frame shows touches its surfaces (the penalty's resting depth taken out). Only the
    # shown positions: fed back, the once-a-frame correction made the resting shape depend on the
    # frame rate (measured: 13 % on the bunny) and biased a landing ball's turn.
    shown = contacts.project_out(new.positions, model.inverse_masses, contact_plan, compiled=compiled)
    result = state.moved(new.positions, new.velocities, new.rotations,
                         None if shown is new.positions else shown, new.history)
    if plastic is not None:
        result = plasticity.creep(original, result, plastic, frame_dt,
                                  continuum=settings.mode == MODE_CONTINUUM)
    return result


# The material plans of the last few (model, settings, step) asked for: they depend on nothing
# else, and a 65k-tet cage spends milliseconds building them (frames repeat the same ones). Only a
# few: a body with plasticity has a new model every frame. Bodies stepped together keep their own
# (``pairs.step_coupled``: a pile of ten would miss every time).
_PLAN_CACHE_SIZE = 4
_plan_cache: dict[tuple, tuple] = {}


def material_plans(model: Model, settings: SimSettings, sim_dt: float, surface: SurfaceMaterial | None) -> tuple:
    """(edge, volume, continuum, bending, pressure, global step) plans of ``model`` for
    ``settings``, the ``surface`` material and the substep ``sim_dt`` [s]."""
    key = (id(model), settings, sim_dt, surface)
    cached = _plan_cache.get(key)
    if cached is not None and cached[0] is model:  # the same object, not a new one at a reused id
        return cached[1]
    material = (edges.plan(model, settings, sim_dt, surface), volumes.plan(model, settings),
                continuum.plan(model, settings))
    plans = (*material, bending.plan(model, surface, sim_dt), pressure.plan(model, surface),
             global_solve.plan(model, settings, sim_dt, surface, *material))
    if len(_plan_cache) >= _PLAN_CACHE_SIZE:
        _plan_cache.pop(next(iter(_plan_cache)))
    _plan_cache[key] = (model, plans)
    return plans
