# TetRig material preset: Dough (a wheat bread dough).
# Stiffness: bread doughs measure storage moduli G' of about 1e3-1e4 Pa in small oscillations
#   (Dobraszczyk & Morgenstern 2003, "Rheology and the breadmaking process", Journal of Cereal
#   Science 38: 229-245): E = 5e3 Pa, at the soft end of E = 3G.
# Volume: dough holds gas bubbles, so a lower Poisson's ratio, 0.45:
#   K = E / (3 (1 - 2 nu)) = 5e3 / 0.3 = 1.67e4 Pa.
# Density: unproofed dough, about 1200 kg/m^3.
# Damping [1/s]: dough hardly bounces. TetRig's damping is a drag on all motion, not a material
#   loss, so it also slows falls (terminal speed g / damping, about 1 m/s here): 10 is a compromise
#   between a dead landing and a believable fall.
import bpy
obj = bpy.context.active_object
settings = (obj.tetrig.source if obj.tetrig.role == 'CAGE' else obj).tetrig

settings.youngs_modulus = 5000.0
settings.use_volume = True
settings.volume_stiffness = 16667.0
settings.density = 1200.0
settings.damping = 10.0
