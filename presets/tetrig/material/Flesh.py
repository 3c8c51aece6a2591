# TetRig material preset: Flesh (muscle and fat under skin).
# Stiffness: soft tissues measure Young's moduli from about 1e4 to 1e5 Pa (McKee et al. 2011,
#   "Indentation versus tensile measurements of Young's modulus for soft biological tissues",
#   Tissue Engineering Part B 17(3): 155-164): E = 3e4 Pa, the middle of that range.
# Volume: tissue is mostly water and nearly incompressible; Poisson's ratio 0.49 gives
#   K = E / (3 (1 - 2 nu)) = 3e4 / 0.06 = 5e5 Pa.
# Density: soft tissue, 1030-1060 kg/m^3 (ICRU Report 44, 1989): 1060 kg/m^3.
# Damping [1/s] is a drag on all motion (a fall too: terminal speed g / damping), not a material
#   loss: 3 lets most of a jiggle die out within a second.
import bpy
obj = bpy.context.active_object
settings = (obj.tetrig.source if obj.tetrig.role == 'CAGE' else obj).tetrig

settings.youngs_modulus = 30000.0
settings.use_volume = True
settings.volume_stiffness = 500000.0
settings.density = 1060.0
settings.damping = 3.0
