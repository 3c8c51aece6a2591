"""TetRig engine: tetrahedral cages, barycentric binding and the XPBD solver.

Pure NumPy/SciPy. This package never imports ``bpy`` (a test enforces it), so it runs and is tested
without Blender; the Blender layer (``runtime/``, ``operators/``, ``panels/``) calls into it.
"""
