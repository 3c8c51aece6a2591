"""A polygon mesh as a surface body sees it: the springs, hinges, triangles and masses its faces
give, each written in face corners, so that a tear (which gives corners their own particles,
``tearing``) changes which particles an element joins and nothing else.

Elements (seed 004: structural springs on the edges, shear springs across the faces' diagonals,
bending across adjacent triangles; Provot 1995, "Deformation Constraints in a Mass-Spring Model to
Describe Rigid Cloth Behavior", for the structural + shear network):

* a structural spring on every face side: a side of an n-sided face of area A stands for the area
  2A/n (a square grid's edge then stands for one cell, and a grid of such springs has the modulus
  per unit width of its springs' ``stretch``; boundary edges count once);
* a shear spring on every diagonal of a face with four or more sides, standing for 4A/D of its
  area (D diagonals; a square's two diagonals then give the shear modulus ``shear``);
* a hinge (``solver.bending``) on every pair of triangles sharing an edge, the faces fanned into
  triangles from their first corner, so a quad also bends across its own diagonal;
* the fan triangles bound the enclosed volume (``solver.pressure``) when the surface is closed.

Every vertex must belong to a face: the faces carry the mass (density × thickness × area, a third of
each triangle to each of its corners). Loose edges carry nothing and are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TetRigInputError
from ..solver.bending import angle_gradients


@dataclass(frozen=True)
class Closure:
    """Whether the fan triangles enclose a volume, and what is wrong when they do not.

    Attributes:
        open_edges: edges with one triangle.
        nonmanifold_edges: edges with three or more.
        flipped_edges: edges whose two triangles face opposite ways (inconsistent normals).
        rest_volume: the enclosed volume at rest [m³], with the normals pointing out (0 when open).
        inward: whether the faces point inwards (their triangles are reversed for the volume).
    """

    open_edges: int
    nonmanifold_edges: int
    flipped_edges: int
    rest_volume: float
    inward: bool

    @property
    def closed(self) -> bool:
        return not (self.open_edges or self.nonmanifold_edges or self.flipped_edges) and self.rest_volume > 0.0

    def problem(self, name: str) -> str:
        """Why pressure cannot work on this surface, for the user ('' when it can)."""
        if self.open_edges:
            return (f"{name} is not closed ({_edges(self.open_edges, 'open edge')}): pressure needs a "
                    "closed surface; fill the holes or turn Pressure off")
        if self.nonmanifold_edges:
            shared = "is shared" if self.nonmanifold_edges == 1 else "are shared"
            return (f"{name} has {_edges(self.nonmanifold_edges, 'edge')} that {shared} by three or more "
                    "faces: pressure needs a closed surface with two faces at every edge")
        if self.flipped_edges:
            return (f"{name} has faces pointing both ways ({_edges(self.flipped_edges, 'edge')}): "
                    "recalculate its normals (Mesh > Normals > Recalculate Outside) to use pressure")
        if not self.rest_volume > 0.0:
            return f"{name} encloses no volume: pressure needs a closed surface around a space"
        return ""


def _edges(count: int, noun: str) -> str:
    """'1 open edge', '2 open edges'."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


@dataclass(frozen=True)
class SurfaceMesh:
    """The rest mesh of a surface body and its elements by face corner.

    Attributes:
        vertices: float64 [vertex_count, 3] [m], rest positions (object space).
        corner_vertices: int32 [corner_count], the vertex of each face corner.
        face_offsets: int64 [face_count + 1]; face f is corners face_offsets[f]:[f+1].
        edges: int32 [edge_count, 2], the mesh's edges (Blender's order when read from Blender).
        side_corners: int32 [side_count, 2], the (corner, next corner) of every face side: the
            structural springs.
        side_edges: int32 [side_count], the mesh edge of each side.
        side_areas: float64 [side_count] [m²], the area each side's spring stands for.
        diagonal_corners: int32 [diagonal_count, 2], the corners of every face diagonal: the shear
            springs.
        diagonal_areas: float64 [diagonal_count] [m²].
        triangles: int32 [triangle_count, 3], the fan triangles, by corner, in the face's winding.
        corner_areas: float64 [corner_count] [m²], a third of the area of each corner's triangles.
        hinge_corners: int32 [hinge_count, 6], (a, b, c, d, a′, b′): triangles (a, b, c) and one
            holding a′, b′ (the same vertices as a, b) and d; a hinge joins particles only while
            a and a′, b and b′ share their particles (its edge is not torn).
        rest_angles: float64 [hinge_count] [rad]; hinge_weights: float64 [hinge_count],
            |ē|²/(Ā₁ + Ā₂) (``solver.bending``).
        closure: ``Closure`` of the fan triangles.
    """

    vertices: np.ndarray
    corner_vertices: np.ndarray
    face_offsets: np.ndarray
    edges: np.ndarray
    side_corners: np.ndarray
    side_edges: np.ndarray
    side_areas: np.ndarray
    diagonal_corners: np.ndarray
    diagonal_areas: np.ndarray
    triangles: np.ndarray
    corner_areas: np.ndarray
    hinge_corners: np.ndarray
    rest_angles: np.ndarray
    hinge_weights: np.ndarray
    closure: Closure

    @property
    def vertex_count(self) -> int:
        return int(self.vertices.shape[0])

    @property
    def corner_count(self) -> int:
        return int(self.corner_vertices.shape[0])

    @property
    def edge_count(self) -> int:
        return int(self.edges.shape[0])


def surface_mesh(vertices: np.ndarray, corner_vertices: np.ndarray, face_sizes: np.ndarray,
                 edges: np.ndarray | None = None, corner_edges: np.ndarray | None = None,
                 name: str = "The mesh") -> SurfaceMesh:
    """The elements of a polygon mesh for a surface body.

    Args:
        vertices: float [vertex_count, 3] [m], rest positions.
        corner_vertices: int [corner_count], the vertex of every face corner, face after face.
        face_sizes: int [face_count], the corners of each face (≥ 3).
        edges: int [edge_count, 2] and ``corner_edges`` int [corner_count] (the edge from each
            corner to the next of its face): the mesh's own edges (Blender's); ``None``: made here.
        name: the mesh's name in messages.

    Returns:
        A ``SurfaceMesh``.

    Raises:
        TetRigInputError: no faces, a face with fewer than three corners, a corner that names no
            vertex, or a vertex in no face (the faces carry the mass).
    """
    x = np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1, 3)
    cv = np.ascontiguousarray(corner_vertices, dtype=np.int32)
    sizes = np.asarray(face_sizes, dtype=np.int64)
    if sizes.shape[0] == 0:
        raise TetRigInputError(f"{name} has no faces: a Surface soft body is made of faces.")
    if sizes.min() < 3 or sizes.sum() != cv.shape[0]:
        raise TetRigInputError(f"{name} has a face with fewer than three corners.")
    if cv.shape[0] and (cv.min() < 0 or cv.max() >= x.shape[0]):
        raise TetRigInputError(f"{name}: a face names a vertex that does not exist.")
    loose = x.shape[0] - np.unique(cv).shape[0]
    if loose:
        raise TetRigInputError(
            f"{name} has {loose} vertices in no face: a Surface soft body's faces carry its mass. "
            "Delete them (Mesh > Clean Up > Delete Loose) or use a cage.")
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    corner_face = np.repeat(np.arange(sizes.shape[0]), sizes)
    corner = np.arange(cv.shape[0], dtype=np.int64)
    following = np.where(corner + 1 == offsets[corner_face + 1], offsets[corner_face], corner + 1)
    sides = np.stack([corner, following], axis=1).astype(np.int32)
    if edges is None or corner_edges is None:
        edges, corner_edges = _edges_of(cv[sides])
    triangles, tri_face = _fan(offsets, sizes)
    tri_area = _areas(x[cv[triangles]])
    face_area = np.bincount(tri_face, weights=tri_area, minlength=sizes.shape[0])
    corner_areas = np.bincount(triangles.ravel(), weights=np.repeat(tri_area / 3.0, 3), minlength=cv.shape[0])
    diagonals, diag_face = _diagonals(offsets, sizes)
    per_face = np.maximum(sizes * (sizes - 3) // 2, 1)
    hinges, angles, weights = _hinges(x, cv, triangles, tri_area)
    return SurfaceMesh(
        vertices=x, corner_vertices=cv, face_offsets=offsets,
        edges=np.ascontiguousarray(edges, dtype=np.int32).reshape(-1, 2), side_corners=sides,
        side_edges=np.ascontiguousarray(corner_edges, dtype=np.int32),
        side_areas=2.0 * face_area[corner_face] / sizes[corner_face],
        diagonal_corners=diagonals, diagonal_areas=4.0 * face_area[diag_face] / per_face[diag_face],
        triangles=triangles, corner_areas=corner_areas, hinge_corners=hinges, rest_angles=angles,
        hinge_weights=weights, closure=closure(x[cv[triangles]], cv[triangles]))


def _edges_of(side_vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unique edges int32 [E, 2] (sorted pairs), the edge of every side int32 [S])."""
    pairs = np.sort(side_vertices, axis=1).astype(np.int64)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    return unique.astype(np.int32), inverse.reshape(-1).astype(np.int32)


def _fan(offsets: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fan triangles by corner int32 [T, 3], the face of each int64 [T]): (c₀, c_k, c_k+1)."""
    parts, faces = [], []
    for n in np.unique(sizes).tolist():
        chosen = np.flatnonzero(sizes == n)
        k = np.arange(1, n - 1)
        local = np.stack([np.zeros_like(k), k, k + 1], axis=1)
        parts.append((offsets[chosen][:, None, None] + local[None]).reshape(-1, 3))
        faces.append(np.repeat(chosen, n - 2))
    order = np.argsort(np.concatenate(faces), kind="stable")
    return np.concatenate(parts)[order].astype(np.int32), np.concatenate(faces)[order]


def _diagonals(offsets: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(corner pairs of every face diagonal int32 [D, 2], the face of each int64 [D])."""
    parts, faces = [np.zeros((0, 2), dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for n in np.unique(sizes[sizes >= 4]).tolist():
        chosen = np.flatnonzero(sizes == n)
        local = np.array([(i, j) for i in range(n) for j in range(i + 2, n) if not (i == 0 and j == n - 1)])
        parts.append((offsets[chosen][:, None, None] + local[None]).reshape(-1, 2))
        faces.append(np.repeat(chosen, local.shape[0]))
    order = np.argsort(np.concatenate(faces), kind="stable")
    return np.concatenate(parts)[order].astype(np.int32), np.concatenate(faces)[order]


def _areas(p: np.ndarray) -> np.ndarray:
    """Areas [m²] of triangles given by their corners' positions [T, 3, 3]."""
    return 0.5 * np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)


def _triangle_sides(tri_vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every triangle side (3 per triangle, side k from corner k to k+1): (its undirected
    vertex key int64, its direction +1/−1, the triangle's row) , sorted by key."""
    a = tri_vertices.astype(np.int64)
    start, end = a.ravel(), np.roll(a, -1, axis=1).ravel()
    key = np.minimum(start, end) * (a.max(initial=0) + 1) + np.maximum(start, end)
    order = np.argsort(key, kind="stable")
    return key[order], np.where(start < end, 1, -1)[order], order


def closure(p: np.ndarray, tri_vertices: np.ndarray) -> Closure:
    """The ``Closure`` of triangles given by their corners' positions [T, 3, 3] and vertices [T, 3]."""
    key, direction, _ = _triangle_sides(tri_vertices)
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    counts = np.diff(np.concatenate([starts, [key.shape[0]]]))
    sums = np.add.reduceat(direction, starts) if key.shape[0] else np.zeros(0, dtype=np.int64)
    open_edges = int((counts == 1).sum())
    nonmanifold = int((counts > 2).sum())
    flipped = int(((counts == 2) & (sums != 0)).sum())
    volume = float(np.einsum("ij,ij->", p[:, 0], np.cross(p[:, 1], p[:, 2])) / 6.0) if p.shape[0] else 0.0
    if open_edges or nonmanifold or flipped:
        volume = 0.0
    return Closure(open_edges, nonmanifold, flipped, abs(volume), volume < 0.0)


def _hinges(x: np.ndarray, cv: np.ndarray, triangles: np.ndarray,
            tri_area: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hinges (corners a, b, c, d, a′, b′ int32 [H, 6]), their rest angles [rad] and weights
    |ē|²/(Ā₁ + Ā₂): one for every two triangles sharing an edge (edges of three or more
    triangles get none)."""
    key, _, order = _triangle_sides(cv[triangles])
    tri, side = order // 3, order % 3
    pair = np.flatnonzero((key[1:] == key[:-1]) & np.concatenate([key[2:] != key[1:-1], [True]])
                          & np.concatenate([[True], key[1:-1] != key[:-2]]))
    t1, s1, t2, s2 = tri[pair], side[pair], tri[pair + 1], side[pair + 1]
    a, b, c = triangles[t1, s1], triangles[t1, (s1 + 1) % 3], triangles[t1, (s1 + 2) % 3]
    p, q, d = triangles[t2, s2], triangles[t2, (s2 + 1) % 3], triangles[t2, (s2 + 2) % 3]
    same = cv[p] == cv[a]
    a2, b2 = np.where(same, p, q), np.where(same, q, p)
    hinges = np.stack([a, b, c, d, a2, b2], axis=1).astype(np.int32)
    pos = x[cv[hinges[:, :4]]]
    angle = angle_gradients(*(pos[:, j, k] for j in range(4) for k in range(3)))[0]
    length2 = np.einsum("ij,ij->i", pos[:, 1] - pos[:, 0], pos[:, 1] - pos[:, 0])
    weights = length2 / np.maximum(tri_area[t1] + tri_area[t2], np.finfo(np.float64).tiny)
    return hinges, np.asarray(angle, dtype=np.float64), weights
