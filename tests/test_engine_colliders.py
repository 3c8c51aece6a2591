"""Collision objects: exact signed distance to triangle meshes, contact rules (no Blender)."""

import numpy as np
import pytest

from tetrig_addon.colliders import collider as colliders
from tetrig_addon.colliders import mesh_collider, near, penetration, signed_distance
from tetrig_addon.errors import TetRigInputError

EXACT = 1e-12  # [m] agreement expected between two exact computations (round-off only)


def orient_outward(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Flip triangles whose normal points towards the origin (for shapes star-shaped about it)."""
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    inward = np.einsum("ij,ij->i", np.cross(b - a, c - a), a + b + c) < 0
    out = triangles.copy()
    out[inward] = out[inward][:, [0, 2, 1]]
    return out


def uv_sphere(segments: int = 32, rings: int = 16, radius: float = 1.0):
    """Blender-style UV sphere: two poles, rings - 1 latitude loops; quads split into triangles."""
    theta = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    loops = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    vertices = radius * np.vstack([[0.0, 0.0, 1.0], loops, [0.0, 0.0, -1.0]])
    south = vertices.shape[0] - 1
    j = np.arange(segments)
    nxt = (j + 1) % segments
    tris = [np.stack([np.zeros(segments, int), 1 + j, 1 + nxt], 1)]
    for i in range(rings - 2):
        a, b = 1 + i * segments + j, 1 + i * segments + nxt
        tris += [np.stack([a, a + segments, b + segments], 1), np.stack([a, b + segments, b], 1)]
    last = 1 + (rings - 2) * segments
    tris.append(np.stack([last + j, np.full(segments, south), last + nxt], 1))
    triangles = np.vstack(tris)
    return vertices, orient_outward(vertices, triangles)


def box(half: float = 1.0):
    """Axis-aligned cube [-half, half]³ as 12 triangles."""
    vertices = half * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    triangles = np.array([t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))])
    return vertices, orient_outward(vertices, triangles)


def plane(half: float = 1.0):
    """Square [-half, half]² at z = 0, two triangles, normal +z."""
    vertices = half * np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)
    return vertices, np.array([[0, 1, 2], [0, 2, 3]])


def segment_distance(p, a, b):
    ab = b - a
    t = np.clip(np.einsum("...i,...i->...", p - a, ab) / np.einsum("...i,...i->...", ab, ab), 0, 1)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)


def brute_force_distance(points, vertices, triangles):
    """min over every triangle of the point-triangle distance: the plane distance if the foot of
    the perpendicular is inside the triangle, else the nearest of the three edge segments."""
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    p = points[:, None, :]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    height = np.einsum("ptk,tk->pt", p - a, n)
    foot = p - height[..., None] * n
    inside = np.ones(height.shape, bool)
    for v0, v1 in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ptk,tk->pt", np.cross(v1 - v0, foot - v0), n) >= 0
    edges = np.minimum(np.minimum(segment_distance(p, a, b), segment_distance(p, b, c)),
                       segment_distance(p, c, a))
    return np.where(inside, np.abs(height), edges).min(axis=1)


def winding_number(points, vertices, triangles):
    """Generalized winding number: Σ solid angles / 4π (Van Oosterom & Strackee 1983); 1 inside a
    closed outward mesh, 0 outside. An independent inside test for the sign."""
    r = vertices[triangles][None, :, :, :] - points[:, None, None, :]
    la, lb, lc = np.linalg.norm(r, axis=-1).transpose(2, 0, 1)
    a, b, c = r[:, :, 0], r[:, :, 1], r[:, :, 2]
    det = np.einsum("ptk,ptk->pt", a, np.cross(b, c))
    dot = lambda u, v: np.einsum("ptk,ptk->pt", u, v)  # noqa: E731
    den = la * lb * lc + dot(a, b) * lc + dot(a, c) * lb + dot(b, c) * la
    return 2.0 * np.arctan2(det, den).sum(axis=1) / (4.0 * np.pi)


def random_directions(rng, count):
    d = rng.normal(size=(count, 3))
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def query_points(rng, vertices):
    """Points near the surface (small bounds), far outside and deep inside (large bounds, whole-mesh
    tests), in and around the bounding box, and on vertices."""
    lo, hi = vertices.min(0), vertices.max(0)
    centre, size = (lo + hi) / 2, np.linalg.norm(hi - lo)
    near_surface = vertices[rng.integers(0, len(vertices), 200)] + rng.normal(0, 0.03 * size, (200, 3))
    far = centre + random_directions(rng, 40) * rng.uniform(1.0, 3.0, (40, 1)) * size
    deep = centre + rng.normal(0, 0.05 * size, (40, 3))
    box_fill = rng.uniform(lo - 0.1 * size, hi + 0.1 * size, (120, 3))
    return np.vstack([near_surface, far, deep, box_fill, vertices[:10]])


def jittered_sphere(rng):
    vertices, triangles = uv_sphere(32, 16)
    return vertices * rng.uniform(0.85, 1.15, (len(vertices), 1)), triangles


def test_distance_is_exact_against_brute_force_over_all_triangles():
    rng = np.random.default_rng(7)
    sphere_v, sphere_t = jittered_sphere(rng)
    box_v, box_t = box(0.7)
    # One collider of a 960-triangle sphere and a 2-triangle 20 m plane: two size classes, and the
    # plane's huge triangles next to the sphere's small ones.
    plane_v, plane_t = plane(10.0)
    mixed_v = np.vstack([sphere_v, plane_v - [0, 0, 2.0]])
    mixed_t = np.vstack([sphere_t, plane_t + len(sphere_v)])
    # A soup of 400 unconnected triangles from 1 mm to 1 m: many size classes and bounds.
    size = 10.0 ** rng.uniform(-3, 0, (400, 1, 1))
    soup_v = (rng.uniform(-1, 1, (400, 1, 3)) + size * rng.normal(size=(400, 3, 3))).reshape(-1, 3)
    soup_t = np.arange(1200).reshape(400, 3)
    for vertices, triangles in ((sphere_v, sphere_t), (box_v, box_t), (mixed_v, mixed_t),
                                (soup_v, soup_t)):
        collider = mesh_collider(vertices, triangles)
        points = query_points(rng, vertices[np.unique(triangles[: len(sphere_t)])])
        distance, _ = signed_distance(collider, points)
        np.testing.assert_allclose(np.abs(distance), brute_force_distance(points, vertices, triangles),
                                   rtol=0, atol=EXACT)
    assert len(mesh_collider(mixed_v, mixed_t).size_classes) > 1
    assert len(mesh_collider(soup_v, soup_t).size_classes) >= 8


def test_enclosing_balls_are_the_smallest_that_hold_each_triangle():
    """The search is exact only if every triangle is inside its ball; smaller balls search less."""
    corners = np.random.default_rng(2).normal(size=(5000, 3, 3))
    centre, radius = colliders._enclosing_balls(corners)
    assert np.all(np.linalg.norm(corners - centre[:, None], axis=2) <= radius[:, None] * (1 + 1e-12))
    lengths = np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2)  # edge opposite each
    area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]),
                          axis=1) / 2
    longest = lengths.max(axis=1)
    acute = 2 * longest**2 < (lengths**2).sum(axis=1)  # longest² < sum of the other two squared
    circumradius = lengths.prod(axis=1) / (4 * area)  # abc / 4K
    expected = np.where(acute, circumradius, longest / 2)
    assert 0.2 < acute.mean() < 0.8
    np.testing.assert_allclose(radius, expected, rtol=1e-9)


def test_points_near_and_far_are_exact():
    """Points near the surface are settled in the first bins, far ones in later bins; all exact."""
    rng = np.random.default_rng(3)
    vertices, triangles = jittered_sphere(rng)
    collider = mesh_collider(vertices, triangles)
    close = random_directions(rng, 100) * 1.0
    far = random_directions(rng, 100) * 4.0
    for points in (close, far):
        distance, _ = signed_distance(collider, points)
        np.testing.assert_allclose(np.abs(distance), brute_force_distance(points, vertices, triangles),
                                   rtol=0, atol=EXACT)
    assert collider.max_reach < 0.2  # so near and far points fall in different bins


def test_sign_matches_the_winding_number_of_a_bumpy_sphere():
    rng = np.random.default_rng(11)
    vertices, triangles = jittered_sphere(rng)
    collider = mesh_collider(vertices, triangles)
    assert collider.closed
    points = query_points(rng, vertices)
    distance, normal = signed_distance(collider, points)
    inside = winding_number(points, vertices, triangles) > 0.5
    clear = np.abs(distance) > 1e-9  # points on the surface have no side
    assert inside[clear].sum() > 50 and (~inside[clear]).sum() > 50
    np.testing.assert_array_equal(distance[clear] < 0, inside[clear])
    np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0, atol=EXACT)


def test_sphere_inside_is_negative_and_outside_positive():
    vertices, triangles = uv_sphere(32, 16, radius=1.0)
    collider = mesh_collider(vertices, triangles)
    directions = random_directions(np.random.default_rng(0), 300)
    inner, _ = signed_distance(collider, 0.5 * directions)
    outer, normal = signed_distance(collider, 1.5 * directions)
    # Its faces span π/16 of latitude and of longitude, so the mesh lies between radius 1 and a
    # loose bound cos(π/16)·cos(π/32) on its faces' distance from the centre.
    sag = 1.0 - np.cos(np.pi / 16) * np.cos(np.pi / 32)
    assert np.all(inner < 0) and np.all((inner <= -0.5 + sag) & (inner >= -0.5))
    assert np.all(outer > 0) and np.all((outer >= 0.5) & (outer <= 0.5 + sag))
    assert np.all(np.einsum("ij,ij->i", normal, directions) > 0.95)


def test_box_signs_at_edges_and_corners():
    collider = mesh_collider(*box(1.0))
    eps = 1e-3
    r2, r3 = 1 / np.sqrt(2), 1 / np.sqrt(3)
    outside = np.array([
        [1 + eps * r3, 1 + eps * r3, 1 + eps * r3],   # off a corner, along the diagonal
        [-1 - eps * r3, 1 + eps * r3, -1 - eps * r3],
        [1 + eps * r2, 1 + eps * r2, 0.3],            # off an edge
        [0.2, -1 - eps * r2, 1 + eps * r2],
        [1.0, 1 + eps, 0.3],                          # in the +y face's plane, beyond the x edge
        [1 + eps, 0.4, 1.0],                          # in the +z face's plane: p − closest ⟂ +z
        [1.0, 1.0 + eps, 1.0],                        # straight out of a corner along +y
    ])
    distance, normal = signed_distance(collider, outside)
    np.testing.assert_allclose(distance, eps, rtol=0, atol=EXACT)
    inside = np.array([[1 - eps, 1 - 2 * eps, 1 - 3 * eps], [1 - eps, -1 + 2 * eps, 0.3],
                       [0.3, 1 - eps, -1 + 3 * eps], [1 - eps, 0.0, 0.0]])
    distance_in, normal_in = signed_distance(collider, inside)
    np.testing.assert_allclose(distance_in, -eps, rtol=0, atol=EXACT)
    np.testing.assert_allclose(normal_in, [[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]], atol=EXACT)
    np.testing.assert_allclose(normal[4], [0, 1, 0], atol=EXACT)


def test_box_matches_the_analytic_box_sdf():
    collider = mesh_collider(*box(1.0))
    points = np.random.default_rng(5).uniform(-2.5, 2.5, (2000, 3))
    q = np.abs(points) - 1.0
    analytic = np.linalg.norm(np.maximum(q, 0), axis=1) + np.minimum(q.max(axis=1), 0)
    distance, _ = signed_distance(collider, points)
    np.testing.assert_allclose(distance, analytic, rtol=0, atol=EXACT)


def test_sharp_edge_sign_needs_the_edge_pseudonormal():
    """Off a regular tetrahedron's edge, near one face's direction, the point is outside although
    its offset is against the other face's normal: a face-normal sign would call it inside."""
    vertices = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], float)
    triangles = orient_outward(vertices, np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]))
    collider = mesh_collider(vertices, triangles)
    assert collider.closed
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    eps = 1e-3
    for first, second in ((0, 1), (1, 0), (0, 2), (2, 0), (1, 3), (3, 1)):
        shared = np.intersect1d(triangles[first], triangles[second])
        midpoint = vertices[shared].mean(axis=0)
        direction = 0.95 * normals[second] + 0.05 * normals[first]
        direction /= np.linalg.norm(direction)
        assert direction @ normals[first] < 0  # the face-normal test of `first` would say inside
        distance, normal = signed_distance(collider, (midpoint + eps * direction)[None])
        np.testing.assert_allclose(distance, [eps], rtol=0, atol=EXACT)
        np.testing.assert_allclose(normal[0], direction, atol=1e-9)


def test_normal_on_the_surface_is_the_angle_weighted_pseudonormal():
    vertices, triangles = box(1.0)
    collider = mesh_collider(vertices, triangles)
    distance, normal = signed_distance(collider, vertices)
    np.testing.assert_allclose(distance, 0.0, atol=EXACT)
    # Each face meets a corner at 90° whether it brings one or two triangles there, so only angle
    # weighting gives the diagonal (a plain average of incident face normals tilts towards the
    # face with two triangles).
    np.testing.assert_allclose(normal, vertices / np.sqrt(3), atol=EXACT)
    face_of = np.argmax(np.abs(vertices[triangles].mean(axis=1)), axis=1)  # axis of each face
    counts = [[np.count_nonzero((triangles == v).any(axis=1) & (face_of == k)) for k in range(3)]
              for v in range(8)]
    assert any(len(set(per_axis)) > 1 for per_axis in counts)  # the triangulation is uneven


def test_open_plane_is_one_sided_and_inner_thickness_limits_depth():
    collider = mesh_collider(*plane(1.0), thickness_outer=0.02, thickness_inner=0.2)
    assert not collider.closed
    points = np.array([[0.2, 0.3, 0.01], [0.2, 0.3, -0.05], [-0.4, 0.1, -0.5], [0.5, 0.5, 0.03],
                       [0.1, -0.7, 0.0]])
    distance, normal = signed_distance(collider, points)
    np.testing.assert_allclose(distance, [0.01, -0.05, -0.5, 0.03, 0.0], rtol=0, atol=EXACT)
    np.testing.assert_allclose(normal, np.tile([0.0, 0.0, 1.0], (5, 1)), atol=EXACT)
    np.testing.assert_allclose(penetration(collider, points), [0.01, 0.07, 0.0, 0.0, 0.02],
                               rtol=0, atol=EXACT)
    with_deep_inner = mesh_collider(*plane(1.0), thickness_outer=0.02, thickness_inner=0.6)
    np.testing.assert_allclose(penetration(with_deep_inner, points[2:3]), [0.52], atol=EXACT)


def test_closed_mesh_pushes_out_points_at_any_depth():
    collider = mesh_collider(*box(1.0), thickness_outer=0.02, thickness_inner=0.2)
    depth = penetration(collider, np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 1.01],
                                            [0.0, 0.0, 1.5]]))
    np.testing.assert_allclose(depth, [1.02, 0.52, 0.01, 0.0], rtol=0, atol=EXACT)


def test_closed_detection():
    sphere_v, sphere_t = uv_sphere(32, 16)
    box_v, box_t = box()
    assert mesh_collider(sphere_v, sphere_t).closed
    assert mesh_collider(box_v, box_t).closed
    assert not mesh_collider(*plane()).closed
    assert not mesh_collider(box_v, box_t[1:]).closed  # a hole
    flipped = box_t.copy()
    flipped[0] = flipped[0, [0, 2, 1]]
    assert not mesh_collider(box_v, flipped).closed  # watertight but not consistently oriented


def test_degenerate_triangles_are_dropped():
    vertices, triangles = plane()
    vertices = np.vstack([vertices, [[0.0, -1.0, 0.0]]])  # vertex 4, on the line of edge 0-1
    degenerate = np.array([[0, 1, 1], [0, 1, 4]])  # a repeated index; three collinear points
    collider = mesh_collider(vertices, np.vstack([triangles[:1], degenerate, triangles[1:]]))
    np.testing.assert_array_equal(collider.triangles, triangles)
    assert not collider.closed


@pytest.mark.parametrize("vertices, triangles, kwargs, message", [
    ([[0, 0, 0], [1, 0, np.nan], [0, 1, 0]], [[0, 1, 2]], {}, "NaN"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 3]], {}, "out of range"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, -1]], {}, "out of range"),
    ([[0, 0, 0], [1, 1, 1], [2, 2, 2]], [[0, 1, 2], [0, 0, 1]], {}, "degenerate"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], {"thickness_outer": -0.1}, "Outer"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], {"thickness_inner": -1.0}, "Inner"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], {"static_friction": 0.2, "kinetic_friction": 0.5}, "friction"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], {"kinetic_friction": np.nan}, "friction"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1.5, 2]], {}, "integer"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.zeros((0, 3), int), {}, "no triangles"),
    (np.zeros((0, 3)), [[0, 1, 2]], {}, "no vertices"),
])
def test_bad_input_raises(vertices, triangles, kwargs, message):
    with pytest.raises(TetRigInputError, match=message):
        mesh_collider(np.array(vertices, float), np.array(triangles), **kwargs)


def test_bad_query_points_raise():
    collider = mesh_collider(*box())
    with pytest.raises(TetRigInputError, match=r"\[n, 3\]"):
        signed_distance(collider, np.zeros((4, 2)))
    with pytest.raises(TetRigInputError, match="NaN"):
        signed_distance(collider, np.array([[0.0, np.inf, 0.0]]))
    with pytest.raises(TetRigInputError, match="margin"):
        near(collider, np.zeros((1, 3)), -1.0)


def test_no_points_give_empty_results():
    distance, normal = signed_distance(mesh_collider(*uv_sphere()), np.zeros((0, 3)))
    assert distance.shape == (0,) and normal.shape == (0, 3)


def test_near_selects_points_that_may_touch():
    sphere = mesh_collider(*uv_sphere(), thickness_outer=0.02)
    points = np.array([[10.0, 10.0, 10.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.05], [0.0, 0.0, 1.2]])
    np.testing.assert_array_equal(near(sphere, points, 0.1), [False, True, True, False])
    np.testing.assert_array_equal(near(sphere, points, 0.0), [False, True, False, False])
    # Below an open plane contact reaches thickness_inner, beyond its flat bounding box.
    ground = mesh_collider(*plane(), thickness_outer=0.02, thickness_inner=0.2)
    below = np.array([[0.0, 0.0, -0.1], [0.0, 0.0, -0.3], [0.0, 0.0, 0.1]])
    np.testing.assert_array_equal(near(ground, below, 0.0), [True, False, True])
    assert penetration(ground, below[:1])[0] > 0  # the point near() keeps is really in contact


def test_collider_arrays_are_read_only_copies():
    vertices, triangles = box()
    collider = mesh_collider(vertices, triangles)
    vertices[0] = 100.0
    assert collider.vertices[0, 0] != 100.0
    with pytest.raises(ValueError):
        collider.vertices[0, 0] = 5.0
    assert collider.triangles.dtype == np.int32 and collider.vertices.dtype == np.float64
