"""Issue 21: a cage soft body's shown surface collides with itself (``solver.cage_self``)."""

from __future__ import annotations

import numpy as np
import pytest

from tetrig_addon import solver
from tetrig_addon.body import Control
from tetrig_addon.cage import METHOD_FIT, CageBody, bind, blend, build_cage
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.solver import cage_self, contacts
from tetrig_addon.solver.self_contact import SelfCollision
from tetrig_addon.touching import step_together

from conftest import obj_triangles, obj_vertices
from engine_scenes import BASE, GAP, THICK, soft_u

FALL = Control(1.0 / 24.0, (0.0, 0.0, -9.81))


def u_body(self_collision: bool, resolution: int = 20, youngs_modulus: float = 2e4) -> tuple[CageBody, np.ndarray]:
    """The soft U on a Fit cage, its lower arm and base pinned: (the body, its mesh's vertices)."""
    points, triangles = soft_u()
    cage = build_cage(points, triangles=triangles, method=METHOD_FIT, resolution=resolution)
    b = bind(points, cage.control_points, cage.tets)
    x = cage.control_points
    pinned = (x[:, 2] < THICK + 1e-6) | (x[:, 0] < BASE + 1e-6)
    model = solver.build_model(x, cage.tets, pinned=pinned, contacts=(b.control_point_indices, b.weights))
    settings = solver.SimSettings(youngs_modulus=youngs_modulus).validated()
    return CageBody(model, settings, triangles=triangles,
                    self_collision=SelfCollision() if self_collision else None), points


def upper_arm_lowest(body: CageBody, points: np.ndarray, frames: int) -> list[float]:
    """[m] the lowest shown vertex of the free part of the upper arm (x > 20 cm) at each frame."""
    upper = (points[:, 2] > THICK + GAP / 2) & (points[:, 0] > 0.2)
    state = body.rest_state(FALL)
    lowest = []
    for _ in range(frames):
        state = body.step(state, FALL)
        shown = contacts.contact_points(body.model, state.shown())
        lowest.append(float(shown[upper, 2].min()))
    return lowest


def test_a_soft_u_rests_on_itself_with_self_collision_and_passes_through_without():
    """The upper arm of a soft U sags onto the pinned lower arm (top at z = 6 cm): with Self
    Collision it comes to rest on it, never more than 1 mm inside; without, it falls through."""
    with_self = upper_arm_lowest(*u_body(True), frames=48)
    without = upper_arm_lowest(*u_body(False), frames=24)
    assert min(without) < 0.0  # through the lower arm (6 cm thick) and out below it
    assert min(with_self) > THICK - 0.001
    # at rest on it: about the contact distance above it for the last second
    assert all(THICK < z < THICK + 1.5 * SelfCollision().distance for z in with_self[-24:])
    assert max(with_self[-24:]) - min(with_self[-24:]) < 0.002


def test_the_compiled_search_finds_the_reference_contacts():
    """The hashed-grid search (``cage_self_kernel``) gives the k-d tree reference's contacts exactly,
    on a U whose upper arm is pressed down to 0.5-4 cm above the lower one."""
    from tetrig_addon.solver import cage_self_kernel

    body, points = u_body(True, resolution=12)
    surface = body.self_surface
    assert surface is not None
    x = surface.rest.copy()
    upper = x[:, 2] > THICK + GAP / 2
    x[upper, 2] -= (GAP - 0.005) * np.clip((x[upper, 0] - BASE) / 0.3, 0.0, 1.0)  # bent down towards the tip
    found = cage_self.search(surface, x, 2.0 * surface.own.distance, cage_self_kernel)
    reference = cage_self.search(surface, x, 2.0 * surface.own.distance)
    assert found[0].shape[0] > 50
    np.testing.assert_array_equal(found[0], reference[0])
    # the same closest points: where two triangles of a square are as near (the point is nearest to
    # their diagonal), the last bit of the two distances picks one, and the kernel's may differ
    closest = [(bary[:, :, None] * x[surface.triangles[tri]]).sum(axis=1)
               for _, tri, bary in (found, reference)]
    np.testing.assert_allclose(closest[0], closest[1], rtol=0, atol=1e-12)
    assert (found[1] == reference[1]).mean() > 0.95
    # no contact at rest: every pair near at rest is a neighbour
    assert cage_self.search(surface, surface.rest, 2.0 * surface.own.distance, cage_self_kernel)[0].shape[0] == 0
    assert cage_self.search(surface, surface.rest, 2.0 * surface.own.distance)[0].shape[0] == 0


def test_the_numpy_reference_steps_as_the_kernel():
    """The U folding onto itself stepped with the NumPy reference (solver and search) and with the
    kernel: the same control points to 1e-9 m over 12 frames, contacts with itself included."""
    body, _ = u_body(True, resolution=12)
    fast = slow = body.rest_state(FALL)
    touched = False
    for _ in range(12):
        fast = step_together([body], [fast], [FALL], use_kernel=True)[0]
        slow = step_together([body], [slow], [FALL], use_kernel=False)[0]
        touched |= body.own_rows(body.model, fast, 0) is not None
        assert np.abs(fast.positions - slow.positions).max() < 1e-9
    assert touched


def test_a_kick_at_40_m_s_comes_back_to_its_shape_with_self_collision():
    """Issue 21's kick: 40 m/s into one side of the bunny (2,600 tets inverted in the first frame)
    comes back within 1 % of its shape with Self Collision on."""
    points = obj_vertices("stanford-bunny")
    cage = build_cage(points)
    b = bind(points, cage.control_points, cage.tets)
    model = solver.build_model(cage.control_points, cage.tets, contacts=(b.control_point_indices, b.weights))
    settings = solver.SimSettings(mode=solver.MODE_CONTINUUM, gravity=(0.0, 0.0, 0.0), damping=3.0).validated()
    body = CageBody(model, settings, triangles=obj_triangles("stanford-bunny"), self_collision=SelfCollision())
    still = Control(1.0 / 24.0, (0.0, 0.0, 0.0))
    state = solver.rest_state(model)
    side = model.rest_positions[:, 0] > np.percentile(model.rest_positions[:, 0], 70)
    state.velocities[side] = [-40.0, 0.0, 0.0]
    for _ in range(61):
        state = body.step(state, still)
    assert np.all(np.isfinite(state.positions))
    shown = blend(state.positions, b.control_point_indices, b.weights)
    centred, rest = shown - shown.mean(0), points - points.mean(0)
    u, _, vt = np.linalg.svd(centred.T @ rest)
    turn = u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt
    error = np.linalg.norm(centred @ turn - rest, axis=1).max() / np.linalg.norm(np.ptp(points, axis=0))
    assert error < 0.01


def test_a_contact_point_held_by_pinned_points_is_not_thrown():
    """A contact point bound almost wholly to pinned control points (a free weight of round-off)
    counts as pinned (``contacts.CONTACT_FREE_SHARE``): below the ground it moves nothing. Its
    contact stiffness once sent the free point off at 1e10 m/s."""
    x = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]])
    tets = np.array([[0, 1, 2, 3]])
    indices = np.array([[0, 1, 2, 3]])
    weights = np.array([[0.5, 0.5 - 1e-17, 0.0, 1e-17]])  # the vertex sits on the pinned edge
    model = solver.build_model(x + [0.0, 0.0, -0.01 - 1e-17], tets, pinned=np.array([True, True, True, False]),
                               contacts=(indices, weights))
    for use_kernel in (True, False):
        state = solver.rest_state(model)
        for _ in range(4):
            state = solver.step(model, state, solver.SimSettings(gravity=(0.0, 0.0, 0.0), ground_height=0.0), 1.0 / 24.0,
                                use_kernel=use_kernel)
        assert np.abs(state.velocities).max() < 1e-6
        assert np.abs(state.shown() - model.rest_positions).max() < 1e-9


def test_bad_self_collision_settings_are_refused():
    with pytest.raises(TetRigInputError):
        SelfCollision(distance=0.0)
