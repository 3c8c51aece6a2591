"""``Object.tetrig``: every TetRig setting of an object, saved with the .blend.

A source object (the user's mesh) holds the build and simulation settings and a pointer to its
cage; the cage object holds a pointer back. A Surface body (``body_type``, set up by Set Up Surface
Body) has no cage: its own vertices are the particles, and ``surface_bound`` tells it apart. Lengths
use Blender's unit system (scene unit scale); the other settings carry their SI unit in their name.
"""

from __future__ import annotations

import bpy
from bpy.props import (BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty,
                       PointerProperty,
                       StringProperty)

from ...tetrig_addon import cage as engine_cage
from ...tetrig_addon import quality as engine_quality
from ...tetrig_addon import solver as engine_solver
from ...tetrig_addon.solver.plasticity import PlasticSettings
from ...tetrig_addon.surface import TearSettings

ROLE_NONE, ROLE_SOURCE, ROLE_CAGE, ROLE_POINTS, ROLE_OFFSETS = "NONE", "SOURCE", "CAGE", "POINTS", "OFFSETS"
BODY_CAGE, BODY_SURFACE = "CAGE", "SURFACE"
# Steps per Second: the slider's range ends at the soft maximum; nothing above the hard maximum is
# taken (a typo of 100000 would take minutes a frame on a real mesh; 10000 is 42 times the default,
# 417 steps a frame at 24 fps). The panel warns long before (``runtime/common/cost``).
STEPS_PER_SECOND_SOFT_MAX = 2000.0
STEPS_PER_SECOND_MAX = 10000.0
# The engine's defaults, so that the panel starts where the engine's documentation does.
_MATERIAL = engine_solver.SurfaceMaterial()
_PLASTIC = PlasticSettings()
_TEAR = TearSettings()


def _own_cage(settings: "TetRigObjectSettings") -> bpy.types.Object | None:
    """The cage of a soft body, if it is its own (a Shift+D copy points at the original's)."""
    cage = settings.cage
    if settings.role != ROLE_SOURCE or cage is None or object_settings(cage).source != settings.id_data:
        return None
    return cage


def _get_show_cage(settings: "TetRigObjectSettings") -> bool:
    cage = _own_cage(settings)
    return cage is not None and bool(object_settings(cage).cage_shown)


def _set_show_cage(settings: "TetRigObjectSettings", value: bool) -> None:
    cage = _own_cage(settings)
    if cage is not None:
        show_cage(cage, value)


def show_cage(cage_obj: bpy.types.Object, visible: bool) -> None:
    """Show or hide a cage's overlay (``runtime/cage/overlay``) in every viewport. The object itself
    stays hidden, also when it was shown as a wire by an older TetRig (which used its Disable in
    Viewports for Show Cage)."""
    object_settings(cage_obj).cage_shown = visible
    cage_obj.hide_viewport = True
    # the overlay reads the flag when a viewport redraws, and a flag change alone redraws none
    window_manager = bpy.context.window_manager
    for window in window_manager.windows if window_manager is not None else ():
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def _show_again(settings: "TetRigObjectSettings", context: bpy.types.Context) -> None:
    """A quality setting changed: show the current frame again (the frame handler applies the pass
    to the cached or baked state, nothing is simulated anew)."""
    scene = context.scene
    if settings.role == ROLE_SOURCE and scene is not None:
        scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)


class TetRigObjectSettings(bpy.types.PropertyGroup):
    """TetRig settings and state of one object."""

    role: EnumProperty(  # type: ignore[valid-type]
        name="Role",
        items=[(ROLE_NONE, "None", "Not a TetRig object"),
               (ROLE_SOURCE, "Soft Body", "A mesh bound to a tetrahedral cage, or a Surface body"),
               (ROLE_CAGE, "Cage", "The tetrahedral cage of a soft body"),
               (ROLE_POINTS, "Points", "The binding of a soft body whose modifiers make new vertices "
                                       "(Mirror, Array) before TetRig"),
               (ROLE_OFFSETS, "Offsets", "The offsets one instance of a shared mesh (Alt+D) shows")],
        default=ROLE_NONE)
    cage: PointerProperty(type=bpy.types.Object, name="Cage",  # type: ignore[valid-type]
                          description="The cage object whose control points drive this mesh")
    source: PointerProperty(type=bpy.types.Object, name="Source",  # type: ignore[valid-type]
                            description="The mesh this cage drives")
    points: PointerProperty(  # type: ignore[valid-type]
        type=bpy.types.Object, name="Points",
        description="The hidden object holding the binding and offsets of the vertices the modifiers "
                    "before TetRig make, when they are not the mesh's own (Mirror, Array)")
    offsets: PointerProperty(  # type: ignore[valid-type]
        type=bpy.types.Object, name="Offsets",
        description="The hidden object holding the offsets this soft body shows, when its mesh is shared "
                    "with other soft bodies (Alt+D): each instance shows its own")
    rest_fingerprint: StringProperty(  # type: ignore[valid-type]
        name="Rest Fingerprint",
        description="Digest of the rest shape at binding (vertex positions, so applied transforms, the "
                    "vertex count and the shape keys): when it changes, the binding is stale")
    cage_note: StringProperty(  # type: ignore[valid-type]
        name="Cage Note", description="What the last build changed from what was asked: another kind of "
                                      "cage, or finer cells for a thin mesh")
    bind_id: StringProperty(  # type: ignore[valid-type]
        name="Binding ID", description="Changes at every Build Cage; tells caches apart")
    bound_vertex_count: IntProperty(name="Vertices", default=0)  # type: ignore[valid-type]
    rest_matrix: FloatVectorProperty(  # type: ignore[valid-type]
        name="Rest Matrix", size=16, default=[1.0 if i % 5 == 0 else 0.0 for i in range(16)],
        description="World matrix at the start frame, the pose the cage simulates in")
    has_rest_matrix: BoolProperty(default=False)  # type: ignore[valid-type]
    show_cage: BoolProperty(  # type: ignore[valid-type]
        name="Show Cage", get=_get_show_cage, set=_set_show_cage,
        description="Draw the cage's springs over the viewports as thin see-through lines at the "
                    "simulated positions (the mesh stays readable); saved with the file")
    cage_shown: BoolProperty(  # type: ignore[valid-type]
        name="Cage Shown", default=False, options={"HIDDEN"},
        description="On a cage object: whether its soft body's Show Cage is on")
    outside_count: IntProperty(  # type: ignore[valid-type]
        name="Outside", default=0,
        description="Vertices found in no tet at bind time, bound to their nearest tet")
    settings_version: IntProperty(  # type: ignore[valid-type]
        name="Settings Version", default=0, min=0, options={"HIDDEN"},
        description="The TetRig settings version this soft body was set up with: one from before a "
                    "default changed keeps the old value of what it never set (``versioning``)")

    # What kind of soft body: the panel's main button sets up the one chosen here
    body_type: EnumProperty(  # type: ignore[valid-type]
        name="Body Type",
        items=[(BODY_CAGE, "Cage", "Tetrahedral cage: a solid body bound to a cage of tets (any mesh)"),
               (BODY_SURFACE, "Surface", "Surface: the mesh's own vertices are the particles; springs on "
                                        "its edges, faces and hinges (cloth, sheets, balloons, jelly)")],
        default=BODY_CAGE)
    surface_bound: BoolProperty(  # type: ignore[valid-type]
        name="Surface Body", default=False, options={"HIDDEN"},
        description="Set up as a Surface body (Set Up Surface Body), not bound to a cage")

    # Surface body material (SurfaceMaterial): moduli per metre of sheet, independent of the mesh's
    # resolution
    areal_density: FloatProperty(  # type: ignore[valid-type]
        name="Density kg/m²", default=1.0, min=1e-6, soft_min=0.01, soft_max=100.0,
        description="Mass per area of the surface [kg/m²]: density [kg/m³] × thickness [m] (1 mm of "
                    "rubber ~1 kg/m², cotton cloth ~0.15 kg/m²); each triangle gives a third of its "
                    "mass to each corner")
    stretch: FloatProperty(  # type: ignore[valid-type]
        name="Stretch N/m", default=_MATERIAL.stretch, min=1e-6, soft_min=1.0, soft_max=1e6, precision=1,
        description="Stretch stiffness [N/m] of the springs on the edges: force per metre of width at "
                    "100 % strain (Young's modulus × thickness)")
    shear: FloatProperty(  # type: ignore[valid-type]
        name="Shear N/m", default=_MATERIAL.shear, min=0.0, soft_max=1e6, precision=1,
        description="Shear stiffness [N/m] of the springs across the faces' diagonals (quads and larger "
                    "faces; a triangle mesh has none)")
    bending: FloatProperty(  # type: ignore[valid-type]
        name="Bending N·m", default=_MATERIAL.bending, min=0.0, soft_max=10.0, precision=5,
        description="Bending stiffness [N·m] across every edge (a plate's flexural rigidity): 0 folds "
                    "freely like thin cloth, higher keeps the surface's curvature")
    pressure: FloatProperty(  # type: ignore[valid-type]
        name="Pressure Pa", default=_MATERIAL.pressure, min=0.0, soft_max=2e5, precision=0,
        description="Gas pressure inside a closed surface [Pa] at its rest volume (p·V stays constant); "
                    "0 turns it off. Higher keeps the volume better (101325 Pa: air at 1 atm). Needs a "
                    "closed mesh")
    use_tearing: BoolProperty(  # type: ignore[valid-type]
        name="Tearing", default=False,
        description="Springs stretched beyond the tear stretch break for good, and the mesh splits "
                    "along its torn edges")
    tear_threshold: FloatProperty(  # type: ignore[valid-type]
        name="Tear Stretch", default=_TEAR.threshold, min=1e-3, soft_max=3.0, subtype="FACTOR",
        description="Stretch (length − rest length)/rest length beyond which a spring tears: 0.5 tears "
                    "at 150 % of its rest length")

    # Plasticity (cage and surface bodies): the rest shape creeps towards the deformed one
    use_plasticity: BoolProperty(  # type: ignore[valid-type]
        name="Plasticity", default=False,
        description="Deformation beyond the yield stays: the rest shape creeps towards the deformed "
                    "shape (dents, bends). Not for a mesh posed by modifiers or shape keys before TetRig")
    plastic_yield: FloatProperty(  # type: ignore[valid-type]
        name="Yield", default=_PLASTIC.yield_strain, min=0.0, soft_max=1.0, precision=3,
        description="Elastic strain (relative length change; radians for bending) beyond which the rest "
                    "shape creeps")
    plastic_rate: FloatProperty(  # type: ignore[valid-type]
        name="Creep Rate", default=_PLASTIC.rate, min=1e-3, soft_max=100.0,
        description="How fast the strain beyond the yield goes into the rest shape [1/s]: the share "
                    "1 − exp(−rate·t) of it after t seconds")
    plastic_max_strain: FloatProperty(  # type: ignore[valid-type]
        name="Max Strain", default=_PLASTIC.max_strain, min=1e-3, max=0.999, subtype="FACTOR",
        description="Largest permanent strain: 0.5 keeps every rest length between 50 % and 150 % of "
                    "the original")

    # Cage build
    cage_method: EnumProperty(  # type: ignore[valid-type]
        name="Cage",
        items=[(engine_cage.METHOD_FIT, "Fit", "Tets inside the mesh and a thin margin around it: legs, "
                                               "arms and parts get their own tets"),
               (engine_cage.METHOD_HULL, "Hull", "Tets filling the convex hull: parts close together "
                                                 "move together (the seed's cage)")],
        default=engine_cage.METHOD_FIT)
    resolution: IntProperty(  # type: ignore[valid-type]
        name="Resolution", default=engine_cage.DEFAULT_RESOLUTION, min=1, soft_max=40, max=200,
        description="Lattice cells across the longest side of the mesh: more gives smaller tets")
    max_control_points: IntProperty(  # type: ignore[valid-type]
        name="Max Points", default=engine_cage.DEFAULT_MAX_CONTROL_POINTS, min=8,
        soft_max=20000, description="Cap on the control-point count; the lattice coarsens to fit")

    # Simulation
    simulate: BoolProperty(  # type: ignore[valid-type]
        name="Simulate", default=True, description="Step this soft body when the frame changes")
    mode: EnumProperty(  # type: ignore[valid-type]
        name="Material",
        items=[(engine_solver.MODE_SPRINGS, "Springs",
                "Tet-edge springs and tet volumes set from the Stiffness and Volume: fastest; a cage "
                "only one or two cells thick comes out stiffer than asked"),
               (engine_solver.MODE_CONTINUUM, "Continuum (FEM)",
                "Corotated finite-element tets: the Stiffness and Volume on any cage; costs about "
                "four times as much per frame; needs Volume above Stiffness/3"),
               (engine_solver.MODE_PBD, "PBD Spring",
                "The seed's Chaos spring: stiffness 0–1 per step, so it depends on Steps per Second")],
        default=engine_solver.MODE_SPRINGS)
    youngs_modulus: FloatProperty(  # type: ignore[valid-type]
        name="Stiffness (Pa)", default=1e5, min=1.0, soft_min=100.0, soft_max=1e8, precision=0,
        description="Young's modulus of the material [Pa]: jelly ~1e4, soft rubber ~1e6. The resting "
                    "shape is the same at any frame rate or Steps per Second")
    stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Stiffness", default=1.0, min=0.0, max=1.0,
        description="PBD spring stiffness k (fraction of the error corrected per step)")
    use_volume: BoolProperty(  # type: ignore[valid-type]
        name="Preserve Volume", default=True,
        description="Tet volume constraints with the Volume modulus")
    volume_stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Volume (Pa)", default=1e6, min=1.0, soft_max=1e9, precision=0,
        description="Resistance to volume change [Pa] (a bulk modulus): higher keeps volume better; "
                    "Continuum (FEM) needs it above Stiffness/3")
    damping: FloatProperty(  # type: ignore[valid-type]
        name="Damping", default=1.0, min=0.0, soft_max=20.0,
        description="Velocity damping rate [1/s]: motion decays as exp(-damping·t). It slows falls "
                    "too (top speed g/damping)")
    steps_per_second: FloatProperty(  # type: ignore[valid-type]
        name="Steps per Second", default=engine_solver.DEFAULT_STEPS_PER_SECOND, min=1.0,
        soft_min=24.0, soft_max=STEPS_PER_SECOND_SOFT_MAX, max=STEPS_PER_SECOND_MAX, precision=0,
        description="Simulation steps per second of scene time (rounded to whole steps per frame), so "
                    "the motion is the same at any frame rate. More gives livelier, less damped motion "
                    "of stiff materials and costs proportionally more; the resting shape does not change")
    iterations: IntProperty(  # type: ignore[valid-type]
        name="Iterations", default=1, min=1, soft_max=8, max=64,
        description="Solver sweeps per step: more carries impacts through stiff bodies faster")
    global_iterations: IntProperty(  # type: ignore[valid-type]
        name="Global Iterations", default=engine_solver.SimSettings.global_iterations, min=0, soft_max=4,
        max=32,
        description="Conjugate-gradient iterations of a whole-cage Newton step before each step's sweeps "
                    "(Springs and Continuum): stiff bodies bend and swing at their true speed instead of "
                    "in slow motion. Each costs about a sweep; frames in contact take 1. 0 turns it off "
                    "(faster, but stiff bodies then bend in slow motion)")
    integrator: EnumProperty(  # type: ignore[valid-type]
        name="Integrator",
        items=[(engine_solver.INTEGRATOR_EULER, "Implicit Euler",
                "Backward Euler: the most damped; a swing loses height every period, more so at fewer "
                "Steps per Second"),
               (engine_solver.INTEGRATOR_BDF2, "BDF2",
                "Second-order backward differentiation: as stable, and a swing keeps its height for "
                "many periods (livelier ears, tails and jiggle at the same cost)")],
        default=engine_solver.SimSettings.integrator,
        description="How each step moves on in time (cages in Springs and Continuum; PBD Spring and "
                    "Surface bodies always step with implicit Euler)")
    density: FloatProperty(  # type: ignore[valid-type]
        name="Density kg/m³", default=1000.0, min=1e-6, soft_max=20000.0,
        description="Mass density [kg/m³]; each tet gives a quarter of its mass to each corner")
    pin_group: StringProperty(  # type: ignore[valid-type]
        name="Pin Group", default="",
        description="Vertex group of vertices that stay where they are (weight ≥ 0.5)")
    use_ground: BoolProperty(  # type: ignore[valid-type]
        name="Ground", default=False, description="Collide with a horizontal ground plane")
    ground_height: FloatProperty(  # type: ignore[valid-type]
        name="Ground Height", default=0.0, subtype="DISTANCE", unit="LENGTH",
        description="World Z of the ground plane")
    ground_friction: FloatProperty(  # type: ignore[valid-type]
        name="Friction", default=0.5, min=0.0, soft_max=1.5,
        description="Coulomb friction coefficient while sliding on the ground (μ: the sliding force is "
                    "μ times the normal force)")
    ground_static_friction: FloatProperty(  # type: ignore[valid-type]
        name="Static Friction", default=0.6, min=0.0, soft_max=1.5,
        description="Coulomb coefficient that holds a body at rest on the ground: it sticks while the "
                    "sideways force is below this times the normal force (at least Friction)")
    use_goal: BoolProperty(  # type: ignore[valid-type]
        name="Goal", default=False,
        description="Pull vertices to where the object's animation puts them (secondary motion); "
                    "goal weight 1 follows the animation exactly")
    goal_group: StringProperty(  # type: ignore[valid-type]
        name="Goal Group", default="",
        description="Vertex group of goal weights; without one every vertex has the Default weight")
    goal_default: FloatProperty(  # type: ignore[valid-type]
        name="Default", default=0.7, min=0.0, max=1.0,
        description="Goal weight of every vertex when no goal group is set")
    goal_min: FloatProperty(  # type: ignore[valid-type]
        name="Min", default=0.0, min=0.0, max=1.0,
        description="Goal weight of a vertex with group weight 0 (group weights map to Min..Max)")
    goal_max: FloatProperty(  # type: ignore[valid-type]
        name="Max", default=1.0, min=0.0, max=1.0,
        description="Goal weight of a vertex with group weight 1")
    goal_stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Goal Stiffness", default=400.0, min=0.0, soft_max=10000.0,
        description="Goal spring stiffness per kilogram [N/m/kg]: a point of goal weight g held by "
                    "nothing else swings about its goal at sqrt(g x stiffness)/2pi Hz")
    goal_damping: FloatProperty(  # type: ignore[valid-type]
        name="Goal Damping", default=5.0, min=0.0, soft_max=50.0,
        description="Decay rate [1/s] of a vertex's motion relative to its goal, times its goal weight")
    use_colliders: BoolProperty(  # type: ignore[valid-type]
        name="Colliders", default=True,
        description="Collide with mesh objects that have Collision physics (their Thickness Outer, "
                    "Thickness Inner and Friction)")
    # Bodies that touch (issue 21, ``runtime/common/touching``): soft bodies (cage, Surface) of a scene with
    # Soft Bodies on and the same Collision Collection are stepped together and collide
    use_soft_bodies: BoolProperty(  # type: ignore[valid-type]
        name="Soft Bodies", default=True,
        description="Collide with the other TetRig soft bodies of the scene that have Soft Bodies on and "
                    "the same Collision Collection (they are simulated together)")
    soft_body_distance: FloatProperty(  # type: ignore[valid-type]
        name="Distance", default=0.01, min=0.0, soft_max=0.1, subtype="DISTANCE", unit="LENGTH",
        precision=3, description="How far apart touching soft bodies' surfaces rest; bodies simulated "
                                 "together use the largest Distance among them")
    soft_body_collection: PointerProperty(  # type: ignore[valid-type]
        type=bpy.types.Collection, name="Collision Collection",
        description="Only soft bodies in this collection that have this same Collision Collection touch "
                    "this body; empty: every soft body of the scene without one")
    # A body's self-contact (issue 21: a Surface body's ``tetrig_addon.solver.self_contact``, a cage
    # body's ``tetrig_addon.solver.cage_self``), as Blender Cloth's Self Collisions and their Distance
    use_self_collision: BoolProperty(  # type: ignore[valid-type]
        name="Self Collision", default=False,
        description="The parts of this body collide with each other instead of passing through each other "
                    "(its contacts with itself are searched as it moves, which costs time)")
    self_distance: FloatProperty(  # type: ignore[valid-type]
        name="Distance", default=0.01, min=0.001, soft_max=0.1, subtype="DISTANCE", unit="LENGTH", precision=3,
        description="How far apart the parts of this body rest on each other. Surface bodies: a mesh whose "
                    "edges are shorter than it may pass through itself between neighbouring faces. Soft "
                    "bodies: parts nearer than 4 times it at rest never collide")
    max_speed: FloatProperty(  # type: ignore[valid-type]
        name="Max Speed", default=100.0, min=1e-3, soft_max=1000.0,
        unit="VELOCITY", description="Speed limit of every control point [m/s]")

    # Quality pass (seed 003), applied to the blended offsets whenever a frame is shown or exported
    use_quality: BoolProperty(  # type: ignore[valid-type]
        name="Quality", default=False, update=_show_again,
        description="Repair the surface after the blend: clamp edge lengths, smooth the displacement, "
                    "clamp again. Applied when a frame is shown, rendered or exported (bakes too). "
                    "The limits hold real deformation too: a body squashed past them is held at them")
    quality_max_stretch: FloatProperty(  # type: ignore[valid-type]
        name="Max Stretch", default=engine_quality.DEFAULT_MAX_STRETCH, min=1.0, soft_max=3.0,
        update=_show_again, description="Longest an edge may get, as a multiple of its rest length")
    quality_max_compression: FloatProperty(  # type: ignore[valid-type]
        name="Max Compression", default=engine_quality.DEFAULT_MAX_COMPRESSION, min=0.01, max=1.0,
        update=_show_again, description="Shortest an edge may get, as a share of its rest length")
    quality_clamp_iterations: IntProperty(  # type: ignore[valid-type]
        name="Clamp Iterations", default=engine_quality.DEFAULT_CONSTRAINT_ITERATIONS, min=0,
        soft_max=32, max=256, update=_show_again,
        description="Sweeps over the edges at most, before and after the smoothing (fewer when every "
                    "edge is within its limits): more for a body whose whole side stretches past the limit")
    quality_smoothing: FloatProperty(  # type: ignore[valid-type]
        name="Smoothing", default=engine_quality.DEFAULT_SMOOTHING_WEIGHT, min=0.0, max=1.0,
        subtype="FACTOR", update=_show_again,
        description="How far each vertex moves towards its neighbours' mean displacement per iteration "
                    "(half as far on an open border); the cage's own motion is kept")
    quality_smoothing_iterations: IntProperty(  # type: ignore[valid-type]
        name="Smoothing Iterations", default=engine_quality.DEFAULT_SMOOTHING_ITERATIONS, min=0,
        soft_max=10, max=100, update=_show_again, description="Smoothing steps per frame")


class TetRigSceneSettings(bpy.types.PropertyGroup):
    """TetRig settings of a scene (``Scene.tetrig``)."""

    bake_preview: BoolProperty(  # type: ignore[valid-type]
        name="Preview", default=True,
        description="Show the frames in the viewport while baking. A redraw of a dense mesh can cost more "
                    "than the frames it shows, so the preview takes at most a fifth of the bake's time "
                    "(fewer redraws on a slow display); off: none, the bake only")


def scene_settings(scene: bpy.types.Scene) -> TetRigSceneSettings:
    """``scene.tetrig``, typed."""
    return scene.tetrig  # type: ignore[attr-defined]


def object_settings(obj: bpy.types.Object) -> TetRigObjectSettings:
    """``obj.tetrig``, typed (the stubs cannot know the property this add-on registers)."""
    return obj.tetrig  # type: ignore[attr-defined]


def is_surface(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` is set up as a Surface body (its own vertices are the particles)."""
    s = object_settings(obj)
    return s.role == ROLE_SOURCE and s.surface_bound


def plastic_settings(obj: bpy.types.Object) -> PlasticSettings | None:
    """The object's plasticity in the engine's terms, or ``None`` when it is off.

    Raises:
        TetRigInputError: settings out of range (``PlasticSettings.validated``).
    """
    s = object_settings(obj)
    if not s.use_plasticity:
        return None
    return PlasticSettings(yield_strain=s.plastic_yield, rate=s.plastic_rate,
                           max_strain=s.plastic_max_strain).validated()


classes = (TetRigObjectSettings, TetRigSceneSettings)


def register() -> None:
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Object.tetrig = PointerProperty(type=TetRigObjectSettings)  # type: ignore[attr-defined]
    bpy.types.Scene.tetrig = PointerProperty(type=TetRigSceneSettings)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Scene.tetrig  # type: ignore[attr-defined]
    del bpy.types.Object.tetrig  # type: ignore[attr-defined]
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
