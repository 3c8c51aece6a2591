"""Control points that follow a posed mesh (tetrig_addon.posing) and the solver's per-frame rest
shape (solver.with_rest), no Blender."""

import numpy as np
from conftest import obj_triangles, obj_vertices
from scipy.spatial.transform import Rotation

from tetrig_addon import solver
from tetrig_addon.cage import METHOD_FIT, bind, blend, build_cage, follow


def spot_cage():
    points = obj_vertices("spot")
    cage = build_cage(points, triangles=obj_triangles("spot"), method=METHOD_FIT)
    return points, cage


def test_rest_pose_and_rigid_motions_carry_the_cage_exactly():
    points, cage = spot_cage()
    size = np.ptp(points, axis=0).max()
    f = follow(points, cage.control_points)
    assert np.abs(f.posed(points) - cage.control_points).max() < 1e-12 * size
    for angles in ([180, 0, 0], [30, -70, 110], [0, 0, 1e-3]):
        r = Rotation.from_euler("xyz", angles, degrees=True).as_matrix()
        moved = f.posed(points @ r.T + [3.0, -2.0, 0.5])
        assert np.abs(moved - (cage.control_points @ r.T + [3.0, -2.0, 0.5])).max() < 1e-12 * size


def test_a_bent_limb_carries_its_control_points_with_it():
    """Bend a bar 90° about its middle (each half rigid): the control points of each half follow
    their half (within 2 % of the bar's length away from the joint); the bound mesh rebuilt from
    the posed cage is within 3 % of the bent mesh everywhere."""
    g = np.linspace(0.0, 1.0, 21)
    bar = np.array([[x, y, z] for x in g for y in (0.0, 0.1) for z in (0.0, 0.1)])
    from scipy.spatial import ConvexHull
    triangles = ConvexHull(bar).simplices
    cage = build_cage(bar, resolution=20, triangles=triangles, method=METHOD_FIT)
    f = follow(bar, cage.control_points)
    r = Rotation.from_euler("z", 90, degrees=True).as_matrix()
    joint = np.array([0.5, 0.0, 0.0])

    def bent(p):
        return np.where(p[:, :1] > 0.5, (p - joint) @ r.T + joint, p)

    posed = f.posed(bent(bar))
    far = np.abs(cage.control_points[:, 0] - 0.5) > 0.15
    assert np.abs(posed - bent(cage.control_points))[far].max() < 0.02
    b = bind(bar, cage.control_points, cage.tets)
    assert np.abs(blend(posed, b.control_point_indices, b.weights) - bent(bar)).max() < 0.03


def test_with_rest_keeps_masses_and_topology_and_rests_in_the_new_shape():
    points, cage = spot_cage()
    model = solver.build_model(cage.control_points, cage.tets)
    r = Rotation.from_euler("y", 90, degrees=True).as_matrix()
    turned = solver.with_rest(model, cage.control_points @ r.T)
    assert np.array_equal(turned.masses, model.masses) and turned.topology is model.topology
    assert np.allclose(turned.rest_lengths, model.rest_lengths, rtol=1e-12)
    assert np.allclose(turned.rest_volumes, model.rest_volumes, rtol=1e-12)
    # resting in the turned shape with no gravity, nothing moves
    state = solver.State(cage.control_points @ r.T, np.zeros_like(cage.control_points))
    settings = solver.SimSettings(gravity=(0, 0, 0)).validated()
    after = solver.step(turned, state, settings, 1 / 24)
    assert np.abs(after.positions - state.positions).max() < 1e-9


def test_a_pose_that_folds_a_tet_keeps_its_bound_rest_shape():
    """with_rest: a tet the pose squeezes flat or turns inside out keeps the bound volume and D_m⁻¹
    (a flat rest shape divided by zero: the overflow this guards against), the others take the
    posed shape."""
    corners = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=float)
    tets = np.array([[0, 1, 2, 3], [1, 2, 3, 4]])
    model = solver.build_model(corners, tets)
    posed = corners * 2.0
    posed[0] = [1.0, 1.0, 1.0]  # through the face (2,0,0)-(0,2,0)-(0,0,2): tet 0 inside out
    moved = solver.with_rest(model, posed)
    assert moved.rest_volumes[0] == model.rest_volumes[0]
    np.testing.assert_array_equal(moved.inverse_rest_shapes[0], model.inverse_rest_shapes[0])
    assert moved.rest_volumes[1] == np.float64(8.0) * model.rest_volumes[1]  # scaled ×2: 8× the volume
    np.testing.assert_allclose(moved.inverse_rest_shapes[1], model.inverse_rest_shapes[1] / 2.0, rtol=1e-14)
    np.testing.assert_allclose(moved.rest_lengths, np.linalg.norm(posed[model.edges[:, 0]] - posed[model.edges[:, 1]], axis=1))
