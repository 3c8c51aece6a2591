"""Closest points between bodies: ``colliders.nearby`` (NumPy, k-d tree) against the exact collider
query, and ``solver.pairs_kernel.closest`` (compiled, grid) against ``nearby`` (no Blender)."""

import numpy as np
import pytest
from conftest import obj_triangles, obj_vertices
from engine_scenes import box_polygons, fan_triangles, uv_sphere_polygons

from tetrig_addon import colliders
from tetrig_addon.colliders import nearby


def compiled():
    """``solver.pairs_kernel``, imported in a test, never at collection: importing Numba before
    ``conftest`` sets its cache folder would put every kernel's cache beside its source (and the
    solver's load would leave no marker: ``test_engine_backend_cache``)."""
    from tetrig_addon.solver import pairs_kernel

    return pairs_kernel


def bunny():
    return obj_vertices("stanford-bunny"), obj_triangles("stanford-bunny").astype(np.int64)


def box():
    vertices, corners, sizes = box_polygons(0.3, 6)
    return vertices, fan_triangles(corners, sizes).astype(np.int64)


def ball():
    vertices, corners, sizes = uv_sphere_polygons(0.3, 24, 12)
    return vertices, fan_triangles(corners, sizes).astype(np.int64)


def around(vertices: np.ndarray, count: int, spread: float, seed: int = 0) -> np.ndarray:
    """``count`` points scattered within ``spread`` [m] of random vertices."""
    rng = np.random.default_rng(seed)
    return vertices[rng.integers(0, len(vertices), count)] + rng.uniform(-spread, spread, (count, 3))


def oriented(vertices, triangles):
    """The triangles turned to face out (the bunny's file winds them inward)."""
    c = vertices[triangles]
    volume = np.einsum("ij,ij->", c[:, 0], np.cross(c[:, 1], c[:, 2]))
    return triangles if volume > 0 else np.ascontiguousarray(triangles[:, [0, 2, 1]])


@pytest.mark.parametrize("mesh, spread, tolerance", [(box, 0.05, 1e-12), (ball, 0.05, 2e-4), (bunny, 0.01, 2e-4)])
def test_nearby_finds_the_exact_closest_distance_within_reach(mesh, spread, tolerance):
    vertices, triangles = mesh()
    triangles = oriented(vertices, triangles)
    points = around(vertices, 1500, spread)
    reach = np.full(len(points), spread)
    found, _, _, distance, _ = nearby.closest(nearby.surface(vertices, triangles), points, reach)
    exact, _ = colliders.signed_distance(colliders.mesh_collider(vertices, triangles), points)
    within = np.flatnonzero(np.abs(exact) < reach)
    # every point within reach is found, with the exact sign; the distance is the exact one where the
    # mesh's triangles are even (a long sliver may hide a nearer point: the module docstring)
    assert set(within) <= set(found)
    assert len(within) > 500
    position = np.searchsorted(found, within)
    assert np.all(np.sign(distance[position]) == np.sign(exact[within]))
    assert np.abs(distance[position] - exact[within]).max() < tolerance


@pytest.mark.parametrize("mesh, spread", [(box, 0.05), (ball, 0.05), (bunny, 0.02)])
def test_the_compiled_grid_finds_what_the_numpy_reference_finds(mesh, spread):
    vertices, triangles = mesh()
    triangles = oriented(vertices, triangles)
    points = around(vertices, 3000, spread, seed=1)
    reach = np.random.default_rng(2).uniform(0.0, spread, len(points))
    pairs_kernel = compiled()
    surface = nearby.surface(vertices, triangles)
    bounds = reach + surface.longest_edge
    # the nearest vertices themselves, ties by index included (the box's grid of vertices has them)
    cell = pairs_kernel.CELL_EDGES * surface.longest_edge
    assert np.array_equal(pairs_kernel.nearest_vertices(points, bounds, vertices, surface.tree_vertices, cell, 2),
                          nearby._nearest_vertices(surface, points, bounds))
    expected = nearby.closest(surface, points, reach)
    got = pairs_kernel.closest(points, reach, vertices, triangles, nearby.rings(triangles, len(vertices)),
                               nearby.NEAREST_VERTICES, nearby.INSIDE_BARYCENTRIC, nearby.ON_SURFACE_RELATIVE)
    assert np.array_equal(got[0], expected[0]) and len(got[0]) > 1000

    def closest_point(triangle, bary):
        return np.einsum("rk,rkd->rd", bary, vertices[triangles[triangle]])

    # equal distances on a shared edge or corner may name another of its triangles: the same point
    np.testing.assert_allclose(closest_point(got[1], got[2]), closest_point(expected[1], expected[2]),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[3], expected[3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[4], expected[4], rtol=0, atol=1e-9)


def test_a_point_equally_near_four_vertices_takes_the_two_of_lowest_index():
    vertices = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    triangles = np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int64)
    pairs_kernel = compiled()
    surface = nearby.surface(vertices, triangles)
    point = np.array([[0.5, 0.5, 0.3]])
    bounds = np.array([2.0])
    assert nearby._nearest_vertices(surface, point, bounds).tolist() == [[0, 1]]
    assert pairs_kernel.nearest_vertices(point, bounds, vertices, surface.tree_vertices, 0.25, 2).tolist() == [[0, 1]]
    assert pairs_kernel.nearest_vertices(point, np.array([0.1]), vertices, surface.tree_vertices, 0.25,
                                         2).tolist() == [[-1, -1]]
