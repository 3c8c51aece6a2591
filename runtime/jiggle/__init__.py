"""Jiggle rigs in Blender: spring bone chains on armatures (see ``runtime/__init__``)."""
