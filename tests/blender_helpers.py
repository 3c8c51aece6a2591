"""Helpers for the Blender tests (real bpy module)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from conftest import MESHES


def import_obj(name: str):
    """Import ../shared/meshes/<name>.obj with Blender's own importer; returns the active object."""
    import bpy

    bpy.ops.wm.obj_import(filepath=str(MESHES / f"{name}.obj"))
    obj = bpy.context.selected_objects[0]
    bpy.context.view_layer.objects.active = obj
    return obj


def evaluated_positions(obj) -> np.ndarray:
    """Vertex positions after modifiers (what the viewport and renders show): float32 [N, 3]."""
    import bpy

    dg = bpy.context.evaluated_depsgraph_get()
    ob_eval = obj.evaluated_get(dg)
    mesh = ob_eval.to_mesh()
    try:
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
    finally:
        ob_eval.to_mesh_clear()
    return co.reshape(-1, 3)


def rest_positions(obj) -> np.ndarray:
    """The mesh's own vertex coordinates (never written by TetRig): float32 [N, 3]."""
    co = np.empty(len(obj.data.vertices) * 3, dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def world(obj, local: np.ndarray) -> np.ndarray:
    m = np.array(obj.matrix_world)
    return local @ m[:3, :3].T + m[:3, 3]


def diagonal(points: np.ndarray) -> float:
    return float(np.linalg.norm(points.max(0) - points.min(0)))


def attribute_snapshot(mesh) -> dict:
    """Every attribute of a mesh as arrays, to compare meshes bit for bit."""
    out = {}
    for attr in mesh.attributes:
        if attr.name.startswith("."):
            continue
        n = len(attr.data)
        if attr.data_type in {"FLOAT_VECTOR"}:
            arr = np.empty(n * 3, np.float32); attr.data.foreach_get("vector", arr)
        elif attr.data_type in {"FLOAT", "INT", "BOOLEAN", "INT8"}:
            dtype = {"FLOAT": np.float32, "INT": np.int32, "BOOLEAN": bool, "INT8": np.int8}[attr.data_type]
            arr = np.empty(n, dtype); attr.data.foreach_get("value", arr)
        elif attr.data_type == "FLOAT2":
            arr = np.empty(n * 2, np.float32); attr.data.foreach_get("vector", arr)
        elif attr.data_type == "INT32_2D":
            arr = np.empty(n * 2, np.int32); attr.data.foreach_get("value", arr)
        else:
            arr = np.array([n])
        out[(attr.name, attr.domain, attr.data_type)] = arr
    return out


# A coarse cage keeps tests of the bake/render/export plumbing fast.
COARSE_RESOLUTION = 4


def ball(bpy, name: str = "Ball", x: float = 0.0):
    """A bound ico sphere 1 m above the ground (ground on, coarse cage)."""
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.5, location=(x, 0.0, 1.0))
    return _bound(bpy, name)


def cube(bpy, name: str = "Cube", x: float = 0.0):
    """A bound 0.6 m cube whose bottom is 0.4 m above the ground (ground on, coarse cage)."""
    bpy.ops.mesh.primitive_cube_add(size=0.6, location=(x, 0.0, 0.7))
    return _bound(bpy, name)


def _bound(bpy, name: str):
    """The active object named ``name``, with a coarse cage built, ground on."""
    obj = bpy.context.active_object
    obj.name = name
    obj.tetrig.resolution = COARSE_RESOLUTION
    obj.tetrig.use_ground = True
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    return obj


class _Layout:
    """Records what a panel draws: the properties, operators and labels, in order."""

    def __init__(self, shown: list) -> None:
        self.shown = shown

    def __getattr__(self, name):  # row, column, box, split: a sub-layout drawing into the same list
        return lambda *args, **kwargs: _Layout(self.shown)

    def prop(self, data, name, **kwargs):
        self.shown.append(name)

    def prop_search(self, data, name, *args, **kwargs):
        self.shown.append(name)

    def operator(self, idname, **kwargs):
        self.shown.append(idname)
        return SimpleNamespace()

    def label(self, text="", icon="NONE"):
        self.shown.append(text)


def drawn_panel(panel_class, context) -> list:
    """What ``panel_class.draw`` draws for ``context`` (a stand-in context), recorded by ``_Layout``:
    property names, operator ids and label texts, in order."""
    shown: list = []
    panel = SimpleNamespace(layout=_Layout(shown))
    for name in ("draw_settings", "draw_surface", "header_toggle"):
        if hasattr(panel_class, name):
            value = getattr(panel_class, name)
            setattr(panel, name, value.__get__(panel) if callable(value) else value)
    panel_class.draw(panel, context)
    return shown


def shown_mesh(obj) -> tuple[np.ndarray, np.ndarray]:
    """What Blender shows of ``obj``: world-space vertices float64 [N, 3] and triangles int [T, 3]."""
    obj.data.calc_loop_triangles()
    tris = np.empty(len(obj.data.loop_triangles) * 3, dtype=np.int32)
    obj.data.loop_triangles.foreach_get("vertices", tris)
    return world(obj, evaluated_positions(obj).astype(np.float64)), tris.reshape(-1, 3)
