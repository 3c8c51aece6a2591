# TetRig material preset: Soft Rubber (a soft silicone or gum rubber).
# Stiffness: rubbers measure shear moduli of about 0.3-3 MPa, so E = 3G of about 1e6-1e7 Pa
#   (Gent, "Engineering with Rubber", 3rd ed. 2012, ch. 1): the soft end, E = 1e6 Pa.
# Volume: real rubber is all but incompressible (bulk modulus about 2e9 Pa, Gent 2012); Poisson's
#   ratio 0.48 gives K = E / (3 (1 - 2 nu)) = 1e6 / 0.12 = 8.33e6 Pa, which keeps the volume to
#   the eye at the default substeps (a stiffer K needs more substeps to act, see the README).
# Density: silicone rubber, 1100-1200 kg/m^3: 1100 kg/m^3.
# Damping [1/s] is a drag on all motion (a fall too: terminal speed g / damping), not a material
#   loss: 1, the default.
import bpy
obj = bpy.context.active_object
settings = (obj.tetrig.source if obj.tetrig.role == 'CAGE' else obj).tetrig

settings.youngs_modulus = 1000000.0
settings.use_volume = True
settings.volume_stiffness = 8333333.0
settings.density = 1100.0
settings.damping = 1.0
