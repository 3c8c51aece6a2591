"""Self-contact of a cage soft body: its shown surface against itself, so a tail that curls onto a
back, an arm pressed to a belly or a fold of a soft body rests on itself instead of passing through.

Method. The contacts are those between bodies (``pairs``), with the body as its own other: before a
substep, every contact vertex of the shown surface within the search radius of one of the same
surface's triangles becomes a penalty row with Coulomb friction on a plane that rides on that
triangle, solved in the body's Vertex Block Descent sweep and acting on the vertex's four control
points through its barycentric weights (Müller et al. 2007 §3.5 for the contact, Li et al. 2020 for
the friction, as ``contacts``). Not contacts (neighbours):

* a triangle nearer to the vertex than ``NEIGHBOUR_DISTANCES`` contact distances in the rest shape:
  the cage's tets keep neighbouring parts of the surface apart (the shown surface is a
  piecewise-affine image of the rest surface), and a crease or a thin part at rest is no collision;
* a triangle with a control point in common with the vertex: a push on one would move the other.

A search reaches one contact distance beyond the contact distance and serves the next substeps
while no two contact points can have closed that margin (``every_substep``); bodies near their rest
shape up to a rigid motion skip it (``rigid_deviation``), and so do bodies with inverted tets (a hit
that crushed the body through itself: its surface has no outside until the material turns the tets
back, which it does, as without self-contact).

Broad phase. The surface is cut once, in its rest shape, into clusters: the cubes of a rest-space
grid ``CLUSTER_DISTANCES`` contact distances wide, each holding its vertices and the triangles whose
rest centroid is in it. Each search gives each cluster the bounding sphere of its points; two
clusters can hold a contact only if their spheres now come within the radius and their rest
spheres are at least the neighbour distance apart at their farthest (spheres: a rigid motion
changes nothing). The compiled search (``cage_self_kernel``, hashed grids, Teschner et al. 2003)
finds exactly the NumPy reference's contacts (``search``, SciPy's k-d tree).

Limits. Two parts approaching each other by more than the contact distance in one substep (2.4 m/s
at the default 1 cm and 240 steps per second) can pass through each other. Parts nearer at rest
than the neighbour distance never collide.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from scipy.spatial import cKDTree

from ..geometry import tet_volumes
from . import backend, contacts, pair_surfaces
from .model import Model, State
from .pairs import SEPARATION_SPEED, ContactSettings, PairRows, SubstepContacts
from .self_contact import SelfCollision, first_of_each, point_triangle_squared

# Triangles nearer to a vertex than this many contact distances in the rest shape are its
# neighbours: never a contact (4 cm at the default 1 cm).
NEIGHBOUR_DISTANCES = 4.0
# The search radius: the contact distance plus how far two parts can approach each other in the
# frame (twice the fastest control point's speed relative to the body's mean), at most this many
# contact distances in all, so that a body at rest has no candidates (module docstring).
RADIUS_DISTANCES = 2.0
# The clusters' cubes [contact distances]: a cube's sphere (half its diagonal, 0.35 contact
# distances, and its triangles' reach beyond it) stays under (NEIGHBOUR − RADIUS) / 4 = 0.5.
CLUSTER_DISTANCES = 0.4


@dataclass(frozen=True, eq=False)
class CageSurface:
    """A cage body's shown surface prepared for its self-contact (``prepare``).

    Attributes:
        triangles: int64 [T, 3], the surface's triangles on the contact points, turned outward
            (``pair_surfaces.facts``); closed: whether it encloses a volume (else two-sided).
        rest: float64 [V, 3] [m], the contact points at rest; controls: int64 [V, 4], their
            control points (a triangle that shares one with a vertex is never its contact: a push
            on the vertex would move the triangle with it).
        rest_limit: [m] the neighbour distance (``NEIGHBOUR_DISTANCES`` × the contact distance).
        points: (offsets int64 [C + 1], points int64 [...]): each cluster's vertices and its
            triangles' corners, whose sphere bounds it.
        vertices: (offsets int64 [C + 1], vertices int64 [V]): each cluster's vertices.
        faces: (offsets int64 [C + 1], triangles int64 [T]): each cluster's triangles.
        rest_centres: float64 [C, 3] [m], rest_radii: float64 [C] [m]: the clusters' rest spheres.
        own: the self-contact's settings.
        reach: the most a contact point's barycentric weights add up to in absolute value (1 for
            one inside its tet): how much farther than the control points it can move.
        rest_controls: float64 [Q, 3] [m], the control points at rest.
    """

    triangles: np.ndarray
    closed: bool
    rest: np.ndarray
    controls: np.ndarray
    rest_limit: float
    points: tuple[np.ndarray, np.ndarray]
    vertices: tuple[np.ndarray, np.ndarray]
    faces: tuple[np.ndarray, np.ndarray]
    rest_centres: np.ndarray
    rest_radii: np.ndarray
    own: SelfCollision
    reach: float
    rest_controls: np.ndarray


# The last few prepared surfaces, by the model and triangles they were made from: the Blender layer
# makes its bodies anew for each frame it shows, from the same model and triangles.
_PREPARED_KEPT = 8
_prepared: dict[tuple[int, int, SelfCollision], tuple[Model, np.ndarray, CageSurface]] = {}


def prepare(model: Model, triangles: np.ndarray, own: SelfCollision) -> CageSurface:
    """The ``CageSurface`` of a cage body's shown surface (``triangles``: int [T, 3] on the model's
    contact points, ``model.contact_indices``), in its rest shape (``model.rest_positions``); made
    once for the same model, triangles and settings."""
    key = (id(model), id(triangles), own)
    kept = _prepared.get(key)
    if kept is not None and kept[0] is model and kept[1] is triangles:
        return kept[2]
    surface = _prepare(model, triangles, own)
    if len(_prepared) >= _PREPARED_KEPT:
        _prepared.pop(next(iter(_prepared)))
    _prepared[key] = (model, triangles, surface)
    return surface


def _prepare(model: Model, triangles: np.ndarray, own: SelfCollision) -> CageSurface:
    rest = contacts.contact_points(model, model.rest_positions)
    facts = pair_surfaces.facts(np.asarray(triangles), rest)
    tris = np.ascontiguousarray(facts.triangles, dtype=np.int64)
    cell = CLUSTER_DISTANCES * own.distance
    low = rest.min(axis=0) if rest.shape[0] else np.zeros(3)
    cubes = np.floor((np.concatenate([rest, rest[tris].mean(axis=1)]) - low) / cell).astype(np.int64)
    _, cluster = np.unique(cubes, axis=0, return_inverse=True)
    cluster = cluster.ravel()
    count = int(cluster.max(initial=-1)) + 1
    of_vertex, of_triangle = cluster[:rest.shape[0]], cluster[rest.shape[0]:]
    members = np.concatenate([np.stack([of_vertex, np.arange(rest.shape[0])], axis=1),
                              np.stack([np.repeat(of_triangle, 3), tris.ravel()], axis=1)])
    members = np.unique(members, axis=0)  # sorted by cluster, then point
    points = (_offsets(members[:, 0], count), members[:, 1].copy())
    centres, radii = spheres(rest, points)
    controls = np.ascontiguousarray(model.contact_indices, dtype=np.int64)
    return CageSurface(tris, facts.closed, rest, controls, NEIGHBOUR_DISTANCES * own.distance, points,
                       (_offsets(of_vertex, count), np.argsort(of_vertex, kind="stable")),
                       (_offsets(of_triangle, count), np.argsort(of_triangle, kind="stable")), centres, radii, own,
                       float(np.abs(model.contact_weights).sum(axis=1).max(initial=1.0)),
                       np.array(model.rest_positions, dtype=np.float64))


def _offsets(keys: np.ndarray, count: int) -> np.ndarray:
    """CSR offsets int64 [count + 1] of the rows of each key (int [n], 0 ≤ key < count)."""
    return np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=count))]).astype(np.int64)


def spheres(positions: np.ndarray, points: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(centres float64 [C, 3] [m], radii float64 [C] [m]): each cluster's points' mean and their
    largest distance from it, at ``positions`` (float64 [V, 3] [m]); ``points`` as
    ``CageSurface.points``."""
    offsets, which = points
    count = offsets.shape[0] - 1
    if count == 0:
        return np.zeros((0, 3)), np.zeros(0)
    p = positions[which]
    sizes = np.diff(offsets)
    centres = np.add.reduceat(p, offsets[:-1], axis=0) / sizes[:, None]
    d = p - np.repeat(centres, sizes, axis=0)
    return centres, np.maximum.reduceat(np.sqrt((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]),
                                        offsets[:-1])


def search(surface: CageSurface, positions: np.ndarray, radius: float,
           compiled: ModuleType | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each contact vertex's nearest triangle of its own surface that is closer than ``radius`` [m]
    at ``positions`` (the contact points, float64 [V, 3] [m]) and not its neighbour at rest (module
    docstring): (vertices int64 [k], their triangles int64 [k] (rows of ``surface.triangles``),
    the closest points' barycentric coordinates float64 [k, 3]); on a tie the lower triangle.
    ``compiled``: ``cage_self_kernel``, the same contacts from a hashed grid; ``None``: SciPy's
    k-d tree."""
    centres, radii = spheres(positions, surface.points)
    count = positions.shape[0]
    if compiled is not None:
        pairs = compiled.cluster_pairs(centres, radii, surface.rest_centres, surface.rest_radii, radius,
                                       surface.rest_limit)
        best, bary, squared = np.full(count, -1, dtype=np.int64), np.zeros((count, 3)), np.full(count, np.inf)
        compiled.nearest_triangles(positions, surface.rest, surface.controls, surface.triangles, pairs, centres,
                                   radii, *surface.vertices, *surface.faces, radius, surface.rest_limit, best, bary, squared)
        found = np.flatnonzero(best >= 0)
        return found, best[found], bary[found]
    pairs = _cluster_pairs(surface, centres, radii, radius)
    vertex, triangle = _expand(surface, pairs)
    corners = surface.triangles[triangle]
    own = np.any(corners == vertex[:, None], axis=1)
    vertex, triangle, corners = vertex[~own], triangle[~own], corners[~own]
    bary, squared = point_triangle_squared(positions, vertex, corners)
    near = squared < radius * radius
    vertex, triangle, corners, bary, squared = vertex[near], triangle[near], corners[near], bary[near], squared[near]
    apart = point_triangle_squared(surface.rest, vertex, corners)[1] >= surface.rest_limit * surface.rest_limit
    vertex, triangle, corners = vertex[apart], triangle[apart], corners[apart]
    bary, squared = bary[apart], squared[apart]
    controls = surface.controls
    shared = np.any(controls[vertex][:, :, None] == controls[corners].reshape(-1, 1, 12), axis=(1, 2))
    vertex, triangle, bary, squared = vertex[~shared], triangle[~shared], bary[~shared], squared[~shared]
    first = first_of_each(vertex, squared, triangle)
    return vertex[first], triangle[first], bary[first]


def _cluster_pairs(surface: CageSurface, centres: np.ndarray, radii: np.ndarray, radius: float) -> np.ndarray:
    """``cage_self_kernel.cluster_pairs`` with SciPy's k-d tree: int64 [m, 2], c < d, sorted."""
    if centres.shape[0] < 2:
        return np.zeros((0, 2), dtype=np.int64)
    near = cKDTree(centres).query_pairs(radius + 2.0 * float(radii.max()), output_type="ndarray").astype(np.int64)
    near = np.sort(near, axis=1)
    c, d = near[:, 0], near[:, 1]
    now = centres[c] - centres[d]
    close = ((now[:, 0] * now[:, 0] + now[:, 1] * now[:, 1]) + now[:, 2] * now[:, 2]) < (radius + radii[c] + radii[d]) ** 2
    rest = surface.rest_centres[c] - surface.rest_centres[d]
    within = surface.rest_limit - surface.rest_radii[c] - surface.rest_radii[d]
    far = (within <= 0.0) | (((rest[:, 0] * rest[:, 0] + rest[:, 1] * rest[:, 1]) + rest[:, 2] * rest[:, 2])
                             >= within * within)
    found = near[far & close]
    return found[np.lexsort((found[:, 1], found[:, 0]))]


def _expand(surface: CageSurface, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (vertex int64 [n], triangle int64 [n]) of one cluster of each pair against the other's,
    both ways."""
    both = np.concatenate([pairs, pairs[:, ::-1]]) if pairs.shape[0] else np.zeros((0, 2), dtype=np.int64)
    (v_offsets, v_rows), (t_offsets, t_rows) = surface.vertices, surface.faces
    v_count = v_offsets[both[:, 0] + 1] - v_offsets[both[:, 0]]
    t_count = t_offsets[both[:, 1] + 1] - t_offsets[both[:, 1]]
    per = v_count * t_count
    row = np.repeat(np.arange(both.shape[0]), per)
    within = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    vertex = v_rows[v_offsets[both[row, 0]] + within // t_count[row]]
    triangle = t_rows[t_offsets[both[row, 1]] + within % t_count[row]]
    return vertex.astype(np.int64), triangle.astype(np.int64)


def substep_rows(surface: CageSurface, model: Model, state: State, index: int,
                 compiled: ModuleType | None = None) -> PairRows | None:
    """The body's contacts with itself from ``state`` on (module docstring), within
    ``RADIUS_DISTANCES`` contact distances, as ``pairs.PairRows`` whose other body is itself
    (``index``, its place among the members), or ``None`` when none is within reach. ``model``: the
    frame's (a posed body's rest shape applied)."""
    own = surface.own
    radius = RADIUS_DISTANCES * own.distance
    if 2.0 * surface.reach * rigid_deviation(surface.rest_controls, state.positions) < surface.rest_limit - radius:
        return None  # near its rest shape (moved as a whole): no two parts apart at rest can be this near
    if (tet_volumes(state.positions, model.tets) <= 0.0).any():
        return None  # crushed through itself: its surface has no outside until the material turns it back
    points = contacts.contact_points(model, state.positions)
    vertex, triangle, bary = search(surface, points, radius, compiled)
    if vertex.shape[0] == 0:
        return None
    corners = surface.triangles[triangle]
    a, b, c = points[corners[:, 0]], points[corners[:, 1]], points[corners[:, 2]]
    closest = bary[:, 0, None] * a + bary[:, 1, None] * b + bary[:, 2, None] * c
    face = np.cross(b - a, c - a)
    face /= np.maximum(np.linalg.norm(face, axis=1), 1e-30)[:, None]
    away = points[vertex] - closest
    length = np.linalg.norm(away, axis=1)
    # the side is the face's; the direction the closest point's (a vertex beside an edge is pushed
    # away from the edge, not along the face's normal)
    side = np.where(np.einsum("ij,ij->i", away, face) < 0.0, -1.0, 1.0)
    touching = length <= 1e-12
    normal = np.where(touching[:, None], face, side[:, None] * away / np.where(touching, 1.0, length)[:, None])
    distance = side * length
    if not surface.closed:
        distance, normal = pair_surfaces.two_sided(distance, normal)
    # deeper inside than the contact distance: passed through (faster than the search), left there
    # as bodies placed overlapping are (``pairs``), not pushed out through the wrong side
    band = distance > -own.distance
    if not band.any():
        return None
    setting = ContactSettings(own.distance, own.static_friction, own.kinetic_friction)
    count = int(band.sum())
    return PairRows(other=index, contacts=vertex[band], corners=corners[band], barycentric=bary[band],
                    normals=normal[band], depths=np.full(count, np.inf),
                    allowances=np.maximum(own.distance - distance[band], 0.0), contact=setting)


def rigid_deviation(rest: np.ndarray, positions: np.ndarray) -> float:
    """[m] the farthest any point (float64 [Q, 3] [m] at ``positions``) is from where the rigid
    motion that best fits ``rest`` to them (Kabsch 1976, least squares) carries it. Two contact
    points' distance then differs from their rest distance by at most twice this times
    ``CageSurface.reach``."""
    if positions.shape[0] == 0:
        return 0.0
    rest_centre, centre = rest.mean(axis=0), positions.mean(axis=0)
    u, _, vt = np.linalg.svd((positions - centre).T @ (rest - rest_centre))
    turn = u @ np.diag([1.0, 1.0, float(np.sign(np.linalg.det(u @ vt)))]) @ vt
    moved = (rest - rest_centre) @ turn.T + centre
    d = positions - moved
    return float(np.sqrt((d * d).sum(axis=1).max()))


def every_substep(surface: CageSurface, index: int, compiled: ModuleType | None = None) -> SubstepContacts:
    """Member ``index``'s contacts with itself for ``pairs.step_coupled``, for one frame
    (``substep_rows``). A search reaches ``RADIUS_DISTANCES`` contact distances, one more than the
    contact distance, and serves the next substeps while no two contact points can have closed that
    margin since it: twice the largest displacement of a control point relative to the body's mean
    displacement, times the most a contact point's weights add up to (``CageSurface.reach``). A body
    at rest or moving as a whole searches once a frame."""
    margin = (RADIUS_DISTANCES - 1.0) * surface.own.distance
    last: list[tuple[Model, np.ndarray, PairRows | None, int]] = []

    def found(model: Model, state: State, dt: float) -> tuple[list[PairRows], None]:
        if last and last[0][0] is model:
            _, start, rows, age = last[0]
            moved = state.positions - start
            relative = moved - moved.mean(axis=0)
            if 2.0 * surface.reach * float(np.sqrt((relative * relative).sum(axis=1).max(initial=0.0))) < margin:
                last[0] = (model, start, rows, age + 1)
                if rows is None:
                    return [], None
                # its planes recede from where the search found them (``pairs.SEPARATION_SPEED``)
                receded = np.maximum(rows.allowances - SEPARATION_SPEED * dt * (age + 1), 0.0)
                return [dataclasses.replace(rows, allowances=receded)], None
        rows = substep_rows(surface, model, state, index, compiled)
        last[:] = [(model, state.positions.copy(), rows, 0)]
        return ([] if rows is None else [rows]), None
    return found


def _import_search() -> ModuleType:
    from . import cage_self_kernel as module

    return module


# Loaded in the background whenever the solver's kernel has loaded.
_SEARCH = backend.Companion(_import_search, "tetrig-cage-self-compile")


def compiled_search(use_kernel: bool | None = None) -> ModuleType | None:
    """The compiled search (``cage_self_kernel``), or ``None`` (``backend.Companion.module``): the
    NumPy reference finds the same contacts."""
    return _SEARCH.module(use_kernel)
