# TetRig material preset: Jelly (a gelatin dessert).
# Stiffness: gelatin gels measure Young's moduli of a few kPa to a few tens of kPa, rising with the
#   gelatin content (Czerner et al. 2015, "Determination of elastic modulus of gelatin gels by
#   indentation experiments", Procedia Materials Science 8: 287-296): E = 1e4 Pa.
# Volume: a water gel is nearly incompressible; Poisson's ratio 0.49 gives
#   K = E / (3 (1 - 2 nu)) = 1e4 / 0.06 = 1.67e5 Pa.
# Density: water with gelatin and sugar, about 1050 kg/m^3.
# Damping [1/s] is a drag on all motion (a fall too: terminal speed g / damping), not a material
#   loss: 0.5 lets a jelly wobble for a few seconds.
import bpy
obj = bpy.context.active_object
settings = (obj.tetrig.source if obj.tetrig.role == 'CAGE' else obj).tetrig

settings.youngs_modulus = 10000.0
settings.use_volume = True
settings.volume_stiffness = 166667.0
settings.density = 1050.0
settings.damping = 0.5
