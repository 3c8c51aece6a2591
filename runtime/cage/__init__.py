"""Cage soft bodies in Blender: a mesh embedded in a tetrahedral cage (see ``runtime/__init__``)."""
