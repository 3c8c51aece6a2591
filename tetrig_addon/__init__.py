"""TetRig engine: tetrahedral cages, barycentric binding and the Vertex Block Descent solver, for
cage soft bodies, Surface bodies and jiggle rigs.

Pure NumPy/SciPy, with Numba kernels where they load (``lazy_kernel``). This package never imports
``bpy`` (a test enforces it), so it runs and is tested without Blender; the Blender layer
(``runtime/``, ``operators/``, ``panels/``) calls into it.

Its parts, from the ground up: ``errors``, ``geometry`` (tet volumes, quality, edges, inverse
3×3 matrices), ``colliders`` (signed distance), ``timeline`` (the frame cache), ``lazy_kernel``,
``fingerprint``; ``solver`` (the VBD particle solver, shared by every body kind); the body kinds
``cage`` (build, binding, point location, posing), ``surface`` and ``jiggle``, each with its body
in the one lifecycle of ``body`` (``Control``, ``Body``); ``quality`` (the surface-quality pass)
and ``formats`` (seed JSON, PC2, animation JSON).
"""
