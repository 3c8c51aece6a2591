"""Errors the engine raises for bad input; the Blender layer shows their message to the user."""


class TetRigInputError(ValueError):
    """Input the engine refuses, with a message written for the user (one sentence or two)."""
