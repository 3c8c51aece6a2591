"""The surface-quality pass of seed 003 on a blended mesh: edge-length clamp, Laplacian smoothing
of the displacement, edge-length clamp again ("constrain → smooth → constrain").

A soft body's vertices follow the cage by the barycentric blend, so a vertex's displacement is
``d = B @ D`` (``cage.blend_matrix``; D the control points' displacements). Where the cage's
tets stretch, fold or spike after a hard impact, so do the triangles on them. This pass repairs
the blended displacement before it is shown:

1. **Edge-length clamp** (``constrain_edge_lengths``): every mesh edge longer than
   ``max_stretch`` × its rest length, or shorter than ``max_compression`` × it, is brought back to
   that limit about its midpoint (each end moves half; a fixed vertex does not move, the other end
   takes the whole correction). Sweeps repeat up to ``constraint_iterations`` times and stop early
   after a sweep that found no edge outside its limits (the seed's early exit).
2. **Laplacian smoothing** of the displacement (``smooth_displacements``): each vertex moves
   ``smoothing_weight`` of the way from its displacement to the mean of its neighbours'
   (boundary vertices half as far), all vertices at once from the previous values (Jacobi),
   ``smoothing_iterations`` times.
3. The clamp once more, to undo what the smoothing pushed past a limit.

Two choices the seed leaves open, made here for a cage-driven mesh:

- *Gauss–Seidel in colours.* The seed fixes edges one after another. Here the edges are split
  into colours, each a matching (no two edges of a colour share a vertex, the seed's "edge
  colouring" speed-up); within a colour the order does not matter, so the NumPy reference fixes a
  colour at once and the Numba kernel edge by edge, block by block (``plan``), with the
  same result.
- *Smoothing that keeps the cage's own motion.* Smoothing a displacement that rotates the body
  (d = (R − I)·x) moves vertices: the mean of a vertex's neighbours is not the vertex on a curved
  or irregular mesh (a 90° turn of the Stanford bunny moves vertices by up to 1.6 mm, more than an
  edge). So a vertex's Laplacian is measured against the one its own tet's affine motion gives
  (``expected_laplacian``, from ``affine_laplacian_matrix``): any affine motion of the whole cage
  (a fall, a turn, a uniform squash) passes unchanged, and the smoothing acts on what differs from
  the tet's motion — the kinks where neighbouring tets move apart, spikes and noise.

Units: lengths in the mesh's own units (Blender: object space); the limits and weights are ratios.

Source: seed article 003 (vertex-deformation quality design: MaxEdgeStretchRatio 1.35,
MaxEdgeCompressRatio 0.70, EdgeConstraintIterations 4, LaplacianSmoothingWeight 0.45,
LaplacianIterations 2, boundary vertices at half weight, Jacobi; budget 7 ms at 100k vertices).
"""

from .improve import QualityResult, constrain_edge_lengths, frame_rest_lengths, improve, smooth_displacements
from .plan import (BOUNDARY_SMOOTHING_SHARE, DEGENERATE_EDGE_SHARE, QualityPlan, affine_laplacian_matrix,
                   boundary_vertices, build_plan, face_edges, unique_edges)
from .settings import (DEFAULT_CONSTRAINT_ITERATIONS, DEFAULT_MAX_COMPRESSION, DEFAULT_MAX_STRETCH,
                       DEFAULT_SMOOTHING_ITERATIONS, DEFAULT_SMOOTHING_WEIGHT, LIMIT_TOLERANCE, QualitySettings)

__all__ = ["BOUNDARY_SMOOTHING_SHARE", "DEFAULT_CONSTRAINT_ITERATIONS", "DEFAULT_MAX_COMPRESSION",
           "DEFAULT_MAX_STRETCH", "DEFAULT_SMOOTHING_ITERATIONS", "DEFAULT_SMOOTHING_WEIGHT", "DEGENERATE_EDGE_SHARE",
           "LIMIT_TOLERANCE", "QualityPlan", "QualityResult", "QualitySettings", "affine_laplacian_matrix",
           "boundary_vertices", "build_plan", "constrain_edge_lengths", "face_edges", "frame_rest_lengths", "improve",
           "smooth_displacements", "unique_edges"]
