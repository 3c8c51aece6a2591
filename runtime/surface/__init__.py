"""Surface bodies in Blender: the mesh's own vertices are the particles (see ``runtime/__init__``)."""
