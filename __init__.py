"""TetRig: soft bodies from tetrahedral cages (register/unregister only)."""

from . import operators, panels
from .runtime import handlers, presets, properties

_modules = (properties, presets, operators, panels, handlers)


def register() -> None:
    for module in _modules:
        module.register()


def unregister() -> None:
    for module in reversed(_modules):
        module.unregister()
